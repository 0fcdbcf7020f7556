r"""What a searcher changed from one query to the next: the reformulation types and groups.

:func:`classify` names the change from query ``a`` to query ``b`` with one of
:data:`TYPES`: the 13 types of the taxonomy Huang & Efthimiadis (CIKM 2009, Table 1)
built from the AOL log, plus ``same`` (a repeated query) and ``new`` (no rule matched),
as their classifier does.  The rules run in the fixed order of :data:`TYPES` (their
classifier's order, with the two departures below); the first that matches names the
pair, so the result is deterministic.  They read the query *terms* (:func:`terms`: the
lower-cased Unicode ``\w+`` tokens) and ``norm`` = the terms joined by one space:

``same``
    the two texts are equal up to case and runs of whitespace.
``word_reorder``
    the same terms (as a multiset) in another order: *ipod nano* → *nano ipod*.
``whitespace_punctuation``
    the same characters in the terms, split or joined differently, or only punctuation
    changed: *facebook* → *face book*, *fox.com* → *fox com*.
``url_stripping``
    ``a`` has URL parts (:data:`URL_PARTS`: ``www``, ``http``, ``com``, ...) and ``b`` is
    ``a``'s terms without them: *www.myspace.com* → *myspace*.
``add_words``
    ``b`` has every term of ``a`` and more: *google* → *google maps*.
``remove_words``
    ``a`` has every term of ``b`` and more: *jesus as a child* → *jesus child*.
``stemming``
    as many terms, and the Snowball (Porter2) English stems equal place by place:
    *knitting pattern* → *knit patterns*.
``form_acronym``
    ``b`` is one term spelling the initials of ``a``'s two or more terms (stop words
    :data:`ACRONYM_STOPWORDS` may be skipped): *personal digital assistant* → *pda*.
``expand_acronym``
    the reverse: *pda* → *personal digital assistant*.
``abbreviation``
    as many terms, each term a prefix of the other query's term at the same place
    (either direction): *mass gen hospital* → *massachusetts general hospital*,
    *pittsburgh* → *pitt*.
``substring``
    ``norm(b)`` begins or ends ``norm(a)``: *myspacelayouts* → *layouts*.
``superstring``
    ``norm(a)`` begins or ends ``norm(b)``: *layouts* → *myspacelayouts*.
``spelling_correction``
    Damerau-Levenshtein distance (rapidfuzz) between ``norm(a)`` and ``norm(b)`` at most
    :data:`SPELLING_DISTANCE`: *britny spears* → *britney spears*.
``word_substitution``
    at least one term kept and at least one term of each query missing from the other:
    *easter egg hunt* → *easter egg search*.
``new``
    no rule matched, or either query has no term.

Where this departs from the authors' classifier (``reformulationClassifier.py``, which
splits queries on whitespace only): URL stripping runs before add/remove words, because
with ``\w+`` terms *www.myspace.com* → *myspace* would otherwise be a removal of words;
their word substitution tests WordNet path similarity (>= 0.2) and runs before spelling
correction, while the substitution rule here is lexical (no thesaurus: any one-for-one
change that keeps a term), so it runs *after* spelling correction, which it would
otherwise swallow.  Their acronym rule has no stop-word variant, and their edit distance
is Levenshtein's (here Damerau's: a swap of two letters is one edit).

:data:`GROUPS` maps each type to the move in the searcher's need, after Boldi et al.
(WSCD 2009): ``specialisation`` (add words, superstring, expand acronym),
``generalisation`` (remove words, substring), ``parallel`` (word substitution: same
topic, another aspect), ``repeat`` (the same query, or the same words in another form:
reorder, whitespace/punctuation, URL stripping, stemming, acronym formed, abbreviation,
spelling correction; Boldi's *error correction* falls here) and ``new``.

References
----------
Huang, J., Efthimiadis, E. N. (2009). Analyzing and evaluating query reformulation
strategies in web search logs. CIKM 2009, 77-86.
Boldi, P., Bonchi, F., Castillo, C., Vigna, S. (2009). From "dango" to "japanese cakes":
query reformulation models and patterns. WI-IAT 2009.

Examples
--------
>>> classify("ipod nano", "nano ipod"), classify("google", "google maps")
('word_reorder', 'add_words')
>>> classify("personal digital assistant", "pda"), classify("layouts", "myspacelayouts")
('form_acronym', 'superstring')
>>> GROUPS[classify("jesus as a child", "jesus child")]
'generalisation'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

from ..errors import SessionvalError

__all__ = [
    "ACRONYM_STOPWORDS",
    "GROUPS",
    "GROUP_ORDER",
    "SPELLING_DISTANCE",
    "TYPES",
    "URL_PARTS",
    "classify",
    "terms",
]

#: The types, in the order their rules are tried (module docstring).
TYPES: Final = (
    "same",
    "word_reorder",
    "whitespace_punctuation",
    "url_stripping",
    "add_words",
    "remove_words",
    "stemming",
    "form_acronym",
    "expand_acronym",
    "abbreviation",
    "substring",
    "superstring",
    "spelling_correction",
    "word_substitution",
    "new",
)

#: Each type's group (Boldi et al. 2009 flavour; module docstring).
GROUPS: Final[dict[str, str]] = {
    "same": "repeat",
    "word_reorder": "repeat",
    "whitespace_punctuation": "repeat",
    "url_stripping": "repeat",
    "add_words": "specialisation",
    "remove_words": "generalisation",
    "stemming": "repeat",
    "form_acronym": "repeat",
    "expand_acronym": "specialisation",
    "substring": "generalisation",
    "superstring": "specialisation",
    "abbreviation": "repeat",
    "spelling_correction": "repeat",
    "word_substitution": "parallel",
    "new": "new",
}

#: The groups, in the order tables list them.
GROUP_ORDER: Final = ("specialisation", "generalisation", "parallel", "repeat", "new")

#: Terms that make a query a URL (stripped by ``url_stripping``).
URL_PARTS: Final = frozenset(
    {"http", "https", "www", "com", "org", "net", "edu", "gov", "html", "htm", "co", "uk"}
)

#: Words an acronym may skip (*national association of realtors* → *nar*).
ACRONYM_STOPWORDS: Final = frozenset({"a", "an", "and", "the", "of", "for", "in", "on", "to"})

#: Largest Damerau-Levenshtein distance counted as a spelling correction.
SPELLING_DISTANCE: Final = 2

_WORD: Final = re.compile(r"\w+")
_INSTALL: Final = (
    "reformulation types need the reformulations extra (snowballstemmer, rapidfuzz): "
    'pip install "sessionval[reformulations]"'
)


def terms(text: str | None) -> tuple[str, ...]:
    r"""The query's terms: its lower-cased Unicode ``\w+`` tokens, in order.

    >>> terms("Otitis media, Children's")
    ('otitis', 'media', 'children', 's')
    """
    return tuple(_WORD.findall(text.lower())) if text else ()


def _module(name: str) -> Any:
    """An optional library of the reformulations extra, or why it is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - the extra is installed with [all]
        raise SessionvalError(_INSTALL) from exc


