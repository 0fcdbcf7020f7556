"""Column converters of the flat-table loader: raw column in, typed array out, problems noted.

Each converter reads one column (any dtype a CSV, Parquet file or DataFrame gives),
returns it as the typed NumPy array or Series the frame stores, and reports every
value it cannot convert to a :class:`~sessionval.validate.collect.ProblemCollector`
with its row.  Ids become categoricals once, so the rules run on integer codes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.core.arrays.masked import BaseMaskedArray

from .collect import ProblemCollector
from .ids import strip_id_categories

__all__ = [
    "INEXACT_WHOLE",
    "INT32_MAX",
    "INT32_MIN",
    "TIME_MAX",
    "TIME_MIN",
    "as_category",
    "blank_rows",
    "compact_categorical",
    "exact_integers",
    "first_appearance_codes",
    "floats_to_ints",
    "inexact_whole_text",
    "missing_times",
    "parse_integers",
    "parse_numbers",
    "parse_times",
    "take_rows",
]


def as_category(col: pd.Series) -> pd.Series:
    """The column as a categorical with string categories (ids are encoded once).

    Surrounding whitespace is removed from every value (the id rule of every input
    format, :mod:`sessionval.validate.ids`): ``" d1"`` and ``"d1"`` are one id.  The work is
    on the distinct values only; values that become equal are merged.  A value that
    is only whitespace becomes ``""`` (:func:`blank_rows` finds those rows).

    Examples
    --------
    >>> as_category(pd.Series([3, 1, 3])).cat.categories.tolist()
    ['3', '1']
    >>> c = as_category(pd.Series(["d1", " d1", "d2 ", None]))
    >>> c.cat.codes.tolist(), c.cat.categories.tolist()
    ([0, 0, 1, -1], ['d1', 'd2'])
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        if cats.dtype != "string":
            col = col.cat.rename_categories(list(cats.astype(str)))
            col = col.cat.set_categories(pd.Index(col.cat.categories, dtype="string"))
        return strip_id_categories(col)
    codes, uniques = pd.factorize(col, sort=False)
    cat = pd.Categorical.from_codes(codes, categories=pd.Index(uniques.astype(str), dtype="string"))
    return strip_id_categories(pd.Series(cat))


def blank_rows(col: pd.Series) -> npt.NDArray[np.bool_]:
    """Rows of a categorical from :func:`as_category` whose id is empty (only whitespace).

    Examples
    --------
    >>> blank_rows(as_category(pd.Series(["a", "  ", None]))).tolist()
    [False, True, False]
    """
    cats = col.cat.categories
    where = np.flatnonzero(np.asarray(cats == "", dtype=bool))
    if not len(where):
        return np.zeros(len(col), dtype=bool)
    out: npt.NDArray[np.bool_] = col.cat.codes.to_numpy() == int(where[0])
    return out


def first_appearance_codes(
    col: pd.Series,
) -> tuple[pd.Index, npt.NDArray[np.int32], npt.NDArray[np.bool_]]:
    """Encode ids by order of first appearance: ``(names, code per row, missing rows)``.

    A missing id gets code ``-1``.  Only the rows where the value changes are
    factorised, so a table sorted by session costs one pass over the codes.

    Examples
    --------
    >>> names, codes, missing = first_appearance_codes(pd.Series(["b", "b", None, "a", "b"]))
    >>> names.tolist(), codes.tolist(), missing.tolist()
    (['b', 'a'], [0, 0, -1, 1, 0], [False, False, True, False, False])
    """
    raw = as_category(col)
    raw_codes = raw.cat.codes.to_numpy()
    missing = raw_codes < 0
    present = raw_codes[~missing] if missing.any() else raw_codes
    change = np.flatnonzero(present[1:] != present[:-1]) + 1
    first_seen = pd.unique(np.concatenate([present[:1], present[change]]))
    remap = np.full(len(raw.cat.categories) + 1, -1, dtype=np.int32)
    remap[first_seen] = np.arange(len(first_seen), dtype=np.int32)
    codes = remap[raw_codes]  # -1 (missing) picks the sentinel slot
    names = pd.Index(raw.cat.categories[first_seen].astype(str))
    return names, codes, missing


