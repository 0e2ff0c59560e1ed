"""Fixtures for the reader tests: the real rapidocr engine (opened once) and the bundled test pages."""

from __future__ import annotations

import functools
import importlib.util
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from comic_narrator.artifacts import BBox, PageImage, PageReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.ingest.images import decode_image
from comic_narrator.reading.metrics import in_order, match_boxes
from comic_narrator.reading.order import spread_aware_order
from comic_narrator.reading.reader import read_page
from tests.conftest import training_path

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"
BLACKJACK_SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
TRAINING_PANELS = Path(__file__).resolve().parents[2] / "training" / "panels"


def training_module(name: str) -> ModuleType:
    """A script of training/panels (``stress``, ``stress_eval``, ``synth``) loaded as a module, as the scripts
    import each other by bare name."""
    spec = importlib.util.spec_from_file_location(name, TRAINING_PANELS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


"""The bundled manga excerpt: Black Jack ni Yoroshiku vol. 1 pp. 8-11."""


@pytest.fixture(scope="session")
def ocr() -> Iterator[RapidOcrEngine]:
    with RapidOcrEngine() as engine:
        yield engine


@functools.cache
def _decoded(path: Path) -> npt.NDArray[np.uint8]:
    image = np.asarray(Image.open(path).convert("RGB"))
    image.setflags(write=False)
    return image


def load_rgb(path: Path) -> npt.NDArray[np.uint8]:
    return _decoded(path).copy()


@functools.cache
def _cached_reading(path: Path, config: VisionConfig, manga_hint: bool | None, ocr: RapidOcrEngine) -> PageReading:
    image = load_rgb(path)
    return read_page(image, page_for(image), config=config, manga_hint=manga_hint, ocr=ocr)


def read_bundled(
    ocr: RapidOcrEngine, path: Path, config: VisionConfig | None = None, manga_hint: bool | None = None
) -> PageReading:
    """The reading of a bundled page, read once per test session (readings are immutable artifacts)."""
    return _cached_reading(path, config or VisionConfig(), manga_hint, ocr)


def read_blackjack_page(ocr: RapidOcrEngine, name: str) -> PageReading:
    """A page of ../shared/training's Black Jack vol. 1 (``bj01_000017.jpg``) read as a Japanese manga page, once
    per test session; the test skips when ../shared is not beside this checkout."""
    path = training_path("blackjack-ni-yoroshiku", "vol01", name)
    return read_bundled(ocr, path, VisionConfig(lang="ja"), manga_hint=True)


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


@functools.cache
def blackjack_sample_pages() -> tuple[npt.NDArray[np.uint8], ...]:
    """The bundled manga excerpt's four pages, decoded as a narrated book's pages are."""
    with zipfile.ZipFile(BLACKJACK_SAMPLE) as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".jpg"))
        return tuple(decode_image(archive.read(n), source=n, max_pixels=64_000_000) for n in names)


def assert_panels_in_order(rgb: npt.NDArray[np.uint8], truth: list[BBox], direction: str) -> None:
    """The reader's panels of ``rgb`` (insets included, in its reading order) are ``truth``, one box each (IoU 0.5),
    in their order, and no more."""
    pred, parents = training_module("stress_eval").panels_of(rgb, "auto")
    ordered = [pred[i] for i in spread_aware_order(pred, parents, direction, *rgb.shape[1::-1])]
    hits = match_boxes(truth, ordered)
    assert len(hits) == len(truth), f"{len(hits)} of {len(truth)} panels found ({len(ordered)} boxes): {ordered}"
    assert in_order([hits[g] for g in range(len(truth))]), ordered
    assert len(ordered) == len(truth), f"{len(ordered) - len(truth)} boxes more than the page's {len(truth)} panels"
