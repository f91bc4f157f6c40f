import pytest

from polydeid.core.errors import PolicyError, UnknownCategoryError, UnknownOperatorError
from polydeid.core.taxonomy import Category
from polydeid.transform.operators import HashOptions, OperatorSpec
from polydeid.transform.policy import load_policy, parse_policy, shipped_policies

SHIPPED = ("tag", "numbered", "mask", "surrogate", "hash", "encrypt")


def test_shipped_policies_load():
    assert set(SHIPPED) <= set(shipped_policies())
    for name in SHIPPED:
        policy = load_policy(name)
        assert policy.name == name
        assert policy.operator_for(Category.SEX).name == "keep"


def test_shipped_policy_choices():
    assert load_policy("tag").operator_for(Category.PERSON).name == "tag"
    assert load_policy("numbered").operator_for(Category.DATE).name == "numbered_tag"
    surrogate = load_policy("surrogate")
    assert surrogate.operator_for(Category.PERSON).name == "surrogate"
    assert surrogate.operator_for(Category.DATE).name == "dateshift"
    assert surrogate.operator_for(Category.PROFESSION).name == "tag"  # the default
    assert surrogate.needs_key and load_policy("hash").needs_key
    assert not load_policy("tag").needs_key


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def test_policy_file_with_options(tmp_path):
    path = write(
        tmp_path,
        """
[meta]
name = "mine"
[default]
operator = "hash"
length = 24
[categories.person]
operator = "mask"
keep_whitespace = true
""",
    )
    policy = load_policy(path)
    assert policy.name == "mine" and policy.source == str(path)
    assert policy.default == OperatorSpec("hash", HashOptions(length=24))
    assert policy.operator_for(Category.PERSON).options.keep_whitespace is True  # type: ignore[attr-defined]
    assert policy.operator_for(Category.AGE).name == "hash"


def test_name_defaults_to_file_stem(tmp_path):
    assert load_policy(write(tmp_path, "[default]\noperator='tag'\n", "site.toml")).name == "site"


@pytest.mark.parametrize(
    ("text", "error", "fragments"),
    [
        ("[default\noperator = 'tag'", PolicyError, ["malformed TOML"]),
        ("[meta]\nname='x'\n", PolicyError, ["missing [default]"]),
        (
            "[default]\noperator='tag'\n[categories.PATIENT_NAME]\noperator='tag'\n",
            UnknownCategoryError,
            ["categories", "PATIENT_NAME", "PERSON"],
        ),
        (
            "[default]\noperator='scramble'\n",
            UnknownOperatorError,
            ["default.operator", "scramble", "surrogate"],
        ),
        (
            "[default]\noperator='tag'\n[categories.PERSON]\noperator='blur'\n",
            UnknownOperatorError,
            ["categories.PERSON.operator", "blur"],
        ),
        ("[default]\noperator='hash'\nlength='16'\n", PolicyError, ["default.length", "integer"]),
        ("[default]\noperator='hash'\nlength=4\n", PolicyError, ["default.length"]),
        (
            "[default]\noperator='tag'\n[categories.DATE]\noperator='dateshift'\nmax_days=1.5\n",
            PolicyError,
            ["categories.DATE.max_days"],
        ),
        (
            "[default]\noperator='tag'\n[categories.DATE]\noperator='dateshift'\nmin_days=9\nmax_days=3\n",
            PolicyError,
            ["categories.DATE", "min_days"],
        ),
        ("[default]\noperator='mask'\nchar='**'\n", PolicyError, ["default.char"]),
        ("[default]\noperator='tag'\ncolour='red'\n", PolicyError, ["default.colour", "Extra"]),
        ("[default]\noperator='tag'\ntemplate='<{name}>'\n", PolicyError, ["default.template"]),
        ("[default]\noperator=3\n", PolicyError, ["default.operator"]),
        ("[default]\noperator='tag'\n[extras]\nx=1\n", PolicyError, ["extras"]),
        ("[meta]\nname=1\n[default]\noperator='tag'\n", PolicyError, ["meta.name"]),
        (
            "[default]\noperator='tag'\n[categories]\nPERSON='tag'\n",
            PolicyError,
            ["categories.PERSON"],
        ),
    ],
    ids=[
        "malformed-toml",
        "no-default",
        "unknown-category",
        "unknown-operator",
        "unknown-category-operator",
        "string-for-int",
        "length-too-small",
        "float-for-int",
        "min-above-max",
        "mask-char-two",
        "unknown-option",
        "bad-template",
        "operator-not-string",
        "unknown-top-level",
        "meta-type",
        "category-not-table",
    ],
)
def test_invalid_policies_name_file_and_key(tmp_path, text, error, fragments):
    path = write(tmp_path, text, "broken-policy.toml")
    with pytest.raises(error) as info:
        load_policy(path)
    message = str(info.value)
    assert "broken-policy.toml" in message
    for fragment in fragments:
        assert fragment in message


def test_missing_policy_file_lists_shipped(tmp_path):
    with pytest.raises(PolicyError, match="surrogate"):
        load_policy(tmp_path / "nope.toml")


def test_parse_policy_in_memory():
    policy = parse_policy("[default]\noperator = 'remove'\n", source="inline")
    assert policy.operator_for(Category.PERSON).name == "remove"
    with pytest.raises(PolicyError, match="inline"):
        parse_policy("[default]\noperator = 'remove'\nx = 1\n", source="inline")
