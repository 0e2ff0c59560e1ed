"""The frames' colours: RGB to limited-range BT.709 Y'CbCr, as H.264 players expect, checked against the standard's
own definition (luma weights Kr = 0.2126 and Kb = 0.0722; colour differences scaled by 2(1 - K); 219 luma and 224
chroma steps above 16 and around 128), and the I420 layout the encoder is handed."""

from __future__ import annotations

import numpy as np

from comic_narrator.video.color import CHROMA_ZERO, LUMA_BLACK, rgb_to_i420, ycbcr_of

KR, KB = 0.2126, 0.0722


def bt709_limited(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    r, g, b = (channel / 255 for channel in rgb)
    y = KR * r + (1 - KR - KB) * g + KB * b
    cb = (b - y) / (2 * (1 - KB))
    cr = (r - y) / (2 * (1 - KR))
    return round(16 + 219 * y), round(128 + 224 * cb), round(128 + 224 * cr)


COLOURS = [
    (0, 0, 0),
    (255, 255, 255),
    (128, 128, 128),
    (255, 0, 0),
    (0, 255, 0),
    (0, 0, 255),
    (255, 200, 40),
    (12, 12, 14),
    (200, 40, 90),
]


def test_each_colour_is_the_standards_limited_range_value() -> None:
    for rgb in COLOURS:
        assert ycbcr_of(rgb) == bt709_limited(rgb), rgb
    # the values every BT.709 table gives for the primaries and the extremes
    assert ycbcr_of((255, 255, 255)) == (235, 128, 128)
    assert ycbcr_of((255, 0, 0)) == (63, 102, 240)
    assert ycbcr_of((0, 255, 0)) == (173, 42, 26)
    assert ycbcr_of((0, 0, 255)) == (32, 240, 118)


def test_black_and_no_colour_are_what_the_frames_dim_towards() -> None:
    assert ycbcr_of((0, 0, 0)) == (LUMA_BLACK, CHROMA_ZERO, CHROMA_ZERO)


def test_the_i420_buffer_holds_full_luma_then_quarter_cb_then_quarter_cr() -> None:
    """Each 2x2 block one colour: the luma plane is every pixel's Y, and the two chroma planes (Cb first, as
    yuv420p has them) each block's Cb and Cr, within one step (the conversion runs in float32: a value within a
    rounding's width of a half step may round the other way)."""
    rng = np.random.default_rng(7)
    blocks = rng.integers(0, 256, size=(4, 6, 3), dtype=np.uint8)  # 2 x 2 pixels each; sizes are multiples of 4
    frame = np.ascontiguousarray(blocks.repeat(2, axis=0).repeat(2, axis=1))
    height, width = frame.shape[:2]
    planes = rgb_to_i420(frame)
    assert planes.shape == (height * 3 // 2, width)
    expected = np.array([[bt709_limited(tuple(int(c) for c in rgb)) for rgb in row] for row in blocks])
    luma = planes[:height].astype(int)
    chroma = planes[height:].reshape(2, height // 2, width // 2).astype(int)
    assert np.abs(luma - expected[..., 0].repeat(2, axis=0).repeat(2, axis=1)).max() <= 1
    assert np.abs(chroma[0] - expected[..., 1]).max() <= 1
    assert np.abs(chroma[1] - expected[..., 2]).max() <= 1


def test_random_colours_round_as_the_standard_does() -> None:
    """Over 4,096 colours every channel is within one step of the standard's value, and most are exact (94-98 %
    per channel: the conversion's float32 coefficients put a few within a rounding of a half step on the other
    side); a coefficient off by a fifth of a step moves one colour in ten."""
    rng = np.random.default_rng(3)
    colours = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
    got = np.array([ycbcr_of((int(r), int(g), int(b))) for r, g, b in colours.reshape(-1, 3)])
    expected = np.array([bt709_limited((int(r), int(g), int(b))) for r, g, b in colours.reshape(-1, 3)])
    assert np.abs(got - expected).max() <= 1
    assert (got == expected).mean(axis=0).min() >= 0.92
