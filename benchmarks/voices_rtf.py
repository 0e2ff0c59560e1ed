"""Offline real-time factor of every bundled voice: CPU seconds per second of audio, one thread, one core.

usage: python benchmarks/voices_rtf.py [--repeat N] [--tier fast|natural] [VOICE ...]
Targets: the "fast" tier that casting uses by default, <= 0.1 for English and <= 0.4 for Japanese (issue 4); the
"natural" tier (Kokoro, --voice-quality natural), <= 0.3 in either language (issue 10).
CPU time (not wall time) is measured so other work on the machine counts less; on a shared virtual machine it
still varies by +-15 % between passes, so every voice is timed over --repeat passes and both the best pass (the
cost without interference) and the median pass are printed; the verdict uses the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from comic_narrator.backends.protocols import Delivery
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.voicebank import VoiceBank

TEXTS = {
    "en": [
        "The storm rolled over the hills, and nobody in the village slept that night.",
        "Wait! Don't open that door, the whole tower is going to come down on us.",
        "In the morning, the river had changed its course, and the old bridge stood over dry stones.",
    ],
    "ja": [
        "嵐が丘を越えていき、その夜は村の誰も眠れなかった。",
        "待って！その扉を開けないで、塔が崩れてしまう。",
        "朝になると、川の流れが変わり、古い橋は乾いた石の上に立っていた。",
    ],
}
TARGET_RTF = {("fast", "en"): 0.1, ("fast", "ja"): 0.4, ("natural", "en"): 0.3, ("natural", "ja"): 0.3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed passes over the texts (after one warm-up)")
    parser.add_argument("--tier", choices=("fast", "natural"), help="only this tier's voices")
    parser.add_argument("voices", nargs="*", help="voice ids (default: all bundled voices)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with VoiceBank(VoiceConfig()) as bank:
        infos = [
            v
            for v in bank.voices()
            if (not args.voices or v.id in args.voices) and (not args.tier or v.tier == args.tier)
        ]
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; CPU seconds / audio seconds")
        print(f"{'voice':<18} {'lang':<4} {'engine':<9} {'tier':<7} {'audio_s':>7} {'best':>6} {'median':>6}  target")
        for info in infos:
            texts = TEXTS[info.language]
            bank.synthesize(texts[0], info.id, Delivery())  # warm-up: model load, first-call allocations
            passes: list[float] = []
            audio_s = 0.0
            for _ in range(args.repeat):
                cpu_s = audio_s = 0.0
                for text in texts:
                    start = time.process_time()
                    speech = bank.synthesize(text, info.id, Delivery())
                    cpu_s += time.process_time() - start
                    audio_s += speech.duration_s
                passes.append(cpu_s / audio_s)
            best, median = min(passes), statistics.median(passes)
            target = TARGET_RTF[(info.tier, info.language)]
            verdict = f"<= {target} " + ("ok" if median <= target else "OVER")
            print(
                f"{info.id:<18} {info.language:<4} {info.engine:<9} {info.tier:<7} {audio_s:7.1f} {best:6.3f} "
                f"{median:6.3f}  {verdict}",
                flush=True,
            )


if __name__ == "__main__":
    main()
