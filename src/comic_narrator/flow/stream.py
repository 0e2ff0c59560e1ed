"""Pages streaming through the stages: page N+1 is read while page N is voiced and page N-1 rendered.

Per page, in book order: read (on the executor's read workers, a few pages ahead) -> speakers linked into the
book's characters -> its script lines -> new characters cast -> voiced -> timed -> camera -> its video segments
handed to the renderer's processes. A page's lines go to the voices as soon as it is cast, while the page before
it is still being voiced (VOICED_PAGES_AT_ONCE), so a page of one or two lines leaves no voice idle. What needs
the whole book is decided online or in a light last pass: the language at the first page with enough text (pages
before it wait, they hold no lines), each character's voice when it first speaks (kept for the book), the
loudness from per-page block powers (BS.1770 blocks, a few numbers a second) so the audio is mastered page by
page at the end and never held whole in memory.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import (
    Book,
    BookCharacters,
    BookReading,
    CameraPlan,
    Cast,
    Clip,
    PageImage,
    PageReading,
    Script,
    ScriptLine,
    Shot,
    ShotTiming,
    Timing,
)
from comic_narrator.config import RunConfig
from comic_narrator.errors import ArtifactError, ComicNarratorError, PageError
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import Executor
from comic_narrator.ingest.book import BookFeed
from comic_narrator.progress import SILENT, Progress
from comic_narrator.workdir import write_artifact

if TYPE_CHECKING:
    from comic_narrator.reading.book_characters import CharacterBook
    from comic_narrator.video.captions import Caption
    from comic_narrator.video.segments import Segment
    from comic_narrator.voice.voicebank import VoiceBank

log = logging.getLogger("comic_narrator")

VOICED_PAGES_AT_ONCE = 2
"""Pages whose lines are being voiced at once: the page being finished and the next one. With one, each page's
lines waited for the last line of the page before (on an H100 the voices' four slots stood half empty at every
page of one or two lines, and the book's voices ended 8-13 s after its reading); more would let later pages take
the voices from the one the video waits for."""


@dataclass
class PageWork:
    """One page on its way through the stages (small: no pixels, no audio)."""

    image: PageImage
    reading: PageReading
    lines: list[ScriptLine] = field(default_factory=list)
    clips: list[Clip] = field(default_factory=list)
    timing: Timing | None = None
    plan: CameraPlan | None = None
    powers: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    render_pieces: int = 0
    """Segments of equal length its video is cut into (inside shots), or 0 to cut at shot ends: the book's last
    page is cut into one piece per render worker, since nothing else is left to render beside it."""


@dataclass
class Streamed:
    """What streaming the book produced, assembled for the book-level artifacts and the join."""

    reading: BookReading
    pages: list[PageWork]
    script: Script
    cast: Cast | None
    characters: BookCharacters
    failures: list[str]
    voice_busy_s: float = 0.0
    """Seconds spent voicing pages, each page's own (two pages' voices may overlap)."""


class ScriptSource:
    """Where each page's lines come from: the writer, or a whole script the user gave or edited."""

    def __init__(self, script: Script | None, book: Book, origin: Path | None) -> None:
        self.script = script
        self.origin = origin
        self.by_page: dict[int, list[tuple[int, ScriptLine]]] = {}
        if script is not None:
            pages = {page.index for page in book.pages}
            for index, line in enumerate(script.lines):
                if line.page not in pages:
                    raise ArtifactError(
                        f"lines.{index}: page {line.page}, panel {line.panel} is not in the reading; the book has "
                        f"{len(pages)} page(s)",
                        path=origin,
                    )
                self.by_page.setdefault(line.page, []).append((index, line))

    def lines_for(self, reading: PageReading, run: RunConfig) -> list[ScriptLine]:
        from comic_narrator.voice.writer import page_lines

        if self.script is None:
            return page_lines(reading, run.voice)
        lines = []
        for index, line in self.by_page.get(reading.page, []):
            if not -1 <= line.panel < len(reading.panels):
                raise ArtifactError(
                    f"lines.{index}: page {line.page}, panel {line.panel} is not in the reading; page {line.page} "
                    f"has panels -1..{len(reading.panels) - 1}",
                    path=self.origin,
                )
            lines.append(line)
        return lines


