"""Any Pillow image, whatever its mode, as the 8-bit RGB array the rest of the tool reads."""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from PIL import ExifTags, Image, ImageCms, ImageOps

RgbImage = npt.NDArray[np.uint8]
"""HxWx3 uint8, C-contiguous."""

PAPER_RGB = (255, 255, 255)
"""Transparent pixels are paper: a page exported with a transparent background has its lettering in dark ink, which
composited over black (what dropping the alpha channel amounts to) would vanish."""

_WIDE_GREY_MODES = ("I", "I;16", "I;16L", "I;16B", "I;16N", "F")

BAND_ROWS = 1024
"""Rows converted at a time. A 1,000 x 40,000 px strip is 120 MB as RGB and 160 MB inside Pillow; converted whole,
the conversions in between (a copy for the EXIF rotation, the bytes handed to numpy, a converted copy) held 3-4
times that at once."""


def to_rgb8(image: Image.Image) -> RgbImage:
    """The image as HxWx3 uint8 RGB, upright, transparency composited over white paper.

    Pillow's own ``convert("RGB")`` clips 16-bit and 32-bit greyscale at 255 (a 16-bit scan comes out white: a
    blank page to the reader), drops alpha (transparent paper turns black), and ignores a CMYK page's colour
    profile; each mode is handled here instead."""
    if image.getexif().get(ExifTags.Base.Orientation, 1) != 1:
        # Phone scans store their rotation in EXIF, not in the pixels. (Without a rotation exif_transpose returns
        # a full copy: not made unless needed.)
        image = ImageOps.exif_transpose(image)
    mode = image.mode
    if mode in _WIDE_GREY_MODES:
        grey = _wide_to_8bit(np.asarray(image))
        return np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
    if mode == "CMYK":
        return _rgb_array(_cmyk_to_rgb(image), _as_rgb)
    if mode == "P":
        has_alpha = "transparency" in image.info or (image.palette is not None and image.palette.mode == "RGBA")
        return _rgb_array(image, _over_paper if has_alpha else _as_rgb)
    if mode in ("PA", "La", "RGBa", "LA", "RGBA"):
        return _rgb_array(image, _over_paper)  # premultiplied or paletted alpha is un-premultiplied first
    return _rgb_array(image, _as_rgb)


def _rgb_array(image: Image.Image, convert: Callable[[Image.Image], Image.Image]) -> RgbImage:
    """``convert`` (a per-pixel conversion) applied band by band into one HxWx3 array: every conversion here works
    pixel by pixel, so the result is the whole image's, with one band's copies alive at a time."""
    width, height = image.size
    out = np.empty((height, width, 3), dtype=np.uint8)
    for top in range(0, height, BAND_ROWS):
        band = convert(image.crop((0, top, width, min(height, top + BAND_ROWS))))
        out[top : top + band.height] = np.asarray(band, dtype=np.uint8)
    return out


def _as_rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")


def _over_paper(image: Image.Image) -> Image.Image:
    rgba = image.convert("RGBA")
    paper = Image.new("RGBA", rgba.size, (*PAPER_RGB, 255))
    return Image.alpha_composite(paper, rgba).convert("RGB")


def _wide_to_8bit(values: npt.NDArray[np.generic]) -> npt.NDArray[np.uint8]:
    """Greyscale wider than 8 bits, scaled by the range its values really use rather than clipped at 255.

    The white point is the full scale of the smallest bit depth that holds the brightest value: a 16-bit scan
    (white 65535) is divided by 257, a 12-bit scan stored in 16 bits (white 4095) by about 16, and 8-bit values in a
    32-bit container are kept as they are. Contrast is not stretched, so a page without pure white stays grey.
    Floating-point images at most 1.0 are taken as 0-1 intensities; negative values are black."""
    data = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    data = np.clip(data, 0.0, None)
    brightest = float(data.max()) if data.size else 0.0
    if values.dtype.kind == "f" and brightest <= 1.0:
        white = 1.0
    elif brightest <= 255.0:
        white = 255.0
    else:
        white = float(2 ** math.ceil(math.log2(brightest + 1.0)) - 1)
    return np.asarray(np.round(data * (255.0 / white)), dtype=np.uint8)


def _cmyk_to_rgb(image: Image.Image) -> Image.Image:
    """CMYK through its embedded ICC profile to sRGB when it has one (print files do); else Pillow's
    multiplicative formula, which is right for CMYK made from RGB without a profile."""
    profile_bytes = image.info.get("icc_profile")
    if profile_bytes:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile_bytes))
            converted = ImageCms.profileToProfile(image, source, ImageCms.createProfile("sRGB"), outputMode="RGB")
            if converted is not None:
                return converted
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # a broken profile is no reason to refuse the page
    return image.convert("RGB")
