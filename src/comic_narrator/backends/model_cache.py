"""Rewritten forms of shipped ONNX models, built once from the packaged file into the user's cache folder."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def cache_folder() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "comic-narrator" / "models"


def cached_rewrite(
    source: Path, label: str, variant: str, rewrite: Callable[[Any], int], replaces: tuple[str, ...] = ()
) -> Path:
    """``source`` rewritten by ``rewrite`` (which changes an ``onnx.ModelProto`` in place and returns how many
    nodes it changed), saved once as ``<label>-<digest>-<variant>.onnx`` in the cache folder; ``source`` itself
    when nothing was rewritten or anything fails (a rewrite only ever costs speed, never a voice). The forms of
    the same source named in ``replaces`` (earlier variants nothing reads any more) are deleted when it is
    written."""
    try:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
        target = cache_folder() / f"{label}-{digest}-{variant}.onnx"
        if target.is_file():
            return target
        import onnx

        model = onnx.load(str(source))
        if rewrite(model) == 0:
            return source
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
        os.close(handle)
        try:
            onnx.save(model, temp)
            os.replace(temp, target)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
        log.info("wrote the %s form of %s to %s", variant, source.name, target)
        _drop_older_forms([cache_folder() / f"{label}-{digest}-{old}.onnx" for old in replaces])
        return target
    except Exception as exc:  # any failure here only costs speed: run the shipped model as it is
        log.warning("using %s as shipped (its %s form could not be built: %s)", source.name, variant, exc)
        return source


def _drop_older_forms(stale: list[Path]) -> None:
    """Delete superseded forms: each is a whole model (Kokoro's about 90 MB). A process still running one keeps
    its open file."""
    for path in stale:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove the superseded model %s: %s", path, exc)
