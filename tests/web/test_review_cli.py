"""`comic-narrator review` in-process, its server stopped as Ctrl-C would stop it: what it refuses, what it makes
beside the video, and the browser it opens (a real run of the sample page; the browser call is recorded, not made)."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import pytest

from comic_narrator.artifacts import Cast
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
    cast_file.write_text("char2: {voice: en-joe-robot}\n", encoding="utf-8")
    extras = ["--read-along", str(along), "--audiobook", "--cast", str(cast_file)]
    assert main([str(SAMPLE_PAGE), "-o", str(out), *RUN_OPTIONS, *extras]) == 0
    printed = capsys.readouterr()
    assert out.is_file() and out.with_suffix(".m4b").is_file() and (along / "index.html").is_file()
    review_lines = [line for line in printed.out.splitlines() if line.startswith("review: http://127.0.0.1:")]
    assert len(review_lines) == 1 and opened == [review_lines[0].removeprefix("review: ")]
    assert "token=" in opened[0]
    assert rendered and rendered[0].startswith(f"wrote {out}")
    cast = {m.character: m.voice for m in Cast.model_validate_json((work_of(out) / "cast.json").read_text()).members}
    assert cast["char2"] == "en-joe-robot"
    assert printed.out.count("audiobook: ") == 2
    assert "review stopped" in printed.err
