"""Who is who is one book-level artifact (characters.json) that pages add to in book order: pages finishing in
another order give the same artifact and the same voices, and a re-run reuses every page's cache. Real: the
Pepper&Carrot ep. 17 pages of ../shared/corpus, the local reader with rapidocr, the bundled fast voices."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from comic_narrator.artifacts import (
    Book,
    BookCharacters,
    CharacterSource,
    PageImage,
    PageReading,
    Script,
    ScriptLine,
)
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.cli import main
from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import LocalExecutor, PageRead
from comic_narrator.flow.stream import Streamed, stream_pages
from comic_narrator.ingest.book import BookFeed
from comic_narrator.pipeline import load_or_ingest
from comic_narrator.reading.book_characters import CharacterBook, with_lines
from comic_narrator.reading.stage import read_one_page, vision_for_book
from comic_narrator.video.segments import Segment
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.workdir import read_artifact
from tests.conftest import REPO


class ReversedReads:
    """An executor whose reads finish last page first (each page is read only after every later one), handing
    the readings out in book order as the protocol asks: the order a cluster may well finish them in."""

    def __init__(self) -> None:
        self.finished: list[int] = []

    def read_pages(
        self, given: Book | BookFeed, run: RunConfig, engines: Engines
    ) -> Iterator[tuple[PageImage, PageRead]]:
        assert engines.ocr is not None
        book = BookFeed.of(given).book()
        done: dict[int, PageRead] = {}
        for page in reversed(book.pages):
            done[page.index] = read_one_page(book, page, vision_for_book(run.vision, book), run.work_dir, engines.ocr)
            self.finished.append(page.index)
        for page in book.pages:
            yield page, done[page.index]

    def render(self, segment: Segment, image: Path) -> None:
        pass


class CountingReads(LocalExecutor):
    """The local executor, noting whether each page's reading came from the cache."""

    def __init__(self, run: RunConfig) -> None:
        super().__init__(run, None)
        self.cached: list[bool] = []

    def read_pages(
        self, book: Book | BookFeed, run: RunConfig, engines: Engines
    ) -> Iterator[tuple[PageImage, PageRead]]:
        for page, read in super().read_pages(book, run, engines):
            self.cached.append(read[2])
            yield page, read


def _stream(
    folder: Path,
    work: Path,
    executor: ReversedReads | LocalExecutor,
    script: Script | None = None,
    cast_file: Path | None = None,
) -> Streamed:
    run = RunConfig(folder, work.parent / "out.mp4", work, voice=VoiceConfig(quality="fast", cast_file=cast_file))
    book = load_or_ingest(folder, run.ingest, work)
    with RapidOcrEngine() as ocr, open_voice_bank(run.voice) as bank:
        return stream_pages(book, run, Engines(ocr=ocr, bank=bank), executor, script=script)


