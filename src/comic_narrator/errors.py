"""The exception tree: every user-facing failure is a ComicNarratorError with a one-line message."""

from __future__ import annotations

from pathlib import Path


class ComicNarratorError(Exception):
    """Base of every error the CLI reports as one readable line (never a traceback)."""

    exit_code = 2

    def __init__(self, message: str, *, path: Path | str | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.message = message
        """The problem alone, without the path it is about."""
        super().__init__(f"{self.path}: {message}" if self.path else message)


class InputError(ComicNarratorError):
    """The input file, folder or archive cannot be used (missing, corrupt, encrypted, empty, unsafe)."""


class UnsafeArchiveError(InputError):
    """An archive entry escapes the extraction root or the archive decompresses beyond the cap."""


class ImageTooLargeError(InputError):
    """An image exceeds the pixel limit."""


class OutputError(ComicNarratorError):
    """The output path cannot be written (missing folder, not writable)."""


class ArtifactError(ComicNarratorError):
    """A stored or user-edited artifact (reading, script, cast) does not parse or validate."""


class PageError(ComicNarratorError):
    """A page failed in a stage (the rest can go on with --keep-going)."""


class EngineError(ComicNarratorError):
    """An engine (OCR, TTS, encoder) failed or is not installed."""


class UnsayableTextError(EngineError):
    """A voice engine has no reading for a line's text (its frontend fails on it): the line is left silent."""


class ServerError(EngineError):
    """A server (LLM, TTS) is down, unreachable, or answered garbage."""


class GpuError(ComicNarratorError):
    """GPU planning, probing or stack management failed."""
