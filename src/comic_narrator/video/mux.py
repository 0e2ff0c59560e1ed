"""The final MP4: the cached video segments joined packet by packet (no re-encoding) under the book's audio,
encoded once as AAC (an M4A of its own, so it can be encoded while the video renders), written atomically.

The audio is one encode for the whole book because every AAC stream starts with encoder priming: joining
per-segment audio would put a gap or a click at each join.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import av
import numpy as np
import numpy.typing as npt
from av.audio.stream import AudioStream
from av.video.stream import VideoStream

from comic_narrator.audio.truepeak import block_true_peaks, dbfs
from comic_narrator.errors import EngineError
from comic_narrator.timeline.chapters import ChapterMark
from comic_narrator.workdir import atomic_temp_path

log = logging.getLogger("comic_narrator")

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
    base = packet.time_base
    if stamp is None or base is None:
        return 0.0
    return stamp * base.numerator / base.denominator  # ints: exact, then one rounding (no Fraction objects)


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
    scale, per = time_base.numerator * fps, time_base.denominator  # a stamp in frames: stamp * scale / per
    pts = [round((packet.pts or 0) * scale / per) for packet in packets]
    shift = -min(pts)
    for packet, frame_pts in zip(packets, pts, strict=True):
        dts = packet.dts if packet.dts is not None else packet.pts or 0
        packet.pts = frame_pts + shift
        packet.dts = round(dts * scale / per) + shift
    return extradata, packets


JOIN_READ_AHEAD = 4
"""Segments opened and read on threads ahead of the one being joined. Opening a segment costs 15-25 ms (libavformat
probes it), most of it outside the interpreter's lock: 50 segments in a row were half of a 20-page book's join."""


def _segments_read_ahead(
    segments: Sequence[tuple[Path, int]], fps: int
) -> Iterator[tuple[Path, tuple[bytes, list[av.Packet[VideoStream]]]]]:
    """Each segment with its extradata and packets (``_segment_packets``), in order, read JOIN_READ_AHEAD ahead."""
    jobs = iter(segments)
    pending: deque[tuple[Path, Future[tuple[bytes, list[av.Packet[VideoStream]]]]]] = deque()
    with ThreadPoolExecutor(JOIN_READ_AHEAD, thread_name_prefix="join-read") as pool:
        try:
            while True:
                while len(pending) < JOIN_READ_AHEAD and (job := next(jobs, None)) is not None:
                    pending.append((job[0], pool.submit(_segment_packets, job[0], fps, job[1])))
                if not pending:
                    return
                path, future = pending.popleft()
                yield path, future.result()
        finally:
            for _path, future in pending:
                future.cancel()


AAC_OPTIONS = {"aac_coder": "fast"}
"""FFmpeg's AAC encoder with its fast coder instead of the default two-loop search: Black Jack p. 8-11's 92 s
encoded in 0.96 s against 2.59 s (2 cores), and decoded nearer what it was given (SNR 44.4 against 31.3 dB, log
spectrum within 0.26 against 0.76 dB). The encode runs on the master's thread while pages stream, and on the
H200 the master was four pages behind the voices when the last page was voiced."""
TRUE_PEAK_LIMIT_DBTP = -1.0
"""The decoded file's true peak at most (EBU R128). The mix is limited 2 dB under full scale before encoding
(audio/truepeak.py); where the encoder still overshoots this, those frames are encoded again a little lower."""
GUARD_PASSES = 6
"""Re-encodes at most, each lowering only the frames still over the limit: the sample page's mix needed none; a
180 Hz square wave driven 10 dB into the limiter, the worst case tried, needed four."""


def _encode_once(
    path: Path,
    pieces: Iterable[npt.NDArray[np.float32]],
    sample_rate_hz: int,
    heard: Callable[[av.Packet[Any], Any], None] | None = None,
) -> None:
    """One AAC encode of the track into ``path``; ``heard`` gets each packet and the encoder's codec context."""
    with atomic_mp4(path, "audio encoding") as container:
        sound = container.add_stream("aac", rate=sample_rate_hz, options=AAC_OPTIONS)
        sound.layout = "stereo"
        sound.time_base = Fraction(1, sample_rate_hz)
        for packet in _aac_packets(sound, pieces, sample_rate_hz):
            if heard is not None:
                heard(packet, sound.codec_context)
            container.mux(packet)


