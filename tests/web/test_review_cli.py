"""`comic-narrator review` in-process, its server stopped as Ctrl-C would stop it: what it refuses, what it makes
beside the video, and the browser it opens (a real run of the sample page; the browser call is recorded, not made)."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path

import pytest

from comic_narrator.artifacts import Cast
from comic_narrator.cli import main as cli_main
from comic_narrator.cli.review import main
from comic_narrator.web.server import ReviewServer
from tests.audio.conftest import work_of
from tests.conftest import SAMPLE_PAGE

RUN_OPTIONS = ["-q", "--voice-quality", "fast", "--draft"]


def test_review_refuses_a_vision_only_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(SAMPLE_PAGE), "-o", str(tmp_path / "x.mp4"), "--vision-only"])
    assert exited.value.code == 2
    assert "--vision-only stops before the script and the voices" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_review_writes_what_was_asked_beside_the_video_and_opens_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's "Save and render" is pressed once before Ctrl-C: the second run keeps the user's --cast (no
    review saved one) and writes the read-along and the audiobook again."""
    opened: list[str] = []
    rendered: list[str] = []

    def open_browser(url: str, *args: object, **kwargs: object) -> bool:
        opened.append(url)
        return True

    def render_then_interrupted(self: ReviewServer, *args: object) -> None:
        (along / "index.html").unlink()
        rendered.append(self.session.render())
        raise KeyboardInterrupt

    monkeypatch.setattr(webbrowser, "open", open_browser)
    monkeypatch.setattr(ReviewServer, "serve_forever", render_then_interrupted)
    out, along, cast_file = tmp_path / "page.mp4", tmp_path / "along", tmp_path / "cast.yaml"
    cast_file.write_text("char1: {voice: en-joe-robot}\n", encoding="utf-8")
    extras = ["--read-along", str(along), "--audiobook", "--cast", str(cast_file)]
    assert main([str(SAMPLE_PAGE), "-o", str(out), *RUN_OPTIONS, *extras]) == 0
    printed = capsys.readouterr()
    assert out.is_file() and out.with_suffix(".m4b").is_file() and (along / "index.html").is_file()
    review_lines = [line for line in printed.out.splitlines() if line.startswith("review: http://127.0.0.1:")]
    assert len(review_lines) == 1 and opened == [review_lines[0].removeprefix("review: ")]
    assert "token=" in opened[0]
    assert rendered and rendered[0].startswith(f"wrote {out}")
    cast = {m.character: m.voice for m in Cast.model_validate_json((work_of(out) / "cast.json").read_text()).members}
    assert cast["char1"] == "en-joe-robot"
    assert printed.out.count("audiobook: ") == 2
    assert "review stopped" in printed.err


def test_save_and_render_keeps_the_user_s_reading_and_writes_nothing_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --reading (the page's reading, its first speech balloon made a caption) and no --audiobook: the
    render from the page uses that reading again, and no audiobook is written by either run."""
    assert cli_main(["read", str(SAMPLE_PAGE), "--json", "--work-dir", str(tmp_path / "read")]) == 0
    reading = json.loads(capsys.readouterr().out)
    first_speech = next(t for t in reading["pages"][0]["texts"] if t["kind"] == "speech")
    first_speech["kind"], first_speech["speaker"] = "caption", None
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(reading), encoding="utf-8")
    rendered: list[str] = []

    def render_then_interrupted(self: ReviewServer, *args: object) -> None:
        (work_of(out) / "reading.json").unlink()
        rendered.append(self.session.render())
        raise KeyboardInterrupt

    monkeypatch.setattr(ReviewServer, "serve_forever", render_then_interrupted)
    out = tmp_path / "page.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), *RUN_OPTIONS, "--reading", str(edited), "--no-browser"]) == 0
    assert rendered and out.is_file()
    assert json.loads((work_of(out) / "reading.json").read_text(encoding="utf-8")) == reading
    assert not out.with_suffix(".m4b").exists() and "audiobook" not in capsys.readouterr().out