def compact_categorical(
    codes: npt.NDArray[np.integer[Any]], categories: pd.Index
) -> pd.Categorical:
    """A categorical of ``codes`` keeping only the categories used (a bincount, no sort).

    Examples
    --------
    >>> compact_categorical(np.array([2, -1, 2]), pd.Index(["a", "b", "c"])).tolist()
    ['c', nan, 'c']
    """
    valid = codes >= 0
    used = np.bincount(codes[valid], minlength=len(categories)) > 0
    remap = (np.cumsum(used) - 1).astype(np.int32)
    new = np.where(valid, remap[np.maximum(codes, 0)], -1).astype(np.int32)
    return pd.Categorical.from_codes(new, categories=categories[used])


def take_rows(arr: npt.NDArray[Any], rows: npt.NDArray[np.int64] | None) -> npt.NDArray[Any]:
    """``arr[rows]``, or ``arr`` itself when ``rows`` is ``None`` (rows already in order)."""
    return arr if rows is None else arr[rows]


#: the problem of a value that only rounds to an integer (``2.9999999999999999``)
INEXACT_WHOLE: Final = (
    "must be an integer as written (digits, e.g. 3 or 3.0), not a number that rounds to one"
)
#: how a whole number is written: digits, optionally a sign and a fraction of zeros
_WHOLE_TEXT: Final = r"\s*[+-]?[0-9]+(?:\.0*)?\s*"