class _StreamedPeaks:
    """The true peak of every AAC frame of a file, measured while it is encoded: each packet is decoded as it is
    made and measured on a thread of its own, so the check after the encode waits only for the last frames. The
    encoder's priming (the first packet's negative time) and the padding after the track's last sample, which the
    file's own decode drops, are dropped too: the same figures as :func:`_frame_true_peaks` on the finished file."""

    _HELD = 4 * AAC_FRAME_SAMPLES
    """Decoded samples kept back until the track's length is known (the padding is under one frame)."""
    _BATCH = 64 * AAC_FRAME_SAMPLES
    """Decoded samples handed to the measuring thread at once (a frame at a time, the two threads would trade the
    interpreter 17,000 times for six minutes of sound)."""

    def __init__(self, floor: float) -> None:
        self._decoder: Any = None
        self._skip = 0
        self._held: list[npt.NDArray[np.float32]] = []
        self._holding = 0
        self._given = 0
        self._chunks: queue.Queue[npt.NDArray[np.float32] | None] = queue.Queue(maxsize=256)
        self._peaks: list[float] = []
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._measure, args=(floor,), name="true-peaks", daemon=True)
        self._thread.start()

    def heard(self, packet: av.Packet[Any], encoder: Any) -> None:
        if self._decoder is None:
            self._decoder = av.CodecContext.create("aac", "r")
            self._decoder.extradata = encoder.extradata
            if packet.pts is not None and packet.pts < 0 and packet.time_base is not None:
                self._skip = round(-packet.pts * packet.time_base * encoder.sample_rate)
        self._hold(self._decoder.decode(av.Packet(bytes(packet))))
        if self._holding >= self._HELD + self._BATCH:
            held = np.concatenate(self._held, axis=1)
            self._give(held[:, : -self._HELD])
            self._held, self._holding = [held[:, -self._HELD :]], self._HELD

    def finish(self, samples: int) -> npt.NDArray[np.float64]:
        """Every frame's true peak, for a track of ``samples`` samples (raises what the measuring raised)."""
        if self._decoder is not None:
            self._hold(self._decoder.decode(None))
        if self._held:
            self._give(np.concatenate(self._held, axis=1)[:, : max(0, samples - self._given)])
        self._chunks.put(None)
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return np.asarray(self._peaks, dtype=np.float64)

    def _hold(self, frames: Iterable[av.AudioFrame]) -> None:
        for frame in frames:
            decoded = np.asarray(frame.to_ndarray(), dtype=np.float32)
            dropped = min(self._skip, decoded.shape[1])
            self._skip -= dropped
            if decoded.shape[1] > dropped:
                self._held.append(decoded[:, dropped:])
                self._holding += decoded.shape[1] - dropped

    def _give(self, chunk: npt.NDArray[np.float32]) -> None:
        if chunk.shape[1]:
            self._given += chunk.shape[1]
            self._chunks.put(chunk)

    def _measure(self, floor: float) -> None:
        def chunks() -> Iterator[npt.NDArray[np.float32]]:
            while (chunk := self._chunks.get()) is not None:
                yield chunk

        try:
            self._peaks.extend(block_true_peaks(chunks(), AAC_FRAME_SAMPLES, floor))
        except BaseException as exc:  # handed to finish()
            self._failure = exc
            while self._chunks.get() is not None:  # let the encoder go on putting
                pass


def _decoded(path: Path) -> Iterator[npt.NDArray[np.float32]]:
    """The file's audio as (channels, samples) pieces, decoded once."""
    with av.open(str(path)) as source:
        for frame in source.decode(audio=0):
            yield np.asarray(frame.to_ndarray(), dtype=np.float32)


def _frame_true_peaks(path: Path, floor: float) -> npt.NDArray[np.float64]:
    """The decoded file's true peak in every AAC frame (1024 samples), the larger of its two channels (the mono
    track on both decodes to two slightly different ones); exact where it reaches ``floor``. Decoded once."""
    return np.fromiter(block_true_peaks(_decoded(path), AAC_FRAME_SAMPLES, floor), np.float64)


