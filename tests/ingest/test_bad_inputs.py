"""Bad input through the real CLI: one clear line naming the file, non-zero exit, nothing clobbered."""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pypdf
import pytest
from PIL import Image

from comic_narrator.cli import main
from comic_narrator.config import IngestConfig
from comic_narrator.errors import InputError, UnsafeArchiveError
from comic_narrator.ingest.book import ingest_book
from comic_narrator.ingest.images import decode_image
from tests.conftest import SAMPLE_PAGE


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def _expect_error(
    path: Path,
    fragment: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    run: Callable[[list[str], pytest.CaptureFixture[str]], tuple[int, str]] = _run,
) -> str:
    out = tmp_path / "out.mp4"
    out.write_bytes(b"an earlier video that must survive")
    code, err = run([str(path), "-o", str(out), "-q"], capsys)
    assert code == 2  # a problem with what was given, not an internal error (1)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert str(path) in lines[0]
    assert fragment in lines[0]
    assert "(log: " in lines[0]
    assert "Traceback" not in err
    assert out.read_bytes() == b"an earlier video that must survive"
    return lines[0]


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
    path = tmp_path / "nopages.pdf"
    with path.open("wb") as handle:
        pypdf.PdfWriter().write(handle)
    _expect_error(path, "no pages", capsys, tmp_path)


def test_encrypted_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
def test_archive_path_traversal(
    entry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real CLI and archive code. Pages are only ever written as PNGs under the work folder (OUT.mp4.work/pages);
    the check is that nothing lands there, at the place the entry's path points to from there, in the temp folder
    (pointed into tmp_path for the test) or anywhere else under tmp_path."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    path = tmp_path / "traversal.cbz"
    buf = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buf, format="PNG")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("p1.png", buf.getvalue())
        zf.writestr(entry, buf.getvalue())
    _expect_error(path, "refusing", capsys, tmp_path)
    pages = tmp_path / "out.mp4.work" / "pages"
    assert not Path(os.path.normpath(pages / entry)).exists()
    assert not pages.exists(), "no page of a refused archive is written"
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {"traversal.cbz", "out.mp4", "out.mp4.work/comic-narrator.log"}


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


def _understate_sizes(path: Path, claimed_bytes: int) -> None:
    """Patch every entry's uncompressed size, in its local header and in the central directory, to a lie (the
    zip bomb's trick: the headers look harmless, the data is not). The compressed data and CRCs stay true."""
    data = bytearray(path.read_bytes())
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = data.find(signature)
        while start != -1:
            struct.pack_into("<I", data, start + size_at, claimed_bytes)
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))


