"""The documentation site builds strictly from docs/ (issue 11): every page in the nav, the
API reference complete, a broken link fatal, CITATION.cff valid.

``mkdocs build --strict`` runs into a temporary directory, offline (the Material theme's
web fonts are off); a warning of any kind (a broken link, a page missing from the nav, a
docstring mkdocstrings cannot render) fails the build and so this test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

import sessionval

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)},
        timeout=600,
        check=False,
    )


def test_every_page_is_in_the_nav() -> None:
    pages = _nav_pages(_config()["nav"])
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    missing = sorted(set(on_disk) - set(pages))
    assert not missing, f"add these docs/ pages to the nav of mkdocs.yml: {missing}"
    assert sorted(pages) == on_disk  # and no nav entry without a page
    assert _config()["strict"] is True


def test_the_api_reference_covers_the_public_api() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"^::: sessionval\.(\w+)\s*$", text, re.M))
    public = set(sessionval.__all__) - {"__version__"}
    assert not public - shown, f"add to docs/api.md: {sorted(public - shown)}"
    assert not shown - public, f"not public (sessionval.__all__): {sorted(shown - public)}"


def test_site_builds_strictly(tmp_path: Path) -> None:
    res = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "evaluate_run" in api and "ties broken by document id" in api
    measures = (tmp_path / "site" / "measures" / "index.html").read_text(encoding="utf-8")
    # the registry rendered as tables: name, formula, parameters, reference; other tools' names
    assert measures.count("<table>") >= 2 and "Chapelle" in measures and "ndcg_cut" in measures


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    (docs / "index.md").write_text(
        (docs / "index.md").read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n",
        encoding="utf-8",
    )
    cfg = _config()
    cfg["docs_dir"] = str(docs)
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    res = _build(config, tmp_path / "site")
    assert res.returncode != 0
    assert "no-such-page.md" in res.stdout + res.stderr


def test_citation_file() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == sessionval.__version__
    assert cff["title"] == "sessionval" and cff["authors"] and cff["license"] == "BSD-3-Clause"
    assert "sDCG" in cff["abstract"]
    cited = " ".join(r["title"] for r in cff["references"])
    assert "Discounted Cumulated Gain Based Evaluation of Multiple-Query IR Sessions" in cited


def test_docs_dependencies_are_declared() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("mkdocs-material") for d in deps["docs"])
    assert any(d.startswith("mkdocstrings") for d in deps["docs"])
    # the test command builds the site, so the test extra brings the docs extra
    assert any(d.startswith("sessionval[") and "docs" in d for d in deps["test"])