def inexact_whole_text(raw: pd.Series, vals: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Rows whose parsed value is whole but whose text does not write a whole number.

    Integers are decided on their text, not on the float it rounds to:
    ``2.9999999999999999`` and ``1e-400`` parse to 3 and 0 but are not integers as
    written.  Call it only on a text column that did not parse as integers (the
    regular expression then runs on every row).

    Examples
    --------
    >>> raw = pd.Series(["3", "3.0", "-2", "2.9999999999999999", "1e-400", "x"])
    >>> vals = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    >>> inexact_whole_text(raw, vals).tolist()
    [False, False, False, True, True, False]
    """
    with np.errstate(invalid="ignore"):
        whole: npt.NDArray[np.bool_] = np.isfinite(vals) & (np.floor(vals) == vals)
    if not whole.any():
        return whole
    written = raw.astype("string").str.fullmatch(_WHOLE_TEXT)
    out: npt.NDArray[np.bool_] = whole & ~written.fillna(True).to_numpy(dtype=bool)
    return out


def exact_integers(
    col: pd.Series,
    name: str,
    bounds: tuple[int, int],
    storage: str,
    problems: ProblemCollector,
    line_at: Callable[[], npt.NDArray[Any]],
    *,
    judgment: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Parse integers; flag non-integers and values outside ``bounds`` (checked before any cast).

    Text is decided as written (:func:`inexact_whole_text`); numbers given as numbers
    (a DataFrame's float column) need only be whole.  Every bad row is listed, up to
    the limit of ``problems``, with its line (or row) and the value as given.

    Returns the values (float64, exact within ``bounds``) and the mask of bad rows.
    """
    num = pd.to_numeric(col, errors="coerce")
    vals = num.to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        not_int = ~np.isfinite(vals) | (np.floor(vals) != vals)
    inexact = np.zeros(len(vals), dtype=bool)
    # text that did not parse as integers is decided on the text, not the float
    if not pd.api.types.is_integer_dtype(num.dtype) and not pd.api.types.is_numeric_dtype(col):
        inexact = inexact_whole_text(col, vals)
        not_int |= inexact
    with np.errstate(invalid="ignore"):
        out = ~not_int & ((vals < bounds[0]) | (vals > bounds[1]))
    bad = not_int | out
    if bad.any():
        lines = line_at()
        raw = col.to_numpy()
        for i in problems.first(not_int):
            message = INEXACT_WHOLE if inexact[i] else "must be an integer"
            problems.add_at(int(lines[i]), name, message, repr(str(raw[i])))
        for i in problems.first(out):
            problems.add_at(
                int(lines[i]),
                name,
                f"must be an integer from {bounds[0]} to {bounds[1]} ({storage})",
                repr(str(raw[i])),
                judgment=judgment,
            )
    return vals, bad


def parse_numbers(
    raw: pd.Series,
    name: str,
    coll: ProblemCollector,
    *,
    integer: bool,
    dtype: type[np.floating[Any]] = np.float64,
    nullable_rows: npt.NDArray[np.bool_] | None = None,
    at: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """Column values as floats (NaN = missing); non-numbers and fractions are problems.

    Parameters
    ----------
    raw
        The column at rows ``at`` (all rows when ``None``): query- and session-level
        columns are read at the first row of each query or session.
    name
        Column name in messages.
    coll
        Where problems go.
    integer
        Whole numbers only (a fraction is a problem and becomes NaN).
    dtype
        ``float32`` for row-level columns: exact for the integers they hold.
    nullable_rows
        When given, a missing value is a problem except on these rows.
    at
        Table row of each value of ``raw``.

    Examples
    --------
    >>> coll = ProblemCollector("t", np.zeros(3, np.int32), pd.Index(["s"]), str)
    >>> parse_numbers(pd.Series(["1", "x", "2.5"]), "clicks", coll, integer=True).tolist()
    [1.0, nan, nan]
    >>> [(p.location, p.message) for p in coll.problems]
    [('1', 'must be an integer'), ('2', 'must be a whole number')]
    """
    where = (lambda idx: idx) if at is None else (lambda idx: at[idx])
    reported: npt.NDArray[np.bool_] | None = None  # values already reported as wrong
    masked = _masked_parts(raw)
    # stored as integers: whole and finite (the widest, int64, is far below float32's
    # largest), so the fraction and infinity scans over every row are skipped
    whole = masked is not None and masked[0].dtype.kind in "iu"
    if masked is not None:
        vals = masked[0].astype(dtype)
        vals[masked[1]] = np.nan
    elif pd.api.types.is_numeric_dtype(raw.dtype) and not isinstance(
        raw.dtype, pd.CategoricalDtype
    ):
        vals = raw.to_numpy(dtype=dtype, na_value=np.nan, copy=True)
    else:
        conv = pd.to_numeric(raw.astype("string"), errors="coerce")
        vals = conv.to_numpy(dtype=dtype, na_value=np.nan, copy=True)
        reported = np.isnan(vals) & raw.notna().to_numpy()
        if reported.any():
            rows = np.flatnonzero(reported)
            kind = "an integer" if integer else "a number"
            coll.add(where(rows), name, f"must be {kind}", raw.iloc[rows].tolist())
        if integer and not pd.api.types.is_integer_dtype(conv.dtype):
            inexact = inexact_whole_text(raw, vals.astype(np.float64, copy=False))
            if inexact.any():  # decided on the text, not on the float it rounds to
                rows = np.flatnonzero(inexact)
                coll.add(where(rows), name, INEXACT_WHOLE, raw.iloc[rows].tolist())
                vals[rows] = np.nan
                reported |= inexact
    if integer and not whole:
        frac = vals != np.floor(vals)  # NaN compares unequal to itself: excluded below
        frac &= ~np.isnan(vals)
        if frac.any():
            rows = np.flatnonzero(frac)
            coll.add(where(rows), name, "must be a whole number", vals[rows].tolist())
            vals[rows] = np.nan
            reported = frac if reported is None else reported | frac
    # "inf", or beyond the largest float32 of a row-level column (never an integer)
    infinite = np.zeros(0, dtype=bool) if whole else np.isinf(vals)
    if infinite.any():
        rows = np.flatnonzero(infinite)
        coll.add(
            where(rows),
            name,
            f"must be a finite number (at most {float(np.finfo(dtype).max):.4g})",
            raw.iloc[rows].tolist(),
        )
        vals[rows] = np.nan
        reported = infinite if reported is None else reported | infinite
    if nullable_rows is not None:
        missing = np.isnan(vals) & ~nullable_rows
        if reported is not None:
            missing &= ~reported
        if missing.any():
            coll.add(where(np.flatnonzero(missing)), name, "is required")
    return vals


#: the integers an int32 column holds (ranks, query positions before their own check)
INT32_MIN: Final = int(np.iinfo(np.int32).min)
INT32_MAX: Final = int(np.iinfo(np.int32).max)


def parse_integers(
    raw: pd.Series,
    name: str,
    coll: ProblemCollector,
    *,
    fill: int,
    nullable_rows: npt.NDArray[np.bool_] | None,
    dtype: type[np.signedinteger[Any]] = np.int32,
) -> tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.bool_]]:
    """An integer column as int32 (missing -> ``fill``) and its missing mask.

    ``dtype`` (narrower than int32): the type to return when the column is stored in it or
    a narrower one (e.g. int16 clicks, no int32 copy); otherwise the result is int32.

    Integer columns (Parquet, typed DataFrames) are converted directly; anything
    else goes through :func:`parse_numbers`, which reports non-numbers and
    fractions.  ``nullable_rows`` marks rows that may be empty (``None``: none may).
    A value outside the 32-bit range is checked *before* the cast (it would wrap):
    it is a problem showing the value as written, and becomes ``fill``.

    Examples
    --------
    >>> coll = ProblemCollector("t", np.zeros(3, np.int32), pd.Index(["s"]), str)
    >>> ints, missing = parse_integers(
    ...     pd.Series([1, None, 3], dtype="Int64"), "rank", coll, fill=0, nullable_rows=None
    ... )
    >>> ints.tolist(), missing.tolist(), [p.message for p in coll.problems]
    ([1, 0, 3], [False, True, False], ['is required'])
    >>> ints, _ = parse_integers(pd.Series(["7", "4294967297"]), "rank", coll, fill=0,
    ...                          nullable_rows=None)
    >>> ints.tolist(), coll.problems[-1].value
    ([7, 0], "'4294967297'")
    """
    what = f"must be between {INT32_MIN} and {INT32_MAX} (stored in 32 bits)"
    masked = _masked_parts(raw)
    if masked is not None and np.issubdtype(masked[0].dtype, np.integer):
        data, missing = masked
        if data.dtype.itemsize < 4 or data.dtype == np.int32:
            # fits in 32 bits: no range check, one cast
            info = np.iinfo(dtype)
            fits = np.can_cast(data.dtype, dtype) and info.min <= fill <= info.max
            ints = data.astype(dtype if fits else np.int32)
            missing = missing.copy()
            if missing.any():
                ints[missing] = fill
            required = missing if nullable_rows is None else missing & ~nullable_rows
            if required.any():
                coll.add(np.flatnonzero(required), name, "is required")
            return ints, missing
    if pd.api.types.is_integer_dtype(raw.dtype) and not isinstance(raw.dtype, pd.CategoricalDtype):
        missing = raw.isna().to_numpy()
        values = raw.to_numpy(dtype=np.int64, na_value=fill) if missing.any() else raw.to_numpy()
        out_of_range = (values < INT32_MIN) | (values > INT32_MAX)
        if out_of_range.any():
            rows = np.flatnonzero(out_of_range)
            coll.add(rows, name, what, values[rows].tolist())
            values = np.where(out_of_range, fill, values)
            missing = missing | out_of_range
        ints = values.astype(np.int32)
        required = missing & ~out_of_range
        if nullable_rows is not None:
            required &= ~nullable_rows
        if required.any():
            coll.add(np.flatnonzero(required), name, "is required")
        return ints, missing
    allowed = np.zeros(len(raw), dtype=bool) if nullable_rows is None else nullable_rows
    vals = parse_numbers(raw, name, coll, integer=True, dtype=np.float64, nullable_rows=allowed)
    missing = np.isnan(vals)
    out_of_range = (vals < INT32_MIN) | (vals > INT32_MAX)  # NaN compares False
    if out_of_range.any():
        rows = np.flatnonzero(out_of_range)
        coll.add(rows, name, what, raw.iloc[rows].tolist())
        vals[rows] = fill
        missing |= out_of_range  # reported: no later check should see the fill value
    return floats_to_ints(vals, fill=fill, dtype=np.int32), missing


