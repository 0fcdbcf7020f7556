"""A Stata ``.dta`` file of a table made for it, written by pandas' column-wise writer.

pyreadstat writes a ``.dta`` cell by cell in a Python loop (about 0.3 µs a cell:
1.5 s for the 200k-session ``per_session_wide``); pandas' ``DataFrame.to_stata``
packs the columns into one record array (0.3 s for the same table). Both write what
:func:`~sessionval.output.labels.to_stats_frame` made the same way: read back with
pyreadstat the data, variable labels, value labels and file label are equal
(``tests/output/test_stata_file.py``). The file is Stata 14's format 118, which
Stata 14 and later read (pyreadstat writes format 119, Stata 15 and later).

Where pandas refuses a table (its checks of Stata's limits, such as a variable
label of more than 80 characters), the file is left to pyreadstat, as before: it
writes the file or raises its own error.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["STRL_BYTES", "write_dta"]

#: Longest text (UTF-8 bytes) a fixed-width Stata ``str#`` holds; longer text is a ``strL``.
STRL_BYTES = 2045


def write_dta(
    data: pd.DataFrame,
    path: str | Path,
    *,
    file_label: str,
    column_labels: Mapping[str, str | None],
    variable_value_labels: Mapping[str, Mapping[int | float, str]],
) -> None:
    """Write ``data`` to ``path`` as a Stata 14+ ``.dta`` file (format 118).

    Parameters
    ----------
    data
        Columns Stata holds (numbers, UTC times, text with missing as ``""``;
        :func:`~sessionval.output.labels.to_stats_frame`), valid names.
    path
        The file.  The keywords are pyreadstat's ``write_dta``'s.
    file_label
        Stata's data label (80 characters at most: see
        :func:`~sessionval.output.export.fit_label`).
    column_labels
        Each column's variable label (``None``: none).
    variable_value_labels
        Per coded column, its value labels (code → text).

    Examples
    --------
    >>> import pyreadstat, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.dta"
    >>> codes = np.array([2, 1], dtype=np.int32)
    >>> write_dta(pd.DataFrame({"system_id": codes, "x": [0.5, np.nan]}), path,
    ...           file_label="study: t", column_labels={"system_id": "system", "x": None},
    ...           variable_value_labels={"system_id": {1: "A", 2: "B"}})
    >>> df, meta = pyreadstat.read_dta(str(path))
    >>> df["system_id"].tolist(), meta.variable_value_labels, meta.file_label
    ([2, 1], {'system_id': {1: 'A', 2: 'B'}}, 'study: t')
    """
    labels = {name: label for name, label in column_labels.items() if label}
    # the storage types of pyreadstat's files (and of the .sav): integers of up to 32 bits
    # a long, wider ones a double
    cast: dict[str, np.dtype[np.generic]] = {}
    for name, dtype in data.dtypes.items():
        stored = _stored_as(dtype)
        if stored is not None and stored != dtype:
            cast[str(name)] = stored
    table = data.astype(cast) if cast else data
    try:
        with warnings.catch_warnings():
            # int64 beyond Stata's long is stored as double: pyreadstat does the same, silently
            warnings.simplefilter("ignore", pd.errors.PossiblePrecisionLoss)
            table.to_stata(
                path,
                write_index=False,
                version=118,
                data_label=file_label or None,
                variable_labels=labels,
                value_labels={k: dict(v) for k, v in variable_value_labels.items()} or None,
                convert_strl=_long_text(table),
            )
    except ValueError:  # refused by pandas' checks: pyreadstat writes it or says why, as before
        import pyreadstat

        Path(path).unlink(missing_ok=True)
        pyreadstat.write_dta(
            data,
            str(path),
            file_label=file_label,
            column_labels=dict(column_labels),
            variable_value_labels={k: dict(v) for k, v in variable_value_labels.items()},
        )


def _stored_as(dtype: object) -> np.dtype[np.generic] | None:
    """The type pyreadstat stores an integer column as: ``int32``, or ``float64`` if wider."""
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iu":
        return None
    fits = np.can_cast(dtype, np.int32)
    return np.dtype(np.int32) if fits else np.dtype(np.float64)


def _long_text(data: pd.DataFrame) -> list[str]:
    """The text columns with a value longer than a ``str#`` holds (written as ``strL``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    long: list[str] = []
    for name in data.columns:
        col = data[name]
        if len(col) and pd.api.types.is_string_dtype(col.dtype):
            try:
                text = pa.array(col, type=pa.large_string())
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: pandas refuses it
                continue
            widest = pc.max(pc.binary_length(text)).as_py()
            if widest is not None and widest > STRL_BYTES:
                long.append(str(name))
    return long
