"""What the book's video carries besides its pages, gathered once the pages are done: the end card (and the soft
bed under it), the MP4's metadata (title, artist, notes) and its chapter marks, from the input's own information
(ingest/book_info.py), the reading and the options."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from comic_narrator.audio.ambience import synthesise_ambience
from comic_narrator.audio.mix import DUAL_MONO_LU
from comic_narrator.audio.synth import at_loudness, fades
from comic_narrator.config import AudioConfig, RunConfig
from comic_narrator.errors import InputError
from comic_narrator.flow.stream import Streamed
from comic_narrator.ingest.book_info import BookInfo, read_book_info
from comic_narrator.timeline.chapters import ChapterMark, chapter_marks
from comic_narrator.video.endcard import EndCard, end_card

log = logging.getLogger("comic_narrator")


@dataclass(frozen=True)
class BookEnd:
    card: EndCard | None
    """None when there is nothing to credit, or with ``--no-end-card``."""
    card_frames: int
    metadata: dict[str, str]
    chapters: list[ChapterMark]
    split: bool = False
    """Write a file per chapter too (``--split-chapters``)."""

    def fingerprint(self) -> str:
        """What the MP4 holds of these, for the render's cache key."""
        card = [self.card.title, self.card.lines, self.card.notes] if self.card is not None else None
        marks = [[m.start_frame, m.end_frame, m.title] for m in self.chapters]
        return json.dumps(
            [card, self.card_frames, self.metadata, marks, self.split], ensure_ascii=False, sort_keys=True
        )


def book_end(config: RunConfig, streamed: Streamed, fps: int) -> BookEnd:
    """The end card, metadata and chapter marks of a streamed book. A ComicInfo.xml that cannot be parsed is
    logged and left out: the pages are narrated by then, and what it would add is optional."""
    try:
        info = read_book_info(config.input_path)
    except InputError as exc:
        log.warning("the book's information is left out: %s", exc)
        info = BookInfo()
    render = config.render
    made = end_card(info.title, info.credits, info.notes, render.credits, streamed.reading)
    card = made if render.end_card and not made.empty else None
    card_frames = card.frames(fps) if card is not None else 0
    metadata = {"title": info.title or Path(config.input_path).stem}
    if info.artist:
        metadata["artist"] = info.artist
    if info.notes:
        metadata["comment"] = info.notes
    page_starts, frame = [], 0
    for work in streamed.pages:
        if work.timing is None:
            continue
        page_starts.append((work.image.source_page_number, frame))
        frame += sum(shot.frames for shot in work.timing.shots)
    wanted = (
        [(page, f"Chapter {number}") for number, page in enumerate(render.chapters, start=1)]
        if render.chapters
        else [(chapter.page, chapter.title) for chapter in info.chapters]
    )
    marks = chapter_marks(page_starts, wanted, frame + card_frames)
    return BookEnd(card, card_frames, metadata, marks, render.split_chapters)


CARD_FADE_OUT_S = 1.2
"""The bed under the end card fades out over its last this long, so the file ends in silence, briefly."""


def card_sound(frames: int, fps: int, config: AudioConfig) -> npt.NDArray[np.float32]:
    """The track under the end card: the neutral bed (soft air) at the level the sound bed gives a page nothing
    places, faded in and out, so the card is not dead air; silence without the sound bed (``--no-sound-bed``).
    Added after mastering, at its level in the mastered mono track: the voices there read the target less the
    3 dB that playing the one track on both channels adds (audio/mix.py), and the bed sits under that."""
    samples = frames * config.sample_rate_hz // fps
    if not config.sound_bed or samples == 0:
        return np.zeros(samples, dtype=np.float32)
    rng = np.random.default_rng(frames)  # deterministic: the same card sounds the same
    air = synthesise_ambience("neutral", samples, config.sample_rate_hz, rng)
    level = config.target_lufs - DUAL_MONO_LU - config.neutral_under_voice_lu
    return fades(at_loudness(air, config.sample_rate_hz, level), config.sample_rate_hz, 0.3, CARD_FADE_OUT_S)
