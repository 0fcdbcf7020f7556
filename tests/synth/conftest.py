from __future__ import annotations

from pathlib import Path

import pytest

from sessionval.synth import SyntheticStudy, generate_study, write_study


@pytest.fixture(scope="session")
def sample_study() -> SyntheticStudy:
    """The default study (120 sessions, seed 2008) in memory."""
    return generate_study()


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default study written by ``write_study`` (both formats)."""
    out = tmp_path_factory.mktemp("synth_default")
    write_study(out)
    return out
