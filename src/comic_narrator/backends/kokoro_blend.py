"""Emotion as Kokoro style blends: which partner speaker an excited, scared or whispered line mixes in, and how much.

A Kokoro style row is two vectors side by side: the first 128 values go to the decoder (how the voice sounds:
spectral tilt, breathiness), the last 128 to the prosody predictor (durations, F0, energy); the model splits
them with one ``Split`` node. A weighted mean of two speakers' rows is a voice between them, and the measured
shift of a blend is close to the weight times the difference between the two speakers, so a line can borrow a
little of a higher and brighter, a tenser, or a softer speaker of its own accent and gender while staying its
own speaker. Partners are chosen by a rule over each speaker's measured voice (``SPEAKER_MEASURES``); how far
the blended lines move, and that they stay nearer their speaker than the partner, is in docs/voices.md
("Emotion blends") and ``benchmarks/voices_quality.py --emotions``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from comic_narrator.artifacts import Emotion

BLEND_VERSION = "blend-v1"
"""Part of every blended line's cache key, beside the partner and weights: bump it when the mixing changes."""

TIMBRE_WIDTH = 128
"""Style values 0..127 drive the decoder (timbre); 128..255 the prosody predictor."""


@dataclass(frozen=True)
class SpeakerMeasures:
    """One speaker's neutral reading of the benchmark sentences: mean F0 (YIN, log-averaged), alpha ratio (energy
    1-5 kHz over 50 Hz-1 kHz: vocal effort, brighter when higher) and harmonicity (breathier when lower)."""

    f0_hz: float
    alpha_db: float
    hnr_db: float


SPEAKER_MEASURES: dict[str, SpeakerMeasures] = {
    "af_alloy": SpeakerMeasures(145.23, -10.63, 9.88),
    "af_aoede": SpeakerMeasures(191.41, -14.24, 11.51),
    "af_bella": SpeakerMeasures(190.33, -13.52, 10.42),
    "af_heart": SpeakerMeasures(201.86, -9.08, 6.92),
    "af_jessica": SpeakerMeasures(216.37, -6.51, 8.18),
    "af_kore": SpeakerMeasures(162.15, -13.71, 10.51),
    "af_nicole": SpeakerMeasures(139.96, -11.49, 0.37),
    "af_nova": SpeakerMeasures(168.13, -10.37, 10.15),
    "af_river": SpeakerMeasures(187.19, -7.25, 8.05),
    "af_sarah": SpeakerMeasures(198.68, -7.97, 8.17),
    "af_sky": SpeakerMeasures(168.76, -9.7, 8.38),
    "am_adam": SpeakerMeasures(119.78, -7.88, 4.76),
    "am_echo": SpeakerMeasures(115.02, -11.08, 7.13),
    "am_eric": SpeakerMeasures(158.73, -9.54, 11.58),
    "am_fenrir": SpeakerMeasures(145.81, -6.88, 6.18),
    "am_liam": SpeakerMeasures(129.31, -7.37, 6.04),
    "am_michael": SpeakerMeasures(113.91, -9.28, 6.13),
    "am_onyx": SpeakerMeasures(90.82, -11.27, 7.26),
    "am_puck": SpeakerMeasures(121.59, -11.0, 6.85),
    "am_santa": SpeakerMeasures(182.87, -7.26, 4.22),
    "bf_alice": SpeakerMeasures(225.11, -8.48, 8.33),
    "bf_emma": SpeakerMeasures(181.26, -7.11, 7.71),
    "bf_isabella": SpeakerMeasures(204.45, -9.75, 9.48),
    "bf_lily": SpeakerMeasures(188.43, -10.66, 8.69),
    "bm_daniel": SpeakerMeasures(125.67, -10.45, 7.52),
    "bm_fable": SpeakerMeasures(125.56, -7.23, 6.04),
    "bm_george": SpeakerMeasures(143.06, -12.68, 11.73),
    "bm_lewis": SpeakerMeasures(89.78, -7.42, 3.23),
    # Japanese: the same measures over the benchmark's six Japanese sentences (``--emotions --lang ja``).
    "jf_alpha": SpeakerMeasures(267.54, -10.59, 13.25),
    "jf_gongitsune": SpeakerMeasures(234.11, -15.18, 14.57),
    "jf_nezumi": SpeakerMeasures(228.77, -9.58, 14.89),
    "jf_tebukuro": SpeakerMeasures(328.55, -9.3, 14.76),
    "jm_kumo": SpeakerMeasures(94.42, -12.4, 7.02),
}
"""Measured with ``benchmarks/voices_quality.py --emotions [--lang ja]`` (it prints this table)."""


def _spread(value: Callable[[SpeakerMeasures], float]) -> float:
    """How much a measure varies between the English speakers of one gender (root-mean-square of the two genders'
    standard deviations): the rule counts differences in these units, so no measure outweighs the others. Only
    the 28 English speakers set the units (Japanese has four women and one man, too few for a spread of its own),
    so adding the Japanese speakers' measures left every English choice as it was."""
    by_gender = [
        [value(m) for name, m in SPEAKER_MEASURES.items() if name[0] in "ab" and name[1] == gender] for gender in "fm"
    ]
    return float(np.sqrt(np.mean([np.var(values) for values in by_gender])))


SPREAD_SEMITONES = _spread(lambda m: 12 * math.log2(m.f0_hz))
SPREAD_ALPHA_DB = _spread(lambda m: m.alpha_db)
SPREAD_HNR_DB = _spread(lambda m: m.hnr_db)