def _spooled(spool: Path, frame_gains: npt.NDArray[np.float64], samples: int) -> Iterator[npt.NDArray[np.float32]]:
    """The spooled track again, in chunks, under a gain interpolated between frame centres."""
    centres = (np.arange(len(frame_gains)) + 0.5) * AAC_FRAME_SAMPLES
    step = 64 * AAC_FRAME_SAMPLES
    with spool.open("rb") as source:
        for start in range(0, samples, step):
            chunk = np.fromfile(source, dtype=np.float32, count=min(step, samples - start))
            gain = np.interp(np.arange(start, start + len(chunk)), centres, frame_gains)
            yield np.asarray(chunk * gain, dtype=np.float32)


def encode_aac(
    path: Path,
    audio: npt.NDArray[np.float32] | Iterable[npt.NDArray[np.float32]],
    sample_rate_hz: int,
    true_peak_limit_dbtp: float | None = TRUE_PEAK_LIMIT_DBTP,
) -> None:
    """The mono track (one array, or its pieces in order) on both channels as AAC in an M4A at ``path``,
    written atomically. The file is decoded and measured (the first encode's packets as they are made): where its
    true peak passes ``true_peak_limit_dbtp`` (AAC's own overshoot), the frames around it are encoded again lower,
    from a copy of the track spooled to disk beside ``path`` while it was first encoded (removed after)."""
    from scipy.ndimage import minimum_filter1d

    pieces = [audio] if isinstance(audio, np.ndarray) else audio
    if true_peak_limit_dbtp is None:
        _encode_once(path, pieces, sample_rate_hz)
        return
    limit = 10 ** (true_peak_limit_dbtp / 20)
    spool = path.with_name(f"{path.name}.spool")
    samples = 0
    try:
        with spool.open("wb") as sink:

            def teed() -> Iterator[npt.NDArray[np.float32]]:
                nonlocal samples
                for piece in pieces:
                    np.asarray(piece, dtype=np.float32).tofile(sink)
                    samples += len(piece)
                    yield piece

            measured = _StreamedPeaks(0.97 * limit)
            try:
                _encode_once(path, teed(), sample_rate_hz, measured.heard)
            finally:
                first = measured.finish(samples)
        gains = np.ones((samples + AAC_FRAME_SAMPLES - 1) // AAC_FRAME_SAMPLES)
        for passes in range(GUARD_PASSES + 1):
            peaks = (first if passes == 0 else _frame_true_peaks(path, 0.97 * limit))[: len(gains)]
            if len(peaks) == 0 or peaks.max() <= limit:
                return
            if passes == GUARD_PASSES:
                log.warning("%s: true peak %.2f dBTP after %d re-encodes", path, dbfs(peaks.max()), passes)
                return
            # 3 % under the limit; the frames either side too: an AAC frame's window spans its neighbours.
            need = np.ones(len(gains))
            need[: len(peaks)] = np.minimum(1.0, 0.97 * limit / np.maximum(peaks, 1e-12))
            gains *= minimum_filter1d(need, size=5, mode="nearest")
            _encode_once(path, _spooled(spool, gains, samples), sample_rate_hz)
    finally:
        spool.unlink(missing_ok=True)


_END = b""
_ABORT = b"x"
"""A message of the pipe that is no whole number of float32 samples: the feeding side stopped, leave no file."""


class _Aborted(Exception):
    """The feeding side stopped before its last piece."""


def encode_aac_aside(path: Path, pieces: Iterable[npt.NDArray[np.float32]], sample_rate_hz: int) -> None:
    """:func:`encode_aac` in a process of its own, the pieces sent to it through a pipe as they come. PyAV lets go
    of the GIL for every codec call and must take it back after each, which waits out the interpreter's switch
    interval whenever another thread of the run is busy in Python: beside one such thread, 92 s of sound took 31.5 s
    to encode in-process against 1.5 s alone. If ``pieces`` raises, the encode is abandoned (no file) and the
    exception goes on; the encoder's own failure is raised here as it was there."""
    context = multiprocessing.get_context("spawn")  # fork would copy the run's threads and engines
    ours, theirs = context.Pipe()
    worker = context.Process(
        target=_encode_from_pipe, args=(theirs, str(path), sample_rate_hz), name="aac-encoder", daemon=True
    )
    worker.start()
    theirs.close()
    try:
        try:
            for piece in pieces:
                try:
                    ours.send_bytes(np.ascontiguousarray(piece, dtype=np.float32).tobytes())
                except OSError:  # it stopped taking pieces: it failed, and its answer says why
                    break
        except BaseException:
            _ask(ours, _ABORT, path)
            raise
        failure = _ask(ours, _END, path)
        if failure is not None:
            raise failure
    finally:
        ours.close()
        worker.join()


def _ask(pipe: Any, message: bytes, path: Path) -> BaseException | None:
    """Send the last message and wait for the encoder's answer (None, or what it raised)."""
    with suppress(OSError):  # it has already stopped reading: its answer is waiting
        pipe.send_bytes(message)
    try:
        answer: BaseException | None = pipe.recv()
    except (EOFError, OSError) as exc:  # it died (killed, out of memory) without answering
        return EngineError(f"the AAC encoder process ended without answering ({type(exc).__name__})", path=path)
    return answer


def _encode_from_pipe(pipe: Any, path: str, sample_rate_hz: int) -> None:
    """The encoder process: pieces from ``pipe`` until the end (or abort) message, then its answer back."""

    def pieces() -> Iterator[npt.NDArray[np.float32]]:
        while True:
            data = pipe.recv_bytes()
            if data == _END:
                return
            if len(data) % 4:
                raise _Aborted
            yield np.frombuffer(data, dtype=np.float32)

    answer: BaseException | None = None
    try:
        encode_aac(Path(path), pieces(), sample_rate_hz)
    except _Aborted:
        pass
    except Exception as exc:  # handed back: the run reports it as if it were raised at home
        answer = exc if isinstance(exc, EngineError) else EngineError(f"audio encoding failed ({exc})", path=path)
    pipe.send(answer)
    pipe.close()


def mux_segments(
    output: Path,
    segments: Sequence[tuple[Path, int]],
    fps: int,
    audio_file: Path,
    side_tracks: Sequence[SideTrack] = (),
    metadata: Mapping[str, str] | None = None,
    chapters: Sequence[ChapterMark] = (),
) -> int:
    """Join ``(segment file, frames)`` in order under the AAC of ``audio_file`` (its packets copied, its priming
    kept) and the ``side_tracks`` (subtitles), with the container ``metadata`` (``title``, ``artist``, ...) and
    ``chapters`` (markers in the MP4's chapter list); returns the frames written. Segments must share their
    encoder settings (one SPS/PPS); a segment that does not is named in the error."""
    if not segments:
        raise EngineError("no video segments to join", path=output)
    frame_time_base = Fraction(1, fps)
    offset_frames = 0
    with (
        atomic_mp4(output, "muxing") as container,
        av.open(str(segments[0][0])) as first,
        av.open(str(audio_file)) as audio_source,
    ):
        container.metadata.update(metadata or {})
        if chapters:
            container.set_chapters(
                [
                    {
                        "id": n,
                        "start": c.start_frame,
                        "end": c.end_frame,
                        "time_base": frame_time_base,
                        "metadata": {"title": c.title},
                    }
                    for n, c in enumerate(chapters, start=1)
                ]
            )
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

        for (path, (extradata, packets)), (_path, frames) in zip(
            _segments_read_ahead(segments, fps), segments, strict=True
        ):
            if extradata != first_extradata:
                raise EngineError("was encoded with other settings than the first segment", path=path)
            for packet in packets:
                packet.pts = (packet.pts or 0) + offset_frames
                packet.dts = dts = (packet.dts or 0) + offset_frames
                packet.duration = 1
                packet.time_base = frame_time_base
                packet.stream = video
                mux_due(dts / fps)
                container.mux(packet)
            offset_frames += frames
        mux_due(float("inf"))
    return offset_frames
