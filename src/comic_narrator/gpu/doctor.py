"""The vLLM boot-log doctor: read the memory figures and recognise each known boot failure with its fixing flag.

Wording comes from vLLM 0.20.0's sources (vllm/v1/worker/utils.py request_memory, vllm/v1/core/kv_cache_utils.py,
vllm/config/compilation.py, vllm/config/vllm.py, vllm/platforms/cuda.py) and older releases where they differ
(0.10-0.13 for the free-memory check); quantisation and MoE kernel failures are kernel_failures.py's. Every line
is first reduced to vLLM's message (logtext.py), so Docker, journald, colour and process prefixes do not matter.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from comic_narrator.gpu.diagnosis import Diagnosis as Diagnosis
from comic_narrator.gpu.diagnosis import FailureKind as FailureKind
from comic_narrator.gpu.diagnosis import VllmArgs as VllmArgs
from comic_narrator.gpu.flags import FlagChange, floor_utilization, utilization_within
from comic_narrator.gpu.kernel_failures import kernel_failures
from comic_narrator.gpu.logtext import messages, root_error
from comic_narrator.gpu.sizes import gib_to_bytes


@dataclass(frozen=True)
class BootReport:
    """Everything the doctor read from one vLLM log."""

    vllm_version: str | None
    args: VllmArgs
    ready: bool
    weights_bytes: int | None = None
    kv_cache_bytes: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    concurrency_max_model_len: int | None = None
    cudagraph_estimate_bytes: int | None = None
    cudagraph_actual_bytes: int | None = None
    attention_block_size: int | None = None
    device_free_bytes: int | None = None
    device_total_bytes: int | None = None
    init_engine_s: float | None = None
    encoder_budget_tokens: int | None = None
    """The encoder cache budget of the image encoder's profiling pass (0 when vLLM skipped that pass)."""
    encoder_items: int | None = None
    """Max-size images (or videos) in that pass (0 when skipped; None: no such line, e.g. a text model)."""
    failures: tuple[Diagnosis, ...] = ()
    error_line: str | None = None
    """The line that names why a boot that did not become ready died (known failure or not)."""

    @property
    def ok(self) -> bool:
        return self.ready and not self.failures


_NUM = r"(-?[\d,]+(?:\.\d+)?)"

FIX_MARGIN_BYTES = 512 * 1024**2
"""Left free below a lowered utilisation: vLLM's non-torch allocations and the next tenant need some room."""


def _f(text: str) -> float:
    return float(text.replace(",", ""))


def _search(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text)


def _last(pattern: str, text: str) -> re.Match[str] | None:
    matches = list(re.finditer(pattern, text))
    return matches[-1] if matches else None


def _line_of(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end >= 0 else len(text)].strip()


_OBJECT_REPR = re.compile(r"\b[A-Za-z_][\w.]*\((?:[^()'\"]|'[^']*'|\"[^\"]*\")*\)")


def _parse_args(text: str) -> VllmArgs:
    match = _search(r"non-default args: (\{.*\})", text)
    if match is None:
        return VllmArgs()
    literal = match.group(1)
    # Config objects are printed as their repr, e.g. StructuredOutputsConfig(backend='xgrammar', ...): each
    # becomes a string, innermost first, so the flags around it still parse.
    while (reduced := _OBJECT_REPR.sub("'<object>'", literal)) != literal:
        literal = reduced
    try:
        raw = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return VllmArgs()
    if not isinstance(raw, dict):
        return VllmArgs()

    def num(key: str) -> float | None:
        value = raw.get(key)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def integer(key: str) -> int | None:
        value = num(key)
        return int(value) if value is not None else None

    def string(key: str) -> str | None:
        value = raw.get(key)
        return str(value) if value is not None else None

    return VllmArgs(
        gpu_memory_utilization=num("gpu_memory_utilization"),
        max_model_len=integer("max_model_len"),
        max_num_seqs=integer("max_num_seqs"),
        max_num_batched_tokens=integer("max_num_batched_tokens"),
        kv_cache_dtype=string("kv_cache_dtype"),
        enforce_eager=bool(raw.get("enforce_eager", False)),
        enable_sleep_mode=bool(raw.get("enable_sleep_mode", False)),
        quantization=string("quantization"),
        moe_backend=string("moe_backend"),
        enable_eplb=bool(raw.get("enable_eplb", False)),
        enable_expert_parallel=bool(raw.get("enable_expert_parallel", False)),
        enable_lora=bool(raw.get("enable_lora", False)),
    )


