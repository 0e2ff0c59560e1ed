"""Pages in every Pillow mode they come in read like their RGB original: built from a real page, decoded through
ingest, read by the real reader (rapidocr)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from comic_narrator.artifacts import PageReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.ingest.images import decode_image
from comic_narrator.ingest.pixels import to_rgb8
from comic_narrator.reading.metrics import edit_distance, normalise_letters
from comic_narrator.reading.reader import read_page
from tests.reading.conftest import DATA, page_for

# The lower half of Pepper&Carrot ep. 17 page 1: four panels, five balloons of mixed-case and capital lettering.
_PAGE = DATA / "peppercarrot-ep17" / "page1.jpg"
_CROP_XYXY = (0, 680, 992, 1373)
_LIMIT_PX = 64_000_000


@pytest.fixture(scope="module")
def ocr() -> Iterator[RapidOcrEngine]:
    with RapidOcrEngine() as engine:
        yield engine


@pytest.fixture(scope="module")
def original() -> Image.Image:
    with Image.open(_PAGE) as page:
        return page.convert("RGB").crop(_CROP_XYXY)


def _read(image_rgb: npt.NDArray[np.uint8], ocr: RapidOcrEngine) -> PageReading:
    return read_page(image_rgb, page_for(image_rgb), config=VisionConfig(lang="en"), manga_hint=False, ocr=ocr)


def _letters(reading: PageReading) -> str:
    """The balloon and caption lettering. Sound words painted into the art sit at the detector's threshold: any
    re-encoding (even an RGB JPEG's) can drop the faint "WOOOSH" here, whatever the mode."""
    return "".join(normalise_letters(t.text) for t in reading.texts if t.kind not in ("sound", "furniture"))


def _encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def _grey(page: Image.Image) -> npt.NDArray[np.uint8]:
    return np.asarray(page.convert("L"))


def _grey16(page: Image.Image) -> bytes:
    """A 16-bit greyscale scan (white 65535): Pillow opens it as I;16, which its convert("RGB") clips to white."""
    return _encoded(Image.fromarray(_grey(page).astype(np.uint16) * 257), "PNG")


def _grey12_in_16(page: Image.Image) -> bytes:
    """A 12-bit scanner's output stored in a 16-bit PNG (white 4095)."""
    return _encoded(Image.fromarray(_grey(page).astype(np.uint16) * 16), "PNG")


def _grey32(page: Image.Image) -> bytes:
    """Mode I (32-bit signed) as a TIFF holding 16-bit values."""
    return _encoded(Image.fromarray(_grey(page).astype(np.int32) * 257), "TIFF")


def _rgb16(page: Image.Image) -> bytes:
    bgr16 = cv2.cvtColor(np.asarray(page), cv2.COLOR_RGB2BGR).astype(np.uint16) * 257
    ok, png = cv2.imencode(".png", bgr16)
    assert ok
    return png.tobytes()


def _cmyk_jpeg(page: Image.Image) -> bytes:
    return _encoded(page.convert("CMYK"), "JPEG", quality=92)


def _palette(page: Image.Image) -> bytes:
    return _encoded(page.quantize(colors=256, method=Image.Quantize.MEDIANCUT), "PNG")


def _palette_transparent_paper(page: Image.Image) -> bytes:
    """Paper as a transparent palette entry whose colour is black: read without its transparency, the page is ink
    on black."""
    quantised = page.quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    indices = np.asarray(quantised)
    palette = quantised.getpalette() or []
    lightest = max(range(len(palette) // 3), key=lambda i: sum(palette[3 * i : 3 * i + 3]))
    paper = np.isin(indices, [i for i in range(len(palette) // 3) if min(palette[3 * i : 3 * i + 3]) >= 225])
    flat = np.where(paper, lightest, indices).astype(np.uint8)
    out = Image.fromarray(flat, mode="P")
    palette[3 * lightest : 3 * lightest + 3] = [0, 0, 0]
    out.putpalette(palette)
    return _encoded(out, "PNG", transparency=lightest)


def _ink_la(page: Image.Image) -> bytes:
    """Line art exported as black ink whose opacity is its darkness (LA): over black it is a black page."""
    ink = 255 - _grey(page)
    return _encoded(Image.fromarray(np.dstack([np.zeros_like(ink), ink]), mode="LA"), "PNG")


def _rgba_transparent_paper(page: Image.Image) -> bytes:
    """Near-white paper cut out to transparent black pixels, as exporters store it."""
    rgb = np.asarray(page)
    paper = rgb.min(axis=2) >= 235
    rgba = np.dstack([np.where(paper[:, :, None], 0, rgb), np.where(paper, 0, 255)]).astype(np.uint8)
    return _encoded(Image.fromarray(rgba, mode="RGBA"), "PNG")


def _bilevel(page: Image.Image) -> bytes:
    """A 1-bit scan, thresholded as bilevel scanners do (not dithered)."""
    return _encoded(Image.fromarray(_grey(page) >= 150).convert("1"), "PNG")


_MODES: dict[str, tuple[Callable[[Image.Image], bytes], str]] = {
    "16-bit grey PNG": (_grey16, "I;16"),
    "12-bit grey in a 16-bit PNG": (_grey12_in_16, "I;16"),
    "32-bit grey TIFF": (_grey32, "I"),
    "16-bit RGB PNG": (_rgb16, "RGB"),
    "CMYK JPEG": (_cmyk_jpeg, "CMYK"),
    "palette PNG": (_palette, "P"),
    "palette PNG, transparent paper": (_palette_transparent_paper, "P"),
    "LA PNG, ink on transparency": (_ink_la, "LA"),
    "RGBA PNG, transparent paper": (_rgba_transparent_paper, "RGBA"),
    "1-bit PNG": (_bilevel, "1"),
}


@pytest.mark.parametrize("name", list(_MODES))
def test_page_in_each_mode_reads_like_its_rgb_original(name: str, original: Image.Image, ocr: RapidOcrEngine) -> None:
    build, expected_mode = _MODES[name]
    data = build(original)
    with Image.open(io.BytesIO(data)) as opened:
        assert opened.mode == expected_mode  # the file really is in the mode under test
    decoded = decode_image(data, source=name, max_pixels=_LIMIT_PX)
    assert decoded.dtype == np.uint8 and decoded.shape == (original.height, original.width, 3)
    reference = _letters(_read(np.asarray(original), ocr))
    assert len(reference) >= 60  # the crop has real lettering to lose
    found = _letters(_read(decoded, ocr))
    assert edit_distance(found, reference) <= 0.05 * len(reference), (name, found, reference)


def test_wide_grey_is_scaled_by_the_range_it_uses() -> None:
    ramp = np.array([[0, 1000, 4095]], dtype=np.uint16)
    assert to_rgb8(Image.fromarray(ramp))[0, :, 0].tolist() == [0, 62, 255]  # 12-bit data: white stays white
    full = np.array([[0, 257 * 128, 65535]], dtype=np.uint16)
    assert to_rgb8(Image.fromarray(full))[0, :, 0].tolist() == [0, 128, 255]
    floats = np.array([[0.0, 0.5, 1.0]], dtype=np.float32)
    assert to_rgb8(Image.fromarray(floats, mode="F"))[0, :, 0].tolist() == [0, 128, 255]


def test_transparency_is_white_paper() -> None:
    clear = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    assert to_rgb8(clear).min() == 255
    half_ink = Image.new("LA", (4, 4), (0, 128))
    assert to_rgb8(half_ink)[0, 0].tolist() == [127, 127, 127]
    # A palette that carries alpha itself (no "transparency" entry in the image's info): entry 0 is clear black.
    paletted = Image.new("P", (2, 1))
    paletted.putpalette([0, 0, 0, 0, 255, 0, 0, 255], rawmode="RGBA")
    paletted.putpixel((1, 0), 1)
    assert "transparency" not in paletted.info
    assert to_rgb8(paletted)[0].tolist() == [[255, 255, 255], [255, 0, 0]]


def test_exif_rotation_is_applied(original: Image.Image) -> None:
    """A phone scan stores the page sideways with an EXIF orientation; it is read upright."""
    sideways = original.transpose(Image.Transpose.ROTATE_90)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90 degrees clockwise to display
    data = _encoded(sideways, "JPEG", quality=95, exif=exif.tobytes())
    upright = decode_image(data, source="sideways scan", max_pixels=_LIMIT_PX)
    assert upright.shape == (original.height, original.width, 3)
    difference = np.abs(upright.astype(np.int16) - np.asarray(original, dtype=np.int16))
    assert float(difference.mean()) < 4.0
