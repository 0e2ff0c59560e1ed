"""Print the planner's figures against every real vLLM 0.20.0 boot log in tests/data/gpu (H200).

usage: python benchmarks/gpu_plan_accuracy.py
For each boot: the KV pool, tokens and concurrency vLLM printed, the uncalibrated plan (estimates only) and the
plan calibrated on b-bt4096.log (another boot of the same model). Then the three Qwen2-VL boots (the image
encoder's pass for one 16,384-token image, none, four 2,048-token images), each planned uncalibrated and
calibrated on each of the other two.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from comic_narrator.gpu.doctor import BootReport, diagnose
from comic_narrator.gpu.model_info import model_info_from_config
from comic_narrator.gpu.plan import Calibration, DeviceMemory, PlanRequest, VllmFlags, make_plan
from comic_narrator.gpu.sizes import GIB

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "gpu"
H200 = DeviceMemory(150_109_880_320, "NVIDIA H200")
LOGS = [
    "logs/b-bt4096.log",
    "logs/g-graphs.log",
    "device-run/retry-vllm-attempt2.log",
    "device-run/fail-mamba.log",
    "device-run/fail-maxlen.log",
]


def _flags(report: BootReport) -> VllmFlags:
    a = report.args
    return VllmFlags(
        a.gpu_memory_utilization, a.max_model_len, a.max_num_seqs, a.max_num_batched_tokens,
        enforce_eager=a.enforce_eager,
    )  # fmt: skip


def main() -> int:
    model = model_info_from_config(json.loads((DATA / "configs" / "nemotron-3-nano-30b-a3b.config.json").read_text()))
    base = diagnose((DATA / "logs" / "b-bt4096.log").read_text())
    calibration = Calibration(
        "b-bt4096.log", base.weights_bytes, base.kv_cache_bytes, None, base.args.gpu_memory_utilization,
        base.args.max_num_batched_tokens, base.args.max_num_seqs,
    )  # fmt: skip
    print(
        f"{'boot':<38}{'U':>5}{'real KV GiB':>13}{'tokens':>10}{'est KV':>8}{'tokens':>10}{'cal KV':>8}{'tokens':>10}"
    )
    for name in LOGS:
        report = diagnose((DATA / name).read_text())
        flags = _flags(report)
        estimated = make_plan(PlanRequest(H200, model, flags))
        calibrated = make_plan(PlanRequest(H200, model, flags, calibration=calibration))
        real_kv = f"{report.kv_cache_bytes / GIB:.2f}" if report.kv_cache_bytes is not None else "-"
        outcome = report.failures[0].kind if report.failures else ""
        print(
            f"{name:<38}{flags.gpu_memory_utilization or 0:>5.2f}{real_kv:>13}{report.kv_cache_tokens or 0:>10,}"
            f"{estimated.kv_cache_bytes / GIB:>8.2f}{estimated.kv_cache_tokens:>10,}"
            f"{calibrated.kv_cache_bytes / GIB:>8.2f}{calibrated.kv_cache_tokens:>10,}  {outcome}"
            + (f" (predicted: {', '.join(p.outcome for p in estimated.predictions)})" if outcome else "")
        )
    print()
    _vision_boots()
    return 0


def _calibration(name: str, r: BootReport) -> Calibration:
    return Calibration(
        name, r.weights_bytes, r.kv_cache_bytes, None, r.args.gpu_memory_utilization,
        r.args.max_num_batched_tokens, r.args.max_num_seqs, r.encoder_budget_tokens, r.encoder_items,
    )  # fmt: skip


QWEN2VL_BOOTS = {"qwen2vl-serve.log": 12_845_056, "qwen2vl-skip-mm.log": 12_845_056, "qwen2vl-pages2k.log": 1_605_632}
"""Each boot's largest image in pixels (the processor's default, or --mm-processor-kwargs max_pixels)."""


def _vision_boots() -> None:
    base = model_info_from_config(json.loads((DATA / "configs" / "qwen2-vl-tiny.config.json").read_text()))
    assert base.vision is not None
    reports = {name: diagnose((DATA / "logs" / name).read_text()) for name in QWEN2VL_BOOTS}
    calibrations = {name: _calibration(name, r) for name, r in reports.items()}
    print(f"{'boot':<24}{'real KV GiB':>12}{'est KV':>8}  calibrated on another boot")
    for name, report in reports.items():
        model = replace(base, vision=replace(base.vision, max_patches_per_image=QWEN2VL_BOOTS[name] // 196))
        flags = replace(_flags(report), limit_images_per_prompt=1)
        if name == "qwen2vl-skip-mm.log":
            continue  # --skip-mm-profiling has no plan of its own: it serves as a calibration only
        estimated = make_plan(PlanRequest(H200, model, flags))
        others = [
            f"{other}: {make_plan(PlanRequest(H200, model, flags, calibration=cal)).kv_cache_bytes / GIB:.2f}"
            for other, cal in calibrations.items()
            if other != name
        ]
        real = (report.kv_cache_bytes or 0) / GIB
        print(f"{name:<24}{real:>12.2f}{estimated.kv_cache_bytes / GIB:>8.2f}  {'; '.join(others)}")


if __name__ == "__main__":
    raise SystemExit(main())