def _lying_archive(path: Path, entries: list[bytes]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, data in enumerate(entries):
            zf.writestr(f"p{n}.png", data)
    _understate_sizes(path, 1000)


def test_zip_bomb_with_lying_headers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real archive code through the real CLI. The archive is a stand-in bomb: 40 MiB of zeros whose headers claim
    1000 bytes, so the header checks pass and only counting the real inflated bytes can catch it (it used to be
    refused as 'Bad CRC', a corrupt file, not as a bomb)."""
    path = tmp_path / "liar.cbz"
    _lying_archive(path, [b"\0" * (40 << 20)])
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("p0.png").file_size == 1000, "the headers must lie for this test to mean anything"
    _expect_error(path, "zip bomb", capsys, tmp_path)


def test_total_cap_counts_real_bytes_not_headers(tmp_path: Path) -> None:
    """The 2 GB cap, exercised by the real counting code with a 4 MiB cap (the stand-in for 2 GB): three entries of
    pages of 4-bit noise stored in ~2.1 MB PNGs (deflate gets about 2x, far under the ratio cap) whose headers
    each claim 1000 bytes: the first page fits, the second crosses the cap."""
    assert IngestConfig().max_archive_bytes == 2 * 1024**3
    path = tmp_path / "liar-total.cbz"
    rng = np.random.default_rng(0)
    pages = []
    for _ in range(3):
        buf = io.BytesIO()
        noise = rng.integers(0, 16, (700, 1000, 3), dtype=np.uint8)
        Image.fromarray(noise).save(buf, format="PNG", compress_level=0)  # stored PNG: ~2.1 MB inflated
        pages.append(buf.getvalue())
    _lying_archive(path, pages)
    config = IngestConfig(max_archive_bytes=4 << 20)
    with pytest.raises(
        UnsafeArchiveError, match=r"exceeds the cap of 4 MB \(at entry 'p1.png'\): looks like a zip bomb"
    ):
        ingest_book(path, config, tmp_path / "pages")


def test_corrupt_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.cbz"
    path.write_bytes(b"PK\x03\x04" + b"\xff" * 100)
    _expect_error(path, "not a valid ZIP", capsys, tmp_path)


def test_huge_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.png"
    Image.new("1", (12_000, 12_000)).save(path)  # 144 Mpx, tiny on disk
    _expect_error(path, "over the limit", capsys, tmp_path)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\x89PNG but not really" * 10, "starts as a PNG file does but is damaged"),
        (b"Chapter 1, page 1\nThe panels go here.\n", "it is text, not an image"),
        (b"\n<!DOCTYPE html>\n<html><body>Sign in to continue</body></html>", "web page (HTML)"),
        (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', "SVG drawing; export it as PNG"),
        (b"<html><head><title>404 Not Found</title></head></html>", "web page (HTML)"),
        (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', "SVG drawing; export it as PNG"),
        (b'<?xml version="1.0"?>\n<ComicInfo><Title>One</Title></ComicInfo>', "it is text, not an image"),
        (bytes(range(200, 256)) * 4, "no image format starts with the bytes c8 c9 ca"),
    ],
)
def test_not_an_image_says_what_it_is(
    data: bytes, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "page.jpg"
    path.write_bytes(data)
    line = _expect_error(path, "not a readable image: ", capsys, tmp_path)
    assert says in line and "BytesIO" not in line


def test_an_image_cut_short_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = io.BytesIO()
    Image.new("RGB", (300, 400), "white").save(whole, format="JPEG")
    path = tmp_path / "page.jpg"
    path.write_bytes(whole.getvalue()[: len(whole.getvalue()) // 2])
    _expect_error(path, "the image is cut short", capsys, tmp_path)


@pytest.mark.parametrize(
    ("name", "head", "kind"),
    [
        ("book.cbr", b"Rar!\x1a\x07\x01\x00", "RAR"),  # RAR 5
        ("book.rar", b"Rar!\x1a\x07\x00", "RAR"),  # RAR 1.5-4
        ("book.cb7", b"7z\xbc\xaf\x27\x1c\x00\x04", "7z"),
        ("book.cbz", b"Rar!\x1a\x07\x01\x00", "RAR"),  # mislabelled: the bytes decide
        ("page.jpg", b"7z\xbc\xaf\x27\x1c\x00\x04", "7z"),
    ],
)
def test_rar_and_7z_are_refused_by_name(
    name: str, head: bytes, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real CLI. Stand-in archives: the real RAR/7z signatures followed by filler (no RAR or 7z tool here); the
    refusal only reads the signature, so a real archive takes the same path."""
    path = tmp_path / name
    path.write_bytes(head + bytes(range(256)) * 4)
    _expect_error(path, f"{kind} comics are not supported: repack as CBZ", capsys, tmp_path)


DROP_FILE_CAPABILITIES = ["--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]
"""setpriv options that take from root the capabilities that let it read any file whatever its permissions."""


def _run_without_file_capabilities(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The real CLI in a child process that, even as root, obeys file permissions (setpriv drops CAP_DAC_*)."""
    setpriv = shutil.which("setpriv")
    code = "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))"
    prefix = [setpriv, *DROP_FILE_CAPABILITIES] if setpriv and os.geteuid() == 0 else []
    done = subprocess.run([*prefix, sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr.strip()


def _unreadable_to_the_cli(path: Path) -> bool:
    if not os.access(path, os.R_OK):
        return True  # not root: permissions already apply
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return False
    probe = subprocess.run([setpriv, *DROP_FILE_CAPABILITIES, "test", "-r", str(path)], capture_output=True)
    return probe.returncode == 1  # 1: unreadable; anything else (setpriv refused) leaves root able to read it


@pytest.mark.parametrize("name", ["book.pdf", "book.cbz", "page.png", "folder/p1.png"])
def test_unreadable_file(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real CLI on a real file with permission 000 (for the last case a page of a folder given as the input). Root
    reads any file, so as root the CLI runs in a child process without root's file capabilities (util-linux
    setpriv); the test is skipped only where that cannot be arranged."""
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    Image.open(SAMPLE_PAGE).convert("RGB").save(tmp_path / "page.png")
    if name == "book.pdf":
        Image.open(SAMPLE_PAGE).convert("RGB").save(path, format="PDF")
    elif name == "book.cbz":
        with zipfile.ZipFile(path, "w") as zf:
            zf.write(tmp_path / "page.png", "p1.png")
    else:
        Image.open(SAMPLE_PAGE).convert("RGB").save(path)
    path.chmod(0)
    try:
        if not _unreadable_to_the_cli(path):
            pytest.skip("this user reads files with permission 000 and setpriv cannot drop that (root without it)")
        given = path.parent if name.startswith("folder/") else path
        line = _expect_error(given, "cannot read (Permission denied)", capsys, tmp_path, _run_without_file_capabilities)
        assert str(path) in line
    finally:
        path.chmod(0o644)


def test_output_in_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "folder" / "out.mp4"
    code, err = _run([str(SAMPLE_PAGE), "-o", str(target), "-q"], capsys)
    assert code != 0
    assert len(err.splitlines()) == 1
    assert "does not exist" in err and str(target) in err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("command", [[], ["read"], ["inspect"]])
def test_a_work_folder_that_cannot_be_made_is_one_line_naming_it(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--work-dir`` at a file, or under one: the narrator, ``read`` and ``inspect`` say which folder and why
    (they raised an internal error from deep in the ingest before), and the file is left as it was."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    cases = {a_file: "the work folder is a file, not a folder", a_file / "work": "cannot create the work folder"}
    for work, fragment in cases.items():
        output = [] if command == ["read"] else ["-o", str(tmp_path / "out")]
        code, err = _run([*command, str(SAMPLE_PAGE), *output, "--work-dir", str(work), "-q"], capsys)
        assert code == 2, err
        assert len(err.splitlines()) == 1 and err.startswith(f"error: {work}: {fragment}"), err
    assert a_file.read_text() == "keep me"
    assert not (tmp_path / "out").exists()


def test_an_overlay_folder_that_is_a_file_is_refused_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "overlays"
    a_file.write_text("keep me")
    work = tmp_path / "work"
    code, err = _run(["inspect", str(SAMPLE_PAGE), "-o", str(a_file), "--work-dir", str(work), "-q"], capsys)
    assert code == 2 and err.startswith(f"error: {a_file}: the overlay folder is a file, not a folder"), err
    assert a_file.read_text() == "keep me"
    assert not list(work.glob("readings/*")), "refused before the page was read"


def test_an_empty_page_inside_a_book_is_named_as_empty() -> None:
    """An archive's zero-byte member reaches the decoder itself (the input file is not empty)."""
    with pytest.raises(InputError, match=r"^book\.cbz:003\.jpg: the image file is empty$"):
        decode_image(b"", source="book.cbz:003.jpg", max_pixels=10**8)
