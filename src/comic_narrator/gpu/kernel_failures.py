"""vLLM's quantisation and MoE kernel failures (releases 0.10 to 0.20), in six groups, each with its fix or advice.

The phrasings are those of the raise sites in the vLLM 0.10.0 to 0.20.0 wheels (vllm/model_executor/layers/
quantization/, .../fused_moe/, vllm/model_executor/kernels/, vllm/config/, vllm/platforms/), read from the wheels
for issue 15; tests/gpu/test_doctor_kernels.py holds an example of each with the releases that print it, and
docs/gpu.md lists them. Left out on purpose: assertions on tensor shapes and dtypes inside kernels (a vLLM bug, not a
setting), ROCm/TPU/XPU/CPU-only kernels, and enum fall-throughs that only a vLLM bug reaches.

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
from dataclasses import dataclass

from comic_narrator.gpu.diagnosis import Diagnosis, FailureKind, VllmArgs
from comic_narrator.gpu.flags import FlagChange
from comic_narrator.gpu.logtext import level_of, message_of

_QUIET_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN")
"""vLLM logs some of these phrasings at DEBUG while it tries kernels in turn; only a raised one is a failure."""

SUPPORTED_HARDWARE = "https://docs.vllm.ai/en/latest/features/quantization/supported_hardware.html"


@dataclass(frozen=True)
class _Rule:
    tag: str
    pattern: re.Pattern[str]
    fmt: str = ""
    """The weight format when the words do not name it (it decides which environment variables to name)."""


def _rules(tag: str, *patterns: str, fmt: str = "") -> tuple[_Rule, ...]:
    return tuple(_Rule(tag, re.compile(p), fmt) for p in patterns)


_Builder = Callable[[str, re.Match[str], _Rule, VllmArgs], Diagnosis]

# --- forced-kernel ------------------------------------------------------------------------------------------------

_FORCED = (
    *_rules(
        "moe-flag",
        r"moe_backend='(?P<backend>[^']*)' is not supported for (?P<fmt>\w+) MoE",  # 0.17-0.20
        # 0.15-0.20, when a flag or variable forced the backend; vLLM logs the same words at DEBUG while it tries them
        r"(?P<fmt>\w+) MoE backend '?(?P<backend>[\w .-]+?)'? does not support the deployment configuration",
        r"(?P<fmt>FlashInfer TRTLLM|FlashInfer CUTLASS|ROCm AITer) MoE backend is not available for this configuration",
        r"vLLM CUTLASS (?P<fmt>FP8) MoE backend is disabled for this configuration",  # 0.17-0.20
        r"does not support defer_input_quant=True\. Please select an MoE kernel",  # 0.16-0.20
        r"Marlin (?P<fmt>WNA16) MoE backend requires GPTQMarlinConfig",  # 0.20
    ),
    *_rules(
        "moe-env",
        r"Found (?P<env>VLLM_USE_FLASHINFER_MOE_\w+)=1, but no FlashInfer \w+ MoE backend supports the configuration",
        r"FlashInfer MOE backend \S+ does not support (?P<fmt>\w+) MoE",  # 0.17-0.20
        r"FlashInfer (?P<fmt>FP8) MoE throughput backend does not support block quantization",  # 0.11.1-0.14.1
        r"FlashInfer TRTLLM (?P<fmt>FP8) MoE backend only supports act_and_mul",  # 0.14
        r"FlashInfer (?P<fmt>FP8) MoE backend does not support dynamic per token activation quantization",  # 0.14
        r"FlashInfer CUTLASS (?P<fmt>FP8) MoE backend only supports",  # 0.14
        r"FlashInfer MaskedGEMM not supported for (?P<fmt>FP8)",  # 0.15-0.16
        r"(?P<env>VLLM_USE_FLASHINFER_MOE_MXFP4_BF16)=1 is set but the current device capability is not supported",
        r"(?P<fmt>Unquantized) Moe Backend FlashInfer TRTLLM requires bfloat16 weights",  # 0.16-0.20
        r"No supported (?P<fmt>MXFP8) expert class for",  # 0.19-0.20
    ),
    *_rules(
        "moe-env",
        r"FusedMoE flashinfer kernels (?:with Llama4 routing method )?are only supported for Llama4",  # 0.10.1-0.16
        r"Custom routing function is only supported for Llama4",  # 0.16
        fmt="FP8",
    ),
    *_rules("moe-env", r"FLASHINFER_TRTLLM doesn't support Modular Kernel Interface", fmt="NvFP4"),  # 0.15-0.16
    *_rules("moe-env", r"FlashInfer TRTLLM backend not supported for compressed-tensors", fmt="FP8"),  # 0.14
    *_rules("deepgemm-env", r"DeepGemm only supports is_act_and_mul=True"),  # 0.10.1-0.10.2
    *_rules(
        "nvfp4-gemm-env",
        r"Forced NVFP4 kernel \w+ is not supported",  # 0.20
        r"Unknown VLLM_NVFP4_GEMM_BACKEND=",  # 0.20
        r"^AssertionError: (?:FlashInfer|Cutlass|Marlin) is required for",  # 0.11.1-0.19.1
    ),
    *_rules(
        "marlin-input-env",
        r"Marlin W4A8-FP8 only support SM89 or SM120",  # 0.12-0.20
        r"W8A8(?:-INT8)? is not supported by marlin kernel",  # 0.12-0.20
        r"(?:INT8|FP8|MXFP4|NVFP4) weight \+ (?:INT8/FP8|INT8|FP8) activation is not supported",  # 0.12-0.20
        r"Marlin W8A8 is not supported",  # 0.14-0.20
    ),
)

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


def _forced(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
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

_FEATURE = (
    *_rules(
        "eplb",
        r"EPLB (?:is )?not supported",  # 0.10-0.20: per quantisation method and per MoE kernel
        r"EPLB is only supported for FP8 quantization",  # 0.10.0-0.11.0
    ),
    *_rules(
        "ep",
        r"Expert Parallelism / expert_map is currently not supported for",  # 0.10-0.13
        r"Incompatible Mxfp4 backend \(.*\) for EP",  # 0.11.1-0.18.1
        r"Mxfp4 does not support (?:non-)?batched experts format for EP",  # 0.10.2-0.11.0
        r"EP is not supported for flashinfer mxfp4 moe backend",  # 0.10.1
        r"EP parallelism is not supported with TRTLLM",  # 0.17.0
        r"Marlin and ROCm AITER are not supported with all2all",  # 0.10-0.14.1
    ),
    *_rules(
        "lora",
        r"LoRA is not supported for (?:MXFP8 MoE|flashinfer_cutlass_moe)",  # 0.15-0.20
        r"Mxfp4 LoRA is currently only supported on CUDA",  # 0.19-0.20
        r"GPTQ-Marlin kernel does not support 8-bit weights",  # 0.13-0.19.1: the LoRA MoE path only
    ),
    *_rules("dp", r"CutlassExpertsFp4 doesn't support DP"),  # 0.10.0-0.14.1
    *_rules("tp", r"Online transforms with tensor parallelism is not supported"),  # 0.10.2-0.20
    *_rules("a2a", r"The '(?P<a2a>\w+)' all2all backend only supports nvfp4 activation quantization"),  # 0.20
)

_FEATURE_FLAGS = {
    "eplb": ("--enable-eplb", "expert-parallel load balancing (EPLB)"),
    "ep": ("--enable-expert-parallel", "expert parallelism"),
    "lora": ("--enable-lora", "LoRA"),
}


def _feature(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
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

_FLAG = (
    *_rules("unknown", r"Unknown quantization method: (?P<method>.+?)\. Must be one of"),  # 0.10-0.20
    *_rules(
        "mismatch",
        r"Quantization method specified in the model config \((?P<config>[^)]*)\) does not match the "
        r"quantization method specified in the `quantization` argument \((?P<arg>[^)]*)\)",  # 0.10-0.20
    ),
    *_rules(
        "dtype",
        r"(?P<dtype>torch\.\w+) is not supported for quantization method (?P<method>\S+)\. Supported dtypes: "
        r"(?P<supported>\[.*?\])",  # 0.10-0.20
        r"float16 is required for marlin24 compressed models",  # 0.10-0.15.1
    ),
    *_rules("deprecated", r"The quantization method (?P<method>\S+) is deprecated .*--allow-deprecated-quantization"),
    *_rules(
        "serialized",
        r"NVFP4 quantization was selected, dynamic quantization is not supported",  # 0.10-0.20
        r"MXFP8 currently only supports serialized checkpoints",  # 0.16-0.20
        r"MXFP8 quantization requires a serialized checkpoint",  # 0.16-0.20
        r"MXFP8 quantization was selected, but checkpoint is not MXFP8 serialized",  # 0.16-0.20
        r"The block-wise quantization only supports fp8-serialized checkpoint",  # 0.10-0.20
        r"(?:FP8_PB_WO|FP8_PER_CHANNEL_PER_TOKEN) currently only supports FP8-serialized checkpoints",  # 0.14-0.20
        r"OnlineQuantizationConfig does not support loading from a checkpoint config",  # 0.20
        r"quantization_config is only supported when quantization is one of",  # 0.20
    ),
    *_rules("dynamic-only", r"ptpc_fp8 as of now only support dynamic quantization"),  # 0.10-0.18.1
    *_rules("online-config", r"OnlineQuantizationConfig requires at least one of global_scheme"),  # 0.20
)

_DTYPE_FLAG = {"torch.float16": "half", "torch.bfloat16": "bfloat16", "torch.float32": "float32"}


def _flag(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
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

_PACKAGE = (
    *_rules(
        "pip",
        r"Please install (?P<pkg>bitsandbytes|deepspeed|torchao)\S* via `pip install",  # 0.10-0.20
        r"(?P<pkg>bitsandbytes|deepspeed|bitblas) version is wrong",  # 0.10-0.20
        r"The package `(?P<pkg>[\w-]+)` is required to (?:use|do) (?:AMD Quark )?MX-FP\d",  # 0.10-0.20
        r"Backend fbgemm requires fbgemm\.f4f4bf16 operator",  # 0.11-0.19.1
        r"Trying to use the (?P<pkg>bitblas) backend, but could not import",  # 0.10-0.15.1
        r"(?P<pkg>humming) is not available, please run 'pip install",  # 0.20
        r"(?P<pkg>Petit) is not installed\. Please install it",  # 0.10.2-0.19.1
        r"TRTLLM FP4 GEMM requires (?P<pkg>FlashInfer)",  # 0.10.1-0.11.0
        r"TritonExperts requires (?P<pkg>Triton)\. Install triton",  # 0.14-0.20
        r"(?P<pkg>DeepGEMM) requested for MoE layer but not installed",  # 0.13
    ),
)


def _package(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
    package = match.groupdict().get("pkg") or "fbgemm-gpu-genai"
    cause = f"the kernel for this checkpoint's quantisation comes from {package}, which is not installed (or too old)"
    advice = "install what the line names into the Python environment or image vLLM runs in"
    return Diagnosis("kernel-package", line, cause, (), advice)


# --- quantization-unsupported -------------------------------------------------------------------------------------

_UNSUPPORTED = (
    *_rules(
        "capability",
        r"The quantization method (?P<method>.+?) is not supported for the current GPU\. Minimum capability: "
        r"(?P<min>\d+)\. Current capability: (?P<cur>\d+)",  # 0.10-0.20
        r"Quantization scheme is not supported for\W+the current GPU\. (?:Required|Min) capability:\W*(?P<min>\d+)"
        r"\.\W+Current capability: (?P<cur>\d+)",  # 0.10-0.20, compressed-tensors (printed as a tuple)
    ),
    *_rules(
        "nvfp4",
        r"Current platform does not support NVFP4 quantization",  # 0.10.0-0.15.0
        r"No valid NVFP4 GEMM backend found",  # 0.11.1-0.15.1
        r"No NVFP4 GEMM backend selected",  # 0.16-0.19.1
    ),
    *_rules(
        "no-kernel",
        r"Failed to find a kernel that can implement the (?P<layer>\w+) linear layer",  # 0.10-0.20
        r"No (?P<fmt>\w+) MoE backend supports the deployment configuration",  # 0.15-0.20
        r"No NvFp4 kernel backend available for NvFp4 MoE",  # 0.14
        r"No MXFP8 MoE backends available",  # 0.19-0.20
        r"No MXFP4 MoE backend \(FlashInfer/Marlin/Triton\) available",  # 0.10.2-0.11.0
        r"found ?no compatible MXFP4 MoE backend",  # 0.11.1-0.18.1
        r"MXFP4 are not supported with this configuration",  # 0.10.1-0.18.1
        r"Sparse CUTLASS not supported\. vLLM must be built with CUDA 12\.2",  # 0.10-0.18.1
    ),
    *_rules(
        "platform",
        r"(?P<method>\S+) quantization is currently not supported in (?P<device>\w+)",  # 0.10-0.20
        r"The 'petit' quantization backend is designed for AMD GPUs",  # 0.10.2-0.19.1
    ),
)


def _unsupported(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
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

_FORMAT = _rules(
    "scheme",
    r"Unsupported FusedMoe scheme",  # 0.10-0.20 (compressed-tensors, Quark)
    r"WNA16MoE is not supported with actorder=group/dynamic",  # 0.10-0.20
    r"Unsupported num_bits = \d+",  # 0.10-0.20 (AWQ-Marlin, compressed-tensors WNA16/W4A8/W4A16-2:4)
    r"Unsupported quantization config: bits=",  # 0.10-0.20 (GPTQ)
    r"(?:BitBLAS|Marlin_24|QQQ) does not support (?:is_sym|weight_bits|group_size|quant_type) = ",  # 0.10-0.15.1
    r"The only supported HQQ (?:group size|quantization bitsize) is currently",  # 0.10-0.14.1
    r"Unsupported quant bitsize \(must be 4\)",  # 0.10-0.14.1 (HQQ)
    r"Unsupported GGUF quantization type",  # 0.10-0.20
    r"Apply router weight on input is not supported for ?fused GGUF MoE method",  # 0.10-0.20
    r"(?:AWQMoEMethod|AWQMarlinMoEMethod) only supports 4bit now",  # 0.10-0.20
    r"GPTQMarlinMoEMethod only supports int4 and int8 now",  # 0.10-0.20
    r"moe_wna16 only support gptq and awq",  # 0.10-0.20
    r"This method only supports 4-bit weights \(num_bits=4\)",  # 0.11-0.20
    r"Cutlass only supports 8-bit quantization",  # 0.10-0.18.1
    r"Quantization type not supported by Cutlass",  # 0.10-0.18.1
    r"Unsupported weight strategy=",  # 0.10-0.15.1
    r"Unsupported ModelOpt FP8 quant_algo for vLLM",  # 0.14-0.20
    r"Unknown ModelOpt quant algo:",  # 0.10-0.13
    r"MXFP8 quantization does not yet support MoE models",  # 0.16-0.17.1
    r"Unsupported OCP MX dtype combination for MoE",  # 0.17-0.20
    r"is not compatible with OCP MX \(weight\) MoE quantization",  # 0.17-0.20
    r"A 0 zero-point is not supported by Exllama",  # 0.10-0.20
    r"Unsupported bnb_4bit_quant_storage",  # 0.10-0.20
    r"Unsupported (?:backend|data_type|packing_format|weight_bits): .*, currently only support",  # 0.10-0.20
    r"The block-wise quantization only supports dynamic activation scheme",  # 0.10-0.20
    r"Unsupported activation scheme ",  # 0.10-0.20 (FP8)
    r"Unsupported model when in features size is not multiple of 16",  # 0.10-0.20 (ModelOpt FP4)
    r"Only support weight_block_size == \[128, 128\]",  # 0.11.1-0.13
    r"not supported for Marlin MoE",  # 0.10-0.20
    r"Unsupported activation: \w+\. Only silu and swigluoai activations are supported",  # 0.10.1-0.14.1
    r"Only support (?:per-tensor|symmetric) scaling factor for (?:compressed-tensors |quark |fp8 )?KV cache",
    r"Quark models with output_tensors and bias quantized are not supported",  # 0.10-0.20
    r"Unsupported forward_dtype: ",  # 0.11.1-0.20 (FP-Quant)
    r"Pseudoquantization is not supported for vLLM",  # 0.11.1-0.20
    r"mxfp8 only supports dynamic activation scheme",  # 0.19
    r"Found a different quantization (?:schemes|configuration) for .* requires all to use the same scheme",
    r"requires consistent quant config for",  # 0.10.1-0.20 (AutoRound)
    r"Mixed quant_algo within fused layer",  # 0.17-0.20
    r"MIXED_PRECISION quant_algo requires a non-empty 'quantized_layers' mapping",  # 0.17-0.20
    r"(?:NVFP4|MXFP8) quantization requires the following fields in hf_quant_config\.json",  # 0.10-0.20
    r"CompressedTensorsW4A4Nvfp4MoEMethod does not yet support non gated MoE models",  # 0.14
    r"Non-gated activations are only supported by",  # 0.12-0.14.1
    r"Dynamic FP8 activation quantization is not yet supported for W4A8",  # 0.18-0.20
    r"with (?:static|dynamic) input scales is currently not implemented",  # 0.10-0.20 (Quark)
    r"Mxfp4 (?:linear|attention) layer is not implemented",  # 0.10.1-0.11.0
    r"W4A8-int MoE needs dynamic per-token activation quantization",  # 0.11-0.20
    r"^ValueError: Unsupported weight_bits: \d+$",  # 0.13-0.20 (fused MoE config)
    r"^NotImplementedError: Unsupported quantization type\.$",  # 0.14-0.20 (Marlin MoE)
    r"^ValueError: Unsupported quantization scheme\.$",  # 0.15-0.20 (TRT-LLM FP8 MoE)
    r"Triton kernel only supports symmetric quantization",  # 0.13-0.19.1 (int8 scaled-mm)
    r"int8 quantization only supports block or channel-wise",  # 0.10-0.19.1 (MoE)
    r"w[12]_zp is not supported in CUTLASS MoE",  # 0.10-0.20
    r"Zero points not supported by BitBLAS",  # 0.10-0.15.1
    r"Unsupported quant_method (?:gptq|awq|\S+)$",  # 0.10-0.15.1 (BitBLAS)
    r"Unsupported zeros type: ",  # 0.10-0.15.1 (BitBLAS)
    r"Unsupported (?:groupsize|gptq type) = ",  # 0.10-0.20 (GPTQ/Marlin packing)
    r"Only support per-tensor scaling factor ?for fp8-quantized Q/prob",  # 0.10-0.20
    r"mm_mxfp8 requires [KN] >= \d+",  # 0.17-0.20: a layer too narrow for FlashInfer's MXFP8 GEMM
)


def _format(line: str, match: re.Match[str], rule: _Rule, args: VllmArgs) -> Diagnosis:
    cause = (
        "this vLLM has no kernel for the checkpoint's quantisation scheme (its bits, group size, symmetry, "
        "activation scheme or layout, as its quantization_config stores them)"
    )
    advice = (
        "use another quantised checkpoint of the model (e.g. its 4-bit AWQ/GPTQ or FP8 one), or a vLLM release "
        "that supports this scheme"
    )
    return Diagnosis("checkpoint-format", line, cause, (), advice)


_GROUPS: tuple[tuple[FailureKind, tuple[_Rule, ...], _Builder], ...] = (
    ("forced-kernel", _FORCED, _forced),
    ("kernel-feature", _FEATURE, _feature),
    ("quantization-flag", _FLAG, _flag),
    ("kernel-package", _PACKAGE, _package),
    ("quantization-unsupported", _UNSUPPORTED, _unsupported),
    ("checkpoint-format", _FORMAT, _format),
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
