"""Shared test fixtures: where the bundled sample and the wider corpus live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE_PAGE = REPO / "samples" / "peppercarrot-ep17-page2.jpg"
CORPUS = REPO.parent / "shared" / "corpus"


def corpus_path(*parts: str) -> Path:
    """A path in ../shared/corpus, or a skip with the reason when this checkout has no corpus beside it."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the wider corpus (../shared/corpus) is not beside this checkout")
    return path


@pytest.fixture
def sample_page() -> Path:
    return SAMPLE_PAGE