def _files(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled manga excerpt's four pages as a folder: a dialogue of several characters (the turn model tells
    them apart by how they speak), so the order pages finish in could change who is who."""
    folder = tmp_path_factory.mktemp("bj") / "pages"
    folder.mkdir()
    with zipfile.ZipFile(REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz") as cbz:
        for name in cbz.namelist():
            if name.endswith(".jpg"):
                (folder / name).write_bytes(cbz.read(name))
    return folder


def test_pages_finishing_out_of_order_give_the_same_characters_and_voices(
    book: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    in_order = _stream(book, tmp_path / "a", LocalExecutor(RunConfig(book, tmp_path / "a.mp4", tmp_path / "a"), None))
    backwards = ReversedReads()
    reversed_run = _stream(book, tmp_path / "b", backwards)
    assert backwards.finished == [3, 2, 1, 0]

    written = (tmp_path / "a" / "characters.json").read_bytes()
    assert written == (tmp_path / "b" / "characters.json").read_bytes()
    characters = read_artifact(tmp_path / "a" / "characters.json", BookCharacters)
    assert characters == in_order.characters == reversed_run.characters
    assert characters.pages == 4
    speaking = [c for c in characters.characters if c.lines]
    assert len(speaking) >= 2, characters
    assert in_order.cast == reversed_run.cast
    cast = in_order.cast
    assert cast is not None
    # One artifact: every speaker of the script is in it with the voice the cast gave, and its lines counted.
    for character in speaking:
        assert character.voice == cast.voice_for(character.id).voice
        assert character.lines == sum(1 for line in in_order.script.lines if line.speaker == character.id)
    # ... and each page-local id of the local reader is linked to exactly one book-wide character.
    for work in in_order.pages:
        sources = {(s.page, s.speaker) for c in characters.characters for s in c.sources if s.page == work.image.index}
        assert len(sources) == len({speaker for _, speaker in sources})
        book_ids = {t.speaker for t in work.reading.texts if t.speaker}
        assert book_ids == {c.id for c in characters.characters if any(s.page == work.image.index for s in c.sources)}

    # A re-run reads every page from its cache, voices no line again and grows the same artifact.
    readings, clips = _files(tmp_path / "a" / "readings"), _files(tmp_path / "a" / "clips")
    again = CountingReads(RunConfig(book, tmp_path / "a.mp4", tmp_path / "a"))
    rerun = _stream(book, tmp_path / "a", again)
    assert again.cached == [True] * 4
    assert _files(tmp_path / "a" / "readings") == readings
    assert _files(tmp_path / "a" / "clips") == clips
    assert (tmp_path / "a" / "characters.json").read_bytes() == written
    assert rerun.cast == in_order.cast

    # `read --json` prints the same book-wide ids, and leaves the same who-is-who (without lines and voices).
    assert main(["read", str(book), "--json", "--work-dir", str(tmp_path / "a")]) == 0
    printed = json.loads(capsys.readouterr().out)
    speakers = [[t["speaker"] for t in page["texts"]] for page in printed["pages"]]
    assert speakers == [[t.speaker for t in work.reading.texts] for work in in_order.pages]
    read_characters = read_artifact(tmp_path / "a" / "characters.json", BookCharacters)
    assert read_characters.characters == [
        c.model_copy(update={"lines": 0, "voice": None}) for c in characters.characters
    ]


def _page(page: int, *speakers: str) -> PageReading:
    from comic_narrator.artifacts import Panel, TextRegion

    texts = [TextRegion(bbox=(0, 0, 9, 9), kind="speech", text="hi", panel=0, speaker=s) for s in speakers]
    return PageReading(
        page=page, width=99, height=99, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 99, 99))], texts=texts
    )


def test_a_renamed_speaker_joins_the_book_and_a_failed_page_gives_its_lines_back() -> None:
    """An edited script's new speaker (a review renamed char2 to 'Pepper') is a character of the book from its first
    line; the lines of a page that could not be voiced are taken back."""
    book = CharacterBook(link=False)
    page = _page(0, "char1", "char2")
    book.add_page(page)
    book.add_page(_page(1, "char1"))  # read while the book's language was not yet told: its lines come later
    line = ScriptLine(id="p001-t02", page=0, panel=0, speaker="Pepper", kind="speech", text="hi")
    other = line.model_copy(update={"id": "p001-t01", "speaker": "char1"})
    counted = book.add_lines([other, line], reading=page)
    assert counted.characters[2].sources == [CharacterSource(page=0, speaker="char2", regions=1)]
    assert [(c.id, c.first_page, c.lines) for c in counted.characters] == [
        ("char1", 0, 1),
        ("char2", 0, 0),
        ("Pepper", 0, 1),
    ]
    assert with_lines(counted, [other], removed=True).characters[0].lines == 0


def test_a_review_that_renames_and_re_voices_a_character_acts_on_the_book(book: Path, tmp_path: Path) -> None:
    """The edited script (review's script.json) gives every line of the book's busiest character to "pepper",
    and the review's cast file gives pepper a voice and a name: characters.json links pepper to that character's
    page-local ids, moves its lines, and records the voice, which the lines are then said with."""
    work = tmp_path / "w"
    first = _stream(book, work, LocalExecutor(RunConfig(book, tmp_path / "o.mp4", work), None))
    lead = max(first.characters.characters, key=lambda c: c.lines)
    edited = Script(
        lang=first.script.lang,
        lines=[
            line.model_copy(update={"speaker": "pepper"}) if line.speaker == lead.id else line
            for line in first.script.lines
        ],
    )
    taken = {m.voice for m in first.cast.members} if first.cast is not None else set()
    voice = next(v for v in ("en-joe-girl", "en-joe-young", "en-joe-deep") if v not in taken)
    cast_file = tmp_path / "review-cast.yaml"
    cast_file.write_text(f"pepper: {{voice: {voice}, name: Pepper}}\n", encoding="utf-8")
    again = _stream(book, work, LocalExecutor(RunConfig(book, tmp_path / "o.mp4", work), None), edited, cast_file)
    characters = read_artifact(work / "characters.json", BookCharacters)
    pepper, old = characters.get("pepper"), characters.get(lead.id)
    assert pepper is not None and old is not None
    assert (pepper.name, pepper.voice, pepper.lines) == ("Pepper", voice, lead.lines)
    assert (old.lines, old.voice) == (0, None)
    assert [(s.page, s.speaker) for s in pepper.sources] == [(s.page, s.speaker) for s in lead.sources if s.regions]
    assert pepper.first_page == lead.first_page
    spoken = {
        clip.voice
        for work_page in again.pages
        for clip in work_page.clips
        for line in work_page.lines
        if line.id == clip.line_id and line.speaker == "pepper"
    }
    assert spoken == {voice}
