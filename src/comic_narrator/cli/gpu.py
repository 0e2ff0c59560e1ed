"""`comic-narrator gpu plan | doctor | up | down | status`: argv -> the gpu modules; no logic of its own."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from comic_narrator.errors import ComicNarratorError, GpuError
from comic_narrator.gpu import doctor, nvml, render
from comic_narrator.gpu.accounting import tenant_status
from comic_narrator.gpu.estimates import TTS_PROFILES_BYTES
from comic_narrator.gpu.model_info import ModelInfo, Weights, load_model_info
from comic_narrator.gpu.plan import Calibration, DeviceMemory, PlanRequest, TtsTenant, VllmFlags, make_plan
from comic_narrator.gpu.sizes import parse_bytes
from comic_narrator.gpu.stack import Stack, _alive, http_ok
from comic_narrator.gpu.stackfile import load_stack
from comic_narrator.gpu.state import read_state


def _size(text: str) -> int:
    try:
        return parse_bytes(text)
    except GpuError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _images(text: str) -> int:
    """--limit-mm-per-prompt takes vLLM's JSON ('{"image": 2}') or a bare number of images."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"expected JSON such as '{{\"image\": 2}}', got {text!r}") from exc
    if isinstance(value, int):
        return value
    if isinstance(value, dict) and isinstance(value.get("image", 0), int):
        return int(value.get("image", 0))
    raise argparse.ArgumentTypeError(f"expected JSON such as '{{\"image\": 2}}', got {text!r}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="comic-narrator gpu", description="Share one GPU between vLLM and a TTS.")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="budget the GPU and print the vLLM flags that realise it")
    plan.add_argument("--gpu-memory", type=_size, metavar="SIZE", help="GPU size (e.g. 32GiB) instead of asking NVML")
    plan.add_argument("--gpu", type=int, default=0, metavar="N", help="NVML index of the GPU")
    plan.add_argument("--model", type=Path, metavar="DIR", help="model folder: config.json (+ safetensors headers)")
    plan.add_argument("--weights", type=_size, metavar="SIZE", help="weight bytes, overriding the checkpoint/estimate")
    by_hand = plan.add_argument_group("a model given by hand (without --model)")
    by_hand.add_argument("--layers", type=int, metavar="N", help="attention layers")
    by_hand.add_argument("--kv-heads", type=int, metavar="N", help="KV heads per attention layer")
    by_hand.add_argument("--head-dim", type=int, metavar="N")
    by_hand.add_argument("--hidden-size", type=int, default=4096, metavar="N", help="sizes the profiling peak")
    by_hand.add_argument("--vocab-size", type=int, default=128_000, metavar="N", help="sizes the sampler run")
    vllm = plan.add_argument_group("vLLM flags (same names as vLLM's)")
    vllm.add_argument("--gpu-memory-utilization", type=float, metavar="U", help="check this fraction (default: choose)")
    vllm.add_argument("--max-model-len", type=int, metavar="N")
    vllm.add_argument("--max-num-seqs", type=int, metavar="N")
    vllm.add_argument("--max-num-batched-tokens", type=int, metavar="N")
    vllm.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8", "fp8_e4m3", "fp8_e5m2"])
    vllm.add_argument("--enforce-eager", action="store_true")
    vllm.add_argument(
        "--limit-mm-per-prompt", type=_images, dest="images", metavar="JSON", help="e.g. '{\"image\": 2}'"
    )
    vllm.add_argument("--kv-cache-memory-bytes", type=_size, metavar="SIZE")
    tenant = plan.add_argument_group("the TTS tenant and the rest of the GPU")
    tts = tenant.add_mutually_exclusive_group()
    tts.add_argument(
        "--tts-footprint", type=_size, metavar="SIZE", help="measured steady GPU memory of the TTS (no context)"
    )
    tts.add_argument(
        "--tts-profile",
        choices=sorted(TTS_PROFILES_BYTES),
        metavar="NAME",
        help=f"a built-in footprint guess: {', '.join(sorted(TTS_PROFILES_BYTES))}",
    )
    tenant.add_argument("--headroom", type=_size, default=512 * 1024**2, metavar="SIZE", help="kept free (512MiB)")
    tenant.add_argument(
        "--other-memory", type=_size, default=0, metavar="SIZE", help="held by processes outside the stack"
    )
    plan.add_argument("--calibrate", type=Path, metavar="LOGFILE", help="learn real figures from a vLLM boot log")
    plan.add_argument("--json", action="store_true", help="the plan as JSON")
    doc = sub.add_parser("doctor", help="read a vLLM boot log: figures, failures and the flag that fixes each")
    doc.add_argument("logfile", type=Path)
    doc.add_argument("--json", action="store_true")
    for name, text in (("up", "start the stack"), ("down", "stop the stack"), ("status", "show each tenant")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("stack", type=Path, nargs="?", default=Path("stack.yaml"), help="stack file (YAML)")
        cmd.add_argument("--gpu-memory", type=_size, metavar="SIZE", help="GPU size when NVML is absent")
        cmd.add_argument("--json", action="store_true")
    return parser


def _model(args: argparse.Namespace) -> ModelInfo:
    if args.model is not None:
        info = load_model_info(args.model)
    elif args.layers and args.kv_heads and args.head_dim and args.weights:
        info = ModelInfo(
            name="given",
            architecture="given",
            model_type="given",
            hidden_size=args.hidden_size,
            num_hidden_layers=args.layers,
            attention_layers=args.layers,
            num_attention_heads=args.kv_heads,
            num_kv_heads=args.kv_heads,
            head_dim=args.head_dim,
            vocab_size=args.vocab_size,
            max_position_embeddings=args.max_model_len or 8192,
            dtype="bfloat16",
            weights=Weights(args.weights, "given"),
        )
    else:
        raise GpuError("say which model: --model DIR, or --layers, --kv-heads, --head-dim and --weights")
    if args.weights is not None:
        info = info.with_weights(Weights(args.weights, "given"))
    return info


def _device(args: argparse.Namespace) -> DeviceMemory:
    if args.gpu_memory is not None:
        return DeviceMemory(total_bytes=args.gpu_memory, name="(size given)", other_bytes=args.other_memory)
    snap = nvml.probe(args.gpu)
    return DeviceMemory(snap.total_bytes, snap.name, snap.free_bytes, args.other_memory)


def _calibration(path: Path) -> Calibration:
    try:
        report = doctor.diagnose(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise GpuError(f"cannot read the log ({exc.strerror})", path=path) from exc
    if report.weights_bytes is None or report.kv_cache_bytes is None:
        raise GpuError("this log has no 'Model loading took' / 'Available KV cache memory' lines", path=path)
    return Calibration(
        source=path.name,
        weights_bytes=report.weights_bytes,
        kv_cache_bytes=report.kv_cache_bytes,
        cudagraph_bytes=report.cudagraph_estimate_bytes,
        gpu_memory_utilization=report.args.gpu_memory_utilization or 0.92,
        max_num_batched_tokens=report.args.max_num_batched_tokens,
        max_num_seqs=report.args.max_num_seqs,
        encoder_budget_tokens=report.encoder_budget_tokens,
        encoder_items=report.encoder_items,
    )


def _plan(args: argparse.Namespace) -> int:
    tts = None
    if args.tts_footprint is not None:
        tts = TtsTenant("tts", args.tts_footprint, "measured")
    elif args.tts_profile is not None:
        tts = TtsTenant(args.tts_profile, TTS_PROFILES_BYTES[args.tts_profile], f"profile {args.tts_profile}")
        if tts.footprint_bytes == 0:
            tts = replace(tts, context_bytes=0)
    flags = VllmFlags(
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        kv_cache_dtype=args.kv_cache_dtype,
        enforce_eager=args.enforce_eager,
        limit_images_per_prompt=args.images,
        kv_cache_memory_bytes=args.kv_cache_memory_bytes,
    )
    calibration = _calibration(args.calibrate) if args.calibrate else None
    request = PlanRequest(_device(args), _model(args), flags, tts, args.headroom, calibration)
    result = make_plan(request)
    print(render.dumps(render.plan_json(result)) if args.json else render.plan_text(result))
    return 0 if result.fits and result.boots else 1


def _doctor(args: argparse.Namespace) -> int:
    try:
        text = args.logfile.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GpuError(f"cannot read the log ({exc.strerror})", path=args.logfile) from exc
    report = doctor.diagnose(text)
    print(render.dumps(render.report_json(report)) if args.json else render.report_text(report))
    died = not report.ready and report.error_line is not None  # a failure the doctor does not know is still one
    return 1 if report.failures or died else 0


def _stack(args: argparse.Namespace) -> int:
    stack_file = load_stack(args.stack)
    if args.gpu_memory is not None:
        stack_file = replace(stack_file, gpu_memory_bytes=args.gpu_memory)
    stack = Stack(stack_file, nvml.probe, lambda line: print(line, file=sys.stderr, flush=True))
    if args.command == "up":
        started = stack.up()
        print(render.dumps([t.__dict__ for t in started.tenants]) if args.json else "stack is up")
        return 0
    if args.command == "down":
        said = stack.down()
        print(render.dumps(list(said)) if args.json else "\n".join(said))
        return 0
    state = read_state(stack_file.state_dir)
    if state is None:
        print("nothing is up (no state file)")
        return 1
    try:
        snap = stack.snapshot()
    except GpuError as exc:  # status still reports health and each tenant's own figures without NVML
        print(f"note: {exc}", file=sys.stderr)
        snap = None
    statuses = tuple(
        tenant_status(t, snap, t.pid > 0 and _alive(t.pid), http_ok(t.url + t.health_path)) for t in state.tenants
    )
    print(render.dumps([s.__dict__ for s in statuses]) if args.json else render.status_text(statuses))
    return 0 if all(s.healthy for s in statuses) else 1


def main(argv: list[str]) -> int:
    """Entry point for `comic-narrator gpu ARGS...` (argv excludes 'gpu')."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "plan":
            return _plan(args)
        if args.command == "doctor":
            return _doctor(args)
        return _stack(args)
    except ComicNarratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
