"""--audiobook end to end on two real pages: OUT.m4b holds the video's very AAC packets and nothing else to play,
with one chapter per page at the timeline's page starts, or the video's own chapters when it has them."""

from __future__ import annotations

import shutil
from pathlib import Path

import av
import pytest

from comic_narrator.artifacts import Timing
from comic_narrator.cli import main
from comic_narrator.errors import ArtifactError, OutputError
from comic_narrator.publish.audiobook import write_audiobook
from tests.conftest import SAMPLE_PAGE

pytestmark = pytest.mark.slow


def _audio_packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as container:
        return [bytes(p) for p in container.demux(container.streams.audio[0]) if p.size > 0]


def _chapters(path: Path) -> list[tuple[float, float, str]]:
    with av.open(str(path)) as container:
        return [
            (float(c["start"] * c["time_base"]), float(c["end"] * c["time_base"]), c["metadata"]["title"])
            for c in container.chapters()
        ]


def test_the_audiobook_is_the_narration_with_a_chapter_per_page(tmp_path: Path) -> None:
    book = tmp_path / "book"
    book.mkdir()
    for name in ("p1.jpg", "p2.jpg"):
        shutil.copyfile(SAMPLE_PAGE, book / name)
    out = tmp_path / "book.mp4"
    options = ["-q", "--voice-quality", "fast", "--draft", "--audiobook"]
    assert main([str(book), "-o", str(out), *options]) == 0
    m4b = out.with_suffix(".m4b")
    with av.open(str(m4b)) as container:
        assert container.metadata["major_brand"].strip() == "M4B"
        assert [s.type for s in container.streams if s.type in ("video", "audio", "subtitle")] == ["audio"]
        assert container.streams.audio[0].codec_context.name == "aac"
        assert container.metadata["title"] == "book"
    assert _audio_packets(m4b) == _audio_packets(out), "the video's AAC, not encoded again"
    timing = Timing.model_validate_json((tmp_path / "book.mp4.work" / "timing.json").read_text(encoding="utf-8"))
    second_page = min(shot.start_s for shot in timing.shots if shot.page == 1)
    chapters = _chapters(m4b)
    assert [title for _, _, title in chapters] == ["Page 1", "Page 2"]
    assert chapters[0][0] == 0.0
    assert chapters[0][1] == chapters[1][0] == pytest.approx(second_page, abs=1e-3)
    assert chapters[1][1] == pytest.approx(timing.duration_s, abs=0.05)

    # With chapters of its own, the video's marks are the audiobook's (the run reuses every stage but the join).
    assert main([str(book), "-o", str(out), *options, "--chapters", "1,2"]) == 0
    assert [c[2] for c in _chapters(m4b)] == [c[2] for c in _chapters(out)] == ["Chapter 1", "Chapter 2"]
    assert [c[0] for c in _chapters(m4b)] == pytest.approx([c[0] for c in _chapters(out)], abs=1e-3)

    # Named chapters (ComicInfo.xml bookmarks) keep their names in the audiobook.
    (book / "ComicInfo.xml").write_text(
        '<ComicInfo><Pages><Page Image="0" Bookmark="Departure"/><Page Image="1" Bookmark="The storm"/></Pages>'
        "</ComicInfo>",
        encoding="utf-8",
    )
    assert main([str(book), "-o", str(out), *options]) == 0
    assert [c[2] for c in _chapters(m4b)] == [c[2] for c in _chapters(out)] == ["Departure", "The storm"]

    # What cannot be made is one clear error naming the file.
    work = tmp_path / "book.mp4.work"
    with pytest.raises(ArtifactError, match="finish the run first"):
        write_audiobook(tmp_path / "missing.mp4", work, tmp_path / "x.m4b")
    silent = tmp_path / "silent.mp4"
    with av.open(str(out)) as source, av.open(str(silent), "w") as sink:
        picture = sink.add_stream_from_template(source.streams.video[0])
        for packet in source.demux(source.streams.video[0]):
            if packet.dts is not None:
                packet.stream = picture
                sink.mux(packet)
    with pytest.raises(ArtifactError, match="has no audio track") as raised:
        write_audiobook(silent, work, tmp_path / "x.m4b")
    assert raised.value.path == str(silent) and not (tmp_path / "x.m4b").exists()
    (tmp_path / "taken.m4b").mkdir()  # a folder where the audiobook would go
    with pytest.raises(OutputError, match=r"taken\.m4b: cannot write the audiobook: \w") as failed:
        write_audiobook(out, work, tmp_path / "taken.m4b")
    assert "[Errno" not in str(failed.value), "the system's reason, not the exception's repr"
