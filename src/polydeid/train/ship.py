"""Ship a trained and calibrated tagger run as the packaged model, keeping the stages' recipes.

    python -m polydeid.train.ship runs/tagger-r9 --stage 5 \\
        --init "stage 4 (...): its recipe, data and history under 'stage_4'; stage 5 ..."

The run folder must hold the weights its ``tagger.json`` names (checksum), a ``router.toml``
written by ``python -m polydeid.train.calibrate --model RUN`` that covers every language the
packaged router covers, and weights under the size limit (:data:`MAX_WEIGHTS_BYTES`). The
packaged model's own recipe, data counts, history and chosen epoch move under
``stage_<stage - 1>`` of the new ``tagger.json``, beside the earlier stages it carried, so that
the model card's recipe can be resumed from the file. Nothing is written when a check fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError, DetectorUnavailableError
from polydeid.detect.tagger.detector import ROUTER_FILE, read_router, require_routes
from polydeid.detect.tagger.model import META_FILE, MODEL_DIR, WEIGHTS_FILE, sha256_file

#: The packaged weight files' total size may not exceed this (issue 35: under 60 MB).
MAX_WEIGHTS_BYTES = 60_000_000
#: What a stage keeps of the packaged model's description when the next stage replaces it.
STAGE_KEYS = ("recipe", "data", "history", "chosen_epoch")


def shipped_meta(run: Path, model_dir: Path, stage: int, init: str) -> dict[str, Any]:
    """The ``tagger.json`` the run ships with: its own, with ``recipe.init`` set to ``init`` and
    the packaged model's stages carried (its own as ``stage_<stage - 1>``)."""
    if stage < 2:
        raise ConfigError("a shipped stage follows the packaged one: --stage is at least 2")
    new: dict[str, Any] = json.loads((run / META_FILE).read_text("utf-8"))
    old = json.loads((model_dir / META_FILE).read_text("utf-8"))
    previous = f"stage_{stage - 1}"
    recorded = [k for k in old if k.startswith("stage_") and int(k[len("stage_") :]) >= stage - 1]
    if recorded:
        raise ConfigError(f"the packaged model already records {recorded[0]}: is --stage right?")
    if any(k.startswith("stage_") for k in new):
        raise ConfigError("the run's tagger.json already carries stages: is it a run folder?")
    new["recipe"] = {**new["recipe"], "init": init}
    new[previous] = {key: old[key] for key in STAGE_KEYS if key in old}
    for key in sorted((k for k in old if k.startswith("stage_")), reverse=True):
        new[key] = old[key]
    return new


def check_run(run: Path, model_dir: Path) -> None:
    """Raise :class:`ConfigError` unless ``run`` can ship (module docstring); its router is read
    as the detector reads it and must cover every language the packaged router covers."""
    meta_path, weights = run / META_FILE, run / WEIGHTS_FILE
    for path in (meta_path, weights, run / ROUTER_FILE):
        if not path.is_file():
            raise ConfigError(f"{path.name} missing in the run folder", location=str(run))
    meta = json.loads(meta_path.read_text("utf-8"))
    if sha256_file(weights) != meta.get("weights_sha256"):
        raise ConfigError("the weights are not the ones tagger.json names", location=str(run))
    size = weights.stat().st_size
    if size > MAX_WEIGHTS_BYTES:
        raise ConfigError(f"weights of {size} bytes exceed {MAX_WEIGHTS_BYTES}", location=str(run))
    try:
        routes = read_router(run)
    except DetectorUnavailableError as exc:
        raise ConfigError(exc.message, location=str(run)) from None
    require_routes(routes, read_router(model_dir), location=str(run / ROUTER_FILE))


def ship(run: Path, model_dir: Path, stage: int, init: str) -> None:
    """Check ``run``, then replace the packaged weights, router and ``tagger.json`` with its
    own (the meta written last, after the files it names)."""
    check_run(run, model_dir)
    meta = shipped_meta(run, model_dir, stage, init)
    with tempfile.TemporaryDirectory(dir=model_dir) as tmp:
        staged = Path(tmp)
        shutil.copyfile(run / WEIGHTS_FILE, staged / WEIGHTS_FILE)
        shutil.copyfile(run / ROUTER_FILE, staged / ROUTER_FILE)
        (staged / META_FILE).write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
        for name in (WEIGHTS_FILE, ROUTER_FILE, META_FILE):
            (staged / name).replace(model_dir / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--stage", type=int, required=True, help="the stage the run becomes")
    parser.add_argument("--init", required=True, help="what the stage started from and adds")
    parser.add_argument("--model-dir", type=Path, default=MODEL_DIR)
    args = parser.parse_args(argv)
    try:
        ship(args.run, args.model_dir, args.stage, args.init)
    except ConfigError as exc:
        print(f"not shipped: {exc}", file=sys.stderr)
        return 2
    print(f"shipped {args.run} as stage {args.stage} into {args.model_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
