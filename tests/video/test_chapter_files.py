"""A chapter that holds no whole segment is one clear error naming the output, before anything is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from comic_narrator.errors import EngineError
from comic_narrator.timeline.chapters import ChapterMark
from comic_narrator.video.split import chapter_path, write_chapter_files


def test_a_chapter_inside_one_segment_is_refused(tmp_path: Path) -> None:
    wav = tmp_path / "book.wav"
    soundfile.write(wav, np.zeros(48_000 * 4, dtype=np.float32), 48_000)
    segments = [(tmp_path / "seg-0.mp4", 48), (tmp_path / "seg-1.mp4", 48)]  # two pages of 2 s at 24 fps
    output = tmp_path / "book.mp4"
    with pytest.raises(EngineError) as raised:  # frames 60-90: inside the second page, where no segment starts
        write_chapter_files(output, [ChapterMark(60, 90, "Inside")], segments, 24, wav, [], {})
    assert "chapter 1 (Inside) holds no whole segment" in str(raised.value) and "book.mp4" in str(raised.value)
    assert not chapter_path(output, 1).exists()
    assert not any(tmp_path.glob("*.m4a"))
