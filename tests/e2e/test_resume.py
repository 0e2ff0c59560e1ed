"""Resume: a half-written artifact is redone, never trusted (house rule 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import Book, Cast, CastMember, PageReading, Script, ScriptLine
from comic_narrator.audio.synthesis import synthesize_script
from comic_narrator.cli import main
from comic_narrator.config import VoiceConfig
from comic_narrator.progress import SILENT
from comic_narrator.workdir import read_artifact
from tests.conftest import SAMPLE_PAGE


@pytest.mark.slow
def test_truncated_json_artifacts_are_redone(tmp_path: Path) -> None:
    """Real CLI, OCR and reader (`--vision-only`: ingest and read). The stand-in for a half-written file is a cached
    artifact cut in half by the test (our own writer renames complete files only, so a cut file comes from outside:
    a full disk, an interrupted copy). The next run must redo those stages and write them whole again."""
    out = tmp_path / "out.mp4"
    work = tmp_path / "out.mp4.work"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q", "--vision-only"]) == 0
    (page_file,) = (work / "readings").glob("page-0001.*.json")
    whole = {path: path.read_bytes() for path in (work / "book.json", page_file)}
    for path, data in whole.items():
        path.write_bytes(data[: len(data) // 2])
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q", "--vision-only"]) == 0
    assert read_artifact(work / "book.json", Book).pages
    assert read_artifact(page_file, PageReading).texts
    assert {path: path.read_bytes() for path in whole} == whole, "the redone stages write what they wrote before"


def test_truncated_clip_is_voiced_again(tmp_path: Path) -> None:
    """Real voice (en-joe, Piper) and real clip cache. A clip WAV cut short by the test (the stand-in for a partial
    file) reads without error in libsndfile, just shorter, so only a check of its RIFF length keeps it from being
    trusted under its cache key: the next synthesis voices the line again, at full length."""
    script = Script(lang="en", lines=[ScriptLine(id="l1", page=0, panel=0, speaker="narrator", kind="caption",
                                                 text="The storm had passed by morning.")])  # fmt: skip
    cast = Cast(members=[CastMember(character="narrator", voice="en-joe", lines=1)])
    config = VoiceConfig(jobs=1)
    (clip,) = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    wav = tmp_path / clip.audio_file
    whole = wav.read_bytes()
    wav.write_bytes(whole[: len(whole) // 2])
    (again,) = synthesize_script(script, cast, config, tmp_path / "clips", SILENT)
    assert again.duration_s == pytest.approx(clip.duration_s)
    assert len(wav.read_bytes()) == len(whole)
