"""Command-line options that are malformed or out of range: argparse's one-line usage error, exit 2, no traceback."""

from __future__ import annotations

import pytest

from comic_narrator.cli import main


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
