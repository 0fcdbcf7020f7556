"""Partitions generated on the fly: a study of any size without its files.

A scale test of the distributed run (``benchmarks/bench_distributed.py``) needs
studies of 10^8 sessions, whose Parquet files would take hundreds of GB of disk.
:class:`GeneratedPartitions` makes each partition where it is validated: partition
``i`` is chunk ``i mod m`` of one base study of ``m`` chunks of
:data:`~sessionval.synth.simulate.CHUNK_SESSIONS` sessions (the synthetic study of
:func:`~sessionval.synth.write.generate_study`, same seed, same judgments), with
its session ids made unique (``g00042-...``).  The searchers, topics and systems
are the base study's: a population of ``m`` × 8,192 searchers who come back, so
the design cells stay as many whatever the number of sessions, as in a log of a
fixed user base.  :meth:`GeneratedPartitions.setup` gives the
:class:`~sessionval.io.partitioned.PartitionSetup` the distributed run takes in
place of a folder's: each partition goes through the same validation
(:func:`~sessionval.validate.flat.frame_from_flat`, then
:func:`~sessionval.io.partitioned.checked_partition`) as a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import SessionvalError
from ..frame import JudgmentFrame
from ..io.partitioned import PartitionLoad, PartitionSetup, checked_partition
from ..models.study import Study
from ..problems import Mode
from ..validate.flat import frame_from_flat
from .design import Design, header_of
from .simulate import CHUNK_SESSIONS, simulate_chunk
from .write import checked_design, chunk_table, flat_schema, study_judgments

__all__ = ["GeneratedPartitions"]

#: Where the generated partitions say they come from (messages, ``PartitionLoad.path``).
GENERATED: Final = "generated"


@dataclass(frozen=True)
class GeneratedPartitions:
    """``n_partitions`` partitions of :data:`CHUNK_SESSIONS` sessions, generated when loaded.

    Parameters
    ----------
    n_partitions
        Number of partitions (sessions: ``n_partitions`` × 32,768).
    base_chunks
        Chunks of the base study the partitions cycle through (its searchers).
    seed
        Seed of the base study.
    max_rank
        Keep the results down to this rank (what a read at top X keeps: the base
        study's lists are up to 100 deep); ``None``: every result.

    Examples
    --------
    >>> g = GeneratedPartitions(3, base_chunks=1, max_rank=10)
    >>> g.n_sessions
    98304
    >>> flat = g.flat(2)
    >>> flat.num_rows > 0, str(flat.column("session_id")[0]).startswith("g00002-")
    (True, True)
    """

    n_partitions: int
    base_chunks: int = 4
    seed: int = 2008
    max_rank: int | None = None
    _design: Design = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.n_partitions < 1 or self.base_chunks < 1:
            raise SessionvalError(
                f"generated partitions: n_partitions and base_chunks must be >= 1, got "
                f"{self.n_partitions} and {self.base_chunks}"
            )
        d = checked_design(self.base_chunks * CHUNK_SESSIONS, self.seed, 2, None)
        object.__setattr__(self, "_design", d)

    @property
    def n_sessions(self) -> int:
        """Sessions over all partitions."""
        return self.n_partitions * CHUNK_SESSIONS

    def header(self) -> Study:
        """The study header (searchers, topics, systems) every partition refers to."""
        return header_of(self._design)

    def judgments(self) -> JudgmentFrame:
        """The reference judgments of the base study."""
        return study_judgments(self._design)

    def flat(self, i: int) -> pa.Table:
        """Partition ``i`` in the flat layout, its session ids prefixed ``g{i:05d}-``."""
        table = _base_chunk(self, i % self.base_chunks)
        where = table.schema.get_field_index("session_id")
        ids = table.column(where).combine_chunks()  # one dictionary entry per session
        names = [f"g{i:05d}-{s}" for s in ids.dictionary.to_pylist()]
        renamed = pa.DictionaryArray.from_arrays(ids.indices, pa.array(names, pa.string()))
        return table.set_column(where, table.schema.field(where), renamed).cast(flat_schema())

    def setup(self, *, mode: Mode = "strict", max_problems: int = 50) -> PartitionSetup:
        """The partitions as the distributed run takes them: items ``0..n-1`` and their loader."""
        study = self.header()
        judgments = self.judgments()
        load = partial(
            _load_generated,
            generator=self,
            study=study,
            judgments=judgments,
            mode=mode,
            max_problems=max_problems,
        )
        return PartitionSetup(
            GENERATED, list(range(self.n_partitions)), study, judgments, load, max_problems
        )


@lru_cache(maxsize=8)
def _base_chunk(generator: GeneratedPartitions, k: int) -> pa.Table:
    """Chunk ``k`` of the base study (kept: each worker draws each base chunk once)."""
    d = generator._design
    table = chunk_table(d, simulate_chunk(d, k))
    if generator.max_rank is not None:  # before the cast, which decodes every kept row
        rank = table.column("rank")  # null: the row of a query without results
        table = table.filter(
            pc.or_kleene(pc.is_null(rank), pc.less_equal(rank, generator.max_rank))
        )
    return table


def _load_generated(
    i: int,
    *,
    generator: GeneratedPartitions,
    study: Study,
    judgments: JudgmentFrame,
    mode: Mode,
    max_problems: int,
) -> PartitionLoad:
    """On a worker: generate partition ``i`` and validate it as a partition file is validated."""
    where = Path(GENERATED) / f"part-{i:05d}"
    loaded = frame_from_flat(
        generator.flat(i).to_pandas(),
        source=str(where),
        mode=mode,
        max_problems=max_problems,
        user_grade_scale=study.user_grade_scale,
        max_rank=generator.max_rank,
        raise_problems=False,
    )
    return checked_partition(
        where, loaded, study=study, judgments=judgments, mode=mode, max_problems=max_problems
    )
