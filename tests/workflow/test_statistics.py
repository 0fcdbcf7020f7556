"""The run's statistics step and its [statistics] settings."""

from __future__ import annotations

import re
import tomllib

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import InputFormatError
from sessionval.workflow import RunOutputs, load_run_config, to_toml
from sessionval.workflow.statistics import StatisticsSettings, statistics_step


def _per_session(n_users: int = 12, systems=("S1", "S2", "S3"), seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        for k, s in enumerate(systems):
            for t in ("A", "B"):
                v = 0.3 + 0.1 * k + rng.normal(0, 0.1)
                rows.append((f"u{u}", t, s, v, 50 * v))
    return pd.DataFrame(rows, columns=["user_id", "topic_id", "system_id", "nsdcg", "sdcg"])


def test_statistics_settings_from_the_configuration(tmp_path):
    assert load_run_config(None).statistics == StatisticsSettings()
    path = tmp_path / "c.toml"
    path.write_text('[statistics]\ntest = "randomisation"\nbands = false\nresamples = 500\n')
    s = load_run_config(path).statistics
    assert (s.test, s.bands, s.resamples, s.correction) == ("randomisation", False, 500, "holm")
    # the written table reads back the same
    again = tmp_path / "again.toml"
    again.write_text(to_toml({"statistics": s.model_dump(mode="json")}))
    assert load_run_config(again).statistics == s
    assert tomllib.loads(again.read_text())["statistics"]["measures"] == ["nsdcg", "sdcg"]
    for bad, match in (("wilcox = 1", "wilcox"), ('test = "z"', "test"), ("alpha = 2", "alpha")):
        path.write_text(f"[statistics]\n{bad}\n")
        with pytest.raises(InputFormatError, match=match):
            load_run_config(path)


def test_statistics_step_compares_every_pair_and_fits_the_mixed_model(tmp_path):
    outputs = RunOutputs(tmp_path)
    res = statistics_step(outputs, _per_session(), StatisticsSettings())
    assert len(res.comparisons) == 2 * 3  # two scores x three pairs
    assert (res.comparisons["n"] == 12).all()  # searchers pair the systems
    assert set(res.omnibus["test"]) == {"anova", "friedman"}
    fixed = res.mixed[(res.mixed.measure == "nsdcg") & (res.mixed.kind == "fixed")]
    assert fixed["term"].tolist() == ["Intercept (S1)", "S1 − S2", "S1 − S3"]
    assert (outputs.root / "tables" / "comparisons.csv").is_file()
    assert (outputs.root / "tables" / "mixed_model.csv").is_file()
    comparison, mixed = res.sections
    assert comparison.id == "comparison" and mixed.id == "mixed-model"
    assert "Holm" in comparison.intro[0] and "Student t intervals" in comparison.intro[1]
    assert "confidence intervals" in mixed.intro[0] and "reml-crossed" in mixed.intro[0]
    assert set(res.mixed["estimator"]) == {"reml-crossed"}


def test_statistics_step_notes_what_it_cannot_do(tmp_path):
    ps = _per_session(systems=("S1",))
    res = statistics_step(RunOutputs(tmp_path), ps, StatisticsSettings())
    assert res.comparisons.empty and res.mixed.empty
    assert "one system" in res.sections[0].notes[0]
    assert res.sections[0].intro == ("Design: one system (2 topics): nothing to compare.",)
    # Tukey HSD needs every searcher on every system: say so rather than fail the run
    ps = _per_session()
    ps = ps[~((ps.system_id == "S3") & (ps.user_id != "u0"))]
    res = statistics_step(
        RunOutputs(tmp_path), ps, StatisticsSettings(correction="tukey-hsd", mixed_model=False)
    )
    assert res.comparisons.empty
    assert "complete block" in res.sections[0].notes[0]
    res = statistics_step(RunOutputs(tmp_path), ps, StatisticsSettings(measures=("nope",)))
    assert "not a per-session score" in res.sections[0].notes[0]
    assert "No score" in res.sections[0].notes[1]


def _runs_as_sessions(n_topics: int = 6, seed: int = 2) -> pd.DataFrame:
    """Runs loaded as sessions: the searcher is the system, one session per system x topic."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, s in enumerate(("r1", "r2", "r3")):
        for t in range(n_topics):
            v = 0.2 + 0.1 * k + 0.05 * t + rng.normal(0, 0.01)
            rows.append((f"{s}:{t}", s, str(t), s, v, 50 * v))
    cols = ["session_id", "user_id", "topic_id", "system_id", "nsdcg", "sdcg"]
    return pd.DataFrame(rows, columns=cols)


def test_runs_are_compared_by_topic_without_the_mixed_model(tmp_path):
    res = statistics_step(RunOutputs(tmp_path), _runs_as_sessions(), StatisticsSettings())
    c = res.comparisons
    assert len(c) == 2 * 3 and (c["n"] == 6).all()  # was n = 0 for every pair
    assert set(c["design"]) == {"by_topic"} and set(c["block"]) == {"topic"}
    assert c["significant"].all() and (c["note"] == "").all()
    assert res.mixed.empty
    comparison = res.sections[0]
    assert comparison.intro[0].startswith("Design: 3 systems compared by topic on 6 topics")
    assert any("searcher is the system" in n for n in comparison.notes)
    assert set(res.omnibus["n_topics"]) == {6}


def test_design_override_from_the_configuration_and_its_error(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[statistics]\ndesign = "within"\nblock = "searcher"\n')
    s = load_run_config(path).statistics
    assert (s.design, s.block) == ("within", "searcher")
    res = statistics_step(RunOutputs(tmp_path / "o"), _per_session(), s)
    assert set(res.comparisons["block"]) == {"searcher"}
    assert "(set in the configuration)" in res.sections[0].intro[0]
    path.write_text('[statistics]\ndesign = "latin"\n')
    with pytest.raises(InputFormatError, match=r"design.*'auto', 'within', 'between', 'by_topic'"):
        load_run_config(path)


def test_comparison_tables_read_like_a_results_section(tmp_path):
    """Each pair states a − b, its interval, test, p (APA), correction, effect size and n."""
    res = statistics_step(RunOutputs(tmp_path), _per_session(), StatisticsSettings())
    table = res.sections[0].tables[0]
    assert "diff (a − b)" in table.table.columns and table.alpha == 0.05
    first = res.comparisons.iloc[0]
    sentence = table.note.split(". S1 − S3")[0]
    assert sentence.startswith(f"S1 − S2 = {first['diff']:.3f}, 95 % CI [")
    assert "t = " in sentence and "(paired t test)" in sentence and "holm-adjusted p " in sentence
    assert sentence.endswith("n = 12 searchers") and "d_z = " in sentence
    assert re.search(r", p (<|=) \.\d{3}", sentence)
    # the mixed model's contrasts carry the same sign as the pairs
    fixed = res.mixed[(res.mixed.measure == "nsdcg") & (res.mixed.term == "S1 − S2")]
    pair = res.comparisons[(res.comparisons.measure == "nsdcg") & (res.comparisons.b == "S2")]
    assert np.sign(fixed["estimate"].iloc[0]) == np.sign(pair["diff"].iloc[0]) == -1


def test_omnibus_table_of_the_report_shows_whole_degrees_of_freedom(tmp_path):
    res = statistics_step(RunOutputs(tmp_path), _per_session(), StatisticsSettings())
    shown = res.sections[0].tables[-1].table
    anova = shown[(shown.test == "anova") & (shown.measure == "nsdcg")].iloc[0]
    friedman = shown[(shown.test == "friedman") & (shown.measure == "nsdcg")].iloc[0]
    assert (anova["df1"], anova["df2"]) == ("2", "22")  # 3 systems x 12 searchers
    assert friedman["df2"] == ""
    assert res.omnibus["df2"].dtype == float  # the table itself keeps its numbers


def test_results_sentence_says_n_a_for_an_undefined_number_and_gives_a_reason():
    from sessionval.analysis.design import detect_design
    from sessionval.workflow.statistics import results_text

    design = detect_design(_per_session())
    rows = pd.DataFrame(
        {"a": ["S1", "S1"], "b": ["S2", "S3"], "n": [2, 1], "diff": [0.1, np.nan],
         "ci_low": [np.nan, np.nan], "ci_high": [np.nan, np.nan], "statistic": [1.2, np.nan],
         "p": [0.3, np.nan], "p_adjusted": [0.6, np.nan], "correction": ["holm"] * 2,
         "test": ["bootstrap"] * 2, "effect_size": [0.5, np.nan],
         "effect_size_kind": ["sakai_dz"] * 2,
         "note": ["", "not compared: 1 searcher(s) scored for both systems (need 2)"]}
    )  # fmt: skip
    text = results_text(rows, design=design, confidence=0.9, alpha=0.05)
    assert "S1 − S2 = 0.100, 90 % CI [n/a, n/a], t = 1.20 (paired bootstrap test)" in text
    assert "S1 − S3: not compared: 1 searcher(s) scored for both systems (need 2)." in text
    assert "nan" not in text
