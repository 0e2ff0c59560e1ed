"""vLLM's quantisation and MoE kernel failures (releases 0.10 to 0.20), in six groups, each with its fix or advice.

vLLM's words are kernel_phrasings.py's; this module says what each group of them means and what fixes it.
Groups, in the order a line is tried:
- forced-kernel: a kernel chosen by --moe-backend or by an environment variable cannot run this model here; drop
  the choice and let vLLM pick.
- kernel-feature: the kernel has no support for a feature a flag turned on (EPLB, expert parallelism, LoRA, ...).
- quantization-flag: --quantization or --dtype do not fit the checkpoint.
- kernel-package: the kernel lives in a package that is not installed.
- quantization-unsupported: this GPU (compute capability) or this vLLM build has no kernel for the checkpoint's
  quantisation; no flag fixes it.
- checkpoint-format: this vLLM has no kernel for the checkpoint's quantisation scheme at all; no flag fixes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from comic_narrator.gpu import kernel_phrasings as phrasings
from comic_narrator.gpu.diagnosis import Diagnosis, FailureKind, VllmArgs
from comic_narrator.gpu.flags import FlagChange
from comic_narrator.gpu.logtext import level_of, message_of

_QUIET_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN")
"""vLLM logs some of these phrasings at DEBUG while it tries kernels in turn; only a raised one is a failure."""

SUPPORTED_HARDWARE = "https://docs.vllm.ai/en/latest/features/quantization/supported_hardware.html"

_Builder = Callable[[str, re.Match[str], phrasings.Rule, VllmArgs], Diagnosis]

# --- forced-kernel ------------------------------------------------------------------------------------------------

_MOE_ENV: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mxfp4", ("VLLM_USE_FLASHINFER_MOE_MXFP4_BF16", "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8", "VLLM_MXFP4_USE_MARLIN")),
    ("mxfp8", ("VLLM_FLASHINFER_MOE_BACKEND",)),
    ("nvfp4", ("VLLM_USE_FLASHINFER_MOE_FP4", "VLLM_FLASHINFER_MOE_BACKEND")),
    ("fp4", ("VLLM_USE_FLASHINFER_MOE_FP4", "VLLM_FLASHINFER_MOE_BACKEND")),
    ("fp8", ("VLLM_USE_FLASHINFER_MOE_FP8", "VLLM_FLASHINFER_MOE_BACKEND", "VLLM_TEST_FORCE_FP8_MARLIN")),
    ("unquantized", ("VLLM_USE_FLASHINFER_MOE_FP16", "VLLM_FLASHINFER_MOE_BACKEND")),
    ("flashinfer", ("VLLM_USE_FLASHINFER_MOE_FP16", "VLLM_FLASHINFER_MOE_BACKEND")),
    ("wna16", ("VLLM_USE_FLASHINFER_MOE_INT4",)),
)
"""The environment variables that force a MoE kernel, per weight format (vllm/envs.py, 0.10-0.20); the first key
found in the line wins, so mxfp4 comes before fp4."""

_SUGGESTED = re.compile(r"(?:use|set) (VLLM_\w+=\w+)")


def _named_env(line: str) -> tuple[list[str], list[str]]:
    """The VLLM_* variables a line names as the cause, and the settings it suggests instead."""
    suggested = _SUGGESTED.findall(line)
    suggested_names = {s.split("=")[0] for s in suggested}
    named = [v for v in dict.fromkeys(re.findall(r"VLLM_\w+", line)) if v not in suggested_names]
    return named, suggested


def _moe_env_for(text: str) -> tuple[str, ...]:
    lowered = text.lower()
    return next((names for key, names in _MOE_ENV if key in lowered), ())


def _forced(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    tag = rule.tag
    groups = match.groupdict()
    fmt = groups.get("fmt") or rule.fmt
    named, suggested = _named_env(line)
    fixes: tuple[FlagChange, ...] = ()
    if tag == "deepgemm-env":
        env: tuple[str, ...] = ("VLLM_USE_DEEP_GEMM",)
        cause = "VLLM_USE_DEEP_GEMM=1 forces DeepGEMM's MoE kernel, which does not take this model's activation"
    elif tag == "nvfp4-gemm-env":
        env = ("VLLM_NVFP4_GEMM_BACKEND",)
        cause = "the NVFP4 GEMM kernel forced by VLLM_NVFP4_GEMM_BACKEND does not run here"
    elif tag == "marlin-input-env":
        env = ("VLLM_MARLIN_INPUT_DTYPE",)
        cause = "VLLM_MARLIN_INPUT_DTYPE asks Marlin to quantise activations, which this GPU or checkpoint cannot do"
    else:
        env = tuple(dict.fromkeys([*named, *_moe_env_for(fmt or line)]))
        kernel = f"the {fmt} MoE kernel" if fmt else "the MoE kernel"
        if tag == "moe-flag" or args.moe_backend is not None:
            backend = groups.get("backend") if "moe_backend=" in line else None
            value = args.moe_backend or backend or ""
            shown = f" ({value})" if value else ""
            fixes = (FlagChange("--moe-backend", value, "let vLLM pick the MoE kernel", remove=True),)
            cause = f"{kernel} chosen by --moe-backend{shown} or the environment does not support this model here"
        else:
            forced_by = ", ".join(named or env[:1])
            cause = f"{kernel} forced by the environment ({forced_by}) does not support this model here"
    advice = "without the forcing flag and variables vLLM picks a kernel that runs here"
    if suggested:
        advice += f"; or do what vLLM suggests: {', '.join(suggested)}"
    return Diagnosis("forced-kernel", line, cause, fixes, advice, env)


# --- kernel-feature -----------------------------------------------------------------------------------------------

_FEATURE_FLAGS = {
    "eplb": ("--enable-eplb", "expert-parallel load balancing (EPLB)"),
    "ep": ("--enable-expert-parallel", "expert parallelism"),
    "lora": ("--enable-lora", "LoRA"),
}


def _feature(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    tag = rule.tag
    if tag in _FEATURE_FLAGS:
        flag, name = _FEATURE_FLAGS[tag]
        fix = FlagChange(flag, None, f"this quantisation's MoE kernel has no {name} support", remove=True)
        cause = f"the kernel for this checkpoint's quantisation does not support {name}"
        return Diagnosis("kernel-feature", line, cause, (fix,), "or a checkpoint in FP8, whose kernels support it")
    if tag == "dp":
        cause = "vLLM's CUTLASS NVFP4 MoE kernel does not run with data parallelism"
        advice = "set VLLM_USE_FLASHINFER_MOE_FP4=1 (FlashInfer's kernel does), or run without --data-parallel-size"
        return Diagnosis("kernel-feature", line, cause, (), advice)
    if tag == "a2a":
        fix = FlagChange("--all2all-backend", "allgather_reducescatter", "works for every quantisation")
        cause = f"the {match.group('a2a')} all2all backend carries NVFP4 activations only"
        return Diagnosis("kernel-feature", line, cause, (fix,), "or 'flashinfer_nvlink_two_sided'")
    cause = "the checkpoint's online transforms (compressed-tensors) do not run with tensor parallelism"
    return Diagnosis("kernel-feature", line, cause, (), "serve it on one GPU (--tensor-parallel-size 1) if it fits")


# --- quantization-flag --------------------------------------------------------------------------------------------

_DTYPE_FLAG = {"torch.float16": "half", "torch.bfloat16": "bfloat16", "torch.float32": "float32"}


def _flag(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    tag = rule.tag
    groups = match.groupdict()
    given = args.quantization or ""
    if tag == "unknown":
        fix = FlagChange("--quantization", groups["method"], "vLLM reads the method from the checkpoint", remove=True)
        cause = f"this vLLM has no quantisation method called {groups['method']!r}"
        return Diagnosis("quantization-flag", line, cause, (fix,), "or spell it as one of the methods vLLM lists")
    if tag == "mismatch":
        fix = FlagChange("--quantization", groups["arg"], "vLLM reads the method from the checkpoint", remove=True)
        cause = f"the checkpoint is quantised with {groups['config']} but --quantization says {groups['arg']}"
        return Diagnosis("quantization-flag", line, cause, (fix,), f"or pass --quantization {groups['config']}")
    if tag == "dtype":
        supported = re.findall(r"torch\.\w+", groups.get("supported") or "torch.float16")
        value = next((_DTYPE_FLAG[d] for d in supported if d in _DTYPE_FLAG), "half")
        fix = FlagChange("--dtype", value, "the activation dtype this quantisation's kernels take")
        method = groups.get("method") or "marlin24"
        cause = f"{method} kernels do not take {groups.get('dtype') or 'this dtype'} activations"
        return Diagnosis("quantization-flag", line, cause, (fix,))
    if tag == "deprecated":
        fix = FlagChange("--allow-deprecated-quantization", None, "vLLM refuses deprecated methods unless told")
        cause = f"vLLM has deprecated the {groups['method']} method"
        return Diagnosis("quantization-flag", line, cause, (fix,), "better: a checkpoint in a maintained format")
    if tag == "online-config":
        cause = "--quantization-config names no scheme for online quantisation to apply"
        advice = "set global_scheme in --quantization-config, or use --quantization fp8_per_tensor / fp8_per_block"
        return Diagnosis("quantization-flag", line, cause, (), advice)
    fix = FlagChange("--quantization", given, "serve the checkpoint in the format it is stored in", remove=True)
    if tag == "dynamic-only":
        cause = "ptpc_fp8 quantises on load, but this checkpoint is already quantised"
    else:
        cause = "--quantization names a format the checkpoint is not stored in, and it cannot be applied on load"
    advice = "or use a checkpoint already quantised in that format"
    return Diagnosis("quantization-flag", line, cause, (fix,), advice)


# --- kernel-package -----------------------------------------------------------------------------------------------


def _package(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    package = match.groupdict().get("pkg") or "fbgemm-gpu-genai"
    cause = f"the kernel for this checkpoint's quantisation comes from {package}, which is not installed (or too old)"
    advice = "install what the line names into the Python environment or image vLLM runs in"
    return Diagnosis("kernel-package", line, cause, (), advice)


# --- quantization-unsupported -------------------------------------------------------------------------------------


def _unsupported(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    tag = rule.tag
    groups = match.groupdict()
    if tag == "capability":
        kernels = f"{groups['method']} kernels" if groups.get("method") else "the kernels of this quantisation scheme"
        cause = f"{kernels} need compute capability {groups['min']}; this GPU has {groups['cur']}"
    elif tag == "nvfp4":
        cause = "no NVFP4 kernel runs on this GPU (native NVFP4 needs Blackwell, compute capability 10.0+)"
    elif tag == "platform":
        cause = "this GPU platform has no kernels for the checkpoint's quantisation method"
    else:
        cause = "none of this vLLM build's kernels runs this checkpoint's quantisation on this GPU"
    advice = (
        "use a checkpoint in a format this GPU runs (bf16/fp16, or a quantisation listed for its generation in "
        f"{SUPPORTED_HARDWARE}), or a vLLM build with these kernels"
    )
    if args.moe_backend:
        advice += "; and try without --moe-backend"
    return Diagnosis("quantization-unsupported", line, cause, (), advice)


# --- checkpoint-format --------------------------------------------------------------------------------------------


def _format(line: str, match: re.Match[str], rule: phrasings.Rule, args: VllmArgs) -> Diagnosis:
    cause = (
        "this vLLM has no kernel for the checkpoint's quantisation scheme (its bits, group size, symmetry, "
        "activation scheme or layout, as its quantization_config stores them)"
    )
    advice = (
        "use another quantised checkpoint of the model (e.g. its 4-bit AWQ/GPTQ or FP8 one), or a vLLM release "
        "that supports this scheme"
    )
    return Diagnosis("checkpoint-format", line, cause, (), advice)


_GROUPS: tuple[tuple[FailureKind, tuple[phrasings.Rule, ...], _Builder], ...] = (
    ("forced-kernel", phrasings.FORCED, _forced),
    ("kernel-feature", phrasings.FEATURE, _feature),
    ("quantization-flag", phrasings.FLAG, _flag),
    ("kernel-package", phrasings.PACKAGE, _package),
    ("quantization-unsupported", phrasings.UNSUPPORTED, _unsupported),
    ("checkpoint-format", phrasings.FORMAT, _format),
)


def kernel_failures(text: str, args: VllmArgs) -> tuple[Diagnosis, ...]:
    """The quantisation and MoE kernel failures raised in a log, one per group (its first line)."""
    found: dict[str, Diagnosis] = {}
    for raw in text.splitlines():
        if level_of(raw) in _QUIET_LEVELS:
            continue
        line = message_of(raw)
        for kind, rules, build in _GROUPS:
            match = next(((r, m) for r in rules if (m := r.pattern.search(line))), None)
            if match is None:
                continue
            if kind not in found:
                found[kind] = build(line.strip(), match[1], match[0], args)
            break
    return tuple(found.values())
