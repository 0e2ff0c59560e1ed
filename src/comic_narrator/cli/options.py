"""Command-line option types shared by more than one command (the main one and `voices`); imports nothing of ours,
so a command module in any room can use them without importing the CLI."""

from __future__ import annotations

import argparse
from pathlib import Path


def reference_arg(value: str) -> tuple[str, Path]:
    """A ``--tts-reference NAME=FILE.wav`` value as (voice spec, path): an argparse type, so a malformed value is
    the usual one-line usage error."""
    name, sep, path = value.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"wants NAME=FILE.wav, got {value!r}")
    return name.strip(), Path(path.strip())


def url_list_arg(value: str) -> str:
    """A ``URL[,URL...]`` value (``--llm-url``, ``--tts-server``) tidied to ``URL,URL``: an argparse type, so a
    value with no URL, or with something that is not an http(s) URL, is the usual one-line usage error."""
    urls = [url.strip().rstrip("/") for url in value.split(",") if url.strip()]
    bad = [url for url in urls if not url.startswith(("http://", "https://"))]
    if not urls or bad:
        raise argparse.ArgumentTypeError(f"wants http(s)://HOST:PORT[/PATH][,...], got {value!r}")
    return ",".join(urls)


def add_tts_reference_option(parser: argparse.ArgumentParser) -> None:
    """--tts-reference, shared by the main command and `voices`."""
    parser.add_argument(
        "--tts-reference",
        action="append",
        default=[],
        type=reference_arg,
        metavar="NAME=FILE.wav",
        help="a Fish Speech voice by example, sent inline (repeatable); NAME may be name:lang:gender:age, and the "
        "recording's transcript is FILE.txt beside it",
    )
