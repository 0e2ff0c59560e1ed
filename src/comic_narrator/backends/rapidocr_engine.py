"""The rapidocr OCR engine: bundled PP-OCR models on onnxruntime, tiled over tall pages, no downloads ever."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.backends.protocols import OcrLine
from comic_narrator.errors import EngineError

# The rapidocr 3.x wheel ships one multilingual PP-OCRv6 pair (Chinese/English/Japanese in one dictionary), so
# 'en' and 'ja' share the same models; the detector finds vertical Japanese columns as tall boxes and the
# recogniser reads them top to bottom.
_DET_MODEL = "PP-OCRv6_det_small.onnx"
_REC_MODEL = "PP-OCRv6_rec_small.onnx"
_CLS_MODEL = "ch_ppocr_mobile_v2.0_cls_mobile.onnx"


def bundled_model_dir() -> Path:
    """Where the rapidocr wheel keeps its models (no import of rapidocr itself, which is slow)."""
    import importlib.util

    spec = importlib.util.find_spec("rapidocr")
    if spec is None or spec.origin is None:
        raise EngineError("rapidocr is not installed: pip install 'rapidocr>=3,<4' onnxruntime")
    return Path(spec.origin).parent / "models"


class RapidOcrEngine:
    """Reads text lines off an RGB page with rapidocr. Call :meth:`open` (or use ``with``) before recognising.

    Pages taller (or wider) than ``tile_aspect`` times their short side are cut into overlapping tiles, because
    detection runs on a copy scaled to ``det_long_side_px`` and a 10,000 px strip would become unreadable.
    """

    name = "rapidocr"

    def __init__(
        self,
        *,
        model_dir: Path | None = None,
        det_long_side_px: int = 1024,
        min_short_side_px: int = 1000,
        tile_aspect: float = 1.5,
        max_tile_aspect: float = 3.0,
        threads: int = 0,
        min_score: float = 0.5,
    ) -> None:
        self._model_dir = model_dir
        self.det_long_side_px = det_long_side_px
        self.min_short_side_px = min_short_side_px
        self.tile_aspect = tile_aspect
        self.max_tile_aspect = max_tile_aspect
        self.threads = threads
        self.min_score = min_score
        self._ocr: Any = None

    # ------------------------------------------------------------------------------------------- lifecycle

    @property
    def threads_in_use(self) -> int:
        """onnxruntime intra-op threads: ``threads`` when set, else every core (up to 4).

        The sessions are made with spinning off: onnxruntime's worker threads otherwise spin while they wait,
        and on a busy 2-core machine (also synthesising speech) two spinning threads read slower than one
        (page 2 of Pepper&Carrot: 1.92 s against 1.33 s at a load average of 4). Without spinning, two threads
        cost about what one does on a saturated machine (the dense Buster Bear page: 3.4-3.5 s against 3.0-3.9
        s with both cores kept busy by other processes) and read 1.6-1.8 times faster when a core is free."""
        if self.threads > 0:
            return self.threads
        return max(1, min(4, os.cpu_count() or 1))

    def open(self) -> RapidOcrEngine:
        if self._ocr is not None:
            return self
        model_dir = self._model_dir if self._model_dir is not None else bundled_model_dir()
        paths = {name: model_dir / name for name in (_DET_MODEL, _REC_MODEL, _CLS_MODEL)}
        missing = [str(p) for name, p in paths.items() if name != _CLS_MODEL and not p.is_file()]
        if missing:
            raise EngineError(
                "rapidocr model file(s) missing: "
                + ", ".join(missing)
                + " (the rapidocr 3.x wheel bundles them; reinstall it: pip install --force-reinstall 'rapidocr>=3,<4')"
            )
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        try:
            from rapidocr import RapidOCR

            threads = self.threads_in_use
            params: dict[str, Any] = {
                "Global.log_level": "error",
                "Global.use_cls": False,
                # Recognition crops come from the full-resolution tile; only detection runs on a reduced copy
                # (its cost grows with pixels, and comic lettering stays detectable at ~1,300 px a side).
                "Global.max_side_len": 100_000,
                "Det.limit_type": "max",
                "Det.limit_side_len": self.det_long_side_px,
                "Global.text_score": self.min_score,
                "Det.model_path": str(paths[_DET_MODEL]),
                "Rec.model_path": str(paths[_REC_MODEL]),
                "Cls.model_path": str(paths[_CLS_MODEL]),
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                # rapidocr turns onnxruntime's memory arena off; with it the recogniser, fed batches of
                # ever-changing width, reads the text-packed ad page 10-20% faster (same output).
                "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
            }
            ocr = RapidOCR(params=params)
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            # Load both models now (rapidocr loads lazily on the first call) so errors surface in open(), and
            # give them sessions whose threads do not spin (rapidocr has no setting for it).
            loaded: Any = ocr
            for model, name in ((loaded._load_det_model(), _DET_MODEL), (loaded._load_rec_model(), _REC_MODEL)):
                model.session.session = _session(paths[name], threads)
            ocr(np.full((64, 160, 3), 255, dtype=np.uint8))
        except EngineError:
            raise
        except Exception as exc:  # rapidocr/onnxruntime raise many types; report one clear error
            raise EngineError(f"rapidocr failed to load its models from {model_dir}: {exc}") from exc
        self._ocr = ocr
        return self

    def close(self) -> None:
        self._ocr = None

    def __enter__(self) -> RapidOcrEngine:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------- reading

    def recognize(self, image_rgb: npt.NDArray[np.uint8], lang: Literal["en", "ja"]) -> list[OcrLine]:
        """All text lines of the image, in page pixels. ``lang`` does not change the (multilingual) models."""
        if self._ocr is None:
            raise EngineError("RapidOcrEngine.recognize() called before open()")
        if image_rgb.ndim == 2:
            image_rgb = np.stack([image_rgb] * 3, axis=-1)
        height_px, width_px = image_rgb.shape[:2]
        if height_px < 8 or width_px < 8:
            return []
        bgr = np.ascontiguousarray(cv2.cvtColor(image_rgb[:, :, :3], cv2.COLOR_RGB2BGR), dtype=np.uint8)
        # Small scans (a 540 px manga page, a 266 px newspaper strip) letter at 6-10 px: the detector misses
        # most of it. Enlarging them first roughly doubles what is found (measured on the wikipe-tan page).
        scale = float(np.clip(self.min_short_side_px / min(height_px, width_px), 1.0, 2.5))
        if scale > 1.0:
            bgr = np.ascontiguousarray(
                cv2.resize(bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC), dtype=np.uint8
            )
        lines: list[OcrLine] = []
        tiles, det_scale = _tiles(bgr, self.tile_aspect, self.max_tile_aspect, self.det_long_side_px)
        for x0, y0, tile in tiles:
            # One tile (a page) is detected at det_long_side_px; the tiles of a strip all at the scale a tile
            # tile_aspect long would get, however long they are.
            limit_px = self.det_long_side_px if len(tiles) == 1 else round(max(tile.shape[:2]) * det_scale)
            self._ocr.text_det.limit_side_len = limit_px
            for line in self._recognize_tile(tile):
                quad = tuple(((px + x0) / scale, (py + y0) / scale) for px, py in line.quad)
                lines.append(OcrLine(quad=quad, text=line.text, score=line.score))
        return _drop_tile_duplicates(lines)

    def recognize_crops(self, crops_rgb: list[npt.NDArray[np.uint8]]) -> list[tuple[str, float]]:
        """The recogniser alone (no detection) on crops that each hold one line: text and score per crop, in
        one batch."""
        if self._ocr is None:
            raise EngineError("RapidOcrEngine.recognize_crops() called before open()")
        images = [_as_bgr(crop) for crop in crops_rgb]
        if not images:
            return []
        try:
            result = self._ocr.recognize_txt(images)
        except Exception:  # rapidocr raises when nothing at all is read
            return [("", 0.0)] * len(images)
        texts = list(getattr(result, "txts", None) or ())
        scores = list(getattr(result, "scores", None) or ())
        if len(texts) != len(images) or len(scores) != len(images):
            return [("", 0.0)] * len(images)
        return [(str(t).strip(), float(v)) for t, v in zip(texts, scores, strict=True)]

    def _recognize_tile(self, tile_bgr: npt.NDArray[np.uint8]) -> list[OcrLine]:
        # rapidocr keeps the steps a call asked for until another call changes them: name them every time.
        result = self._ocr(tile_bgr, use_det=True, use_cls=False, use_rec=True)
        boxes = getattr(result, "boxes", None)
        texts = getattr(result, "txts", None)
        scores = getattr(result, "scores", None)
        if boxes is None or texts is None or scores is None:
            return []
        out: list[OcrLine] = []
        for box, text, score in zip(boxes, texts, scores, strict=False):
            text = str(text).strip()
            if not text or float(score) < self.min_score:
                continue
            quad = tuple((float(p[0]), float(p[1])) for p in np.asarray(box).reshape(-1, 2))
            out.append(OcrLine(quad=quad, text=text, score=float(score)))
        return out


def _session(model_path: Path, threads: int) -> Any:
    """An onnxruntime CPU session as rapidocr makes one (all graph optimisations, the memory arena on), with
    ``threads`` intra-op threads that sleep instead of spinning while they wait for work, and no memory patterns.

    A memory pattern is one block planned for all of a run's intermediate tensors, kept per input shape; pages and
    crops come in ever-changing shapes, so each run carved a block of its own size out of the arena and the arena
    kept growing with the book: OCR over the 31 slices of a 1,000 x 40,000 px strip peaked at 816 MiB with
    patterns, 601 without (and stayed at 603 over three passes, 93 slices), for the same CPU (18-20 s) and the
    same lines and boxes."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = True
    options.enable_mem_pattern = False
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


