import logging

import polydeid


def test_all_is_exported():
    for name in polydeid.__all__:
        assert hasattr(polydeid, name), name
    assert sorted(polydeid.__all__) == polydeid.__all__


def test_import_has_no_logging_side_effects():
    assert not logging.getLogger().handlers or all(
        type(h).__module__.startswith("_pytest") for h in logging.getLogger().handlers
    )
    assert not logging.getLogger("polydeid").handlers


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_error_is_in_the_errors_module_with_its_own_code_and_exported():
    import polydeid.core.errors as errors

    classes = [errors.PolydeidError, *_subclasses(errors.PolydeidError)]
    assert {c.__module__ for c in classes} == {"polydeid.core.errors"}
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), sorted(codes)
    for cls in classes:
        assert getattr(polydeid, cls.__name__) is cls
        assert f"[{cls.code}]" in errors.__doc__ and cls.__name__ in errors.__doc__


def test_the_test_double_lives_in_polydeid_testing():
    from polydeid.testing import FakeDetector

    assert "FakeDetector" not in polydeid.__all__
    assert isinstance(FakeDetector([]), polydeid.Detector)


def test_no_module_defines_an_error_of_its_own():
    """Every polydeid error class is defined in polydeid.core.errors (none elsewhere inherits a
    parent's code)."""
    import ast
    from pathlib import Path

    import polydeid.core.errors as errors

    names = {c.__name__ for c in [errors.PolydeidError, *_subclasses(errors.PolydeidError)]}
    root = Path(polydeid.__file__).parent
    elsewhere = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in root.rglob("*.py")
        if path.name != "errors.py"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id in names for b in node.bases)
    ]
    assert elsewhere == []
