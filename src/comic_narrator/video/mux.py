"""The final MP4: the cached video segments joined packet by packet (no re-encoding) under the book's audio,
encoded once as AAC (an M4A of its own, so it can be encoded while the video renders), written atomically.

The audio is one encode for the whole book because every AAC stream starts with encoder priming: joining
per-segment audio would put a gap or a click at each join.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import av
import numpy as np
import numpy.typing as npt
from av.audio.stream import AudioStream
from av.video.stream import VideoStream

from comic_narrator.errors import EngineError
from comic_narrator.workdir import atomic_temp_path

AAC_FRAME_SAMPLES = 1024


class SideTrack(Protocol):
    """A further track joined under the video, e.g. a subtitle track (timeline/subtitles.py makes those)."""

    def add_to(self, container: av.container.OutputContainer) -> Iterator[av.Packet[Any]]:
        """Add its stream to ``container`` at once; return its packets in time order, stream and time base set."""
        ...


@contextmanager
def atomic_mp4(path: Path, action: str) -> Iterator[av.container.OutputContainer]:
    """An MP4 container on a temp file that becomes ``path`` only once closed cleanly; PyAV and disk failures
    become one EngineError naming ``path``."""
    tmp = atomic_temp_path(path)
    try:
        with av.open(str(tmp), mode="w", format="mp4") as container:
            yield container
        tmp.replace(path)
    except (av.FFmpegError, OSError) as exc:
        raise EngineError(f"{action} failed ({exc})", path=path) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _aac_packets(
    stream: av.AudioStream, pieces: Iterable[npt.NDArray[np.float32]], sample_rate_hz: int
) -> Iterator[av.Packet[AudioStream]]:
    """The mono track, given in pieces of any length (a page each), on both channels, encoded in AAC frames of
    1024 samples (never a stereo copy of the whole book, nor the whole book at once)."""
    pending = np.zeros(0, dtype=np.float32)
    start = 0

    def frame_of(chunk: npt.NDArray[np.float32]) -> av.AudioFrame:
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(np.stack([chunk, chunk])), format="fltp", layout="stereo"
        )
        frame.sample_rate = sample_rate_hz
        frame.pts = start
        frame.time_base = Fraction(1, sample_rate_hz)
        return frame

    for piece in pieces:
        pending = np.concatenate([pending, np.asarray(piece, dtype=np.float32)])
        whole = len(pending) - len(pending) % AAC_FRAME_SAMPLES
        for offset in range(0, whole, AAC_FRAME_SAMPLES):
            yield from stream.encode(frame_of(pending[offset : offset + AAC_FRAME_SAMPLES]))
            start += AAC_FRAME_SAMPLES
        pending = pending[whole:]
    if len(pending):
        yield from stream.encode(frame_of(pending))
    yield from stream.encode(None)


def _seconds(packet: av.Packet[Any]) -> float:
    stamp = packet.dts if packet.dts is not None else packet.pts
    if stamp is None or packet.time_base is None:
        return 0.0
    return float(stamp * packet.time_base)


def _segment_packets(path: Path, fps: int, expected_frames: int) -> tuple[bytes, list[av.Packet[VideoStream]]]:
    """One segment's extradata (SPS/PPS) and its packets with pts/dts in frames from the segment's start."""
    with av.open(str(path)) as source:
        stream = source.streams.video[0]
        extradata = bytes(stream.codec_context.extradata or b"")
        time_base = stream.time_base
        assert time_base is not None
        packets = [packet for packet in source.demux(stream) if packet.size > 0]
    if len(packets) != expected_frames:
        raise EngineError(
            f"holds {len(packets)} frame(s), {expected_frames} expected; delete it to re-render", path=path
        )
    pts = [round((packet.pts or 0) * time_base * fps) for packet in packets]
    shift = -min(pts)
    for packet, frame_pts in zip(packets, pts, strict=True):
        dts = packet.dts if packet.dts is not None else packet.pts or 0
        packet.pts = frame_pts + shift
        packet.dts = round(dts * time_base * fps) + shift
    return extradata, packets


def encode_aac(
    path: Path, audio: npt.NDArray[np.float32] | Iterable[npt.NDArray[np.float32]], sample_rate_hz: int
) -> None:
    """The mono track (one array, or its pieces in order) on both channels as AAC in an M4A at ``path``,
    written atomically."""
    pieces = [audio] if isinstance(audio, np.ndarray) else audio
    with atomic_mp4(path, "audio encoding") as container:
        sound = container.add_stream("aac", rate=sample_rate_hz)
        sound.layout = "stereo"
        sound.time_base = Fraction(1, sample_rate_hz)
        for packet in _aac_packets(sound, pieces, sample_rate_hz):
            container.mux(packet)


def mux_segments(
    output: Path,
    segments: Sequence[tuple[Path, int]],
    fps: int,
    audio_file: Path,
    side_tracks: Sequence[SideTrack] = (),
) -> int:
    """Join ``(segment file, frames)`` in order under the AAC of ``audio_file`` (its packets copied, its priming
    kept) and the ``side_tracks`` (subtitles); returns the frames written. Segments must share their encoder
    settings (one SPS/PPS); a segment that does not is named in the error."""
    if not segments:
        raise EngineError("no video segments to join", path=output)
    frame_time_base = Fraction(1, fps)
    offset_frames = 0
    with (
        atomic_mp4(output, "muxing") as container,
        av.open(str(segments[0][0])) as first,
        av.open(str(audio_file)) as audio_source,
    ):
        template = first.streams.video[0]
        first_extradata = bytes(template.codec_context.extradata or b"")
        video = container.add_stream_from_template(template)
        sound = container.add_stream_from_template(audio_source.streams.audio[0])

        def audio_packets() -> Iterator[av.Packet[Any]]:
            for packet in audio_source.demux(audio_source.streams.audio[0]):
                if packet.size > 0:
                    packet.stream = sound
                    yield packet

        # Every track but the video, each with its next packet; interleaved: what is due by a video packet's
        # time goes before it.
        sources = [audio_packets(), *(track.add_to(container) for track in side_tracks)]
        pending = [next(source, None) for source in sources]

        def mux_due(until_s: float) -> None:
            for index, source in enumerate(sources):
                while (packet := pending[index]) is not None and _seconds(packet) <= until_s:
                    container.mux(packet)
                    pending[index] = next(source, None)

        for path, frames in segments:
            extradata, packets = _segment_packets(path, fps, frames)
            if extradata != first_extradata:
                raise EngineError("was encoded with other settings than the first segment", path=path)
            for packet in packets:
                packet.pts = (packet.pts or 0) + offset_frames
                packet.dts = (packet.dts or 0) + offset_frames
                packet.duration = 1
                packet.time_base = frame_time_base
                packet.stream = video
                mux_due(float(packet.dts * frame_time_base))
                container.mux(packet)
            offset_frames += frames
        mux_due(float("inf"))
    return offset_frames
