"""The Kokoro English style files' own rules: a style cut short or missing is an error naming the file, never a
voice read from whatever values are there."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.backends import kokoro_english
from comic_narrator.backends.kokoro_english import STYLES_DIR, load_english_style
from comic_narrator.errors import EngineError


def test_a_style_cut_short_or_missing_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = (STYLES_DIR / "bm_george.bin").read_bytes()
    # The first 509 of its 510 rows: a download or copy that stopped early.
    (tmp_path / "bm_george.bin").write_bytes(shipped[: -256 * 4])
    monkeypatch.setattr(kokoro_english, "STYLES_DIR", tmp_path)
    with pytest.raises(EngineError, match=r"bm_george\.bin has 130304 values, not 510x256"):
        load_english_style("bm_george")
    with pytest.raises(EngineError, match=r"'bm_lewis' is missing from the package: .*bm_lewis\.bin"):
        load_english_style("bm_lewis")
