"""A whole run at --voice-quality natural on the bundled sample page: every cast voice is one of Kokoro's own
recorded speakers (or made from one), the lines are voiced by them, and the MP4 decodes in sync.

Real throughout: OCR (one --vision-only pass), casting, Kokoro-82M on onnxruntime, the mix, the encoder and PyAV.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from comic_narrator.artifacts import Cast, ClipList
from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE
from tests.e2e.test_run_options import _assert_in_sync, _write

pytestmark = pytest.mark.slow


def _voices(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    assert main(["voices", "--json"]) == 0
    return {v["id"]: v for v in json.loads(capsys.readouterr().out)}


def test_natural_quality_casts_and_voices_kokoro_speakers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    voices = _voices(capsys)
    first = tmp_path / "read.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(first), "--vision-only", "-q"]) == 0
    reading = _write(tmp_path / "reading.json", json.loads((tmp_path / "read.mp4.work" / "reading.json").read_text()))
    out = tmp_path / "natural.mp4"
    command = [str(SAMPLE_PAGE), "-o", str(out), "--reading", str(reading), "--voice-quality", "natural"]
    assert main([*command, "--fps", "24", "--preset", "ultrafast", "-q"]) == 0
    work = out.with_name(out.name + ".work")
    cast = Cast.model_validate_json((work / "cast.json").read_text())
    assert len(cast.members) >= 2
    for member in cast.members:
        voice = voices[member.voice]
        assert voice["engine"] == "kokoro" and voice["tier"] == "natural", member
        recorded = voice["derived_from"] or member.voice
        assert voices[recorded]["derived_from"] is None
    clips = ClipList.model_validate_json((work / "clips.json").read_text()).clips
    assert clips and {c.voice for c in clips} <= {m.voice for m in cast.members}
    _assert_in_sync(out, 24)