def _masked_parts(raw: pd.Series) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]] | None:
    """The values and missing mask of a masked (nullable) numeric column, without a copy.

    ``Series.to_numpy(dtype, na_value=)`` on a masked array goes through object-level
    checks and copies several times; the two arrays give the same values in one cast.
    ``None`` for any other column.
    """
    arr = raw.array
    if not isinstance(arr, BaseMaskedArray):
        return None
    # private attributes: pandas has no public accessor for the values and the mask
    data: npt.NDArray[Any] = arr._data  # type: ignore[attr-defined]
    mask: npt.NDArray[np.bool_] = arr._mask  # type: ignore[attr-defined]
    if data.dtype.kind not in "iuf":  # a boolean column: the generic path reports it
        return None
    return data, mask


def floats_to_ints(
    values: npt.NDArray[np.floating[Any]], *, fill: int, dtype: type[np.integer[Any]]
) -> npt.NDArray[Any]:
    """Floats with NaN as integers, NaN replaced by ``fill`` (no ±inf scan as in nan_to_num).

    Examples
    --------
    >>> floats_to_ints(np.array([1.0, np.nan]), fill=-1, dtype=np.int32).tolist()
    [1, -1]
    """
    with np.errstate(invalid="ignore"):  # NaN casts to garbage here, replaced just below
        out = values.astype(dtype)
    nan = np.isnan(values)
    if nan.any():
        out[nan] = fill
    return out


