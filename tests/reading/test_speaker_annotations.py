"""The annotated sets the speaker figures are measured on are what they claim: every line somebody says has a
speaker and every sound has none, every box lies on its page, every page's panels and lines are in reading order,
and the pages exist in ../shared/training where it is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETS = sorted((REPO / "training" / "eval").glob("*/gt.json"))


def test_the_colour_sets_are_there() -> None:
    names = {path.parent.name for path in SETS}
    assert {f"peppercarrot-ep{n}" for n in ("06", "08", "11", "13", "16", "18")} <= names


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.parent.name)
def test_an_annotated_set_holds_together(path: Path) -> None:
    gt = json.loads(path.read_text(encoding="utf-8"))
    assert gt["source"] and gt["pages"]
    spoken = 0
    for page in gt["pages"]:
        width, height = page["width"], page["height"]
        assert page["reading_direction"] in ("ltr", "rtl")
        assert [p["order"] for p in page["panels"]] == list(range(1, len(page["panels"]) + 1)), page["image"]
        for panel in page["panels"]:
            assert [t["order"] for t in panel["texts"]] == list(range(1, len(panel["texts"]) + 1)), page["image"]
            for box in [panel["bbox"]] + [t["bbox"] for t in panel["texts"]]:
                x, y, w, h = box
                assert w > 0 and h > 0 and x >= -2 and y >= -2, (page["image"], box)
                assert x + w <= width + 2 and y + h <= height + 2, (page["image"], box)
            for text in panel["texts"]:
                assert text["text"].strip(), page["image"]
                if text["kind"] == "sound":
                    assert text.get("speaker") is None, (page["image"], text["text"])
                if text["kind"] in ("speech", "shout"):
                    assert text.get("speaker"), (page["image"], text["text"])
                    spoken += 1
    assert spoken >= 10


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.parent.name)
def test_the_pages_are_in_shared_training(path: Path) -> None:
    gt = json.loads(path.read_text(encoding="utf-8"))
    images = (path.parent / gt["image_dir"]).resolve()
    if not images.is_dir():
        pytest.skip(f"{images} is absent (../shared/training holds the pages)")
    for page in gt["pages"]:
        assert (images / page["image"]).is_file(), page["image"]
