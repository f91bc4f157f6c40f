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
