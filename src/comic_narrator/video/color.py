"""RGB to limited-range BT.709 Y'CbCr (what H.264 players expect), as planes or as the I420 layout PyAV takes."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

# Rows: Y, Cb, Cr from R, G, B in 0..255, with the limited-range scale (219 luma / 224 chroma steps) and offsets.
_BT709_LIMITED = np.array(
    [
        [0.2126 * 219 / 255, 0.7152 * 219 / 255, 0.0722 * 219 / 255, 16.0],
        [-0.1146 * 224 / 255, -0.3854 * 224 / 255, 0.5 * 224 / 255, 128.0],
        [0.5 * 224 / 255, -0.4542 * 224 / 255, -0.0458 * 224 / 255, 128.0],
    ],
    dtype=np.float32,
)

LUMA_BLACK = 16
CHROMA_ZERO = 128


def rgb_to_ycbcr(image_rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """HxWx3 RGB to HxWx3 (Y, Cb, Cr), full resolution, rounded and saturated to uint8."""
    return np.asarray(cv2.transform(image_rgb, _BT709_LIMITED), dtype=np.uint8)


def ycbcr_of(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """One colour's (Y, Cb, Cr), e.g. the letterbox fill of the planes."""
    y, cb, cr = rgb_to_ycbcr(np.array([[rgb]], dtype=np.uint8))[0, 0]
    return int(y), int(cb), int(cr)


def i420_planes(
    buffer: npt.NDArray[np.uint8], width_px: int, height_px: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """Views of the Y (H x W), Cb and Cr (H/2 x W/2) planes inside one (H*3/2) x W I420 buffer, no copies."""
    quarter_rows = height_px // 4
    luma = buffer[:height_px]
    cb = buffer[height_px : height_px + quarter_rows].reshape(height_px // 2, width_px // 2)
    cr = buffer[height_px + quarter_rows :].reshape(height_px // 2, width_px // 2)
    return luma, cb, cr


def rgb_to_i420(frame_rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """HxWx3 RGB (even H and W) to the planar I420 layout PyAV takes for yuv420p: (H*3/2) x W."""
    height, width = frame_rgb.shape[:2]
    ycc = rgb_to_ycbcr(frame_rgb)
    planes = np.empty((height * 3 // 2, width), dtype=np.uint8)
    luma, cb, cr = i420_planes(planes, width, height)
    luma[:] = ycc[..., 0]
    half = (width // 2, height // 2)
    cb[:] = cv2.resize(ycc[..., 1], half, interpolation=cv2.INTER_AREA)
    cr[:] = cv2.resize(ycc[..., 2], half, interpolation=cv2.INTER_AREA)
    return planes
