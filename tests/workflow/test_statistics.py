"""The run's statistics step and its [statistics] settings."""

from __future__ import annotations

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
    assert fixed["term"].tolist() == ["Intercept (S1)", "S2 - S1", "S3 - S1"]
    assert (outputs.root / "tables" / "comparisons.csv").is_file()
    assert (outputs.root / "tables" / "mixed_model.csv").is_file()
    comparison, mixed = res.sections
    assert comparison.id == "comparison" and mixed.id == "mixed-model"
    assert "Holm" in comparison.intro[0] and "Student t intervals" in comparison.intro[1]
    assert "Wald confidence intervals" in mixed.intro[0]


def test_statistics_step_notes_what_it_cannot_do(tmp_path):
    ps = _per_session(systems=("S1",))
    res = statistics_step(RunOutputs(tmp_path), ps, StatisticsSettings())
    assert res.comparisons.empty and res.mixed.empty
    assert "one system" in res.sections[0].notes[0]
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