class OnlineCasting:
    """Voices given as characters first speak, recorded in the book's characters (``book``), which they keep for
    the book: casting reads the artifact, so a page's cast depends on the pages before it, never on timing."""

    def __init__(self, run: RunConfig, bank: VoiceBank, book: CharacterBook) -> None:
        self.run = run
        self.voices = bank.voices()
        self.book = book
        self.cast: Cast | None = None
        self.narrator_lines = 0
        self.pinned: set[str] = set()
        """Characters the cast file gives a voice of the other gender: not cast again for it."""

    def add(self, lines: list[ScriptLine], lang: Literal["en", "ja"], page: int = 0) -> Cast:
        """The cast for page ``page`` (0-based), whose ``lines`` the book's characters already count; cast again
        only when somebody speaks who has no voice yet, or somebody's voice turned out to be of the other gender
        (their lines from this page on take the new voice)."""
        from comic_narrator.voice.casting import NARRATOR, miscast

        self.narrator_lines += sum(1 for line in lines if line.speaker == NARRATOR)
        voiced = {member.character for member in self.cast.members} if self.cast is not None else set()
        wrong = [c for c in miscast(self.book.characters, self.voices) if c not in self.pinned]
        if self.cast is None or not {line.speaker for line in lines} <= voiced or wrong:
            before = {member.character: member.voice for member in self.cast.members} if self.cast else {}
            cast = self.final(lang)
            kept = set(miscast(self.book.characters, self.voices))  # a cast file's pin wins
            self.pinned |= kept
            for character in (c for c in wrong if c not in kept):
                log.info(
                    "%s speaks as a %s: voiced by %s instead of %s from page %d on",
                    character,
                    cast.voice_for(character).gender,
                    cast.voice_for(character).voice,
                    before.get(character),
                    page + 1,
                )
            return cast
        return self.cast

    def final(self, lang: Literal["en", "ja"]) -> Cast:
        """The cast over the book's characters as they stand (every page's lines counted, at the end)."""
        from comic_narrator.voice.casting import NARRATOR, cast_book

        narrator = self.cast.voice_for(NARRATOR).voice if self.cast is not None else None
        characters = self.book.characters
        self.cast, self.book.characters = cast_book(
            characters, self.voices, self.run.voice, lang, self.narrator_lines, narrator
        )
        return self.cast


Voiced = tuple[list[Clip], str | None, float]
"""A page's clips, the failure that replaced them (``--keep-going``), and the seconds its voicing took."""


def _voice_page(
    work: PageWork, script: Script, cast: Cast, run: RunConfig, bank: VoiceBank, stop: threading.Event
) -> Voiced:
    """The page's clips (``script`` holds its lines), or the failure that replaces them with ``keep_going``; and
    the seconds it took."""
    from comic_narrator.voice.synthesis import synthesize_with_bank

    if not work.lines:
        return [], None, 0.0
    started = time.perf_counter()
    try:
        clips = synthesize_with_bank(script, cast, run.voice, run.work_dir / "clips", SILENT, bank, stop)
        return clips, None, time.perf_counter() - started
    except (ComicNarratorError, OSError, RuntimeError, ValueError) as exc:
        if not run.keep_going:
            raise
        log.exception("voicing page %s failed", work.image.index + 1)
        failure = f"page {work.image.index + 1} ({work.image.source}): voicing failed: {exc}"
        return [], failure, time.perf_counter() - started


