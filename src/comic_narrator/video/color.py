"""RGB to limited-range BT.709 I420 (what H.264 players expect), about twice as fast as swscale here."""

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


def rgb_to_i420(frame_rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """HxWx3 RGB (even H and W) to the planar I420 layout PyAV takes for yuv420p: (H*3/2) x W."""
    height, width = frame_rgb.shape[:2]
    ycc = cv2.transform(frame_rgb, _BT709_LIMITED)
    planes = np.empty((height * 3 // 2, width), dtype=np.uint8)
    planes[:height] = ycc[..., 0]
    half = (width // 2, height // 2)
    quarter_rows = height // 4
    planes[height : height + quarter_rows] = cv2.resize(ycc[..., 1], half, interpolation=cv2.INTER_AREA).reshape(
        quarter_rows, width
    )
    planes[height + quarter_rows :] = cv2.resize(ycc[..., 2], half, interpolation=cv2.INTER_AREA).reshape(
        quarter_rows, width
    )
    return planes
