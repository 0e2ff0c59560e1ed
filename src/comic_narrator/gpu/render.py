"""Text tables and JSON for plans, doctor reports and stack status (what `comic-narrator gpu` prints)."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from typing import Any

from comic_narrator.gpu.accounting import TenantStatus
from comic_narrator.gpu.doctor import BootReport
from comic_narrator.gpu.plan import Plan
from comic_narrator.gpu.sizes import GIB, format_gib


def _gib(num_bytes: int | None) -> float | None:
    return None if num_bytes is None else round(num_bytes / GIB, 2)


def plan_text(plan: Plan) -> str:
    out = [f"GPU {plan.device.name}: {format_gib(plan.device.total_bytes)} GiB"]
    if plan.device.free_bytes is not None:
        out[0] += f" ({format_gib(plan.device.free_bytes)} GiB free now)"
    out.append(f"{'item':<28}{'GiB':>9}  {'basis':<11} note")
    for line in plan.lines:
        out.append(f"{line.item:<28}{format_gib(line.num_bytes):>9}  {line.basis:<11} {line.note}")
    out.append(
        f"{'total':<28}{format_gib(plan.total_bytes):>9}  of {format_gib(plan.device.total_bytes)} GiB, "
        f"spare {format_gib(plan.spare_bytes)} GiB"
    )
    verdict = "fits" if plan.fits else "DOES NOT FIT"
    how = "given" if plan.utilization_given else "chosen for co-residence"
    out.append(
        f"\n{verdict}: utilisation {plan.gpu_memory_utilization:.2f} ({how}) grants vLLM "
        f"{format_gib(plan.vllm_budget_bytes)} GiB; KV cache {format_gib(plan.kv_cache_bytes)} GiB = "
        f"{plan.kv_cache_tokens:,} tokens; {plan.max_concurrency:.2f} requests of {plan.max_model_len:,} tokens"
    )
    out.append("\nvLLM flags:\n  " + shlex.join(plan.flags))
    out.append(
        "  or, skipping KV profiling (the free-memory check still applies):\n  "
        + shlex.join((*plan.flags, "--kv-cache-memory-bytes", str(plan.kv_cache_memory_bytes)))
    )
    out.append("\nstart order: the LLM first (wait for /health and its KV line), then the TTS")
    if plan.timeshare:
        out.append(
            "time-share instead: vLLM with --enable-sleep-mode (VLLM_SERVER_DEV_MODE=1); "
            "POST /sleep?level=1 before TTS work, /wake_up after (~65 s / ~1.4 s measured for 59 GiB)"
        )
    for prediction in plan.predictions:
        fixes = ", ".join(f.render() for f in prediction.fixes)
        out.append(f"\nvLLM will fail ({prediction.outcome}): {prediction.message}\n  fix: {fixes}")
    if plan.unknowns:
        out.append("\nnot known exactly:\n" + "\n".join(f"  - {u}" for u in plan.unknowns))
    return "\n".join(out)


def plan_json(plan: Plan) -> dict[str, Any]:
    return {
        "gpu": {
            "name": plan.device.name,
            "total_gib": _gib(plan.device.total_bytes),
            "free_gib": _gib(plan.device.free_bytes),
        },
        "budget": [
            {
                "item": line.item.strip(),
                "gib": _gib(line.num_bytes),
                "bytes": line.num_bytes,
                "basis": line.basis,
                "note": line.note,
            }
            for line in plan.lines
        ],
        "total_gib": _gib(plan.total_bytes),
        "fits": plan.fits,
        "boots": plan.boots,
        "gpu_memory_utilization": plan.gpu_memory_utilization,
        "utilization_given": plan.utilization_given,
        "kv_cache_gib": _gib(plan.kv_cache_bytes),
        "kv_cache_bytes": plan.kv_cache_bytes,
        "kv_cache_memory_bytes": plan.kv_cache_memory_bytes,
        "kv_cache_tokens": plan.kv_cache_tokens,
        "max_concurrency": round(plan.max_concurrency, 2),
        "max_model_len": plan.max_model_len,
        "kv_bytes_per_token": plan.layout.kv_bytes_per_token,
        "block_size_tokens": plan.layout.block_size_tokens,
        "mamba_state_gib": _gib(plan.mamba_state_bytes),
        "flags": list(plan.flags),
        "predictions": [
            {"outcome": p.outcome, "message": p.message, "fixes": [f.render() for f in p.fixes]}
            for p in plan.predictions
        ],
        "timeshare": plan.timeshare,
        "unknowns": list(plan.unknowns),
    }


def report_text(report: BootReport) -> str:
    out = [f"vLLM {report.vllm_version or '?'}: {'ready' if report.ready else 'did not become ready'}"]
    figures = [
        ("weights", f"{format_gib(report.weights_bytes)} GiB" if report.weights_bytes is not None else None),
        ("KV cache memory", f"{format_gib(report.kv_cache_bytes)} GiB" if report.kv_cache_bytes is not None else None),
        ("KV cache tokens", f"{report.kv_cache_tokens:,}" if report.kv_cache_tokens is not None else None),
        (
            "max concurrency",
            f"{report.max_concurrency:.2f}x at {report.concurrency_max_model_len:,} tokens"
            if report.max_concurrency is not None and report.concurrency_max_model_len
            else None,
        ),
        (
            "CUDA graphs (estimated)",
            f"{format_gib(report.cudagraph_estimate_bytes)} GiB"
            if report.cudagraph_estimate_bytes is not None
            else None,
        ),
        (
            "CUDA graphs (actual)",
            f"{format_gib(report.cudagraph_actual_bytes)} GiB" if report.cudagraph_actual_bytes is not None else None,
        ),
        ("attention block size", str(report.attention_block_size) if report.attention_block_size else None),
        ("init engine", f"{report.init_engine_s:.2f} s" if report.init_engine_s is not None else None),
    ]
    out += [f"  {name:<24}{value}" for name, value in figures if value is not None]
    for found in report.failures:
        out.append(f"\nFAILURE {found.kind}: {found.line}")
        out.append(f"  cause: {found.cause}")
        if found.fixes:
            out.append("  fix:   " + " ".join(f.render() for f in found.fixes[:1]))
            for extra in found.fixes[1:]:
                out.append(f"  or:    {extra.render()}  ({extra.reason})")
        elif found.unset_env:
            out.append("  fix:   no vLLM flag; the environment chose this")
        else:
            out.append("  fix:   no vLLM flag fixes this")
        if found.unset_env:
            out.append(f"  env:   unset {' '.join(found.unset_env)} (those that are set)")
        if found.advice:
            out.append(f"  also:  {found.advice}")
    if not report.failures and not report.ready:
        if report.error_line:
            out.append(f"\nFAILURE (not one the doctor knows): {report.error_line}")
            out.append("  fix:   none known; the line above is vLLM's own reason")
        else:
            out.append("\nno known failure found in this log; it may be incomplete")
    return "\n".join(out)


def report_json(report: BootReport) -> dict[str, Any]:
    data = asdict(report)
    data["weights_gib"] = _gib(report.weights_bytes)
    data["kv_cache_gib"] = _gib(report.kv_cache_bytes)
    data["ok"] = report.ok
    data["failures"] = [
        {
            "kind": f.kind,
            "line": f.line,
            "cause": f.cause,
            "advice": f.advice,
            "fixes": [fix.render() for fix in f.fixes],
            "unset_env": list(f.unset_env),
        }
        for f in report.failures
    ]
    return data


def status_text(statuses: tuple[TenantStatus, ...]) -> str:
    out = [f"{'tenant':<12}{'role':<6}{'pid':>8}  {'state':<10}{'GPU GiB (NVML)':>15}{'own reserved GiB':>18}"]
    for s in statuses:
        state = "healthy" if s.healthy else ("running" if s.alive else "down")
        state = "asleep" if s.asleep else state
        gpu = format_gib(s.gpu_bytes) if s.gpu_bytes is not None else "n/a"
        own = format_gib(s.reported_reserved_bytes) if s.reported_reserved_bytes is not None else "-"
        out.append(f"{s.name:<12}{s.role:<6}{s.pid:>8}  {state:<10}{gpu:>15}{own:>18}")
    return "\n".join(out)


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, default=str)
