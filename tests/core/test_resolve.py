from polydeid import Category, Fact, ResolvePolicy, Span, resolve

P, D, A = Category.PERSON, Category.DATE, Category.AGE


def test_empty():
    assert resolve([]) == ()


def test_disjoint_spans_kept_sorted():
    spans = [Span(10, 12, D, "rule.d"), Span(0, 3, P, "tagger.x", 0.8)]
    assert [s.start for s in resolve(spans)] == [0, 10]


def test_priority_beats_length():
    rule = Span(5, 10, D, "rule.dates.v1")
    tagger = Span(0, 12, P, "tagger.x", 0.99)
    # the rule wins its part; a model span keeps what lies outside it
    assert resolve([tagger, rule]) == (
        Span(0, 5, P, "tagger.x", 0.99),
        rule,
        Span(10, 12, P, "tagger.x", 0.99),
    )
    other = Span(0, 12, P, "rule.other.v1")
    assert resolve([other, rule]) in ((rule,), (other,))  # rule spans are never cut


def test_model_span_keeps_its_words_outside_a_rule_span_and_facts():
    text = "Jatuo Otieno Ochieng, higni 52, dose 500 mg Amina."
    age = Span(text.index("higni"), text.index("52") + 2, Category.AGE, "rule.age.v1")
    tagger = Span(text.index("Ochieng"), text.index("52") + 3, P, "tagger.x", 0.6)
    fact = Span(text.index("500"), text.index("mg") + 2, Fact.DOSE, "fact.dose.v1")
    name = Span(text.index("500"), text.index("Amina") + 5, P, "tagger.x", 0.7)
    out = resolve([tagger, age, fact, name], text)
    assert [(text[s.start : s.end], s.label) for s in out] == [
        ("Ochieng", P),
        ("higni 52", Category.AGE),
        ("Amina", P),
    ]


def test_checksum_beats_plain_rule():
    checksum = Span(0, 9, Category.ID_NATIONAL, "rule.checksum.nl_bsn.v1")
    plain = Span(0, 12, Category.CONTACT_PHONE, "rule.phone.v1")
    assert resolve([plain, checksum]) == (checksum,)


def test_same_priority_score_then_length_then_leftmost():
    hi = Span(0, 4, P, "rule.a", 0.9)
    lo_long = Span(2, 10, D, "rule.a", 0.5)
    assert resolve([lo_long, hi]) == (hi,)
    long_ = Span(0, 8, P, "rule.a", 0.7)
    short = Span(0, 4, D, "rule.a", 0.7)
    assert resolve([short, long_]) == (long_,)
    left = Span(0, 4, P, "rule.a", 0.7)
    right = Span(2, 6, D, "rule.a", 0.7)
    assert resolve([right, left]) == (left,)
    # model spans: the winner as above, the loser keeps only what lies outside it
    assert resolve([Span(2, 6, D, "tagger.a", 0.7), Span(0, 4, P, "tagger.a", 0.7)]) == (
        Span(0, 4, P, "tagger.a", 0.7),
        Span(4, 6, D, "tagger.a", 0.7),
    )


def test_nested_span_loses_to_container():
    outer = Span(0, 20, Category.LOCATION_FACILITY, "tagger.a", 0.9)
    inner = Span(5, 10, Category.LOCATION_VILLAGE, "tagger.a", 0.9)
    assert resolve([inner, outer]) == (outer,)


def test_facts_protect_but_checksums_and_contacts_override():
    fact = Span(3, 10, Fact.LAB_VALUE, "fact.lab.v1")
    date = Span(3, 7, D, "rule.dates.v1")
    email = Span(0, 12, Category.CONTACT_OTHER, "rule.contact.email.v1")
    assert resolve([fact, date]) == ()
    assert resolve([fact, email]) == (email,)


def test_adjacent_same_label_merge_only_across_spaces():
    text = "Anna  Maria, Bob\nKay"
    a = Span(0, 4, P, "rule.x", 0.9)
    b = Span(6, 11, P, "tagger.x", 0.6)
    c = Span(13, 16, P, "tagger.x", 0.9)
    d = Span(17, 20, P, "tagger.x", 0.9)
    out = resolve([a, b, c, d], text)
    assert out == (Span(0, 11, P, "rule.x", 0.6), c, d)
    assert resolve([a, b], text, ResolvePolicy(merge_adjacent=False)) == (a, b)


def test_one_model_spans_split_by_a_space_stay_two_but_touching_pieces_merge():
    # the model ended the street and began the postcode: two spans, as it decided
    text = "C/ Limón, 5 28015 and E-18012"
    street = Span(0, 11, Category.LOCATION_ADDRESS, "tagger.x", 0.9)
    postcode = Span(12, 17, Category.LOCATION_ADDRESS, "tagger.x", 0.8)
    assert resolve([street, postcode], text) == (street, postcode)
    # pieces with nothing between them are one identifier
    head = Span(22, 24, Category.LOCATION_ADDRESS, "tagger.x", 0.9)
    tail = Span(24, 29, Category.LOCATION_ADDRESS, "tagger.x", 0.7)
    assert resolve([head, tail], text) == (
        Span(22, 29, Category.LOCATION_ADDRESS, "tagger.x", 0.7),
    )
    # a rule's span next to the model's still merges across the space
    ruled = Span(12, 17, Category.LOCATION_ADDRESS, "rule.postcode", 0.95)
    assert resolve([street, ruled], text) == (
        Span(0, 17, Category.LOCATION_ADDRESS, "rule.postcode", 0.9),
    )


def test_self_delimiting_spans_are_never_merged():
    text = "a@x.es b@y.es http://x.es"
    e = Category.CONTACT_OTHER
    one = Span(0, 6, e, "rule.contact.email.v1", 1.0)
    two = Span(7, 13, e, "rule.contact.email.v1", 1.0)
    url = Span(14, 25, e, "rule.contact.url.v1", 1.0)
    assert resolve([one, two, url], text) == (one, two, url)
    # a tagger piece next to an e-mail does not grow it either
    piece = Span(7, 13, e, "tagger.x", 0.9)
    assert resolve([one, piece], text) == (one, piece)


def test_duplicates_collapse_and_is_deterministic():
    a = Span(0, 4, P, "tagger.x", 0.9)
    b = Span(0, 4, D, "tagger.x", 0.9)
    assert resolve([a, a, b]) == resolve([b, a, a]) == (b,)  # label name breaks the tie


def test_labelled_id_beats_a_phone_reading_of_the_same_digits():
    labelled = Span(7, 17, Category.ID_NATIONAL, "rule.id.ke_id.v1", 0.9)
    phone = Span(7, 17, Category.CONTACT_PHONE, "rule.phone.national.v1", 0.95)
    assert resolve([phone, labelled]) == (labelled,)
