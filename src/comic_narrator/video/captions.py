"""Burned-in subtitles (``--burn-subtitles``): a page's cues as frame ranges of its video, and drawing the cue
on screen into each frame with the shipped font, at the bottom of the picture, outlined so it reads on any page.

The cues are made by the subtitle files' own rules (timeline/subtitles.py) from the page's reading, lines and
timing as the page streams by, and laid on its frames, so the burned text and the SRT say the same thing at the
same time; the one difference: a speaker's name that only another page's reading gives is in the SRT, not burned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from comic_narrator.timeline.subtitles import Cue
from comic_narrator.video.frames import Frame
from comic_narrator.video.text import TextImage, blend_text, font, render_lines, wrap

TEXT_HEIGHT = 0.045
"""Letter size as a share of the frame's short side: 49 px on 1080p, 21 px on a 468 px draft (BBC subtitle
guidelines ask for a line height near 1/15 of the screen; these are a little smaller so two lines fit a panel)."""
MARGIN = 0.06
"""Space kept below the text, as a share of the frame height (inside the action-safe area)."""
MAX_WIDTH = 0.88
"""Widest line, as a share of the frame width."""


@dataclass(frozen=True)
class Caption:
    """A cue on a page's frames: shown from ``start_frame`` up to (not including) ``end_frame``, counted from the
    page's first frame."""

    start_frame: int
    end_frame: int
    text: str


def page_captions(cues: Iterable[Cue], fps: int) -> tuple[Caption, ...]:
    """A page's cues (milliseconds from the page's start) on its frames; a cue shorter than a frame is kept."""
    captions = []
    for cue in cues:
        start = round(cue.start_ms * fps / 1000)
        end = max(start + 1, round(cue.end_ms * fps / 1000))
        captions.append(Caption(start, end, cue.text))
    return tuple(captions)


class CaptionPainter:
    """Draws the caption due at a frame; each caption's text is laid out and rendered once, on first use."""

    def __init__(self, captions: tuple[Caption, ...], width_px: int, height_px: int) -> None:
        self.captions = captions
        self.width_px = width_px
        self.height_px = height_px
        self.size_px = max(12, round(min(width_px, height_px) * TEXT_HEIGHT))
        self.outline_px = max(1, round(self.size_px / 12))
        self._images: dict[str, TextImage] = {}

    def image(self, text: str) -> TextImage:
        if text not in self._images:
            lines = wrap(text, font(self.size_px), self.width_px * MAX_WIDTH)
            self._images[text] = render_lines(lines, self.size_px, self.outline_px)
        return self._images[text]

    def paint(self, frame: Frame, page_frame: int) -> None:
        """Draw, in place, the caption shown at ``page_frame`` (frames from the page's start), if any."""
        for caption in self.captions:
            if caption.start_frame <= page_frame < caption.end_frame:
                image = self.image(caption.text)
                x = (self.width_px - image.width_px) // 2
                y = self.height_px - round(self.height_px * MARGIN) - image.height_px
                blend_text(frame, self.width_px, self.height_px, image, x, y)
                return
