"""The picture's additions drawn now match the stored reference frames (tests/data/video/, made by
``python -m tests.video.reference_frames``) within a tolerance that allows another OpenCV or FreeType build's
rounding, not a moved, resized or missing element."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.video.reference_frames import FRAMES, as_rgb, page_frame, reference_path


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_the_frame_matches_its_reference(name: str) -> None:
    stored = np.asarray(Image.open(reference_path(name)).convert("RGB"), dtype=np.int16)
    fresh = as_rgb(FRAMES[name]()).astype(np.int16)
    assert fresh.shape == stored.shape
    difference = np.abs(fresh - stored).max(axis=2)
    assert difference.mean() < 1.0, f"{name}: mean difference {difference.mean():.2f}"
    assert (difference > 24).mean() < 0.002, f"{name}: {(difference > 24).mean():.2%} of pixels moved"


def test_the_references_differ_from_the_plain_page() -> None:
    """Each reference shows its addition: it is not the page alone (a test that could not fail otherwise)."""
    plain = as_rgb(page_frame()).astype(np.int16)
    for name in sorted(FRAMES):
        stored = np.asarray(Image.open(reference_path(name)).convert("RGB"), dtype=np.int16)
        assert (np.abs(stored - plain).max(axis=2) > 40).mean() > 0.005, name
