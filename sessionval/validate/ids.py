"""The rules for identifiers, written once and called by every reader.

Whitespace rule
    Characters for which :meth:`str.isspace` is true (Unicode ``White_Space``:
    space, tab, line breaks, vertical tab, form feed, U+001C-U+001F, U+0085,
    no-break space U+00A0, the U+2000 spaces, U+3000 ideographic space, ...)
    around an id are removed, in every format; inside an id they are kept.
    Python's :meth:`str.strip`, pandas' ``.str.strip()`` and Arrow's
    ``utf8_trim_whitespace`` remove exactly this set, so a reader may use any of
    them; the vectorised readers call :func:`strip_ids`.

Unicode policy
    Ids are otherwise kept as written: no normalisation and no removal of
    invisible characters.  Spellings that are equal after NFKC normalisation
    with format characters (category ``Cf``: zero-width space and joiners, BOM,
    soft hyphen, ...) removed, but differ as written, are different ids; within
    one study they are reported by :func:`spelling_variants` so a silent
    mismatch becomes a note.  The check pays the normalisation cost only on
    non-ASCII ids.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .collect import ProblemCollector

__all__ = [
    "checked_id_column",
    "spelling_conflicts",
    "spelling_key",
    "spelling_notes",
    "spelling_variants",
    "strip_coded",
    "strip_id",
    "strip_id_categories",
    "strip_ids",
    "variants_note",
]

_SHOWN: Final = 3  # groups of spellings quoted in a note


def strip_id(value: str) -> str:
    r"""One id with the whitespace rule applied (surrounding Unicode whitespace removed).

    Examples
    --------
    >>> strip_id(" d1\u00a0\u3000")
    'd1'
    """
    return value.strip()


def strip_ids(values: pd.Series) -> pd.Series:
    r"""A column of ids (strings, missing allowed) with the whitespace rule applied.

    Examples
    --------
    >>> strip_ids(pd.Series(["d1\u00a0", "\u3000d2", None])).tolist()
    ['d1', 'd2', <NA>]
    """
    out: pd.Series = values.astype("string").str.strip()
    return out


def strip_coded(
    codes: npt.NDArray[np.integer[Any]], uniques: pd.Index, *, sort: bool = False
) -> tuple[npt.NDArray[np.integer[Any]], pd.Index]:
    """Factorised ids (``codes`` into ``uniques``, ``-1`` missing) with the whitespace rule.

    Only the distinct values are stripped; values that become equal are merged
    (their rows share one code), so the cost does not grow with the rows.  With
    ``sort`` the merged values are sorted (as ``pd.factorize(..., sort=True)``).

    Examples
    --------
    >>> codes, uniques = strip_coded(np.array([0, 1, -1]), pd.Index(["d1", "d1\u00a0"]))
    >>> codes.tolist(), uniques.tolist()
    ([0, 0, -1], ['d1'])
    """
    text = pd.Index(uniques.astype("string"))
    stripped = text.str.strip()
    if not np.asarray(stripped != text, dtype=bool).any():  # uniques are never missing
        return codes, uniques
    new_codes, merged = pd.factorize(stripped, sort=sort)
    remap = np.append(new_codes.astype(codes.dtype), -1)  # -1 (missing) picks the last slot
    return remap[codes], pd.Index(merged, dtype="string")


def checked_id_column(
    col: pd.Series, name: str, problems: ProblemCollector, line_at: Callable[[], npt.NDArray[Any]]
) -> tuple[pd.Categorical, npt.NDArray[np.bool_]]:
    """Ids by the whitespace rule (a sorted categorical) and the rows that have none.

    One sorted factorisation, as ``pd.Categorical`` does; the rule runs on the
    distinct values only (:func:`strip_coded`).  Ids that are not text (numbers,
    categories of numbers, from a DataFrame) become their text.  A missing id or
    one that is only whitespace is a problem of its row.

    Examples
    --------
    >>> p = ProblemCollector("t", limit=5, unit="row", container="table")
    >>> cat, bad = checked_id_column(pd.Series([10, 9, None]), "doc_id", p, lambda: np.arange(3))
    >>> list(cat.categories), bad.tolist(), str(p.problems[0])
    (['10', '9'], [False, False, True], 't (row 2): doc_id: is missing (every row needs one)')
    """
    if isinstance(col.dtype, pd.CategoricalDtype):  # already coded: the rule on its categories
        raw_codes, found = col.cat.codes.to_numpy(), pd.Index(col.cat.categories)
        cats_are_text = pd.api.types.infer_dtype(found, skipna=True) == "string"
    else:
        raw_codes, uniques = pd.factorize(col, sort=True)
        found = pd.Index(uniques)
        cats_are_text = isinstance(found.dtype, pd.StringDtype) or (
            pd.api.types.infer_dtype(found, skipna=True) == "string"
        )
    if cats_are_text:
        codes, cats = strip_coded(raw_codes, found, sort=True)
    else:  # numbers or categories: their text, stripped and sorted (on the distinct values)
        if found.dtype.kind == "f" and bool(np.all(np.floor(found) == found)):
            found = found.astype(np.int64)  # ids 10, 9 in a column with a gap read 10.0, 9.0
        new_codes, merged = pd.factorize(found.astype(str).str.strip(), sort=True)
        codes, cats = np.append(new_codes, -1)[raw_codes], pd.Index(merged)
    empty = np.flatnonzero(np.asarray(cats == "", dtype=bool))
    blank = codes == int(empty[0]) if len(empty) else np.zeros(len(codes), dtype=bool)
    missing = codes < 0
    if blank.any() or missing.any():
        lines, raw = line_at(), col.to_numpy()
        for i in problems.first(missing):
            problems.add_at(int(lines[i]), name, "is missing (every row needs one)")
        for i in problems.first(blank):
            problems.add_at(
                int(lines[i]), name, "is only whitespace (ids must not be empty)", repr(raw[i])
            )
    return pd.Categorical.from_codes(codes, categories=cats), blank | missing


def strip_id_categories(col: pd.Series) -> pd.Series:
    """A categorical of ids, the whitespace rule applied to its categories (:func:`strip_coded`).

    Examples
    --------
    >>> c = strip_id_categories(pd.Series(pd.Categorical(["d1", "d1\u00a0", None])))
    >>> c.cat.codes.tolist(), c.cat.categories.tolist()
    ([0, 0, -1], ['d1'])
    """
    codes = col.cat.codes.to_numpy()
    new_codes, cats = strip_coded(codes, col.cat.categories)
    if new_codes is codes:
        return col
    cat = pd.Categorical.from_codes(new_codes, categories=cats)
    out: pd.Series = pd.Series(cat, index=col.index)
    return out


def spelling_key(value: str) -> str:
    r"""The key under which spellings of one id meet: NFKC, format characters removed.

    Examples
    --------
    >>> spelling_key("cafe\u0301") == spelling_key("caf\u00e9")
    True
    >>> spelling_key("d\u200b1")
    'd1'
    """
    text = unicodedata.normalize("NFKC", value)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", text)


def spelling_variants(*id_sets: pd.Index | pd.Series) -> list[tuple[str, ...]]:
    r"""Groups of distinct ids that differ as written but share one :func:`spelling_key`.

    ``id_sets`` are the ids of one study's sources (e.g. the run's and the
    qrels' document ids); each is reduced to its distinct values first, and only
    the non-ASCII ones are normalised (an ASCII id is its own key, found by one
    vectorised check).

    Returns
    -------
    list of tuple of str
        Each group's spellings, sorted; groups in order of their first spelling.

    Examples
    --------
    >>> [len(g) for g in spelling_variants(pd.Index(["caf\u00e9", "x"]), pd.Index(["cafe\u0301"]))]
    [2]
    """
    if not any(_may_hold_non_ascii(ids) for ids in id_sets):
        return []  # an ASCII id is its own key: a group needs a non-ASCII spelling
    parts = [_distinct(ids) for ids in id_sets]
    wide = [p[_non_ascii(p)] for p in parts]  # usually empty: nothing else runs
    odd = pd.Index(pd.unique(np.concatenate([w.to_numpy(dtype=object) for w in wide])))
    if not len(odd):
        return []
    keys = pd.Series([spelling_key(v) for v in odd], index=odd)  # non-ASCII ids only
    # an ASCII id equal to a key joins its group (e.g. "d1" and "d1" + a zero-width space)
    hits = [p[p.isin(keys.to_numpy()) & ~_non_ascii(p)] for p in parts]
    plain = pd.Index(pd.unique(np.concatenate([h.to_numpy(dtype=object) for h in hits])))
    allk = pd.concat([keys, pd.Series(plain, index=plain, dtype=object)])
    sizes = allk.groupby(allk.to_numpy()).transform("size")
    shared = allk[sizes.to_numpy() > 1]
    groups = [tuple(sorted(g.index)) for _, g in shared.groupby(shared.to_numpy(), sort=False)]
    return sorted(groups)


def variants_note(groups: list[tuple[str, ...]], what: str) -> str | None:
    r"""A one-line note about :func:`spelling_variants` groups (``None``: there are none).

    Examples
    --------
    >>> note = variants_note([("d1", "d1\u200b")], "document ids")
    >>> note.split(", ")[1].split(":")[0]
    '1 group'
    >>> note.split(": ")[1].split(" (")[0]
    "'d1' / 'd1\\u200b'"
    """
    if not groups:
        return None
    n = len(groups)
    shown = "; ".join(" / ".join(ascii(v) for v in g) for g in groups[:_SHOWN])
    more = f"; and {n - _SHOWN} more" if n > _SHOWN else ""
    return (
        f"{what} that differ only by Unicode normalisation or invisible characters are "
        f"different ids (kept as written), {n} group{'s' if n != 1 else ''}: {shown}{more} "
        "(make the spellings agree if they are one id)"
    )


def _non_ascii(ids: pd.Index) -> npt.NDArray[np.bool_]:
    """Which ids hold a non-ASCII character (one Arrow kernel over the distinct ids)."""
    arr = pa.array(ids.astype("string[pyarrow]").array)
    out: npt.NDArray[np.bool_] = ~np.asarray(pc.string_is_ascii(arr), dtype=bool)
    return out


def _may_hold_non_ascii(ids: pd.Index | pd.Series) -> bool:
    """Whether an id may hold a non-ASCII character: one Arrow kernel over the rows, no hash.

    Arrow-backed strings are checked in place (``string_is_ascii``); a categorical on its
    categories; other columns are converted to Arrow strings first, and when that fails
    (numbers, mixed objects) the answer is ``True`` (the caller looks at the distinct ids).
    """
    if isinstance(ids.dtype, pd.CategoricalDtype):
        ids = pd.Series(ids).cat.categories
    try:
        if isinstance(ids.dtype, pd.StringDtype) and ids.dtype.storage == "pyarrow":
            arr = pa.array(ids.array)
        else:
            arr = pa.array(np.asarray(ids, dtype=object), type=pa.large_string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return True
    return pc.all(pc.string_is_ascii(arr)).as_py() is False


def _distinct(ids: pd.Index | pd.Series) -> pd.Index:
    """The distinct ids as strings (a categorical's categories: no pass over the rows)."""
    if isinstance(ids.dtype, pd.CategoricalDtype):
        out: pd.Index = pd.Index(pd.Series(ids).cat.categories.astype(str))
    else:
        out = pd.Index(pd.unique(pd.Index(ids).dropna().astype(str)))
    return out


def spelling_conflicts(
    topic: pd.Series, doc: pd.Series, grade: pd.Series, groups: list[tuple[str, ...]]
) -> str | None:
    """A note when one topic judges two spellings of a :func:`spelling_variants` group differently.

    Only the rows of documents in ``groups`` are looked at (a vectorised ``isin``).

    Examples
    --------
    >>> t, d, g = (pd.Series(v) for v in (["1", "1"], ["caf\u00e9", "cafe\u0301"], [2, 0]))
    >>> note = spelling_conflicts(t, d, g, spelling_variants(d))
    >>> note.split(",")[0][:75] + " ..."
    '1 document judged under spellings that differ only by Unicode normalisation ...'
    """
    if not groups:
        return None
    key = {v: i for i, grp in enumerate(groups) for v in grp}
    docs = doc.astype(str)
    rows = np.flatnonzero(docs.isin(list(key)).to_numpy())
    if not len(rows):
        return None
    t = pd.DataFrame(
        {
            "topic": topic.astype(str).to_numpy()[rows],
            "key": docs.iloc[rows].map(key).to_numpy(),
            "doc": docs.iloc[rows].to_numpy(),
            "grade": np.asarray(grade)[rows],
        }
    )
    n_grades = t.groupby(["topic", "key"], sort=False)["grade"].nunique()
    clash = n_grades[n_grades > 1].index
    if not len(clash):
        return None
    shown = []
    for topic_id, k in list(clash)[:_SHOWN]:
        sel = t[(t["topic"] == topic_id) & (t["key"] == k)]
        pairs = " / ".join(f"{d!a} ({g})" for d, g in zip(sel["doc"], sel["grade"], strict=True))
        shown.append(f"topic {topic_id!r}: {pairs}")
    n = len(clash)
    more = f"; and {n - _SHOWN} more" if n > _SHOWN else ""
    return (
        f"{n} document{'s' if n != 1 else ''} judged under spellings that differ only by "
        "Unicode normalisation or invisible characters, with different grades: "
        f"{'; '.join(shown)}{more} (a conflict if they are one document: make the spellings agree)"
    )


def spelling_notes(
    judged: pd.DataFrame | None, logged_docs: pd.Series | pd.Index | None
) -> list[str]:
    """The Unicode-policy notes of one study: spelling groups of documents, and grade conflicts.

    ``judged`` has ``topic_id`` (or ``query_id``), ``doc_id`` and ``grade``;
    ``logged_docs`` are the documents of the log or run.
    """
    sets = [x for x in (None if judged is None else judged["doc_id"], logged_docs) if x is not None]
    groups = spelling_variants(*sets)
    notes = [variants_note(groups, "document ids")]
    if judged is not None and groups:
        topic = judged["topic_id" if "topic_id" in judged.columns else "query_id"]
        notes.append(spelling_conflicts(topic, judged["doc_id"], judged["grade"], groups))
    return [n for n in notes if n]
