"""The ordering of a scored run into ranked lists, at its old path.

The rule lives in :mod:`sessionval.validate.ranking` (below ``io``, so the runs read as
sessions rank with it too); this module only re-exports it for the measures.
"""

from __future__ import annotations

from ..validate.ranking import (
    SORT_BLOCK_ROWS,
    coded_doc_ranks,
    factorize_ids,
    first_duplicate,
    run_order,
)

__all__ = [
    "SORT_BLOCK_ROWS",
    "coded_doc_ranks",
    "factorize_ids",
    "first_duplicate",
    "run_order",
]
