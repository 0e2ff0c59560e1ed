"""What the picture's additions cost per frame, apart from the page's own warp and dimming: the speaking
highlight, a sound word's pulse, a burned-in subtitle, an end-card frame and a frame of a slide or a fade between
pages, on the sample page, on one core (OpenCV single-threaded).

    python benchmarks/picture_overlays.py [--frames 120] [--repeat 3]

Each figure is the median over --repeat runs of the mean per frame over --frames frames, at 1920x1080 and at the
832x468 draft size. Encoding is not included (the encoder's cost per frame is in benchmarks/render_settings.py).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import cv2

from comic_narrator.config import RenderConfig
from comic_narrator.video.captions import Caption, CaptionPainter
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.endcard import EndCard, end_card_frames
from comic_narrator.video.frames import Frame, PagePyramid, dim_outside
from comic_narrator.video.highlight import Highlight, HighlightPainter
from comic_narrator.video.pulse import Pulse, PulsePainter
from comic_narrator.video.transition import Entrance, enter

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "peppercarrot-ep17-page2.jpg"
VIEW = (0.0, 300.0, 992.0, 558.0)
"""The page's second tier, filling a 16:9 frame."""
PANEL = (20.0, 330.0, 950.0, 330.0)
BALLOON = (40, 340, 180, 130)
"""A balloon's lettering on the sample page (page pixels)."""
SOUND_WORD = (480, 560, 220, 110)
"""A sound word's lettering, its size on the sample page."""
CUE = "Carrot, get out the map and compass: it's too cloudy to see where I'm going"
SLIDE = Entrance("slide", "ltr", 12, str(SAMPLE), "", VIEW, PANEL)
FADE = Entrance("fade", "ltr", 12, str(SAMPLE), "", VIEW, PANEL)
CARD = EndCard(
    "Pepper&Carrot: A Fresh Start",
    ("Writer & Art: David Revoy", "Translation: Alex Gryson", "Web: https://www.peppercarrot.com"),
    ("CC BY 4.0",),
)


def per_frame_ms(make: Callable[[int], None], frames: int, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for number in range(frames):
            make(number)
        runs.append((time.perf_counter() - started) / frames * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    pyramid = PagePyramid.load(SAMPLE)
    heads = ("size", "page frame", "+ highlight", "+ pulse", "+ subtitle", "end card", "+ slide", "+ fade")
    print(" | ".join(f"{head:>11}" for head in heads))
    for width, height in ((1920, 1080), (832, 468)):
        figures = measure(pyramid, width, height, args.frames, args.repeat)
        print(" | ".join([f"{f'{width}x{height}':>11}", *(f"{ms:8.2f} ms" for ms in figures)]))


def measure(pyramid: PagePyramid, width: int, height: int, frames: int, repeat: int) -> tuple[float, ...]:
    """Milliseconds a frame: the page alone, what the highlight, a pulse and a subtitle add, an end-card frame,
    and what a slide and a fade add to the new page's frame (the page before is rendered once per transition)."""
    config = RenderConfig(width_px=width, height_px=height)
    fill = ycbcr_of(config.background_rgb)
    lights = HighlightPainter((Highlight(0, 10**6, BALLOON),), width, height, config.fps)
    captions = CaptionPainter((Caption(0, 10**6, CUE),), width, height)
    pulses = PulsePainter((Pulse(0, 11, SOUND_WORD),), width, height)

    def page(_: int) -> Frame:
        frame = pyramid.render(VIEW, width, height, fill)
        dim_outside(frame, width, height, VIEW, PANEL, 1.0)
        return frame

    drawn = [page(0) for _ in range(4)]
    captions.paint(drawn[0], 0)  # the text is laid out once, on first use
    return (
        per_frame_ms(page, frames, repeat),
        per_frame_ms(lambda n: lights.paint(drawn[n % 4], 100, VIEW), frames, repeat),
        per_frame_ms(lambda n: pulses.paint(drawn[n % 4], 3, VIEW), frames, repeat),
        per_frame_ms(lambda n: captions.paint(drawn[n % 4], 0), frames, repeat),
        _card_frame_ms(CARD, config, repeat),
        per_frame_ms(lambda n: enter(drawn[0], drawn[1], width, height, SLIDE, n % SLIDE.frames), frames, repeat),
        per_frame_ms(lambda n: enter(drawn[0], drawn[1], width, height, FADE, n % FADE.frames), frames, repeat),
    )


def _card_frame_ms(card: EndCard, config: RenderConfig, repeat: int) -> float:
    """An end-card frame's cost, its layout (done once per card) spread over the card's frames."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        count = sum(1 for _ in end_card_frames(card, config, config.fps))
        runs.append((time.perf_counter() - started) / count * 1000)
    return statistics.median(runs)


if __name__ == "__main__":
    main()
