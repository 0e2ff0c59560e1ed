"""The shipped Kokoro English styles (intact, licensed, graded) and kokoro-js's fixes to espeak's IPA."""

from __future__ import annotations

import hashlib

from comic_narrator.backends.kokoro_english import (
    STYLES_DIR,
    english_grades,
    english_style_names,
    espeak_voice_for,
    fix_espeak_ipa,
    load_english_style,
)


def test_the_28_styles_ship_intact_with_licence_notice_and_grades() -> None:
    names = english_style_names()
    assert len(names) == 28
    assert sum(name[1] == "f" for name in names) == 15 and sum(name[1] == "m" for name in names) == 13
    digests = dict(
        reversed(line.split()) for line in (STYLES_DIR / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    )
    for name in names:
        data = (STYLES_DIR / f"{name}.bin").read_bytes()
        assert hashlib.sha256(data).hexdigest() == digests[f"{name}.bin"], name
    assert "Apache License" in (STYLES_DIR / "LICENSE").read_text(encoding="utf-8")
    notice = (STYLES_DIR / "NOTICE.md").read_text(encoding="utf-8")
    assert "kokoro-js" in notice and "1.2.1" in notice and "npm pack" in notice
    grades = english_grades()
    assert set(grades) == set(names) and grades["af_heart"] == "A" and grades["am_adam"] == "F+"
    style = load_english_style("bm_george")
    assert style.shape == (510, 1, 256) and style.dtype.name == "float32"


def test_accents_and_ipa_fixes() -> None:
    assert espeak_voice_for("af_heart") == "en-us" and espeak_voice_for("bm_george") == "en"
    assert espeak_voice_for("jf_alpha") == "en-us"
    assert fix_espeak_ipa("nˈaɪnti ɹˈɛd", "en-us") == "nˈaɪndi ɹˈɛd"  # US flap, as kokoro-js
    assert fix_espeak_ipa("nˈaɪnti", "en") == "nˈaɪnti"
    assert fix_espeak_ipa("rˈɛd bˈɑx", "en") == "ɹˈɛd bˈɑk"
    assert fix_espeak_ipa("θɹˈiːhˈʌndɹɪd", "en-us") == "θɹˈiː hˈʌndɹɪd"
