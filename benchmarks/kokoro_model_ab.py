"""Paired CPU-time comparison of Kokoro model files on one thread: the evidence a graph rewrite needs.

usage: python benchmarks/kokoro_model_ab.py [--rounds N] MODEL [MODEL ...]
Every model runs the six sentences of benchmarks/voices_rtf.py (three English by af_heart, three Japanese by the
first Japanese style) in a shuffled order within each sentence, --rounds times, and is compared with the first
model by the median of the per-sentence CPU-time ratios (bootstrap 95 % interval). On a shared machine a single
pass moves by 10-20 %, and even paired runs lean a few per cent towards whichever session was loaded first: pass
the first model twice (a copy under another name) to see that control's ratio beside the others'. Also printed:
each model's output against the first one's (correlation, timbre and pitch distance), so a rewrite that changes
the voice shows as one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from voices_rtf import TEXTS

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.kokoro_tts import SAMPLE_RATE_HZ, KokoroEngine
from comic_narrator.dsp.voice_stats import voice_stats


def _feeds(engine: KokoroEngine) -> list[dict[str, Any]]:
    """The model inputs of the benchmark's sentences, each line in one call as the engine makes it."""
    japanese = next(iter(engine._styles))
    feeds = []
    for lang, speaker in (("en", "af_heart"), ("ja", japanese)):
        style = engine._style({speaker: 1.0})
        for text in TEXTS[lang]:
            tokens = [engine._vocab[ch] for ch in " ".join(engine.phonemes(text, lang))]  # type: ignore[arg-type]
            feeds.append(
                {
                    "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                    "style": style[min(len(tokens), len(style)) - 1].reshape(1, -1),
                    "speed": np.array([1.0], dtype=np.float32),
                }
            )
    return feeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds over the sentences")
    parser.add_argument("models", nargs="+", type=Path, help="ONNX files; the first is the reference")
    args = parser.parse_args()
    with KokoroEngine() as engine:
        feeds = _feeds(engine)
    sessions = [cpu_session(model, 1) for model in args.models]
    outputs = [[np.asarray(s.run(None, feed)[0]).reshape(-1) for feed in feeds] for s in sessions]
    audio_s = sum(len(o) for o in outputs[0]) / SAMPLE_RATE_HZ
    for index, model_outputs in enumerate(outputs[1:], start=1):
        corr, timbre, pitch = [], [], []
        for a, b in zip(outputs[0], model_outputs, strict=True):
            n = min(len(a), len(b))
            corr.append(float(np.corrcoef(a[:n], b[:n])[0, 1]))
            stats_a, stats_b = voice_stats(a[:n], SAMPLE_RATE_HZ), voice_stats(b[:n], SAMPLE_RATE_HZ)
            timbre.append(stats_a.timbre_distance(stats_b))
            pitch.append(stats_a.pitch_distance_semitones(stats_b))
        print(
            f"model{index} against model0: correlation {min(corr):.4f}-{max(corr):.4f}, timbre distance "
            f"{max(timbre):.3f}, pitch distance {max(pitch):.2f} st at most"
        )
    order_rng = np.random.default_rng(1)
    cpu = np.zeros((args.rounds, len(feeds), len(sessions)))
    for r in range(args.rounds):
        for j, feed in enumerate(feeds):
            for i in order_rng.permutation(len(sessions)):
                start = time.process_time()
                sessions[i].run(None, feed)
                cpu[r, j, i] = time.process_time() - start
    boot_rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.2f}; {audio_s:.1f} s of audio a round; CPU s per audio s")
    for i, model in enumerate(args.models):
        rtf = cpu[:, :, i].sum(axis=1) / audio_s
        ratios = (cpu[:, :, i] / cpu[:, :, 0]).reshape(-1)
        boots = [float(np.median(boot_rng.choice(ratios, len(ratios)))) for _ in range(2000)]
        low, high = np.percentile(boots, [2.5, 97.5])
        print(
            f"model{i} {model.name}: best {rtf.min():.3f} median {statistics.median(rtf):.3f}; "
            f"against model0 {np.median(ratios):.3f} ({low:.3f}-{high:.3f})"
        )


if __name__ == "__main__":
    main()
