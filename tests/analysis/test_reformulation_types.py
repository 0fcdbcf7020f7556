"""The reformulation types: every rule on the examples of Huang & Efthimiadis (CIKM 2009)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionval.analysis.reformulation_types import GROUP_ORDER, GROUPS, TYPES, classify, terms
from sessionval.analysis.reformulations import pair_terms

# (earlier, later, type): the paper's Table 1 examples where it gives one, else one of ours;
# the order of the rules is the authors' classifier's (module docstring for the departures)
EXAMPLES = [
    ("ipod nano", "ipod nano", "same"),
    ("IPod  Nano", "ipod nano", "same"),
    ("ipod nano", "nano ipod", "word_reorder"),
    ("facebook", "face book", "whitespace_punctuation"),
    ("fox.com", "fox com", "whitespace_punctuation"),
    ("www.myspace.com", "myspace", "url_stripping"),
    ("google", "google maps", "add_words"),
    ("jesus as a child", "jesus child", "remove_words"),
    ("running", "run", "stemming"),
    ("knitting pattern", "knit patterns", "stemming"),
    ("personal digital assistant", "pda", "form_acronym"),
    ("national association of realtors", "nar", "form_acronym"),
    ("pda", "personal digital assistant", "expand_acronym"),
    ("mass gen hospital", "massachusetts general hospital", "abbreviation"),
    ("pittsburgh", "pitt", "abbreviation"),
    ("myspacelayouts", "layouts", "substring"),
    ("layouts", "myspacelayouts", "superstring"),
    ("britny spears", "britney spears", "spelling_correction"),
    ("easter egg hunt", "easter egg search", "word_substitution"),
    ("used cars", "weather seattle", "new"),
    ("", "weather seattle", "new"),
]


@pytest.mark.parametrize(("a", "b", "kind"), EXAMPLES)
def test_paper_examples(a, b, kind):
    assert classify(a, b) == kind


def test_every_type_has_an_example_and_a_group():
    assert {k for _, _, k in EXAMPLES} == set(TYPES)
    assert set(GROUPS) == set(TYPES) and set(GROUPS.values()) == set(GROUP_ORDER)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        # precedence: the earlier rule wins where two would match
        ("myspace com", "myspace", "url_stripping"),  # before remove_words
        ("pitt", "pittsburgh pa", "superstring"),  # no term shared: not add_words
        ("pitt", "pittsburgh", "abbreviation"),  # abbreviation before superstring
        ("pattern knitting", "knit patterns", "new"),  # stems compared place by place
        ("pittsburgh", "pittsburgh pa", "add_words"),  # add_words before superstring
        ("car", "cat", "spelling_correction"),  # before word_substitution
        ("red car sale", "red boat sale", "word_substitution"),  # distance 3 > 2
    ],
)
def test_rule_precedence(a, b, kind):
    assert classify(a, b) == kind


words = st.lists(st.sampled_from(["ipod", "nano", "cars", "car", "x", "über", "pitt"]), max_size=4)
text = words.map(" ".join)


@given(text)
def test_a_query_followed_by_itself_is_same(a):
    assert classify(a, a) == "same"
    assert pair_terms(a, a)[3] == 1.0


@given(text, text)
def test_term_jaccard_is_in_0_1_and_symmetric(a, b):
    added, removed, kept, jac, _ = pair_terms(a, b)
    assert 0.0 <= jac <= 1.0
    back = pair_terms(b, a)
    assert back[3] == jac and back[0] == removed and back[1] == added
    assert set(kept.split()) == set(terms(a)) & set(terms(b))


@given(text, text)
def test_classify_is_deterministic_and_total(a, b):
    assert classify(a, b) == classify(a, b) in TYPES


def test_terms_are_lower_cased_unicode_words():
    assert terms("Über-Café 2024!") == ("über", "café", "2024")
    assert terms(None) == () and terms("") == ()
