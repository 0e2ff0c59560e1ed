"""Reference frames of the picture's additions, drawn on the sample page at a small size: a burned English and a
Japanese subtitle, the speaking highlight, a sound word's pulse, an end card and a slide half way. The test
compares fresh renders with the stored PNGs (tests/data/video/); after a change that is meant to alter them,
look at the new frames and store them:

    python -m tests.video.reference_frames
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt

from comic_narrator.config import RenderConfig
from comic_narrator.video.captions import Caption, CaptionPainter
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.endcard import EndCard, end_card_frames
from comic_narrator.video.frames import Frame, PagePyramid, dim_outside
from comic_narrator.video.highlight import Highlight, HighlightPainter
from comic_narrator.video.pulse import Pulse, PulsePainter
from comic_narrator.video.transition import Entrance, enter
from tests.conftest import SAMPLE_PAGE

FOLDER = Path(__file__).resolve().parents[1] / "data" / "video"
WIDTH, HEIGHT = 448, 252
VIEW = (0.0, 300.0, 992.0, 558.0)
PANEL = (30.0, 350.0, 930.0, 320.0)
CONFIG = RenderConfig(width_px=WIDTH, height_px=HEIGHT)


def page_frame() -> Frame:
    frame = PagePyramid.load(SAMPLE_PAGE).render(VIEW, WIDTH, HEIGHT, ycbcr_of(CONFIG.background_rgb))
    dim_outside(frame, WIDTH, HEIGHT, VIEW, PANEL, 1.0)
    return frame


def _subtitle(text: str) -> Frame:
    frame = page_frame()
    CaptionPainter((Caption(0, 1, text),), WIDTH, HEIGHT).paint(frame, 0)
    return frame


def _highlight() -> Frame:
    frame = page_frame()
    HighlightPainter((Highlight(0, 100, (40, 400, 170, 130)),), WIDTH, HEIGHT, 24).paint(frame, 50, VIEW)
    return frame


def _pulse() -> Frame:
    frame = page_frame()
    PulsePainter((Pulse(0, 11, (670, 740, 280, 100)),), WIDTH, HEIGHT).paint(frame, 3, VIEW)
    return frame


def _end_card() -> Frame:
    card = EndCard(
        "Pepper&Carrot: A Fresh Start",
        ("Writer & Art: David Revoy", "Translation: Alex Gryson", "Web: www.peppercarrot.com"),
        ("CC BY 4.0",),
    )
    frames = list(end_card_frames(card, CONFIG, 24))
    return frames[len(frames) // 2]


def _slide() -> Frame:
    old = PagePyramid.load(SAMPLE_PAGE).render((0.0, 0.0, 992.0, 558.0), WIDTH, HEIGHT, ycbcr_of((12, 12, 14)))
    entrance = Entrance("slide", "rtl", 12, str(SAMPLE_PAGE), "", (0.0, 0.0, 992.0, 558.0), None)
    return enter(old, page_frame(), WIDTH, HEIGHT, entrance, 5)


FRAMES: dict[str, Callable[[], Frame]] = {
    "subtitle-en": lambda: _subtitle("(Pepper)\nCarrot, get out the map and compass!"),
    "subtitle-ja": lambda: _subtitle("（ペッパー）\n嵐が来る前にここを出なきゃ、キャロット！"),
    "highlight": _highlight,
    "pulse": _pulse,
    "end-card": _end_card,
    "slide-manga": _slide,
}


def as_rgb(frame: Frame) -> npt.NDArray[np.uint8]:
    """An I420 frame as RGB, converted as players do (BT.709, limited range)."""
    video = av.VideoFrame.from_numpy_buffer(frame, format="yuv420p", width=WIDTH)
    video.colorspace = av.video.reformatter.Colorspace.ITU709
    video.color_range = av.video.reformatter.ColorRange.MPEG
    return np.asarray(video.to_ndarray(format="rgb24"), dtype=np.uint8)


def reference_path(name: str) -> Path:
    return FOLDER / f"{name}.png"


def main() -> None:
    from PIL import Image

    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, make in FRAMES.items():
        Image.fromarray(as_rgb(make())).save(reference_path(name), optimize=True)
        print(reference_path(name))


if __name__ == "__main__":
    main()
