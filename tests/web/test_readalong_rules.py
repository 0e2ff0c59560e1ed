"""The read-along export's rules one by one, on a copy of a real run's work folder (the two-page book of
test_read_along.py): what it refuses and how, the title it writes, who may read its files, and what it reports."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from comic_narrator.artifacts import BookReading, Script, Timing
from comic_narrator.cli import main
from comic_narrator.video.render import book_audio_file
from comic_narrator.web.panel_edits import edited_reading
from comic_narrator.web.readalong import export_read_along
from tests.conftest import SAMPLE_PAGE
from tests.web.readalong_page import spoken_lines

pytestmark = pytest.mark.slow


@pytest.fixture
def work(narrated: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the narrated book's work folder (modification times kept: the script is older than the timeline)."""
    copy = tmp_path / "work"
    shutil.copytree(narrated[0], copy)
    return copy


def _refusal(work: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Export ``work`` to ``out`` through the CLI, which must refuse it with exit code 2; its one-line message."""
    assert main(["export", str(work), str(out)]) == 2
    message = capsys.readouterr().err
    assert message.startswith("error: ") and message.count("\n") == 1, message
    return message


def test_a_file_in_the_way_of_the_folder_is_refused_and_kept(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "read-along"
    out.write_bytes(b"not a folder")
    assert f"error: {out}: is a file, not a folder" in _refusal(work, out, capsys)
    assert out.read_bytes() == b"not a folder"
    under = out / "pages"  # a folder under the file: one line too (it was an internal error)
    assert f"error: {under}: cannot create the read-along folder" in _refusal(work, under, capsys)
    assert out.read_bytes() == b"not a folder"


def test_a_run_without_its_narration_audio_is_refused(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    audio = book_audio_file(work)
    audio.unlink()
    out = tmp_path / "read-along"
    assert f"error: {audio}: has no narration audio yet" in _refusal(work, out, capsys)
    assert not out.exists()


def test_a_reading_short_of_the_books_pages_is_refused(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reading = json.loads((work / "reading.json").read_text(encoding="utf-8"))
    assert len(reading["pages"]) == 2
    reading["pages"] = reading["pages"][:1]
    (work / "reading.json").write_text(json.dumps(reading), encoding="utf-8")
    out = tmp_path / "read-along"
    assert f"error: {work}: holds 1 page(s) but the book has 2" in _refusal(work, out, capsys)
    assert not out.exists()


def test_the_title_is_the_books_name(narrated: tuple[Path, Path]) -> None:
    folder = narrated[1]  # the book is the folder "book"
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert "<title>book · read-along</title>" in index and "<h1>book</h1>" in index
    assert '<html lang="en">' in index and 'src="narration.m4a"' in index
    assert "{{" not in index
    player = (folder / "guided.js").read_text(encoding="utf-8").removeprefix("window.READ_ALONG = ").rstrip(";\n")
    assert json.loads(player)["title"] == "book"


def test_a_title_with_markup_is_escaped(work: Path, tmp_path: Path) -> None:
    book = json.loads((work / "book.json").read_text(encoding="utf-8"))
    book["source"] = str(Path(book["source"]).with_name('Tom & Jerry <b>"2"'))
    (work / "book.json").write_text(json.dumps(book), encoding="utf-8")
    export_read_along(work, tmp_path / "out")
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Tom &amp; Jerry &lt;b&gt;&quot;2&quot;</h1>" in index
    player = (tmp_path / "out" / "guided.js").read_text(encoding="utf-8")
    assert json.loads(player.removeprefix("window.READ_ALONG = ").rstrip(";\n"))["title"] == 'Tom & Jerry <b>"2"'


def test_every_file_may_be_read_by_any_web_server(narrated: tuple[Path, Path]) -> None:
    files = [path for path in narrated[1].rglob("*") if path.is_file()]
    assert {"guided.json", "guided.js", "index.html", "narration.m4a"} <= {path.name for path in files}
    assert {path.name: oct(stat.S_IMODE(path.stat().st_mode)) for path in files} == {
        path.name: "0o644" for path in files
    }


def test_what_the_export_reports(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = Script.model_validate_json((work / "script.json").read_text(encoding="utf-8"))
    timing = Timing.model_validate_json((work / "timing.json").read_text(encoding="utf-8"))
    made = export_read_along(work, tmp_path / "out")
    spoken = spoken_lines(tmp_path / "out")
    assert len(spoken) == len(script.lines) > 0, "every line of the sample book is voiced"
    assert (made.folder, made.pages, made.lines, made.duration_s) == (
        tmp_path / "out",
        2,
        len(spoken),
        timing.duration_s,
    )
    assert main(["export", str(work), str(tmp_path / "again")]) == 0
    printed = capsys.readouterr().out
    assert printed == (
        f"read-along: {tmp_path / 'again' / 'index.html'} (2 page(s), {len(spoken)} line(s), "
        f"{timing.duration_s:.1f} s of narration)\n"
    )


def test_a_page_read_without_panels_counts_its_lines_in_its_one_shot(
    narrated: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample page with its panels removed on the review page (the edit ``--reading`` accepts): every line is
    said over the whole page, in the book's only shot, and the export still counts each of them."""
    reading = BookReading.model_validate_json((narrated[0] / "reading.json").read_text(encoding="utf-8"))
    one_page = reading.model_copy(update={"pages": reading.pages[:1]})
    edited = tmp_path / "reading.json"
    edited.write_text(edited_reading(one_page, {0: []}).model_dump_json(), encoding="utf-8")
    out, folder = tmp_path / "page.mp4", tmp_path / "read-along"
    argv = [str(SAMPLE_PAGE), "-o", str(out), "-q", "--voice-quality", "fast", "--draft", "--reading", str(edited)]
    assert main([*argv, "--read-along", str(folder)]) == 0
    work = tmp_path / "page.mp4.work"
    timing = Timing.model_validate_json((work / "timing.json").read_text(encoding="utf-8"))
    script = Script.model_validate_json((work / "script.json").read_text(encoding="utf-8"))
    assert [(shot.page, shot.panel) for shot in timing.shots] == [(0, -1)]
    assert script.lines and {line.panel for line in script.lines} == {-1}
    assert f"(1 page(s), {len(script.lines)} line(s), " in capsys.readouterr().out
    made = export_read_along(work, tmp_path / "again")
    assert (made.pages, made.lines) == (1, len(script.lines))
