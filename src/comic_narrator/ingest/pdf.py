"""PDF pages rendered with pypdfium2, with clear errors for corrupt, encrypted and empty files."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

from comic_narrator.errors import ImageTooLargeError, InputError
from comic_narrator.ingest.images import RgbImage


def _open(path: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        text = str(exc).lower()
        if "password" in text or "security" in text:
            raise InputError("the PDF is encrypted (password protected); decrypt it first", path=path) from exc
        if _declares_no_pages(path):
            raise InputError("the PDF has no pages", path=path) from exc
        raise InputError(f"not a readable PDF ({exc})", path=path) from exc


def _declares_no_pages(path: Path) -> bool:
    """PDFium refuses to open a PDF whose page tree is empty; recognise that case for a clearer message."""
    try:
        data = path.read_bytes()[: 1 << 20]
    except OSError:
        return False
    counts = re.findall(rb"/Count\s*(\d+)", data)
    return bool(counts) and all(int(c) == 0 for c in counts)


def pdf_page_count(path: Path) -> int:
    doc = _open(path)
    try:
        count = len(doc)
    finally:
        doc.close()
    if count == 0:
        raise InputError("the PDF has no pages", path=path)
    return count


AUTO_LONG_SIDE_PX = 2000


def render_pdf_pages(path: Path, page_numbers: list[int], *, dpi: int | None, max_pixels: int) -> Iterator[RgbImage]:
    """Render the given 1-based pages to RGB arrays at ``dpi`` (None: long side near 2000 px)."""
    doc = _open(path)
    try:
        for number in page_numbers:
            page = doc[number - 1]
            width_pt, height_pt = page.get_size()
            scale = dpi / 72.0 if dpi else min(600 / 72, max(1.0, AUTO_LONG_SIDE_PX / max(width_pt, height_pt)))
            pixels = int(width_pt * scale) * int(height_pt * scale)
            if pixels > max_pixels:
                raise ImageTooLargeError(
                    f"page {number} at {dpi} dpi would be {pixels:,} pixels, over {max_pixels:,}; lower --dpi",
                    path=path,
                )
            try:
                bitmap = page.render(scale=scale)
                image = bitmap.to_pil().convert("RGB")
            except pdfium.PdfiumError as exc:
                raise InputError(f"page {number} cannot be rendered ({exc})", path=path) from exc
            finally:
                page.close()
            yield np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
    finally:
        doc.close()
