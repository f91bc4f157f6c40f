"""Which Python Spark's workers start, and the error when theirs lacks polydeid (no Spark)."""

import sys

from polydeid.spark import worker_import_error, worker_python


def test_a_local_master_uses_the_running_interpreter_unless_one_is_set():
    assert worker_python("local[2]", None) == sys.executable
    assert worker_python("local", "") == sys.executable
    assert worker_python("local[2]", "/opt/venv/bin/python") is None
    assert worker_python("yarn", None) is None
    assert worker_python("spark://host:7077", None) is None
    assert worker_python(None, None) is None


def test_a_worker_without_polydeid_is_a_configuration_error_that_says_what_to_set():
    error = worker_import_error(RuntimeError("... ModuleNotFoundError: No module named 'polydeid'"))
    assert error is not None and error.code == "PD100"
    assert "PYSPARK_PYTHON" in error.message and "polydeid" in error.message
    both = worker_import_error(
        RuntimeError("No module named 'pyarrow'\n...\nNo module named 'polydeid'")
    )
    assert both is not None and "polydeid and pyarrow" in both.message
    assert worker_import_error(RuntimeError("No module named 'numpy'")) is None
    assert worker_import_error(ValueError("boom")) is None
