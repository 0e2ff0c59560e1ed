"""What is drawn over a page's camera frames besides the page: the entrance from the page before
(``--transition``), the speaking highlight, sound words pulsing, and burned-in subtitles; which of them a segment
holds, their part of its cache key, and the order they are drawn in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from comic_narrator.config import RenderConfig
from comic_narrator.video.camera import Rect
from comic_narrator.video.captions import Caption, CaptionPainter
from comic_narrator.video.frames import Frame
from comic_narrator.video.highlight import Highlight, HighlightPainter
from comic_narrator.video.pulse import Pulse, PulsePainter
from comic_narrator.video.transition import Entrance, enter, still_of


@dataclass(frozen=True)
class Decor:
    """A page's decor, in frames from the page's start."""

    captions: tuple[Caption, ...] = ()
    """Subtitles burned in (``--burn-subtitles``)."""
    highlights: tuple[Highlight, ...] = ()
    """Balloons lit while their lines are spoken."""
    pulses: tuple[Pulse, ...] = ()
    """Sound words swelling with their effects."""
    entrance: Entrance | None = None
    """How the page takes over from the one before; only on a page's first segment."""

    def within(self, first_frame: int, end_frame: int, opens_page: bool) -> Decor:
        """What of it a segment of the page's frames ``first_frame`` to ``end_frame`` shows."""

        def overlaps(item: Caption | Highlight | Pulse) -> bool:
            return item.start_frame < end_frame and item.end_frame > first_frame

        return Decor(
            tuple(c for c in self.captions if overlaps(c)),
            tuple(h for h in self.highlights if overlaps(h)),
            tuple(p for p in self.pulses if overlaps(p)),
            self.entrance if opens_page else None,
        )

    def key_parts(self) -> Iterator[str]:
        """Its part of a segment's key (nothing when it is empty, so plain segments keep their keys)."""
        for c in self.captions:
            yield json.dumps([c.start_frame, c.end_frame, c.text], ensure_ascii=False)
        for h in self.highlights:
            yield json.dumps(["lit", h.start_frame, h.end_frame, h.box])
        for p in self.pulses:
            yield json.dumps(["pulse", p.start_frame, p.end_frame, p.box])
        if self.entrance is not None:
            yield json.dumps(["enter", *self.entrance.key()])


NO_DECOR = Decor()
"""A page with nothing drawn over it."""


class DecorPainter:
    """Draws a segment's decor into its frames: the page's own marks first (pulse, highlight), which move with the
    camera; then the entrance, which slides or fades the page in; then the subtitles, which stay put over both."""

    def __init__(self, decor: Decor, config: RenderConfig, width_px: int, height_px: int, fps: int) -> None:
        self.decor = decor
        self.width_px, self.height_px = width_px, height_px
        self.pulses = PulsePainter(decor.pulses, width_px, height_px)
        self.lights = HighlightPainter(decor.highlights, width_px, height_px, fps)
        self.captions = CaptionPainter(decor.captions, width_px, height_px)
        # On a page's first segment: the page before (its last frame, still) and how this one takes over from it.
        entrance = decor.entrance
        self.entering = (still_of(entrance, config), entrance) if entrance is not None else None

    def paint(self, frame: Frame, page_frame: int, view: Rect) -> Frame:
        """The decorated frame (``frame`` itself, drawn into, unless a transition makes a new one)."""
        self.pulses.paint(frame, page_frame, view)
        self.lights.paint(frame, page_frame, view)
        if self.entering is not None:
            before, entrance = self.entering
            frame = enter(before, frame, self.width_px, self.height_px, entrance, page_frame)
        self.captions.paint(frame, page_frame)
        return frame
