"""The scene chooser's rules on drawn pages: which colours count as foliage, water, flame and darkness (bands of
known hue and share, at page size and below the analysis size), a page that cannot be read, the colours named as
evidence, and when a second setting is layered beneath the first."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from comic_narrator.artifacts import PageReading, TextRegion
from comic_narrator.audio.scene import LAYER_AT, PageColours, choose_scene, page_colours


def _banded(path: Path, width: int, bands: list[tuple[float, tuple[int, int, int]]]) -> Path:
    """A page of horizontal bands, each ``share`` of its height in one HSV colour (hue in degrees, S and V 0-255);
    the rest grey paper."""
    height = 1000
    hsv = np.zeros((height, width, 3), dtype=np.uint8)
    hsv[...] = (0, 0, 200)
    top = 0
    for share, (hue, saturation, value) in bands:
        rows = round(share * height)
        hsv[top : top + rows] = (hue // 2, saturation, value)
        top += rows
    cv2.imwrite(str(path), cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR))
    return path


@pytest.mark.parametrize("width", [700, 120])  # shrunk to the analysis size, and already under it
def test_each_colour_counts_where_it_belongs(tmp_path: Path, width: int) -> None:
    bands = [
        (0.30, (120, 200, 200)),  # foliage green
        (0.20, (220, 200, 200)),  # water blue
        (0.10, (10, 220, 230)),  # flame orange-red
        (0.05, (350, 220, 230)),  # crimson: flame too (the hue wraps at 360)
        (0.25, (0, 0, 30)),  # shadow
    ]
    colours = page_colours(_banded(tmp_path / "page.png", width, bands))
    assert colours is not None
    assert colours.green == pytest.approx(0.30, abs=0.02)
    assert colours.blue == pytest.approx(0.20, abs=0.02)
    assert colours.warm == pytest.approx(0.15, abs=0.02)
    assert colours.dark == pytest.approx(0.25, abs=0.02)


@pytest.mark.parametrize(
    "hue_sat_val",
    [
        (180, 200, 200),  # cyan: between foliage and water
        (60, 200, 200),  # yellow: between flame and foliage
        (280, 200, 200),  # violet
        (120, 40, 200),  # a green too pale to be foliage
        (10, 120, 230),  # a red too pale for flame
    ],
)
def test_colours_between_the_bands_count_for_nothing(tmp_path: Path, hue_sat_val: tuple[int, int, int]) -> None:
    colours = page_colours(_banded(tmp_path / "page.png", 300, [(0.5, hue_sat_val)]))
    assert colours == PageColours(dark=0.0, green=0.0, blue=0.0, warm=0.0)


def test_a_page_that_cannot_be_read_has_no_colours(tmp_path: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    assert page_colours(broken) is None
    assert page_colours(tmp_path / "missing.png") is None


def _page(texts: list[tuple[str, str]]) -> PageReading:
    regions = [
        TextRegion(bbox=(0, 40 * i, 100, 30), kind=kind, text=text, panel=0) for i, (kind, text) in enumerate(texts)
    ]
    return PageReading(page=0, width=400, height=600, reading_direction="ltr", panels=[], texts=regions)


def test_colours_are_named_as_evidence_when_they_count() -> None:
    jungle = PageColours(dark=0.0, green=0.3, blue=0.0, warm=0.0)
    choice = choose_scene(_page([]), jungle)
    assert choice.ambience == "forest" and "colours 1.5" in choice.reason
    faint = PageColours(dark=0.0, green=0.06, blue=0.0, warm=0.0)  # 0.3: below the evidence line
    choice = choose_scene(_page([("caption", "Deep in the forest.")]), faint)
    assert choice.ambience == "forest" and "colours" not in choice.reason


def test_a_second_setting_is_layered_only_when_the_page_tells_of_it_more_than_in_passing() -> None:
    assert LAYER_AT == 1.5
    in_passing = choose_scene(_page([("sound", "ザーザー"), ("speech", "What a wind.")]), None)
    assert (in_passing.ambience, in_passing.layer) == ("rain", None)
    told = choose_scene(_page([("sound", "ザーザー"), ("caption", "The storm wind howled.")]), None)
    assert (told.ambience, told.layer) == ("rain", "wind")
