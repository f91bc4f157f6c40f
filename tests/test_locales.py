import pytest

from polydeid import UnknownLanguageError
from polydeid.locales import canonical_language, default_countries, language_info, languages


def test_at_least_17_languages_with_three_non_latin_scripts():
    codes = languages()
    assert len(codes) >= 17
    scripts = {language_info(c).script for c in codes}
    assert len(scripts - {"Latin"}) >= 3


@pytest.mark.parametrize(
    "alias,code",
    [
        ("lug", "lg"),
        ("swa", "sw"),
        ("Swahili", "sw"),
        ("kin", "rw"),
        ("luo", "luo"),
        ("DE", "de"),
        ("en-US", "en"),
        ("vie", "vi"),
        ("zh_CN", "zh"),
    ],
)
def test_aliases(alias, code):
    assert canonical_language(alias) == code


def test_unknown_language_fails_closed():
    with pytest.raises(UnknownLanguageError) as info:
        canonical_language("xx")
    assert "lg" in str(info.value)


def test_default_countries():
    assert default_countries("lug") == ("UG",)
    assert "KE" in default_countries("sw")
