"""Bad input through the real CLI: one clear line naming the file, non-zero exit, nothing clobbered."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from comic_narrator.cli import main
from comic_narrator.config import IngestConfig
from comic_narrator.errors import UnsafeArchiveError
from comic_narrator.ingest.book import ingest_book
from tests.conftest import SAMPLE_PAGE


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def _expect_error(path: Path, fragment: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out.mp4"
    out.write_bytes(b"an earlier video that must survive")
    code, err = _run([str(path), "-o", str(out), "-q"], capsys)
    assert code != 0
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert str(path) in lines[0]
    assert fragment in lines[0]
    assert "(log: " in lines[0]
    assert "Traceback" not in err
    assert out.read_bytes() == b"an earlier video that must survive"


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_error(tmp_path / "missing.pdf", "no such file", capsys, tmp_path)


def test_empty_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    _expect_error(path, "empty", capsys, tmp_path)


def test_corrupt_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "corrupt.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 200)
    _expect_error(path, "not a readable PDF", capsys, tmp_path)


def test_mislabelled_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notreally.pdf"
    path.write_text("hello, I am text")
    _expect_error(path, "not a PDF", capsys, tmp_path)


def test_pdf_without_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pypdf = pytest.importorskip("pypdf")
    path = tmp_path / "nopages.pdf"
    with path.open("wb") as handle:
        pypdf.PdfWriter().write(handle)
    _expect_error(path, "no pages", capsys, tmp_path)


def test_encrypted_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pypdf = pytest.importorskip("pypdf")
    plain = tmp_path / "plain.pdf"
    Image.open(SAMPLE_PAGE).convert("RGB").save(plain, format="PDF")
    writer = pypdf.PdfWriter(clone_from=str(plain))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    _expect_error(path, "encrypted", capsys, tmp_path)


def test_empty_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.cbz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "no pages here")
    _expect_error(path, "no page images", capsys, tmp_path)


@pytest.mark.parametrize("entry", ["../../evil.png", "/etc/evil.png", "ok/../../evil.png"])
def test_archive_path_traversal(entry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "traversal.cbz"
    buf = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buf, format="PNG")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("p1.png", buf.getvalue())
        zf.writestr(entry, buf.getvalue())
    _expect_error(path, "refusing", capsys, tmp_path)
    assert not (tmp_path.parent / "evil.png").exists()


def test_zip_bomb_by_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bomb.cbz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("p1.png", b"\0" * (40 << 20))  # 40 MiB of zeros inflates ~1000x
    _expect_error(path, "zip bomb", capsys, tmp_path)


def test_zip_bomb_by_total_size(tmp_path: Path) -> None:
    path = tmp_path / "big.cbz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for n in range(3):
            zf.writestr(f"p{n}.png", b"\1" * (2 << 20))
    with pytest.raises(UnsafeArchiveError, match="cap"):
        ingest_book(path, IngestConfig(max_archive_bytes=4 << 20), tmp_path / "pages")


def test_corrupt_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.cbz"
    path.write_bytes(b"PK\x03\x04" + b"\xff" * 100)
    _expect_error(path, "not a valid ZIP", capsys, tmp_path)


def test_huge_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.png"
    Image.new("1", (12_000, 12_000)).save(path)  # 144 Mpx, tiny on disk
    _expect_error(path, "over the limit", capsys, tmp_path)


def test_not_an_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "page.jpg"
    path.write_bytes(b"\x89PNG but not really" * 10)
    _expect_error(path, "not a readable image", capsys, tmp_path)


def test_output_in_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "folder" / "out.mp4"
    code, err = _run([str(SAMPLE_PAGE), "-o", str(target), "-q"], capsys)
    assert code != 0
    assert len(err.splitlines()) == 1
    assert "does not exist" in err and str(target) in err
    assert not (tmp_path / "no").exists()
