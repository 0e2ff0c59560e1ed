"""Fixtures for the reader tests: the real rapidocr engine (opened once) and the bundled test pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from comic_narrator.artifacts import PageImage
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"


@pytest.fixture(scope="session")
def ocr() -> Iterator[RapidOcrEngine]:
    with RapidOcrEngine() as engine:
        yield engine


def load_rgb(path: Path) -> npt.NDArray[np.uint8]:
    return np.asarray(Image.open(path).convert("RGB"))


def page_for(image: npt.NDArray[np.uint8], index: int = 0, segment: int = 0) -> PageImage:
    return PageImage(
        index=index,
        source="test",
        source_page_number=index + 1,
        segment=segment,
        image_file="test.png",
        width_px=int(image.shape[1]),
        height_px=int(image.shape[0]),
        sha256="",
    )
