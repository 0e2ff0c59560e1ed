"""The stream's own bookkeeping on a given script and on casting as pages come, without reading a page."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import Book, PageImage, PageReading, Panel, Script, ScriptLine
from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.errors import ArtifactError
from comic_narrator.flow.stream import OnlineCasting, ScriptSource
from comic_narrator.reading.book_characters import CharacterBook
from comic_narrator.voice.voicebank import open_voice_bank


def _book(pages: int) -> Book:
    return Book(
        source="book.cbz",
        pages=[
            PageImage(
                index=i,
                source=f"book.cbz:p{i}.jpg",
                source_page_number=i + 1,
                image_file=f"pages/p{i}.png",
                width_px=800,
                height_px=1200,
                sha256=f"{i:064d}",
            )
            for i in range(pages)
        ],
    )


def _reading(page: int, panels: int) -> PageReading:
    boxes = [Panel(bbox=(0, 400 * k, 800, 380)) for k in range(panels)]
    return PageReading(page=page, width=800, height=1200, reading_direction="ltr", panels=boxes, texts=[])


def _line(line_id: str, page: int, panel: int, speaker: str = "narrator") -> ScriptLine:
    return ScriptLine(id=line_id, page=page, panel=panel, speaker=speaker, kind="speech", text="Hello.")


def _run(tmp_path: Path) -> RunConfig:
    return RunConfig(input_path=tmp_path / "book.cbz", output_path=tmp_path / "out.mp4", work_dir=tmp_path)


def test_a_given_script_line_on_a_panel_the_page_lacks_is_named(tmp_path: Path) -> None:
    script = Script(lang="en", lines=[_line("p001-t01", 0, 1), _line("p001-t02", 0, 2), _line("p002-t01", 1, -1)])
    source = ScriptSource(script, _book(2), tmp_path / "script.json")
    # Page 2's line is over the whole page (panel -1): fine on a page of no panels.
    assert [line.id for line in source.lines_for(_reading(1, 0), _run(tmp_path))] == ["p002-t01"]
    with pytest.raises(
        ArtifactError, match=r"lines\.1: page 0, panel 2 is not in the reading; page 0 has panels -1\.\.1"
    ):
        source.lines_for(_reading(0, 2), _run(tmp_path))
    assert [line.id for line in source.lines_for(_reading(0, 3), _run(tmp_path))] == ["p001-t01", "p001-t02"]


def test_online_casting_counts_the_narrators_lines_and_keeps_voices(tmp_path: Path) -> None:
    run = RunConfig(
        input_path=tmp_path / "b.cbz",
        output_path=tmp_path / "o.mp4",
        work_dir=tmp_path,
        voice=VoiceConfig(quality="fast"),
    )
    book = CharacterBook(link=False)
    with open_voice_bank(run.voice) as bank:
        casting = OnlineCasting(run, bank, book)
        first = [_line("p001-t01", 0, 0), _line("p001-t02", 0, 0, "char1"), _line("p001-t03", 0, 0)]
        book.add_lines(first)
        cast = casting.add(first, "en")
        assert cast.voice_for("narrator").lines == 2
        hero = cast.voice_for("char1").voice
        second = [_line("p002-t01", 1, 0, "char1"), _line("p002-t02", 1, 0)]
        book.add_lines(second)
        again = casting.add(second, "en")
        assert again.voice_for("char1").voice == hero
        assert casting.final("en").voice_for("narrator").lines == 3
