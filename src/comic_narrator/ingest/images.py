"""Decoding page images safely: format check, pixel limit before decoding, 8-bit RGB output whatever the mode."""

from __future__ import annotations

import io
import warnings

from PIL import Image, UnidentifiedImageError

from comic_narrator.errors import ImageTooLargeError, InputError
from comic_narrator.ingest.pixels import RgbImage as RgbImage
from comic_narrator.ingest.pixels import to_rgb8

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff")


def is_image_name(name: str) -> bool:
    return name.lower().endswith(IMAGE_SUFFIXES)


def decode_image(data: bytes, *, source: str, max_pixels: int) -> RgbImage:
    """Decode bytes to an HxWx3 uint8 array; refuses images above ``max_pixels`` before decoding them."""
    if not data:
        raise InputError("the image file is empty", path=source)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            previous = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = None  # our own limit below replaces Pillow's
            try:
                image = Image.open(io.BytesIO(data))
                width, height = image.size
                if width * height > max_pixels:
                    raise ImageTooLargeError(
                        f"image is {width} x {height} = {width * height:,} pixels, over the limit of "
                        f"{max_pixels:,} (raise --max-pixels if it is genuine)",
                        path=source,
                    )
                image.load()
            finally:
                Image.MAX_IMAGE_PIXELS = previous
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"not a readable image ({exc.__class__.__name__}: {exc})", path=source) from exc
    if width == 0 or height == 0:
        raise InputError("the image has no pixels", path=source)
    try:
        return to_rgb8(image)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot convert the image to RGB ({exc.__class__.__name__}: {exc})", path=source) from exc
