"""The grade join: one protocol, implementations chosen by the data.

Every grade a measure sees is the answer of a :class:`GradeJoin` to "what grade
do the judgments give to the document of each row of these ranked lists?".  Its
implementations answer it, each fastest on its own data:

* :class:`~sessionval.judgments.lookup.GradeLookup` (documents as dictionary
  codes): the study's categoricals (session evaluation, ``result_grades``,
  ``lookup_grades``), runs read as categoricals and every id the other cannot
  take (non-ASCII, missing, a key collision);
* :class:`~sessionval.measures.key_join.JudgedKeys` (documents as 64-bit keys
  read from Arrow's string buffers, no document dictionary built): ``evaluate_run``
  on plain ASCII string tables;
* :class:`~sessionval.measures.judgment_sets.SetKeys` (the same keys, looked up
  among the distinct judgment sets when qrels repeat a topic's judgments per query:
  each set handled once).

Which one serves a run is decided in one place,
:func:`sessionval.measures.run_lists.ranked_lists`; the session evaluation's
documents are always categoricals.  None validates: the judgments come from the
one boundary (:mod:`sessionval.validate.judgments`).  Arrow's and pandas' own
kernels (``dictionary_encode``, ``index_in``, ``Table.join``, ``factorize``,
``merge``) were timed doing the same join on both workload shapes of issue 26
(``benchmarks/bench_shapes.py joins``; ``docs/performance.md``).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

import numpy.typing as npt

from .._types import FloatArray

__all__ = ["GradeJoin"]

Docs = TypeVar("Docs", contravariant=True)
"""How an implementation holds the rows' documents (dictionary codes, 64-bit keys)."""


class GradeJoin(Protocol[Docs]):
    """The (judgment key, document) -> grade join over rows grouped in ranked lists."""

    def lists(self, key_codes: npt.ArrayLike, counts: npt.ArrayLike, docs: Docs) -> FloatArray:
        """Grade of each row (NaN: unjudged); list ``i`` owns the next ``counts[i]`` rows.

        Parameters
        ----------
        key_codes
            One judgment-key code per list, in the key categories the join was
            prepared for.
        counts
            Rows per list.
        docs
            The rows' documents, in the implementation's form.
        """
        ...