_FREE_MEMORY = re.compile(
    r"Free memory on device(?: (?P<device>[^\s(]+))? \((?P<free>" + _NUM + r")/(?P<total>" + _NUM + r") GiB\)"
    r"(?: on startup)? is less than desired(?: GPU memory utilization)? \((?:(?P<util>" + _NUM + r"), )?"
    r"(?P<want>" + _NUM + r") GiB\)"
)
"""vLLM's start-up check: with the device name since 0.14 (vllm/v1/worker/utils.py), without it in 0.10-0.13
(vllm/v1/worker/gpu_worker.py), and the short form users paste, which drops "on startup" and the utilisation."""


def _free_memory(text: str, args: VllmArgs) -> tuple[Diagnosis | None, int | None, int | None]:
    match = _FREE_MEMORY.search(text)
    if match is None:
        return None, None, None
    free_gib, total_gib, want_gib = _f(match["free"]), _f(match["total"]), _f(match["want"])
    free, total = gib_to_bytes(free_gib), gib_to_bytes(total_gib)
    wanted = _f(match["util"]) if match["util"] else args.gpu_memory_utilization
    fitting = utilization_within(total, free - FIX_MARGIN_BYTES)
    asked = f"utilisation {wanted:g} asks for" if wanted is not None else "the utilisation asks for"
    cause = (
        f"other processes hold {total_gib - free_gib:.2f} GiB of {match['total']} GiB, so only {match['free']} GiB "
        f"is free; {asked} {match['want']} GiB of free memory at start-up (a fraction of TOTAL memory, checked "
        f"against device-wide free memory: {want_gib / total_gib:.2f} x {match['total']} GiB)"
    )
    fix = FlagChange("--gpu-memory-utilization", f"{fitting:.2f}", f"requests {fitting * total_gib:.2f} GiB")
    advice = (
        "better: free the other tenant's memory first (a PyTorch tenant's cached blocks return to the driver only "
        "after torch.cuda.empty_cache(); `comic-narrator gpu up` asks the TTS tenant to release), or start vLLM "
        "before the TTS tenant"
    )
    return Diagnosis("free-memory", _line_of(text, match), cause, (fix,), advice), free, total


