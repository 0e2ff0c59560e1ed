"""English grapheme-to-phoneme through the espeak-ng library that ships inside piper-tts (one lock per process).

espeak-ng is GPL-3.0 and is used only as the separate shared library bundled in the piper-tts wheel
(``piper/espeakbridge.so``); no espeak code or data lives in this repository.
"""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
_PHONEMIZER: Any = None


def phonemize_sentences(text: str, espeak_voice: str = "en-us") -> list[list[str]]:
    """Text -> IPA phoneme characters grouped by sentence (stress marks and punctuation kept).

    espeak-ng holds process-global state (the selected voice), so every call goes through one lock; the
    neural inference that follows runs outside it.
    """
    global _PHONEMIZER
    with _LOCK:
        if _PHONEMIZER is None:
            from piper.phonemize_espeak import ESPEAK_DATA_DIR, EspeakPhonemizer

            _PHONEMIZER = EspeakPhonemizer(ESPEAK_DATA_DIR)
        sentences: list[list[str]] = _PHONEMIZER.phonemize(espeak_voice, text)
    return [s for s in sentences if any(not p.isspace() for p in s)]