def good_partner(grade: str | None) -> bool:
    """Partners come from speakers graded D or better (not D-, F+): a blend should not borrow the weakest voices."""
    return grade is not None and grade[:1] in "ABCD" and grade != "D-"


@dataclass(frozen=True)
class Difference:
    """Partner minus speaker, each measure in units of its spread between speakers."""

    f0: float
    alpha: float
    hnr: float


@dataclass(frozen=True)
class EmotionRule:
    """What a partner must add for an emotion (``moves``: it must move this way at all; ``score``: how far it
    moves the intended way overall) and the partner's share of each half of the style."""

    moves: Callable[[Difference], bool]
    score: Callable[[Difference], float]
    timbre_weight: float
    prosody_weight: float


EMOTION_RULES: dict[Emotion, EmotionRule] = {
    # Excited: higher and brighter (more vocal effort).
    "excited": EmotionRule(lambda d: d.f0 > 0, lambda d: d.f0 + d.alpha, timbre_weight=0.25, prosody_weight=0.35),
    # Scared: higher and tenser-shakier (less harmonic), as the scared delivery's breath already leans.
    "scared": EmotionRule(lambda d: d.f0 > 0, lambda d: d.f0 - d.hnr, timbre_weight=0.25, prosody_weight=0.35),
    # Whispered: softer (less high-frequency effort) and breathier. The bank's whisper then replaces the voicing
    # with noise through the voice's own envelope, so it is the softer tilt that carries through.
    "whisper": EmotionRule(lambda d: d.alpha < 0, lambda d: -d.alpha - d.hnr, timbre_weight=0.35, prosody_weight=0.2),
}
"""Why these weights: the prosody half moves F0 and tempo with little change of timbre, the timbre half moves
tilt and breathiness and most of the identity; a quarter to a third keeps every blend measurably nearer its own
speaker than its partner (docs/voices.md)."""

_SPEAKER_STYLE = re.compile(r"^([abj])[fm]_[a-z]+$")
ACCENTS = {"en": "ab", "ja": "j"}
"""The style prefixes of each language's own speakers (a US or UK speaker reads English, a j* speaker Japanese):
only those blend, so a Japanese speaker reading English (accented) is voiced as it always was."""


@dataclass(frozen=True)
class StyleBlend:
    """One line's blend: the partner style and its share of the timbre and prosody halves."""

    partner: str
    timbre_weight: float
    prosody_weight: float

    def token(self) -> str:
        """Names the blend in the clip cache key: a new partner, weight or mixing re-voices the line."""
        return f"{BLEND_VERSION}:{self.partner}:{self.timbre_weight:.3f}/{self.prosody_weight:.3f}"


def difference(speaker: SpeakerMeasures, partner: SpeakerMeasures) -> Difference:
    return Difference(
        f0=12 * math.log2(partner.f0_hz / speaker.f0_hz) / SPREAD_SEMITONES,
        alpha=(partner.alpha_db - speaker.alpha_db) / SPREAD_ALPHA_DB,
        hnr=(partner.hnr_db - speaker.hnr_db) / SPREAD_HNR_DB,
    )


def choose_partner(
    speaker: str,
    rule: EmotionRule,
    measures: Mapping[str, SpeakerMeasures],
    grades: Mapping[str, str],
) -> str | None:
    """The speaker of the same accent and gender (``af``, ``am``, ``bf``, ``bm``, ``jf``, ``jm``) who moves
    ``speaker`` furthest the rule's way, or None when nobody moves it that way (the speaker is already the group's
    extreme, or alone in it: ``jm_kumo``)."""
    own = measures.get(speaker)
    if own is None:
        return None
    best: tuple[float, str] | None = None
    for name, theirs in measures.items():
        if name == speaker or name[:2] != speaker[:2] or not good_partner(grades.get(name)):
            continue
        diff = difference(own, theirs)
        score = rule.score(diff)
        if rule.moves(diff) and score > 0 and (best is None or score > best[0]):
            best = (score, name)
    return best[1] if best else None


def style_blend(
    styles: Mapping[str, float],
    emotion: Emotion,
    rules: Mapping[Emotion, EmotionRule],
    measures: Mapping[str, SpeakerMeasures],
    grades: Mapping[str, str],
    language: str = "en",
) -> StyleBlend | None:
    """The blend for a voice made of ``styles`` speaking ``language`` with ``emotion``; None leaves the voice as it is.

    Only a voice of one Kokoro speaker of that language blends (a recorded speaker or a voice re-timbred from
    one): its partner is chosen for the style itself, so a boy made from a woman's style borrows from women, as
    his source would."""
    rule = rules.get(emotion)
    if rule is None or len(styles) != 1:
        return None
    [speaker] = styles
    found = _SPEAKER_STYLE.match(speaker)
    if found is None or found.group(1) not in ACCENTS.get(language, ""):
        return None
    partner = choose_partner(speaker, rule, measures, grades)
    if partner is None:
        return None
    return StyleBlend(partner, rule.timbre_weight, rule.prosody_weight)


Style = np.ndarray[Any, np.dtype[np.float32]]


def mix_styles(own: Style, partner: Style, blend: StyleBlend) -> Style:
    """``own`` moved toward ``partner`` by the blend's weights, half by half (shape kept, float32)."""
    weights = np.full(own.shape[-1], blend.prosody_weight, dtype=np.float32)
    weights[:TIMBRE_WIDTH] = blend.timbre_weight
    return np.asarray(own + (partner - own) * weights, dtype=np.float32)
