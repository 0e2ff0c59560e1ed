"""Subtitles read back for the end-to-end tests: SRT and WebVTT files, and the MP4's tracks decoded by PyAV."""

from __future__ import annotations

import re
from pathlib import Path

import av

Cues = list[tuple[float, float, str]]
"""(start s, end s, text with its lines joined by newlines)"""


def _seconds(stamp: str) -> float:
    h, m, rest = stamp.replace(".", ",").split(":")
    s, ms = rest.split(",")
    return ((int(h) * 3600 + int(m) * 60 + int(s)) * 1000 + int(ms)) / 1000  # as the MP4's 1/1000 stamps read


def srt_cues(path: Path) -> Cues:
    cues = []
    for block in path.read_text(encoding="utf-8").strip().split("\n\n"):
        lines = block.splitlines()
        start, end = lines[1].split(" --> ")
        cues.append((_seconds(start), _seconds(end), "\n".join(lines[2:])))
    return cues


def vtt_cues(path: Path) -> Cues:
    """WebVTT read back: the header line, then cues of timings and text (entities unescaped)."""
    header, *blocks = path.read_text(encoding="utf-8").strip().split("\n\n")
    assert header.splitlines()[0] == "WEBVTT"
    cues = []
    for block in blocks:
        timings, *text = block.splitlines()
        start, end = re.fullmatch(r"(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})", timings).groups()  # type: ignore[union-attr]
        words = "\n".join(text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        cues.append((_seconds(start), _seconds(end), words))
    return cues


def mp4_subtitles(path: Path) -> list[tuple[str, str, Cues]]:
    """Each subtitle stream of the MP4 as (language, codec, cues), decoded by PyAV; the mov_text decoder gives
    ASS events (``ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text``, lines split by ``\\N``)."""
    with av.open(str(path)) as container:
        streams = list(container.streams.subtitles)
        cues: dict[int, Cues] = {stream.index: [] for stream in streams}
        for packet in container.demux(*streams):
            if packet.pts is None or packet.duration is None or packet.time_base is None:
                continue
            for subtitle in packet.decode():
                text = subtitle.ass.decode("utf-8").split(",", 8)[8].replace("\\N", "\n")  # type: ignore[union-attr]
                if text:  # the muxer fills gaps between cues with empty samples
                    start = packet.pts * packet.time_base
                    cues[packet.stream.index].append(
                        (float(start), float(start + packet.duration * packet.time_base), text)
                    )
        return [(s.metadata.get("language", ""), s.codec_context.name, cues[s.index]) for s in streams]


def said(cue_text: str) -> str:
    """A cue's words without the sound tags and speaker names shown above them."""
    return " ".join(part for part in cue_text.split("\n") if not re.fullmatch(r"\[.*\]|[(（].*[)）]", part))
