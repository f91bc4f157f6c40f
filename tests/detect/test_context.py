"""Whole-word context phrases (ContextLexicon), shared by every rule."""

from polydeid.text.patterns import ContextLexicon


def test_whole_words_only_never_substrings():
    lexicon = ContextLexicon(["lic", "ID No."])
    assert not lexicon.search("public record")
    assert lexicon.search("the ID No 1234") and lexicon.search("lic: 5")


def test_no_boundaries_next_to_unspaced_scripts_or_punctuation():
    assert ContextLexicon(["电话"]).search("患者的电话13800138000")
    assert ContextLexicon(["身份证号"]).search("患者身份证号123")
    assert ContextLexicon(["№"]).search("ID№ 5")
    assert not ContextLexicon(["no"]).search("piano 5")