def stream_pages(
    book: Book | BookFeed,
    run: RunConfig,
    engines: Engines,
    executor: Executor,
    progress: Progress = SILENT,
    given_reading: BookReading | None = None,
    script: Script | None = None,
    script_origin: Path | None = None,
    on_voiced: Callable[[PageWork, Literal["en", "ja"]], None] | None = None,
) -> Streamed:
    """Every page through read -> link -> script -> cast -> voice -> timing -> camera -> render (segments handed
    to ``executor``'s renderer). ``given_reading`` (an edited reading) replaces the read stage; ``script`` (a
    given or edited script) replaces the writer. ``on_voiced`` hears of each voiced page, in book order, with
    the book's language (the book's audio is made from them as they come). ``book`` may still be being ingested
    (a :class:`BookFeed`): each page is read as soon as it is stored."""
    from comic_narrator.audio.mix import block_powers, mix_voices
    from comic_narrator.reading.book_characters import CharacterBook
    from comic_narrator.reading.reader import follow_book_direction
    from comic_narrator.reading.stage import decided_language, vision_for_book
    from comic_narrator.timeline.timing import build_timing
    from comic_narrator.video.camera import plan_camera

    feed = BookFeed.of(book)
    header = feed.header
    # a given script and a given reading are checked against every page first
    whole = feed.book() if script is not None or given_reading is not None else header
    read_stage = progress.stage("read", feed.expected)
    voice_stage = progress.stage("voices", feed.expected) if not run.vision_only else None
    # Who is who: pages join the book's characters in book order (the local reader's speakers linked by
    # appearance and register; an LLM's and an edited reading's ids are book-wide already).
    characters = CharacterBook(link=given_reading is None and run.vision.vision != "llm")
    source = ScriptSource(script, whole, script_origin)
    casting = OnlineCasting(run, engines.bank, characters) if engines.bank is not None and not run.vision_only else None
    failures: list[str] = []
    voice_busy = [0.0]
    done: list[PageWork] = []
    waiting: list[PageWork] = []  # read, before the language is known
    lang: str | None = None

    def readings() -> Iterator[tuple[PageImage, PageReading, str | None]]:
        if given_reading is not None:
            for image, reading in zip(whole.pages, given_reading.pages, strict=True):
                read_stage.advance(detail=f"page {image.index + 1} (given)")
                yield image, reading, None
            return
        for image, (reading, failure, cached) in executor.read_pages(feed, run, engines):
            for stage in (read_stage, voice_stage):  # a tall page sliced makes more pages than the input had
                if stage is not None and image.index >= stage.total:
                    stage.grow(1)
            detail = " (cached)" if cached else f": {len(reading.panels)} panels, {len(reading.texts)} texts"
            read_stage.advance(detail=f"page {image.index + 1}{detail}")
            yield image, reading, failure

    written: list[tuple[str, str | None, str | None]] = []

    def write_characters(at_the_end: bool = False) -> None:
        """characters.json as it stands, when somebody joined the book, or got a voice or a name (its page
        sources grow every page: a 1,000-page book's file is about half a megabyte), and at the end."""
        who = [(c.id, c.voice, c.name) for c in characters.characters.characters]
        if at_the_end or who != written:
            write_artifact(run.work_dir / "characters.json", characters.characters)
            written[:] = who

    book_vision = vision_for_book(run.vision, header)

    pending: deque[tuple[PageWork, Future[Voiced], Literal["en", "ja"]]] = deque()  # sent to the voices, in order
    voice_pool = ThreadPoolExecutor(VOICED_PAGES_AT_ONCE, thread_name_prefix="voice-page")
    stop = threading.Event()  # set when the stream ends early: the pages' lines not started yet are left out

    def voice_through(work: PageWork, lang_now: Literal["en", "ja"]) -> None:
        """The page's lines written, cast and sent to the voices; then every page before it whose voices are
        done, or that keeps a later page from being voiced, is finished."""
        if given_reading is None:  # a wordless page reads the way its book does, once the book's language is known
            work.reading = follow_book_direction(work.reading, lang_now, book_vision, header.manga_hint)
        work.lines = source.lines_for(work.reading, run)
        characters.add_lines(work.lines, reading=work.reading)
        if run.vision_only or casting is None or engines.bank is None:
            done.append(work)
            write_characters()
            return
        cast = casting.add(work.lines, lang_now, work.image.index)
        page_script = Script(lang=lang_now, lines=work.lines)
        voice = voice_pool.submit(_voice_page, work, page_script, cast, run, engines.bank, stop)
        pending.append((work, voice, lang_now))
        while len(pending) >= VOICED_PAGES_AT_ONCE or (pending and pending[0][1].done()):
            finish(*pending.popleft())

    def finish(work: PageWork, voice: Future[Voiced], lang_now: Literal["en", "ja"]) -> None:
        """The page once its voices are back: timed, framed, handed to the renderer and the book's audio."""
        clips, failure, seconds = voice.result()
        voice_busy[0] += seconds
        if failure is not None:
            failures.append(failure)
            characters.add_lines(work.lines, removed=True)
            work.lines = []
        work.clips = clips
        one_page = BookReading(source=header.source, lang=lang_now, pages=[work.reading])
        work.timing = build_timing(one_page, Script(lang=lang_now, lines=work.lines), clips, run.audio, run.render.fps)
        work.plan = plan_camera(one_page, work.timing, run.render)
        work.powers = block_powers(mix_voices(run.work_dir, work.timing, clips), work.timing.sample_rate_hz)
        if feed.is_last(work.image.index):
            from comic_narrator.video.render import worker_count

            work.render_pieces = worker_count(run.render)
        for segment in page_segments(work, run, lang_now, done[-1] if done else None):
            executor.render(segment, run.work_dir / work.image.image_file)
        if voice_stage is not None:
            voice_stage.advance(detail=f"page {work.image.index + 1}: {len(clips)} line(s)")
        done.append(work)
        write_characters()
        if on_voiced is not None:
            on_voiced(work, lang_now)

    try:
        for image, reading, failure in readings():
            if failure is not None:
                if not run.keep_going:
                    raise PageError(f"{failure}; --keep-going narrates the other pages")
                failures.append(failure)
            reading = characters.add_page(reading)
            work = PageWork(image=image, reading=reading)
            if lang is None:
                waiting.append(work)
                lang = decided_language(run.vision, header, [w.reading for w in waiting], feed.is_last(image.index))
                if lang is None:
                    continue
                for held in waiting:
                    voice_through(held, "ja" if lang == "ja" else "en")
                waiting.clear()
            else:
                voice_through(work, "ja" if lang == "ja" else "en")
        book_lang: Literal["en", "ja"] = "ja" if lang == "ja" else "en"
        for held in waiting:  # only when the book has no pages
            voice_through(held, book_lang)
        while pending:
            finish(*pending.popleft())
    finally:  # on a failure or Ctrl-C, lines being voiced end (their clips stay cached) and no other starts
        stop.set()
        voice_pool.shutdown(wait=True, cancel_futures=True)
    book_reading = BookReading(source=header.source, lang=book_lang, pages=[w.reading for w in done])
    if given_reading is not None:
        book_reading = given_reading
    book_script = Script(lang=book_lang, lines=[line for w in done for line in w.lines])
    final_cast = casting.final(book_lang) if casting is not None else None
    write_characters(at_the_end=True)
    return Streamed(
        reading=book_reading,
        pages=done,
        script=book_script,
        cast=final_cast,
        characters=characters.characters,
        failures=failures,
        voice_busy_s=voice_busy[0],
    )


