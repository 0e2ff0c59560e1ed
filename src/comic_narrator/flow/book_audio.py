"""The book's audio made while the pages stream: each page mastered as soon as the next one is voiced
(audio/mix.py's :class:`StreamingMaster`) and encoded to AAC in a process of its own (video/mux.py's
:func:`encode_aac_aside`), so that when the last page is voiced only that page, the encoder's last frames and its
true-peak check are left.

A streamed master settles the voices' gain on the first 15 s of speech and its makeup page by page; where the
book lands further than 0.3 LU from the target, the run masters it again exactly from the pages after the last
one (what it always did before; :meth:`BookAudio.finish` says which).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import soundfile

from comic_narrator.artifacts import BookReading
from comic_narrator.audio.mix import DUAL_MONO_LU, PageSound, StreamingMaster
from comic_narrator.config import RunConfig
from comic_narrator.flow.stream import PageWork
from comic_narrator.progress import StageProgress
from comic_narrator.video.mux import encode_aac_aside

log = logging.getLogger("comic_narrator")


class _Stopped(Exception):
    """The run stopped before its last page: the encoder must not finish the file."""


class BookAudio:
    """``audio.wav`` and the book's AAC (``audio_file``), made from pages handed to :meth:`add` in book order."""

    def __init__(self, config: RunConfig, audio_file: Path, stage: StageProgress | None = None) -> None:
        self.config = config
        self.audio_file = audio_file
        self.stage = stage
        self.master = StreamingMaster(config.work_dir, config.audio)
        self.failure: BaseException | None = None
        self._inbox: queue.Queue[PageSound | tuple[npt.NDArray[np.float32]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="book-audio", daemon=True)
        self._thread.start()

    def add(self, work: PageWork, lang: Literal["en", "ja"]) -> None:
        """The next voiced page (called from the stream; the work is done on this object's thread)."""
        if work.timing is None:
            return
        reading = BookReading(source="", lang=lang, pages=[work.reading])
        image = self.config.work_dir / work.image.image_file
        self._inbox.put(PageSound(work.timing, work.clips, reading, work.powers, image))

    def finish(self, tail: npt.NDArray[np.float32] | None) -> bool:
        """The last pages mastered, ``tail`` (the end card's sound) after them and the AAC finished; True when
        the book landed on its loudness target, False when it must be mastered again. Raises what failed."""
        self._inbox.put((tail if tail is not None else np.zeros(0, dtype=np.float32),))
        self._thread.join()
        if self.failure is not None:
            raise self.failure
        landed = self.master.loudness + DUAL_MONO_LU
        if self.master.on_target():
            log.info("the book's audio streamed at %.2f LUFS (target %.1f)", landed, self.config.audio.target_lufs)
            return True
        log.info("the streamed audio landed at %.2f LUFS: mastered again after the last page", landed)
        return False

    def cancel(self) -> None:
        """Stop without finishing the file (the run failed or was interrupted)."""
        self._inbox.put(None)
        self._thread.join()

    def _pieces(self, wav: soundfile.SoundFile) -> Iterator[npt.NDArray[np.float32]]:
        while True:
            item = self._inbox.get()
            if item is None:
                raise _Stopped
            ready = self.master.add(item) if isinstance(item, PageSound) else self.master.finish()
            if isinstance(item, tuple):
                log.info("the last page is mastered; the end card's sound and the encoder's last frames are left")
            for piece in ready:
                wav.write(piece)
                if self.stage is not None:
                    self.stage.advance(1, f"page {self.master.mastered} mastered")
                yield piece
            if isinstance(item, tuple):
                (tail,) = item
                if len(tail):
                    wav.write(tail)
                    yield tail
                return

    def _run(self) -> None:
        rate = self.config.audio.sample_rate_hz
        try:
            self.audio_file.parent.mkdir(parents=True, exist_ok=True)
            with soundfile.SoundFile(
                str(self.config.work_dir / "audio.wav"), "w", samplerate=rate, channels=1, subtype="PCM_16"
            ) as wav:
                encode_aac_aside(self.audio_file, self._pieces(wav), rate)
            log.info("the book's AAC is encoded (%d pages mastered)", self.master.mastered)
        except _Stopped:
            pass
        except BaseException as exc:  # handed to the run's thread by finish()
            self.failure = exc