def _as_bgr(image_rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    if image_rgb.ndim == 2:
        return np.ascontiguousarray(cv2.cvtColor(image_rgb, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
    return np.ascontiguousarray(cv2.cvtColor(image_rgb[:, :, :3], cv2.COLOR_RGB2BGR), dtype=np.uint8)


def _tiles(
    image: npt.NDArray[np.uint8], tile_aspect: float, max_tile_aspect: float, det_long_side_px: int
) -> tuple[list[tuple[int, int, npt.NDArray[np.uint8]]], float]:
    """Overlapping tiles along the long side of a strip (the whole image when it is not elongated), and the
    scale to detect them at: that of a tile ``tile_aspect`` times the short side, reduced to ``det_long_side_px``.

    Tiles are up to ``max_tile_aspect`` times the short side, as few as cover the strip with the overlap, and
    spread evenly: detection costs its pixels, and 1.5-long tiles stepped from one end left the last tile
    almost on top of the one before it (the 2,700 px Baron Bean strip took four tiles, the last two sharing
    96% of their pixels; now two)."""
    height_px, width_px = image.shape[:2]
    short_px = min(height_px, width_px)
    long_px = max(height_px, width_px)
    tile_px = int(short_px * tile_aspect)
    det_scale = min(1.0, det_long_side_px / max(1, tile_px))
    if long_px <= tile_px * 1.25:
        return [(0, 0, image)], det_scale
    overlap_px = max(64, short_px // 4)
    max_tile_px = max(tile_px, int(short_px * max_tile_aspect), 2 * overlap_px)
    count = max(2, math.ceil((long_px - overlap_px) / (max_tile_px - overlap_px)))
    length_px = min(long_px, math.ceil((long_px + (count - 1) * overlap_px) / count))
    starts = [round(i * (long_px - length_px) / (count - 1)) for i in range(count)]
    tiles: list[tuple[int, int, npt.NDArray[np.uint8]]] = []
    for start in starts:
        if height_px >= width_px:
            tiles.append((0, start, image[start : start + length_px]))
        else:
            tiles.append((start, 0, image[:, start : start + length_px]))
    return tiles, det_scale


def _drop_tile_duplicates(lines: list[OcrLine]) -> list[OcrLine]:
    """Lines read twice in the overlap of two tiles: keep the larger (less cut) one."""
    kept: list[OcrLine] = []
    for line in sorted(lines, key=lambda ln: -(ln.bbox[2] * ln.bbox[3])):
        x, y, w, h = line.bbox
        duplicate = False
        for other in kept:
            ox, oy, ow, oh = other.bbox
            ix = max(0, min(x + w, ox + ow) - max(x, ox))
            iy = max(0, min(y + h, oy + oh) - max(y, oy))
            if ix * iy >= 0.6 * max(1, w * h):
                duplicate = True
                break
        if not duplicate:
            kept.append(line)
    return kept
