"""The work folder: atomic writes (temp file + rename) and typed artifact load/store."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from comic_narrator.errors import ArtifactError, OutputError

ModelT = TypeVar("ModelT", bound=BaseModel)
log = logging.getLogger("comic_narrator")


def _process_umask() -> int:
    """The umask new files get their permissions from (read, not changed, where the system tells it)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shareable(fd: int) -> None:
    """Give a temp file the permissions a file created the usual way gets (0666 less the umask): ``mkstemp``
    makes it 0600, and the video, subtitles and work files renamed from it must not stay private to the user."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, 0o666 & ~_process_umask())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` so that ``path`` is either the old file or the complete new one, never a partial one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        shareable(fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_temp_path(path: Path) -> Path:
    """A sibling temp path for writers that need a file name (encoders); rename it onto ``path`` when done."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".part{path.suffix}", dir=path.parent)
    try:
        shareable(fd)
    finally:
        os.close(fd)
    return Path(tmp_name)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_artifact(path: Path, artifact: BaseModel) -> str:
    """Store an artifact as indented JSON; returns the sha256 of what was written."""
    data = artifact.model_dump_json(indent=2).encode("utf-8") + b"\n"
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def read_artifact(path: Path, model: type[ModelT]) -> ModelT:
    """Load and validate an artifact; a broken or hand-edited file fails with one line naming it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise ArtifactError("file not found", path=path) from exc
    except OSError as exc:
        raise ArtifactError(f"cannot read: {exc.strerror}", path=path) from exc
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        raise ArtifactError(
            f"not a valid {model.__name__} ({exc.error_count()} problem(s); first at {where}: {first['msg']})",
            path=path,
        ) from exc


def read_cached_artifact(path: Path, model: type[ModelT]) -> ModelT | None:
    """A cache entry of ours, or None when it is missing or not a whole valid artifact: a file cut short (a disk
    that filled, a copy interrupted, anything but our own atomic writer) is redone, never trusted."""
    if not path.exists():
        return None
    try:
        return read_artifact(path, model)
    except ArtifactError as exc:
        log.warning("ignoring a damaged cache file, redoing it: %s", exc)
        return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_sha256(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def ensure_writable_output(path: Path) -> None:
    """Fail before any work when the output cannot be written: missing folder, a folder in its place."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"the folder {parent} does not exist", path=path)
    if not parent.is_dir():
        raise OutputError(f"{parent} is not a folder", path=path)
    if path.exists() and path.is_dir():
        raise OutputError("is a folder, not a file", path=path)
    if not os.access(parent, os.W_OK):
        raise OutputError(f"the folder {parent} is not writable", path=path)


def make_folder(path: Path, what: str = "work folder") -> None:
    """Create a folder the run writes into (and its parents), or fail with one line naming it: a file in its
    place, a parent that is a file, a place nothing can be created in. ``what`` names it in the message."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"the {what} is a file, not a folder", path=path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the {what}: {exc.strerror or exc}", path=path) from exc
    if not os.access(path, os.W_OK):
        raise OutputError(f"the {what} is not writable", path=path)


class StageCache:
    """The one cache of a work folder, which every stage uses. Two kinds of entry:

    - content-addressed entries, ``WORK/<folder>/<name>.<key><suffix>`` (a page's reading, a line's clip, a
      video segment): a changed input is another key and so another file, so a stale entry is never read;
    - keyed files at a fixed name that people read or edit (``book.json``, ``script.json``, the MP4), whose key
      is kept beside them in ``WORK/<name>.key`` with whatever else tells that the file is the one written
      (the script's bytes, the MP4's size and time).

    Every write is atomic and a damaged entry is redone, never trusted (see :func:`read_cached_artifact`)."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir

    def entry(self, folder: str, key: str, name: str = "", suffix: str = ".json") -> Path:
        return self.work_dir / folder / (f"{name}.{key}{suffix}" if name else f"{key}{suffix}")

    def load(self, path: Path, model: type[ModelT]) -> ModelT | None:
        return read_cached_artifact(path, model)

    def store(self, path: Path, artifact: BaseModel) -> str:
        """Writes the artifact; returns the sha256 of its bytes."""
        return write_artifact(path, artifact)

    def key_file(self, name: str) -> Path:
        return self.work_dir / f"{name}.key"

    def recorded(self, name: str) -> list[str]:
        """What :meth:`record` last wrote for ``name`` (its key first), or [] when nothing was."""
        try:
            return self.key_file(name).read_text(encoding="utf-8").split()
        except OSError:
            return []

    def record(self, name: str, key: str, *proof: str) -> None:
        atomic_write_text(self.key_file(name), " ".join((key, *proof)))
