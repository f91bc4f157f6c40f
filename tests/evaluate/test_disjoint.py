"""Unseen-name rewrite, reshuffled control and familiar-versus-unseen recall."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import ConfigError, InputError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument
from polydeid.evaluate.disjoint import (
    NAME_CATEGORIES,
    HeldOutNames,
    familiar_vs_unseen,
    heldout_names,
    heldout_pools,
    name_recall,
    name_tokens,
    name_vocabulary,
    reshuffle_names,
    rewrite_unseen,
    verify_unseen,
)
from polydeid.locales import language_data, languages

P, T, CLAN = Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN
WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")

POOL = HeldOutNames(
    lang="en",
    given_male=("Zebedee", "Quillon", "Barnaby", "Ptolemy"),
    given_female=("Marigold", "Tansy", "Clementine", "Perpetua"),
    family=("Fairweather", "Thistlewood", "Brackenridge", "Quarrington", "Vexley"),
    clans=("Nsenene", "Ngabi"),
)
POOL_WORDS = frozenset().union(
    *(name_tokens(n) for n in (*POOL.given_male, *POOL.given_female, *POOL.family, *POOL.clans))
)
VOCAB = frozenset({"john", "okello", "mary", "atim", "grace"})


def doc_from(parts: list[tuple[str, object]], *, doc_id: str = "d", lang: str = "en"):
    """A document from (text, label-or-None) pieces: labelled pieces become spans or facts."""
    text, spans, facts = "", [], []
    for piece, label in parts:
        if isinstance(label, Category):
            spans.append(Span(len(text), len(text) + len(piece), label, f"gold:{label.name}"))
        elif isinstance(label, Fact):
            facts.append(Span(len(text), len(text) + len(piece), label, "gold:fact"))
        text += piece
    return AnnotatedDocument(doc_id, text, lang, tuple(spans), tuple(facts))


def clinic_note(doc_id: str = "n1") -> AnnotatedDocument:
    return doc_from(
        [
            ("Patient ", None),
            ("John Okello", P),
            (", ", None),
            ("34 years", Category.AGE),
            (", seen on ", None),
            ("12/03/2024", Category.DATE),
            (" by Dr. ", None),
            ("J. Okello-Atim", T),
            (". Mr ", None),
            ("OKELLO", P),
            (" took ", None),
            ("500 mg", Fact.DOSE),
            (". Mother ", None),
            ("Mary Atim", T),
            (" of the ", None),
            ("Ngabi", CLAN),
            (" clan; ", None),
            ("John Okello", P),
            (" to return.", None),
        ],
        doc_id=doc_id,
    )


def names_in(doc: AnnotatedDocument) -> list[str]:
    return [s.text_of(doc.text) for s in doc.spans if s.label in NAME_CATEGORIES]


def restored(new: AnnotatedDocument, old: AnnotatedDocument) -> str:
    """The rewritten text with every name put back: must equal the original text."""
    out, pos = [], 0
    name_pairs = [
        (n, o) for n, o in zip(new.spans, old.spans, strict=True) if o.label in NAME_CATEGORIES
    ]
    for n, o in name_pairs:
        out += [new.text[pos : n.start], o.text_of(old.text)]
        pos = n.end
    out.append(new.text[pos:])
    return "".join(out)


def rewrite(docs, seed=7, pool=POOL, vocabulary=VOCAB):
    return rewrite_unseen(docs, pool=pool, seed=seed, vocabulary=vocabulary)


# --- the unseen rewrite -------------------------------------------------------------------------


def test_offsets_are_realigned_character_by_character():
    old = clinic_note()
    (new,) = rewrite([old])
    assert restored(new, old) == old.text
    for n, o in zip(new.spans, old.spans, strict=True):
        assert (n.label, n.source, n.score) == (o.label, o.source, o.score)
        if o.label not in NAME_CATEGORIES:
            assert n.text_of(new.text) == o.text_of(old.text)
        else:
            assert n.text_of(new.text) != o.text_of(old.text)
    assert [f.text_of(new.text) for f in new.facts] == ["500 mg"]


def test_counts_ids_and_order_are_preserved():
    docs = [clinic_note("a"), clinic_note("b"), doc_from([("no names here", None)], doc_id="c")]
    out = rewrite(docs)
    assert [d.id for d in out] == ["a", "b", "c"]
    assert [len(d.spans) for d in out] == [len(d.spans) for d in docs]
    assert [len(d.facts) for d in out] == [len(d.facts) for d in docs]
    assert out[2].text == "no names here"
    for d in out:
        assert [s.start for s in d.spans] == sorted(s.start for s in d.spans)
        assert d.meta["names"] == "unseen"


def test_every_new_name_comes_from_the_pool_and_avoids_the_vocabulary():
    (new,) = rewrite([clinic_note()])
    for name in names_in(new):
        words = {w.casefold() for w in WORD.findall(name) if len(w) > 1}
        assert words <= POOL_WORDS
        assert not words & VOCAB


def test_shape_is_kept():
    (new,) = rewrite([clinic_note()])
    john, third, caps, mary, clan, john_again = names_in(new)
    assert len(john.split()) == 2 and john.istitle()
    assert regex.fullmatch(r"\p{Lu}\. \p{Lu}\p{Ll}+-\p{Lu}\p{Ll}+", third)
    assert caps.isupper() and len(caps.split()) == 1
    assert len(mary.split()) == 2
    assert clan in POOL.clans
    assert john_again == john


def test_a_name_repeated_in_a_document_gets_one_replacement_word_by_word():
    (new,) = rewrite([clinic_note()])
    john, third, caps, mary, _, _ = names_in(new)
    given, family = john.split()
    assert caps == family.upper()  # "OKELLO" is the same person as "John Okello"
    initial, rest = third.split(" ")
    assert initial == given[0] + "."  # "J." follows "John"
    assert rest.split("-")[0] == family  # "Okello-Atim" keeps Okello's replacement
    assert rest.split("-")[1] == mary.split()[1]  # "Atim" is Mary Atim's family name
    assert len({given, family, mary.split()[0]}) == 3  # different originals, different names


def test_titles_are_kept_as_written():
    old = doc_from([("Seen by ", None), ("Dr Okello", T), (".", None)])
    (new,) = rewrite([old])
    name = names_in(new)[0]
    assert name.startswith("Dr ") and name != "Dr Okello"


def test_lower_case_particles_are_kept():
    old = doc_from([("Seen by ", None), ("Johan van Dijk", T), (".", None)], lang="nl")
    pool = HeldOutNames("nl", ("Aart",), ("Aafke",), ("Zeeland", "Vroom"))
    (new,) = rewrite_unseen([old], pool=pool, seed=1, vocabulary={"johan", "dijk"})
    assert names_in(new)[0].split()[1] == "van"


def test_deterministic_for_a_seed_and_different_across_seeds():
    docs = [clinic_note(f"d{i}") for i in range(6)]
    first, again = rewrite(docs, seed=3), rewrite(docs, seed=3)
    assert [d.text for d in first] == [d.text for d in again]
    other = rewrite(docs, seed=4)
    assert [d.text for d in first] != [d.text for d in other]


def test_pool_names_in_the_vocabulary_are_skipped():
    pool = HeldOutNames("en", ("John", "Zebedee"), ("Mary", "Tansy"), ("Okello", "Vexley"))
    for seed in range(10):
        (new,) = rewrite([clinic_note()], seed=seed, pool=pool)
        words = {w.casefold() for name in names_in(new) for w in WORD.findall(name)}
        assert not words & {"john", "mary", "okello"}


def test_pool_names_equal_to_a_corpus_name_are_skipped():
    pool = HeldOutNames("en", ("Zebedee",), ("Tansy",), ("Atim", "Vexley"))
    (new,) = rewrite([clinic_note()], pool=pool, vocabulary=set())
    assert all("atim" not in name.casefold() for name in names_in(new))


def test_a_pool_left_empty_by_the_vocabulary_raises_without_names():
    pool = HeldOutNames("en", ("John",), ("Mary",), ("Okello",))
    with pytest.raises(ConfigError) as info:
        rewrite([clinic_note()], pool=pool)
    assert "en" in str(info.value)
    assert "okello" not in str(info.value).casefold()


def test_a_language_without_a_pool_raises():
    with pytest.raises(ConfigError):
        rewrite([clinic_note()], pool={"sw": POOL})


def test_verify_unseen_flags_a_seen_name_by_offsets_only():
    old = clinic_note()
    with pytest.raises(ConfigError) as info:
        verify_unseen([old], vocabulary=VOCAB)
    message = str(info.value)
    assert "8:19 PERSON" in message
    assert not any(word in message.casefold() for word in VOCAB)
    (new,) = rewrite([old])
    verify_unseen([new], vocabulary=VOCAB)  # passes


def test_apostrophe_names_and_combining_marks():
    nfd = unicodedata.normalize("NFD", "Bệnh nhân ")
    old = doc_from(
        [
            (nfd, None),
            (unicodedata.normalize("NFD", "José Ng'ang'a"), P),
            (" từ ", None),
            ("Nyeri", Category.LOCATION_VILLAGE),
            (", mẹ ", None),
            ("Wanjirũ wa Ng'ang'a", T),
            (" và ", None),
            ("O’Brien", T),
            (".", None),
        ],
        lang="sw",
    )
    (new,) = rewrite_unseen([old], pool={"sw": POOL}, seed=2, vocabulary=VOCAB)
    assert new.text.startswith(nfd)
    assert restored(new, old) == old.text
    assert new.spans[1].text_of(new.text) == "Nyeri"
    first, mother, obrien = (new.spans[i].text_of(new.text) for i in (0, 2, 3))
    assert len(first.split()) == 2
    assert mother.split()[1] == "wa"  # particle kept
    assert mother.split()[2] == first.split()[1]  # the same Ng'ang'a, the same replacement
    assert len(obrien.split()) == 1 and obrien.casefold() != "o’brien"


def test_span_endpoints_inside_a_name_snap_to_its_new_boundaries():
    text = "Ward: Grace Atim, bed 4."
    name = Span(6, 16, P, "gold:P")
    address = Span(0, 11, Category.LOCATION_ADDRESS, "gold:A")  # ends inside the name
    fact = Span(12, 21, Fact.QUANTITY, "gold:Q")  # starts inside the name
    old = AnnotatedDocument("d", text, "en", (address, name), (fact,))
    (new,) = rewrite([old])
    new_address, new_name = new.spans
    assert new_address.start == 0 and new_address.end == new_name.end
    assert new.facts[0].start == new_name.start
    assert new.text[new.facts[0].end :] == " 4."


def test_overlapping_name_spans_raise_and_identical_ones_are_replaced_once():
    text = "Seen Grace Atim today"
    overlapping = AnnotatedDocument("d", text, "en", (Span(5, 15, P, "g"), Span(11, 20, T, "g")))
    with pytest.raises(InputError):
        rewrite([overlapping])
    twice = AnnotatedDocument("d", text, "en", (Span(5, 15, P, "g"), Span(5, 15, T, "g")))
    (new,) = rewrite([twice])
    assert new.spans[0] == Span(new.spans[0].start, new.spans[0].end, P, "g")
    assert (new.spans[0].start, new.spans[0].end) == (new.spans[1].start, new.spans[1].end)
    assert new.text.startswith("Seen ") and new.text.endswith(" today")


def test_only_the_chosen_categories_are_rewritten():
    old = clinic_note()
    (new,) = rewrite_unseen(
        [old], pool=POOL, seed=1, vocabulary=VOCAB, categories=(Category.PERSON_CLAN,)
    )
    before, after = names_in(old), names_in(new)
    assert after[:4] == before[:4] and after[5] == before[5]
    assert after[4] == "Nsenene"  # the other clan: "Ngabi" is a corpus name, so skipped


def test_han_names_are_rewritten_with_han_names():
    old = doc_from(
        [("患者", None), ("张伟", P), ("，男，", None), ("45岁", Category.AGE)], lang="zh"
    )
    pool = heldout_pools(["zh"])
    (new,) = rewrite_unseen([old], pool=pool, seed=1, vocabulary=name_vocabulary())
    name = names_in(new)[0]
    assert name != "张伟" and all(unicodedata.name(c).startswith("CJK") for c in name)
    assert new.spans[1].text_of(new.text) == "45岁"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab ,.-'\u0301", min_size=1, max_size=6),
            st.sampled_from(["Grace Atim", "OKELLO", "j. okello", "Mary-Jane", "Ng'ang'a", None]),
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 3),
)
def test_property_non_name_text_and_counts_survive(pieces, seed):
    parts: list[tuple[str, object]] = []
    for filler, name in pieces:
        parts.append((filler, Category.DATE if filler.strip() else None))
        if name:
            parts.append((" ", None))
            parts.append((name, P))
            parts.append((" ", None))
    old = doc_from(parts)
    (new,) = rewrite([old], seed=seed)
    assert restored(new, old) == old.text
    assert len(new.spans) == len(old.spans)
    for n, o in zip(new.spans, old.spans, strict=True):
        if o.label is Category.DATE:
            assert n.text_of(new.text) == o.text_of(old.text)
        else:
            original, replaced = o.text_of(old.text), n.text_of(new.text)
            assert len(WORD.findall(replaced)) == len(WORD.findall(original))
            assert replaced.isupper() == original.isupper()


# --- shipped held-out pools -----------------------------------------------------------------------


SHIPPED = [code for code in languages() if language_data(code, "names_heldout")]


def test_every_language_ships_a_heldout_pool():
    assert set(SHIPPED) == set(languages())


@pytest.mark.parametrize("code", SHIPPED)
def test_shipped_pool_is_documented_and_disjoint_from_every_names_toml(code):
    raw = language_data(code, "names_heldout")
    assert raw["meta"]["sources"] and raw["meta"]["licence"]
    pool = heldout_names(code)
    assert pool is not None and pool.family and pool.given_male and pool.given_female
    vocabulary = name_vocabulary()
    every = (*pool.given_male, *pool.given_female, *pool.family, *pool.family_female, *pool.clans)
    overlapping = [i for i, name in enumerate(every) if name_tokens(name) & vocabulary]
    assert overlapping == []
    assert pool.without(vocabulary) == pool


def test_shipped_pools_rewrite_a_multilingual_corpus():
    docs = [
        doc_from([("Mgonjwa ", None), ("Amina Wanjiku", P), (" amelazwa.", None)], lang="sw"),
        doc_from([("Omulwadde ", None), ("Nakato Nansubuga", P), (" yazze.", None)], lang="lg"),
        doc_from([("Пациент ", None), ("Иванова Анна", P), (" поступила.", None)], lang="ru"),
        doc_from([("Patientin ", None), ("Anna Müller", P), (" kam.", None)], lang="de"),
    ]
    vocabulary = name_vocabulary()
    out = rewrite_unseen(docs, pool=heldout_pools(), seed=5, vocabulary=vocabulary)
    for new, old in zip(out, docs, strict=True):
        assert restored(new, old) == old.text
        (name,) = names_in(new)
        assert not name_tokens(name) & vocabulary
    assert regex.fullmatch(r"\p{Cyrillic}+ \p{Cyrillic}+", names_in(out[2])[0])


# --- the reshuffled control -----------------------------------------------------------------------


def corpus() -> list[AnnotatedDocument]:
    def note(doc_id, patient, relative):
        return doc_from(
            [
                ("Pt ", None),
                (patient, P),
                (" on ", None),
                ("1/2/2020", Category.DATE),
                (", NOK ", None),
                (relative, T),
                (". ", None),
                (patient, P),
                (" stable.", None),
            ],
            doc_id=doc_id,
        )

    return [
        note("a", "Grace Atim", "Okello Ojok"),
        note("b", "Mary Nakato", "Ssali Kizza"),
        note("c", "Ng'ang'a Kamau", "Wanjirũ Njeri"),
        note("d", "Hoa Lê", "Tuấn Phạm"),
    ]


def entities(docs):
    return Counter(
        (s.label, name.casefold())
        for d in docs
        for name, s in {s.text_of(d.text): s for s in d.spans if s.label in NAME_CATEGORIES}.items()
    )


def test_reshuffle_keeps_the_multiset_of_names():
    docs = corpus()
    out = reshuffle_names(docs, seed=1)
    assert entities(out) == entities(docs)
    assert [len(d.spans) for d in out] == [len(d.spans) for d in docs]


def test_reshuffle_moves_every_name_to_another_document():
    docs = corpus()
    out = reshuffle_names(docs, seed=1)
    for new, old in zip(out, docs, strict=True):
        assert set(names_in(new)).isdisjoint(names_in(old))
        first, _, again = names_in(new)
        assert first == again  # repeated mentions move as one
        assert new.meta["names"] == "reshuffled"


def test_reshuffle_realigns_offsets_and_is_deterministic():
    docs = corpus()
    out = reshuffle_names(docs, seed=9)
    for new, old in zip(out, docs, strict=True):
        assert restored(new, old) == old.text
        assert new.spans[1].text_of(new.text) == "1/2/2020"
    assert [d.text for d in reshuffle_names(docs, seed=9)] == [d.text for d in out]
    assert any(a.text != b.text for a, b in zip(reshuffle_names(docs, seed=10), out, strict=True))


def test_reshuffle_takes_the_case_of_the_mention_it_replaces():
    docs = [
        doc_from([("A ", None), ("GRACE ATIM", P)], doc_id="a"),
        doc_from([("B ", None), ("Mary Nakato", P)], doc_id="b"),
    ]
    a, b = reshuffle_names(docs, seed=0)
    assert names_in(a) == ["MARY NAKATO"]
    assert names_in(b) == ["Grace Atim"]


def test_reshuffle_within_one_document_rotates_names():
    doc = doc_from([("Grace Atim", P), (" and ", None), ("Mary Nakato", P)])
    (new,) = reshuffle_names([doc], seed=0)
    assert names_in(new) == ["Mary Nakato", "Grace Atim"]


# --- familiar versus unseen ----------------------------------------------------------------------


def memoriser(known: set[str]):
    """A detector that finds only names it has seen (case-insensitive)."""

    def predict(doc: AnnotatedDocument) -> list[Span]:
        return [
            Span(s.start, s.end, P, "fake")
            for s in doc.spans
            if s.label in NAME_CATEGORIES and s.text_of(doc.text).casefold() in known
        ]

    return predict


def test_a_memoriser_loses_all_recall_on_unseen_names():
    docs = corpus()
    seen = {n.casefold() for d in docs for n in names_in(d)}
    report = familiar_vs_unseen(docs, memoriser(seen), pool=POOL, vocabulary=VOCAB | seen, seed=1)
    assert report.original.strict == report.reshuffled.strict == 1.0
    assert report.unseen.strict == report.unseen.relaxed == 0.0
    assert report.differences()["familiarity_strict"] == 1.0
    assert report.differences()["context_strict"] == 0.0
    assert report.to_dict()["original"]["gold"] == 12


def test_strict_and_relaxed_recall():
    docs = corpus()

    def off_by_one(doc: AnnotatedDocument) -> list[Span]:
        return [
            Span(s.start, s.end + 1, T, "fake")
            for s in doc.spans[:1]  # only the first name of each note, one char too long
        ] + [Span(s.start, s.end, Category.DATE, "fake") for s in doc.spans]

    recall = name_recall(docs, off_by_one)
    assert (recall.gold, recall.strict_found, recall.relaxed_found) == (12, 0, 4)
    assert recall.relaxed == pytest.approx(4 / 12)
    assert name_recall([], off_by_one).strict == 0.0


def test_a_context_detector_scores_alike_on_all_three():
    docs = corpus()

    def oracle(doc: AnnotatedDocument) -> list[Span]:
        return [s for s in doc.spans if s.label in NAME_CATEGORIES]

    report = familiar_vs_unseen(docs, oracle, pool=POOL, vocabulary=VOCAB)
    assert set(report.differences().values()) == {0.0}
    assert report.unseen.strict == 1.0


def _unaccented(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@pytest.mark.parametrize("code", [c for c in SHIPPED if c != "vi"])  # vi: tones tell names apart
def test_heldout_names_are_not_accent_variants_of_training_names(code):
    """``Theoneste`` in names.toml would make ``Théoneste`` a familiar name, not an unseen one."""
    seen = {_unaccented(w) for w in name_vocabulary([code])}
    pool = heldout_names(code)
    every = (*pool.given_male, *pool.given_female, *pool.family, *pool.family_female)
    variants = [
        i for i, name in enumerate(every) if {_unaccented(t) for t in name_tokens(name)} & seen
    ]
    assert variants == []