@lru_cache(maxsize=1)
def _stem() -> Callable[[list[str]], list[str]]:
    stemmer = _module("snowballstemmer").stemmer("english")
    words: Callable[[list[str]], list[str]] = stemmer.stemWords
    return words


@lru_cache(maxsize=1)
def _distance() -> Callable[[str, str], int]:
    dist: Callable[[str, str], int] = _module("rapidfuzz.distance").DamerauLevenshtein.distance
    return dist


def _initials(words: tuple[str, ...]) -> set[str]:
    """The acronyms ``words`` spell: every initial, or those of the non-stop words."""
    content = [w for w in words if w not in ACRONYM_STOPWORDS]
    return {"".join(w[0] for w in words), "".join(w[0] for w in content)}


def _is_acronym(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    return len(short) == 1 and len(long) >= 2 and short[0] in _initials(long)


def _prefixes(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return len(a) == len(b) and all(
        x.startswith(y) or y.startswith(x) for x, y in zip(a, b, strict=True)
    )


def classify(a: str | None, b: str | None) -> str:
    """The reformulation type of query ``a`` followed by query ``b`` (module docstring).

    Parameters
    ----------
    a, b
        The earlier and the later query's text (``None``: no text).

    Returns
    -------
    str
        One of :data:`TYPES`.

    Examples
    --------
    >>> classify("Facebook", "face book"), classify("www.myspace.com", "myspace")
    ('whitespace_punctuation', 'url_stripping')
    >>> classify("running", "run"), classify("britny spears", "britney spears")
    ('stemming', 'spelling_correction')
    """
    a, b = a or "", b or ""
    if a.lower().split() == b.lower().split():
        return "same"
    ta, tb = terms(a), terms(b)
    if not ta or not tb:
        return "whitespace_punctuation" if ta == tb else "new"
    if ta != tb and sorted(ta) == sorted(tb):
        return "word_reorder"
    if "".join(ta) == "".join(tb):
        return "whitespace_punctuation"
    if URL_PARTS & set(ta) and tuple(t for t in ta if t not in URL_PARTS) == tb:
        return "url_stripping"
    sa, sb = set(ta), set(tb)
    if sa < sb:
        return "add_words"
    if sb < sa:
        return "remove_words"
    stem = _stem()
    if len(ta) == len(tb) and stem(list(ta)) == stem(list(tb)):
        return "stemming"
    if _is_acronym(tb, ta):
        return "form_acronym"
    if _is_acronym(ta, tb):
        return "expand_acronym"
    if _prefixes(ta, tb):
        return "abbreviation"
    na, nb = " ".join(ta), " ".join(tb)
    if na.startswith(nb) or na.endswith(nb):
        return "substring"
    if nb.startswith(na) or nb.endswith(na):
        return "superstring"
    if _distance()(na, nb) <= SPELLING_DISTANCE:
        return "spelling_correction"
    if sa & sb:
        return "word_substitution"
    return "new"