#: the times a ``datetime64[ns]`` column can hold (about 1677-09-21 to 2262-04-11)
TIME_MIN: Final = pd.Timestamp.min.tz_localize("UTC")
TIME_MAX: Final = pd.Timestamp.max.tz_localize("UTC")


def parse_times(
    raw: pd.Series, name: str, coll: ProblemCollector, at: npt.NDArray[np.int64]
) -> pd.Series:
    """Times at rows ``at`` (``raw`` already taken there) as UTC; unparseable ones are problems.

    Naive times are taken as UTC; aware ones are converted to it.  A time outside
    the range the frame stores (nanoseconds since 1970 in 64 bits: 1677-09-21 to
    2262-04-11) is a problem too, reported with the value as written.

    Examples
    --------
    >>> coll = ProblemCollector("t", np.zeros(3, np.int32), pd.Index(["s"]), str)
    >>> t = parse_times(pd.Series(["2008-03-01T09:00:05+01:00", "noon", "9999-12-31T00:00:00Z"]),
    ...                 "query_time", coll, np.arange(3))
    >>> str(t.iloc[0]), [(p.location, p.message[:15]) for p in coll.problems]
    ('2008-03-01 08:00:05+00:00', [('1', 'must be an ISO-'), ('2', 'must be between')])
    """
    raw = raw.reset_index(drop=True)
    if isinstance(raw.dtype, pd.DatetimeTZDtype):
        conv: pd.Series = raw.dt.tz_convert("UTC")
    elif pd.api.types.is_datetime64_dtype(raw.dtype):
        conv = raw.dt.tz_localize("UTC")
    else:
        conv = pd.to_datetime(raw.astype("string"), errors="coerce", utc=True, format="ISO8601")
        bad = conv.isna().to_numpy() & raw.notna().to_numpy()
        if bad.any():
            rows = np.flatnonzero(bad)
            coll.add(
                at[rows],
                name,
                "must be an ISO-8601 time (e.g. 2008-03-01T09:00:05Z)",
                raw.iloc[rows].tolist(),
            )
    # a unit coarser than ns (Parquet, pandas' own parsing) holds times ns cannot: check first
    outside = ((conv < TIME_MIN) | (conv > TIME_MAX)).to_numpy(dtype=bool, na_value=False)
    if outside.any():
        rows = np.flatnonzero(outside)
        coll.add(
            at[rows],
            name,
            f"must be between {TIME_MIN:%Y-%m-%d} and {TIME_MAX:%Y-%m-%d} "
            "(the range of nanosecond times)",
            [_time_text(v) for v in raw.iloc[rows].tolist()],
        )
        conv = conv.where(~outside)
    return conv.astype("datetime64[ns, UTC]")


def _time_text(value: object) -> str:
    """A time as written; a Timestamp beyond Python's years 1-9999 as its numpy spelling."""
    try:
        return str(value)
    except (NotImplementedError, ValueError, OverflowError):  # pandas' str() needs datetime
        asm8 = getattr(value, "asm8", None)
        return str(asm8) if asm8 is not None else repr(value)


def missing_times(n: int) -> pd.Series:
    """``n`` unknown times (NaT, UTC): the value of a time column the table does not have."""
    return pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns, UTC]")
