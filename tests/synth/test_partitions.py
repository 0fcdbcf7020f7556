"""Partitions generated on the fly (synth/partitions.py): whole, unique, validated as files are."""

from __future__ import annotations

import pytest

from sessionval.errors import SessionvalError
from sessionval.synth.partitions import GeneratedPartitions
from sessionval.synth.simulate import CHUNK_SESSIONS


@pytest.fixture(scope="module")
def generated() -> GeneratedPartitions:
    return GeneratedPartitions(3, base_chunks=1, max_rank=5)


def test_each_partition_is_a_base_chunk_with_its_own_session_ids(generated) -> None:
    flats = [generated.flat(i).to_pandas() for i in range(3)]
    ids = [set(f["session_id"].astype(str)) for f in flats]
    assert all(len(s) == CHUNK_SESSIONS for s in ids)
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2])  # unique over the study
    assert all(s.startswith(f"g{i:05d}-") for i, part in enumerate(ids) for s in part)
    # one base chunk: every partition has its sessions, with its own ids
    for col in ("user_id", "topic_id", "rank", "doc_id", "user_grade"):
        assert flats[0][col].equals(flats[2][col]), col
    assert flats[0]["rank"].max() == 5
    assert (flats[0]["rank"].isna() == flats[0]["doc_id"].isna()).all()  # empty queries kept


def test_a_generated_partition_is_validated_as_a_file_is(generated) -> None:
    setup = generated.setup()
    assert setup.files == [0, 1, 2] and setup.judgments is not None
    part = setup.load(1)
    assert part.frame is not None and part.report is not None and not part.problems
    assert part.frame.n_sessions == CHUNK_SESSIONS == part.report.sessions_accepted
    assert str(part.path) == "generated/part-00001"
    assert int(part.frame.results["rank"].max()) == 5
    assert generated.n_sessions == 3 * CHUNK_SESSIONS


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(SessionvalError, match="must be >= 1"):
        GeneratedPartitions(0)
