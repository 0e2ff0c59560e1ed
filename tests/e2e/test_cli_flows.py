"""CLI flows on real pages: --pages, the narrate word, --reading/--script validation, webtoon through the pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE

pytestmark = pytest.mark.slow


def test_narrate_word_and_pages_on_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "narrate"  # a folder named like a command word still works through `narrate`
    folder.mkdir()
    page = Image.open(SAMPLE_PAGE)
    page.save(folder / "p1.jpg")
    page.transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(folder / "p2.jpg")
    out = tmp_path / "two.mp4"
    assert main(["narrate", str(folder), "-o", str(out), "--pages", "2", "--vision-only", "-q"]) == 0
    book = json.loads((tmp_path / "two.mp4.work" / "book.json").read_text())
    assert [p["source_page_number"] for p in book["pages"]] == [2]
    # The page kept is the second file's picture (the mirrored one), not the first under the second's number.
    kept = np.asarray(Image.open(tmp_path / "two.mp4.work" / book["pages"][0]["image_file"]).convert("RGB"))
    assert np.array_equal(kept, np.asarray(Image.open(folder / "p2.jpg").convert("RGB")))


def test_edited_reading_with_wrong_page_count_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--vision-only", "-q"]) == 0
    reading = json.loads((tmp_path / "r.mp4.work" / "reading.json").read_text())
    reading["pages"] = reading["pages"] * 2
    edited = tmp_path / "edited-reading.json"
    edited.write_text(json.dumps(reading))
    capsys.readouterr()
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--reading", str(edited), "-q"]) != 0
    err = capsys.readouterr().err
    assert str(edited) in err and "holds 2 page(s) but the input has 1" in err


def test_broken_script_file_names_the_file_and_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"schema_version": 1, "lang": "en", "lines": [{"id": "x", "text": "hi"}]}))
    code = main([str(SAMPLE_PAGE), "-o", str(tmp_path / "s.mp4"), "--script", str(script), "-q"])
    err = capsys.readouterr().err
    assert code != 0
    assert str(script) in err and "not a valid Script" in err and "lines.0" in err
    assert len(err.strip().splitlines()) == 1


def test_tall_strip_through_the_pipeline_reads_top_to_bottom(tmp_path: Path) -> None:
    # No free webtoon exists: this strip stacks the sample page three times (992 x 4119 px).
    page = np.asarray(Image.open(SAMPLE_PAGE).convert("RGB"))
    strip = tmp_path / "strip.png"
    Image.fromarray(np.concatenate([page, page, page])).save(strip)
    out = tmp_path / "strip.mp4"
    assert main([str(strip), "-o", str(out), "--vision-only", "-q"]) == 0
    reading = json.loads((tmp_path / "strip.mp4.work" / "reading.json").read_text())
    assert len(reading["pages"]) >= 3
    assert {p["reading_direction"] for p in reading["pages"]} == {"ttb"}
    # Top to bottom: the slices in strip order, and in each slice the panels by their tops.
    assert [p["page"] for p in reading["pages"]] == list(range(len(reading["pages"])))
    for page in reading["pages"]:
        tops = [panel["bbox"][1] for panel in page["panels"]]
        assert tops == sorted(tops)
    assert sum(len(page["panels"]) for page in reading["pages"]) >= 3  # each copy of the page has panels


def test_inspect_writes_overlay_pngs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "overlays"
    assert main(["inspect", str(SAMPLE_PAGE), "-o", str(out_dir), "-q", "--work-dir", str(tmp_path / "w")]) == 0
    written = sorted(out_dir.glob("*.png"))
    assert [p.name for p in written] == ["page-0001.png"]
    overlay = np.asarray(Image.open(written[0]).convert("RGB"))
    original = np.asarray(Image.open(SAMPLE_PAGE).convert("RGB"))
    assert overlay.shape[0] >= original.shape[0] and overlay.shape[1] >= original.shape[1]
    assert not np.array_equal(overlay[: original.shape[0], : original.shape[1]], original), "boxes are drawn"


def test_inspect_without_an_output_writes_beside_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", str(SAMPLE_PAGE), "-q", "--work-dir", str(tmp_path / "w")]) == 0
    assert [p.name for p in (tmp_path / f"{SAMPLE_PAGE.name}.inspect").iterdir()] == ["page-0001.png"]
    assert (tmp_path / "w" / "book.json").is_file(), "--work-dir is where the pages were read"


def test_eval_is_its_own_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`comic-narrator eval FOLDER` scores a folder; it is not narrated as an input named "eval"."""
    assert main(["eval", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err
        == f"error: {tmp_path}: no gt.json in this folder (schema: ../shared/corpus/README.md)\n"
    )


def test_voices_gpu_and_review_are_commands_of_the_one_cli(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as helped:
        main(["review", "--help"])
    assert helped.value.code == 0 and capsys.readouterr().out.startswith("usage: comic-narrator review ")
    assert main(["voices", "--json"]) == 0
    voices = json.loads(capsys.readouterr().out)
    assert {"en-joe", "ja-alpha"} <= {voice["id"] for voice in voices}
    log = Path(__file__).parents[1] / "data" / "gpu" / "logs" / "b-bt4096.log"
    assert main(["gpu", "doctor", str(log)]) == 0
    assert "KV cache tokens         844,688" in capsys.readouterr().out


def test_read_prints_a_human_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(SAMPLE_PAGE), "-q", "--work-dir", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("page 1 [story, ltr]:")
    assert "panels" in out and "speech" in out


def test_split_chapters_without_chapters_says_so_and_writes_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone page has no ComicInfo, outline or --chapters: --split-chapters makes the one video and says why (a
    run without it says nothing of chapters)."""
    out = tmp_path / "page.mp4"
    options = [str(SAMPLE_PAGE), "-o", str(out), "--voice-quality", "fast", "--draft"]
    assert main(options) == 0
    plain = capsys.readouterr()
    assert "[chapters]" not in plain.out + plain.err
    assert main([*options, "--split-chapters"]) == 0
    printed = capsys.readouterr()
    assert "[chapters] none known (no --chapters, ComicInfo bookmarks or PDF outline): one file only" in (
        printed.out + printed.err
    )
    assert sorted(p.name for p in tmp_path.glob("*.mp4")) == ["page.mp4"]


def test_a_master_that_fails_stops_the_run_naming_the_file_and_keeps_the_last_video(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run over an output that is no longer current masters the book's audio on a thread after the last page;
    when that fails (here audio.wav cannot be written: a folder stands in its place), the run ends with one error
    line naming the file and the log, and the video the last run made is left as it was, not joined again
    without its audio."""
    out = tmp_path / "sample.mp4"
    args = [str(SAMPLE_PAGE), "-o", str(out), "--draft", "--voice-quality", "fast"]
    assert main(args) == 0
    before = out.read_bytes()
    wav = out.with_name("sample.mp4.work") / "audio.wav"
    wav.unlink()
    wav.mkdir()
    capsys.readouterr()
    assert main([*args, "--music"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and str(wav) in last and "comic-narrator.log" in last, last
    assert out.read_bytes() == before