def _no_kv(text: str, args: VllmArgs, kv_bytes: int | None) -> Diagnosis | None:
    match = _search(r"No available memory for the cache blocks", text)
    if match is None and (kv_bytes is None or kv_bytes > 0):
        return None
    found = match or _search(r"Available KV cache memory: " + _NUM + " GiB", text)
    assert found is not None
    fixes: list[FlagChange] = []
    batched = args.max_num_batched_tokens
    new_batched = max(512, (batched // 2) if batched else 1024)
    fixes.append(
        FlagChange(
            "--max-num-batched-tokens",
            str(new_batched),
            "the profiling run's activation peak is sized by this and stays reserved",
        )
    )
    if not args.enforce_eager:
        fixes.append(FlagChange("--enforce-eager", None, "no CUDA graph memory"))
    util = args.gpu_memory_utilization
    if util is not None and util < 0.95:
        fixes.append(
            FlagChange("--gpu-memory-utilization", f"{min(util + 0.05, 0.95):.2f}", "a larger budget, if free")
        )
    cause = "weights + profiling peak (+ CUDA graphs) use the whole budget that utilisation grants: nothing left for KV"
    return Diagnosis("no-kv-memory", _line_of(text, found), cause, tuple(fixes), "or use a smaller/quantised model")


def _max_model_len(text: str) -> Diagnosis | None:
    match = _search(
        r"max seq len \(" + _NUM + r"\), \(" + _NUM + r" GiB KV cache is needed, which is larger than the "
        r"available KV cache memory \(" + _NUM + r" GiB\)\.(?: Based on the available memory, the estimated "
        r"maximum model length is " + _NUM + r"\.)?",
        text,
    )
    old = _search(
        r"The model's max seq len \(" + _NUM + r"\) is larger than the maximum number of tokens that can be "
        r"stored in KV cache \(" + _NUM + r"\)",
        text,
    )
    if match is not None:
        wanted, needed, have = int(_f(match.group(1))), match.group(2), match.group(3)
        fitting = int(_f(match.group(4))) if match.group(4) else 0
        cause = f"one request of {wanted:,} tokens needs {needed} GiB of KV cache; only {have} GiB is available"
        found = match
    elif old is not None:
        wanted, fitting = int(_f(old.group(1))), int(_f(old.group(2)))
        cause = f"one request of {wanted:,} tokens does not fit in a KV cache of {fitting:,} tokens"
        found = old
    else:
        return None
    fixes = (FlagChange("--max-model-len", str(fitting), "the longest context that fits"),) if fitting else ()
    return Diagnosis(
        "max-model-len", _line_of(text, found), cause, fixes, "or raise --gpu-memory-utilization if memory is free"
    )


def _mamba(text: str) -> Diagnosis | None:
    match = _search(r"max_num_seqs \(" + _NUM + r"\) exceeds available Mamba cache blocks \(" + _NUM + r"\)", text)
    if match is None:
        return None
    blocks = int(_f(match.group(2)))
    cause = (
        f"each running sequence of a hybrid Mamba model holds one Mamba block; the pool has {blocks} "
        f"but max_num_seqs is {int(_f(match.group(1)))}"
    )
    fix = FlagChange("--max-num-seqs", str(blocks), "one Mamba state block per running sequence")
    return Diagnosis("mamba-blocks", _line_of(text, match), cause, (fix,), "or raise --gpu-memory-utilization")


def _backend(text: str) -> Diagnosis | None:
    bf16 = _search(r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0", text)
    if bf16 is not None:
        fix = FlagChange("--dtype", "half", "this GPU has no bf16 arithmetic")
        return Diagnosis("bf16-unsupported", _line_of(text, bf16), "the GPU predates bf16 (before Ampere)", (fix,))
    backend = _search(r"No valid attention backend found for .*?Reasons: (.*)", text)
    if backend is not None:
        reasons = backend.group(1)
        fixes: tuple[FlagChange, ...] = ()
        if "kv_cache_dtype" in reasons:
            fixes = (FlagChange("--kv-cache-dtype", "auto", "no attention backend here takes this KV dtype"),)
        cause = f"no attention backend accepts this configuration on this GPU ({reasons[:200]})"
        return Diagnosis("attention-backend", _line_of(text, backend), cause, fixes)
    return None


def _oom(text: str, args: VllmArgs) -> Diagnosis | None:
    match = _search(r"CUDA out of memory\. Tried to allocate " + _NUM + r" ([GM]iB)", text)
    if match is None:
        return None
    fixes: list[FlagChange] = []
    if not args.enforce_eager and _search(r"Capturing CUDA graphs", text):
        fixes.append(FlagChange("--enforce-eager", None, "the OOM came during CUDA graph capture"))
    if args.gpu_memory_utilization is not None:
        # floor_utilization's guard: 0.57 x 100 is 56.99999999999999, which a bare floor takes to 0.51
        lowered = floor_utilization(args.gpu_memory_utilization - 0.05)
        fixes.append(FlagChange("--gpu-memory-utilization", f"{lowered:.2f}", "leave room for other tenants"))
    cause = "an allocation outside vLLM's budget failed: another process grew, or the budget left no room"
    return Diagnosis("cuda-oom", _line_of(text, match), cause, tuple(fixes), "check `comic-narrator gpu status`")


def _disturbed(text: str) -> Diagnosis | None:
    match = _search(r"Error in memory profiling\. Initial free memory " + _NUM + r" GiB, current free memory", text)
    if match is None:
        return None
    cause = "another process freed GPU memory while vLLM profiled, which corrupts vLLM's measurement"
    advice = "start vLLM first and wait for its KV line, or have the other tenant release before vLLM starts"
    return Diagnosis("profiling-disturbed", _line_of(text, match), cause, (), advice)


def _mm_cache_after_sleep(text: str) -> Diagnosis | None:
    """vLLM 0.20's API server keeps a cache of processed images and sends the engine only a hash for an image it
    has sent before; sleep mode drops the engine's copy, so after a wake a repeated image fails the request
    (seen on an H200 with Qwen2-VL: docs/logs/both-tenants-h200). Without that cache every image is sent whole."""
    match = _search(r"Expected a cached item for mm_hash", text)
    if match is None:
        return None
    cause = "the engine lost its cached images (sleep mode) while the API server still sends their hashes"
    fix = FlagChange("--mm-processor-cache-gb", "0", "send every image whole, so a wake cannot lose one")
    return Diagnosis("mm-cache-after-sleep", _line_of(text, match), cause, (fix,))


def diagnose(log: str) -> BootReport:
    """Read a vLLM boot log (any amount of it, with any prefixes) into a BootReport."""
    text = messages(log)
    args = _parse_args(text)
    version = _search(r"version (\d+\.\d+\.\d+\S*)", text) or _search(r"LLM engine \(v(\d+\.\d+\.\d+\S*)\)", text)
    weights = _last(r"Model loading took " + _NUM + r" ?GiB", text)
    kv = _last(r"Available KV cache memory: " + _NUM + r" GiB", text)
    tokens = _last(r"GPU KV cache size: " + _NUM + r" tokens", text)
    conc = _last(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x", text)
    graphs = _last(r"Estimated CUDA graph memory: " + _NUM + r" GiB", text)
    graphs_actual = _last(r"Graph capturing finished in \d+ secs, took " + _NUM + r" GiB", text)
    block = _last(r"Setting attention block size to (\d+) tokens", text)
    init = _last(r"init engine \(profile, create kv cache, warmup model\) took " + _NUM + r" s", text)
    encoder = _last(r"Encoder cache will be initialized with a budget of (\d+) tokens, and profiled with (\d+) ", text)
    encoder_skipped = _search(r"Skipping (?:memory profiling for multimodal encoder|encoder profiling)", text)
    kv_bytes = gib_to_bytes(_f(kv.group(1))) if kv else None
    free_diag, free, total = _free_memory(text, args)
    found = (
        free_diag,
        _no_kv(text, args, kv_bytes),
        _max_model_len(text),
        _mamba(text),
        _backend(text),
        _oom(text, args),
        _disturbed(text),
        _mm_cache_after_sleep(text),
        *kernel_failures(log, args),
    )
    ready = _search(r"Application startup complete", text) is not None
    return BootReport(
        vllm_version=version.group(1) if version else None,
        args=args,
        ready=ready,
        weights_bytes=gib_to_bytes(_f(weights.group(1))) if weights else None,
        kv_cache_bytes=kv_bytes,
        kv_cache_tokens=int(_f(tokens.group(1))) if tokens else None,
        max_concurrency=_f(conc.group(2)) if conc else None,
        concurrency_max_model_len=int(_f(conc.group(1))) if conc else None,
        cudagraph_estimate_bytes=gib_to_bytes(_f(graphs.group(1))) if graphs else None,
        cudagraph_actual_bytes=gib_to_bytes(_f(graphs_actual.group(1))) if graphs_actual else None,
        attention_block_size=int(block.group(1)) if block else None,
        device_free_bytes=free,
        device_total_bytes=total,
        init_engine_s=_f(init.group(1)) if init else None,
        encoder_budget_tokens=int(encoder.group(1)) if encoder else 0 if encoder_skipped else None,
        encoder_items=int(encoder.group(2)) if encoder else 0 if encoder_skipped else None,
        failures=tuple(d for d in found if d is not None),
        error_line=None if ready else root_error(log),
    )


def kv_line_seen(text: str) -> bool:
    """Whether vLLM has sized its KV pool (the line `gpu up` waits for besides /health)."""
    return _search(r"GPU KV cache size: " + _NUM + r" tokens", messages(text)) is not None
