"""The pure memory planner: one GPU, one vLLM server and one TTS tenant -> a budget, flags and predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from comic_narrator.errors import GpuError
from comic_narrator.gpu import estimates
from comic_narrator.gpu.flags import (
    FlagChange,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    floor_utilization,
    requested_bytes,
    utilization_within,
)
from comic_narrator.gpu.kv import KvLayout, kv_layout
from comic_narrator.gpu.model_info import ModelInfo
from comic_narrator.gpu.sizes import MIB, format_gib

CUDA_CONTEXT_BYTES = 512 * MIB
"""A process's CUDA context, outside vLLM's budget (measured on the H200: 518 MiB for a PyTorch tenant)."""

Basis = Literal["checkpoint", "estimate", "calibrated", "given", "measured", "derived"]
Outcome = Literal["boots", "free-memory", "no-kv-memory", "max-model-len", "mamba-blocks"]


@dataclass(frozen=True)
class DeviceMemory:
    """The GPU as the planner sees it."""

    total_bytes: int
    name: str = "GPU"
    free_bytes: int | None = None
    """Device-wide free memory now (NVML); None when the size was given by hand."""
    other_bytes: int = 0
    """Memory held by processes outside this stack that will stay (a desktop, another job)."""


@dataclass(frozen=True)
class VllmFlags:
    """vLLM's own flags (None = vLLM's default for this GPU)."""

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str = "auto"
    enforce_eager: bool = False
    limit_images_per_prompt: int | None = None
    kv_cache_memory_bytes: int | None = None
    block_size: int = 16


@dataclass(frozen=True)
class TtsTenant:
    """The TTS server sharing the GPU: its steady footprint (weights + working set) beside its CUDA context."""

    name: str
    footprint_bytes: int
    source: str
    """'measured', or 'profile NAME' for a built-in guess."""
    context_bytes: int = CUDA_CONTEXT_BYTES


@dataclass(frozen=True)
class Calibration:
    """Real figures from a vLLM boot log of the same model (see doctor.diagnose)."""

    source: str
    weights_bytes: int | None = None
    kv_cache_bytes: int | None = None
    cudagraph_bytes: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    encoder_budget_tokens: int | None = None
    """The boot's image encoder profiling pass: its token budget and max-size items (both 0 when skipped; None
    when the log does not say, and the plan assumes the pass it would predict for that boot)."""
    encoder_items: int | None = None


@dataclass(frozen=True)
class PlanRequest:
    device: DeviceMemory
    model: ModelInfo
    flags: VllmFlags = field(default_factory=VllmFlags)
    tts: TtsTenant | None = None
    headroom_bytes: int = 512 * MIB
    calibration: Calibration | None = None
    context_bytes: int = CUDA_CONTEXT_BYTES


@dataclass(frozen=True)
class BudgetLine:
    item: str
    num_bytes: int
    basis: Basis
    note: str = ""


@dataclass(frozen=True)
class Prediction:
    """What vLLM will do with these flags, in its own words, and what fixes it."""

    outcome: Outcome
    message: str
    fixes: tuple[FlagChange, ...] = ()


@dataclass(frozen=True)
class Plan:
    device: DeviceMemory
    lines: tuple[BudgetLine, ...]
    gpu_memory_utilization: float
    utilization_given: bool
    vllm_budget_bytes: int
    kv_cache_bytes: int
    kv_cache_tokens: int
    max_concurrency: float
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    mamba_state_bytes: int
    total_bytes: int
    fits: bool
    flags: tuple[str, ...]
    kv_cache_memory_bytes: int
    predictions: tuple[Prediction, ...]
    layout: KvLayout
    timeshare: bool
    unknowns: tuple[str, ...]

    @property
    def spare_bytes(self) -> int:
        return self.device.total_bytes - self.total_bytes

    @property
    def boots(self) -> bool:
        return not self.predictions


def _weights(request: PlanRequest) -> BudgetLine:
    cal = request.calibration
    if cal is not None and cal.weights_bytes is not None:
        return BudgetLine("weights", cal.weights_bytes, "calibrated", f"'Model loading took' in {cal.source}")
    weights = request.model.weights
    bases: dict[str, Basis] = {"safetensors": "checkpoint", "estimate": "estimate", "given": "given"}
    basis = bases.get(weights.source, "calibrated")
    note = f"{weights.tensor_count} tensors, {'/'.join(weights.dtypes)}" if weights.tensor_count else ""
    return BudgetLine("weights", weights.total_bytes, basis, note)


def _profile_peak(request: PlanRequest, batched: int, seqs: int, weights_bytes: int, total: int) -> BudgetLine:
    cal = request.calibration
    if cal is not None and cal.kv_cache_bytes is not None and cal.gpu_memory_utilization is not None:
        measured = (
            requested_bytes(total, cal.gpu_memory_utilization)
            - weights_bytes
            - cal.kv_cache_bytes
            - (cal.cudagraph_bytes or 0)
        )
        # The sampler's part follows max_num_seqs, the activations follow the batched tokens, and the image
        # encoder's pass (its own line) follows the images: each is taken out of the measured peak.
        cal_batched = cal.max_num_batched_tokens or batched
        cal_sampler = estimates.sampler_bytes(request.model, cal.max_num_seqs or seqs, cal_batched)
        measured -= _calibration_encoder_bytes(request.model, cal, cal_batched, cal.max_num_seqs or seqs)
        scaled = estimates.rescale_profile_peak(measured - cal_sampler, cal_batched, batched)
        scaled += estimates.sampler_bytes(request.model, seqs, batched)
        return BudgetLine(
            "profiling peak", scaled, "calibrated", f"activations + non-torch at {batched} batched tokens"
        )
    peak = estimates.profile_peak_bytes(request.model, batched, seqs)
    return BudgetLine("profiling peak", peak, "estimate", f"dummy forward of {batched} tokens (+-30%)")


def _calibration_encoder_bytes(model: ModelInfo, cal: Calibration, cal_batched: int, cal_seqs: int) -> int:
    """The image encoder's share of a calibration boot's profiling peak (estimated from what that boot profiled)."""
    vision = model.vision
    if vision is None:
        return 0
    if cal.encoder_items is None or cal.encoder_budget_tokens is None:
        return estimates.encoder_peak_bytes(vision, estimates.profiled_images(model, None, cal_batched, cal_seqs))
    if cal.encoder_items == 0:
        return 0
    # vLLM profiles budget // per-item max-size items: their tokens fill the budget less a remainder.
    tokens = cal.encoder_items * (cal.encoder_budget_tokens // cal.encoder_items)
    return estimates.encoder_patch_bytes(vision, tokens * vision.spatial_merge_size**2)


def _graphs(request: PlanRequest, seqs: int) -> BudgetLine:
    if request.flags.enforce_eager:
        return BudgetLine("CUDA graphs", 0, "given", "--enforce-eager")
    cal = request.calibration
    if cal is not None and cal.cudagraph_bytes is not None:
        return BudgetLine("CUDA graphs", cal.cudagraph_bytes, "calibrated", "'Estimated CUDA graph memory'")
    graphs = estimates.cudagraph_count(seqs, hybrid=request.model.mamba is not None)
    return BudgetLine(
        "CUDA graphs", estimates.cudagraph_bytes(graphs), "estimate", f"{graphs} graphs; --enforce-eager: 0"
    )


def _fixed_lines(request: PlanRequest, batched: int, seqs: int) -> tuple[BudgetLine, ...]:
    weights = _weights(request)
    lines = [weights, _profile_peak(request, batched, seqs, weights.num_bytes, request.device.total_bytes)]
    vision = request.model.vision
    if vision is not None:
        images = estimates.profiled_images(request.model, request.flags.limit_images_per_prompt, batched, seqs)
        encoder = estimates.encoder_peak_bytes(vision, images)
        lines.append(BudgetLine("image encoder profiling", encoder, "estimate", f"{images} max-size image(s)"))
    lines.append(_graphs(request, seqs))
    return tuple(lines)


def _coresident_utilization(request: PlanRequest) -> float:
    tts = request.tts
    tenant = (tts.footprint_bytes + tts.context_bytes) if tts else 0
    room = (
        request.device.total_bytes
        - request.context_bytes
        - tenant
        - request.headroom_bytes
        - request.device.other_bytes
    )
    return floor_utilization(max(room, 0) / request.device.total_bytes)


def make_plan(request: PlanRequest) -> Plan:
    """Size every part of the GPU for this stack, choose or check the utilisation, and predict vLLM's boot."""
    device, model, flags = request.device, request.model, request.flags
    if device.total_bytes <= 0:
        raise GpuError("the GPU's memory size must be positive (--gpu-memory 32GiB)")
    batched = flags.max_num_batched_tokens or default_max_num_batched_tokens(device.total_bytes, device.name)
    seqs = flags.max_num_seqs or default_max_num_seqs(device.total_bytes, device.name)
    layout = kv_layout(model, flags.kv_cache_dtype, flags.block_size)
    fixed = _fixed_lines(request, batched, seqs)
    non_kv = sum(line.num_bytes for line in fixed)
    given = flags.gpu_memory_utilization is not None
    utilization = (
        flags.gpu_memory_utilization if flags.gpu_memory_utilization is not None else _coresident_utilization(request)
    )
    budget = requested_bytes(device.total_bytes, utilization)
    kv_bytes = flags.kv_cache_memory_bytes if flags.kv_cache_memory_bytes is not None else budget - non_kv
    unknowns: list[str] = list(model.notes)
    max_len = flags.max_model_len or model.max_position_embeddings
    if flags.max_model_len is None and layout.bytes_for_one_request(max_len) > kv_bytes > 0:
        fitting = layout.estimated_max_model_len(kv_bytes, max_len)
        max_len = max(fitting // 1024 * 1024, min(fitting, 1024))
        unknowns.append(f"max model length lowered from {model.max_position_embeddings:,} to fit the KV pool")
    tokens = layout.tokens(kv_bytes) if kv_bytes > 0 else 0
    concurrency = layout.max_concurrency(kv_bytes, max_len) if kv_bytes > 0 else 0.0
    mamba_bytes = layout.mamba_state_bytes(seqs) if model.mamba is not None else 0
    predictions = _predict(request, layout, utilization, budget, kv_bytes, max_len, seqs, batched)
    kv_line = BudgetLine(
        "KV cache", max(kv_bytes, 0), "derived", f"{tokens:,} tokens, {concurrency:.2f}x at {max_len:,}"
    )
    mamba_lines: tuple[BudgetLine, ...] = ()
    if model.mamba is not None:
        # Inside the KV pool (not added to the total): one Mamba block per running sequence.
        mamba_lines = (BudgetLine("  of which Mamba state", mamba_bytes, "derived", f"{seqs} seqs, not in total"),)
        unknowns.append("hybrid model: --max-num-seqs is set explicitly (each sequence holds a Mamba block)")
    counted = (
        BudgetLine("CUDA context (vLLM)", request.context_bytes, "measured", "outside vLLM's budget"),
        *fixed,
        kv_line,
        *_tts_lines(request),
        *((BudgetLine("other processes", device.other_bytes, "measured"),) if device.other_bytes else ()),
        BudgetLine("headroom", request.headroom_bytes, "given"),
    )
    total = sum(line.num_bytes for line in counted)
    kv_index = counted.index(kv_line) + 1
    lines = (*counted[:kv_index], *mamba_lines, *counted[kv_index:])
    fits = total <= device.total_bytes and kv_bytes > 0 and layout.bytes_for_one_request(max_len) <= kv_bytes
    out_flags = _flags(utilization, max_len, seqs, batched, flags)
    if flags.kv_cache_memory_bytes is None and not given and not fits:
        unknowns.append("the LLM and the TTS cannot co-reside with these settings: time-share (vLLM sleep mode)")
    return Plan(
        device=device,
        lines=lines,
        gpu_memory_utilization=utilization,
        utilization_given=given,
        vllm_budget_bytes=budget,
        kv_cache_bytes=max(kv_bytes, 0),
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        max_model_len=max_len,
        max_num_seqs=seqs,
        max_num_batched_tokens=batched,
        mamba_state_bytes=mamba_bytes,
        total_bytes=total,
        fits=fits,
        flags=out_flags,
        kv_cache_memory_bytes=max(kv_bytes, 0),
        predictions=predictions,
        layout=layout,
        timeshare=not fits and not given,
        unknowns=tuple(unknowns),
    )


def _tts_lines(request: PlanRequest) -> tuple[BudgetLine, ...]:
    tts = request.tts
    if tts is None:
        return ()
    basis: Basis = "measured" if tts.source == "measured" else "estimate"
    return (
        BudgetLine(f"CUDA context ({tts.name})", tts.context_bytes, "measured"),
        BudgetLine(f"TTS {tts.name}", tts.footprint_bytes, basis, tts.source),
    )


def _flags(utilization: float, max_len: int, seqs: int, batched: int, flags: VllmFlags) -> tuple[str, ...]:
    out = [
        "--gpu-memory-utilization",
        f"{utilization:.2f}",
        "--max-model-len",
        str(max_len),
        "--max-num-seqs",
        str(seqs),
        "--max-num-batched-tokens",
        str(batched),
    ]
    if flags.kv_cache_dtype != "auto":
        out += ["--kv-cache-dtype", flags.kv_cache_dtype]
    if flags.enforce_eager:
        out.append("--enforce-eager")
    if flags.limit_images_per_prompt is not None:
        out += ["--limit-mm-per-prompt", f'{{"image": {flags.limit_images_per_prompt}}}']
    return tuple(out)


def _predict(
    request: PlanRequest,
    layout: KvLayout,
    utilization: float,
    budget: int,
    kv_bytes: int,
    max_len: int,
    seqs: int,
    batched: int,
) -> tuple[Prediction, ...]:
    device = request.device
    found: list[Prediction] = []
    if device.free_bytes is not None:
        seen = device.free_bytes - request.context_bytes
        if seen < budget:
            fitting = utilization_within(device.total_bytes, max(seen, 0))
            message = (
                f"Free memory on device ({format_gib(seen)}/{format_gib(device.total_bytes)} GiB) on startup is less "
                f"than desired GPU memory utilization ({utilization:g}, {format_gib(budget)} GiB)"
            )
            fix = FlagChange("--gpu-memory-utilization", f"{fitting:.2f}", "fits what is free now")
            found.append(Prediction("free-memory", message, (fix,)))
    if kv_bytes <= 0:
        # half of what vLLM profiles with (the flag, else its default for this GPU: 8192 on an H100/H200)
        fixes = [FlagChange("--max-num-batched-tokens", str(max(512, batched // 2)), "smaller peak")]
        if not request.flags.enforce_eager:
            fixes.append(FlagChange("--enforce-eager", None, "no CUDA graph memory"))
        found.append(Prediction("no-kv-memory", "No available memory for the cache blocks", tuple(fixes)))
        return tuple(found)
    needed = layout.bytes_for_one_request(max_len)
    if needed > kv_bytes:
        fitting = layout.estimated_max_model_len(kv_bytes, max_len)
        message = (
            f"To serve at least one request with the models's max seq len ({max_len}), ({format_gib(needed)} GiB KV "
            f"cache is needed, which is larger than the available KV cache memory ({format_gib(kv_bytes)} GiB). "
            f"Based on the available memory, the estimated maximum model length is {fitting}."
        )
        found.append(Prediction("max-model-len", message, (FlagChange("--max-model-len", str(fitting), "fits"),)))
    blocks = layout.num_blocks(kv_bytes)
    if request.model.mamba is not None and not request.flags.enforce_eager and seqs > blocks:
        message = f"max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks})"
        found.append(Prediction("mamba-blocks", message, (FlagChange("--max-num-seqs", str(blocks), "fits"),)))
    return tuple(found)
