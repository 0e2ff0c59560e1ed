"""Command-line options that are malformed or out of range: argparse's one-line usage error, exit 2, no traceback."""

from __future__ import annotations

import pytest

from comic_narrator.cli import main
from comic_narrator.cli.app import _narrate_parser, run_config_from_args


@pytest.mark.parametrize("command", [["narrate", "page.jpg", "-o", "out.mp4"], ["voices"]])
def test_malformed_reference_option_is_a_usage_error(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--tts-reference", "no-equals-sign.wav"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "NAME=FILE.wav" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--speed", "0"], "outside 0.5-2.0"),
        (["--speed", "2.5"], "outside 0.5-2.0"),
        (["--speed", "fast"], "not a number"),
        (["--jobs", "-3"], "below the smallest"),
        (["--dpi", "-5"], "below the smallest"),
        (["--max-pixels", "many"], "not a whole number"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(
    option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["page.jpg", "-o", "out.mp4", *option])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "size_px", "fps"),
    [
        ([], (1920, 1080), 24),
        (["--aspect", "vertical"], (1080, 1920), 24),
        (["--aspect", "square", "--fps", "30"], (1080, 1080), 30),
        (["--aspect", "vertical", "--draft"], (468, 832), 12),
        (["--draft", "--fps", "60"], (832, 468), 12),
    ],
)
def test_aspect_and_draft_set_the_frame(options: list[str], size_px: tuple[int, int], fps: int) -> None:
    render = run_config_from_args(_narrate_parser().parse_args(["page.jpg", *options])).render
    assert (render.width_px, render.height_px, render.fps) == (*size_px, fps)


def test_unknown_aspect_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["page.jpg", "-o", "out.mp4", "--aspect", "portrait"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'portrait'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("given", "written"),
    [(None, "page.mp4"), ("film.MP4", "film.MP4"), ("clip.mov", "clip.mov.mp4"), ("out/book", "out/book.mp4")],
)
def test_the_output_is_always_an_mp4(given: str | None, written: str) -> None:
    """No -o names the video after the input; a name without .mp4 gets it added (the container is MP4)."""
    argv = ["folder/page.jpg", *(["-o", given] if given else [])]
    config = run_config_from_args(_narrate_parser().parse_args(argv))
    assert config.output_path.as_posix() == written
    assert config.render.chapters == ()  # no --chapters: none given, not None
    assert run_config_from_args(_narrate_parser().parse_args([*argv, "--speed", "2"])).voice.speed == 2.0
