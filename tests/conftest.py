"""Shared test fixtures: where the bundled sample and the wider corpus live."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import comic_narrator

REPO = Path(__file__).resolve().parents[1]
IMPORTED_SRC = str(Path(comic_narrator.__file__).resolve().parents[1])
"""The folder the tests import comic_narrator from, for the subprocesses they start: the checkout's src/, or the
mutated copy while benchmarks/mutation_sweep.py runs them (a path built from a test file's own place would run the
checkout's code there, which no mutant then reaches)."""
SAMPLE_PAGE = REPO / "samples" / "peppercarrot-ep17-page2.jpg"
CORPUS = REPO.parent / "shared" / "corpus"


def _beside(root: Path, what: str, parts: tuple[str, ...]) -> Path:
    path = root.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: {what} is not beside this checkout")
    return path


def corpus_path(*parts: str) -> Path:
    """A path in ../shared/corpus, or a skip with the reason when this checkout has no corpus beside it."""
    return _beside(CORPUS, "the wider corpus (../shared/corpus)", parts)


TRAINING = REPO.parent / "shared" / "training"


def training_path(*parts: str) -> Path:
    """A path in ../shared/training, or a skip with the reason when this checkout has no training pages beside it."""
    return _beside(TRAINING, "../shared/training", parts)


@pytest.fixture
def sample_page() -> Path:
    return SAMPLE_PAGE


def free_ports(count: int) -> list[int]:
    """Ports free on loopback, all different: each socket stays bound until every port is picked (two sockets
    bound and closed one after the other may be given the same port, and two servers then race for it)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
