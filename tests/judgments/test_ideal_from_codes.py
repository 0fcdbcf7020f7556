"""The one recall-base builder equals the sort it replaces, for any gain scheme."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.judgments.gains import gain_scheme
from sessionval.judgments.ideal import ideal_from_codes


@pytest.mark.parametrize("scheme", ["grade", "0-1-10-100", {0: 0, 1: 5, 2: 1, 3: 5, 2000: 7}])
def test_counting_equals_sorting(scheme: object) -> None:
    rng = np.random.default_rng(3)
    sch = gain_scheme(scheme)  # type: ignore[arg-type]
    grades = rng.choice([-1, 0, 1, 2, 3] + ([2000] if isinstance(scheme, dict) else []), 500)
    grades = grades.astype(np.float64)
    codes = rng.integers(0, 7, grades.size)
    got = ideal_from_codes(pd.Index(list("abcdefg")), codes, grades, sch)
    rel = grades > 0
    gains = sch.gains(grades[rel], negative="keep")
    order = np.lexsort((-gains, codes[rel]))
    np.testing.assert_array_equal(got.values, gains[order])
    np.testing.assert_array_equal(got.n_relevant, np.bincount(codes[rel], minlength=7))


def test_no_second_recall_base_builder() -> None:
    root = Path(__file__).resolve().parents[2] / "sessionval"
    found = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "IdealGains(" in p.read_text() and p.name != "ideal.py"
    )
    assert found == [], found
