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


_MAGIC = (
    (b"\x89PNG", "PNG"),
    (b"\xff\xd8", "JPEG"),
    (b"GIF8", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
"""The first bytes of the formats Pillow reads pages in (WebP's RIFF header is shared with WAV, so not here)."""


def _what_the_bytes_are(data: bytes) -> str:
    """Why Pillow found no image format in ``data``, in words: what the file holds instead, when it can tell."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return f"it starts as a {name} file does but is damaged"
    head = data[:512].lstrip().lower()
    if head.startswith(b"<!doctype html") or b"<html" in head:
        return "it is a web page (HTML), not an image: a download that failed?"
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return "it is an SVG drawing; export it as PNG"
    if all(32 <= b < 127 or b in (9, 10, 13) for b in data[:64]):
        return "it is text, not an image"
    return f"no image format starts with the bytes {data[:8].hex(' ')}"


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
    except UnidentifiedImageError as exc:
        raise InputError(f"not a readable image: {_what_the_bytes_are(data)}", path=source) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        # Pillow knew the format and failed inside it: a damaged file, or one cut short.
        if "truncated" in str(exc):
            raise InputError(f"the image is cut short, an incomplete download or copy ({exc})", path=source) from exc
        raise InputError(f"not a readable image ({exc})", path=source) from exc
    if width == 0 or height == 0:
        raise InputError("the image has no pixels", path=source)
    try:
        return to_rgb8(image)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot convert the image to RGB ({exc.__class__.__name__}: {exc})", path=source) from exc