def page_segments(
    work: PageWork, run: RunConfig, lang: Literal["en", "ja"], previous: PageWork | None = None
) -> list[Segment]:
    """A voiced page's video segments with what is drawn over them: its subtitles when they are burned in
    (``--burn-subtitles``: the book's own track, or ``en`` its English translation where the reading carries
    one), its balloons lit while they are spoken, its sound words pulsing with their effects, and its entrance
    from the ``previous`` page as ``--transition`` says."""
    from comic_narrator.timeline.subtitles import build_tracks
    from comic_narrator.video.captions import page_captions
    from comic_narrator.video.decor import Decor
    from comic_narrator.video.highlight import page_highlights
    from comic_narrator.video.pulse import page_pulses
    from comic_narrator.video.segments import plan_segments
    from comic_narrator.video.transition import page_entrance

    assert work.plan is not None and work.timing is not None
    render = run.render
    captions: tuple[Caption, ...] = ()
    if render.burn_subtitles:
        one_page = BookReading(source="", lang=lang, pages=[work.reading])
        tracks = build_tracks(one_page, Script(lang=lang, lines=work.lines), work.clips, work.timing)
        wanted = lang if render.burn_subtitles == "book" else render.burn_subtitles
        track = next((t for t in tracks if t.lang == wanted), tracks[0])
        captions = page_captions(track.cues, work.timing.fps)
    entrance = None
    if previous is not None and previous.plan is not None:
        image = run.work_dir / previous.image.image_file
        direction = work.reading.reading_direction
        entrance = page_entrance(render.transition, direction, previous.plan, image, previous.image.sha256, work.plan)
    decor = Decor(
        captions,
        page_highlights(work.reading, work.lines, work.clips, work.timing) if render.highlight else (),
        page_pulses(work.reading, work.timing) if render.highlight and run.audio.sound_bed else (),
        entrance,
    )
    return plan_segments(work.plan, {work.image.index: work.image.sha256}, render, decor, work.render_pieces)


def book_timing(pages: list[PageWork]) -> tuple[Timing, CameraPlan]:
    """The pages' own timings and camera plans laid end to end: the book's timeline and plan."""
    shots: list[ShotTiming] = []
    camera: list[Shot] = []
    frame = 0
    fps, rate, width, height = 24, 48_000, 1920, 1080
    for work in pages:
        if work.timing is None or work.plan is None:
            continue
        fps, rate = work.timing.fps, work.timing.sample_rate_hz
        width, height = work.plan.width_px, work.plan.height_px
        offset_s = frame / fps
        for shot in work.timing.shots:
            shots.append(replace_shot(shot, offset_s))
        for planned in work.plan.shots:
            camera.append(planned.model_copy(update={"start_frame": planned.start_frame + frame}))
        frame += sum(shot.frames for shot in work.timing.shots)
    timing = Timing(fps=fps, sample_rate_hz=rate, shots=shots, duration_s=frame / fps)
    return timing, CameraPlan(width_px=width, height_px=height, fps=fps, shots=camera)


def replace_shot(shot: ShotTiming, offset_s: float) -> ShotTiming:
    """A page's shot moved ``offset_s`` later in the book."""
    return shot.model_copy(
        update={
            "start_s": round(shot.start_s + offset_s, 6),
            "line_starts_s": [round(start + offset_s, 6) for start in shot.line_starts_s],
        }
    )
