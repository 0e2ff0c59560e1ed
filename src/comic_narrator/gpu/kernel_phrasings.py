"""vLLM's own words for its quantisation and MoE kernel failures, releases 0.10.0 to 0.20.0, one table per group.

Read from the raise sites in the wheels of all 21 releases (vllm/model_executor/layers/quantization/,
.../fused_moe/, vllm/model_executor/kernels/, vllm/config/, vllm/platforms/); a comment gives the releases that
print each. Every rule has a tag that tells kernel_failures.py which fix or advice the line gets;
tests/gpu/test_doctor_kernels.py holds an example of every message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One of vLLM's phrasings (a regular expression over the message) and the tag that picks its advice."""

    tag: str
    pattern: re.Pattern[str]
    fmt: str = ""
    """The weight format when the words do not name it (it decides which environment variables the advice names)."""


def rules(tag: str, *patterns: str, fmt: str = "") -> tuple[Rule, ...]:
    return tuple(Rule(tag, re.compile(p), fmt) for p in patterns)


# forced-kernel: a kernel forced by --moe-backend or an environment variable cannot run here
FORCED = (
    *rules(
        "moe-flag",
        r"moe_backend='(?P<backend>[^']*)' is not supported for (?P<fmt>\w+) MoE",  # 0.17-0.20
        # 0.15-0.20, when a flag or variable forced the backend; vLLM logs the same words at DEBUG while it tries them
        r"(?P<fmt>\w+) MoE backend '?(?P<backend>[\w .-]+?)'? does not support the deployment configuration",
        r"(?P<fmt>FlashInfer TRTLLM|FlashInfer CUTLASS|ROCm AITer) MoE backend is not available for this configuration",
        r"vLLM CUTLASS (?P<fmt>FP8) MoE backend is disabled for this configuration",  # 0.17-0.20
        r"does not support defer_input_quant=True\. Please select an MoE kernel",  # 0.16-0.20
        r"Marlin (?P<fmt>WNA16) MoE backend requires GPTQMarlinConfig",  # 0.20
    ),
    *rules(
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
    *rules(
        "moe-env",
        r"FusedMoE flashinfer kernels (?:with Llama4 routing method )?are only supported for Llama4",  # 0.10.1-0.16
        r"Custom routing function is only supported for Llama4",  # 0.16
        fmt="FP8",
    ),
    *rules("moe-env", r"FLASHINFER_TRTLLM doesn't support Modular Kernel Interface", fmt="NvFP4"),  # 0.15-0.16
    *rules("moe-env", r"FlashInfer TRTLLM backend not supported for compressed-tensors", fmt="FP8"),  # 0.14
    *rules("deepgemm-env", r"DeepGemm only supports is_act_and_mul=True"),  # 0.10.1-0.10.2
    *rules(
        "nvfp4-gemm-env",
        r"Forced NVFP4 kernel \w+ is not supported",  # 0.20
        r"Unknown VLLM_NVFP4_GEMM_BACKEND=",  # 0.20
        r"^AssertionError: (?:FlashInfer|Cutlass|Marlin) is required for",  # 0.11.1-0.19.1
    ),
    *rules(
        "marlin-input-env",
        r"Marlin W4A8-FP8 only support SM89 or SM120",  # 0.12-0.20
        r"W8A8(?:-INT8)? is not supported by marlin kernel",  # 0.12-0.20
        r"(?:INT8|FP8|MXFP4|NVFP4) weight \+ (?:INT8/FP8|INT8|FP8) activation is not supported",  # 0.12-0.20
        r"Marlin W8A8 is not supported",  # 0.14-0.20
    ),
)


# kernel-feature: the kernel lacks a feature a flag turned on
FEATURE = (
    *rules(
        "eplb",
        r"EPLB (?:is )?not supported",  # 0.10-0.20: per quantisation method and per MoE kernel
        r"EPLB is only supported for FP8 quantization",  # 0.10.0-0.11.0
    ),
    *rules(
        "ep",
        r"Expert Parallelism / expert_map is currently not supported for",  # 0.10-0.13
        r"Incompatible Mxfp4 backend \(.*\) for EP",  # 0.11.1-0.18.1
        r"Mxfp4 does not support (?:non-)?batched experts format for EP",  # 0.10.2-0.11.0
        r"EP is not supported for flashinfer mxfp4 moe backend",  # 0.10.1
        r"EP parallelism is not supported with TRTLLM",  # 0.17.0
        r"Marlin and ROCm AITER are not supported with all2all",  # 0.10-0.14.1
    ),
    *rules(
        "lora",
        r"LoRA is not supported for (?:MXFP8 MoE|flashinfer_cutlass_moe)",  # 0.15-0.20
        r"Mxfp4 LoRA is currently only supported on CUDA",  # 0.19-0.20
        r"GPTQ-Marlin kernel does not support 8-bit weights",  # 0.13-0.19.1: the LoRA MoE path only
    ),
    *rules("dp", r"CutlassExpertsFp4 doesn't support DP"),  # 0.10.0-0.14.1
    *rules("tp", r"Online transforms with tensor parallelism is not supported"),  # 0.10.2-0.20
    *rules("a2a", r"The '(?P<a2a>\w+)' all2all backend only supports nvfp4 activation quantization"),  # 0.20
)


# quantization-flag: --quantization or --dtype do not fit the checkpoint
FLAG = (
    *rules("unknown", r"Unknown quantization method: (?P<method>.+?)\. Must be one of"),  # 0.10-0.20
    *rules(
        "mismatch",
        r"Quantization method specified in the model config \((?P<config>[^)]*)\) does not match the "
        r"quantization method specified in the `quantization` argument \((?P<arg>[^)]*)\)",  # 0.10-0.20
    ),
    *rules(
        "dtype",
        r"(?P<dtype>torch\.\w+) is not supported for quantization method (?P<method>\S+)\. Supported dtypes: "
        r"(?P<supported>\[.*?\])",  # 0.10-0.20
        r"float16 is required for marlin24 compressed models",  # 0.10-0.15.1
    ),
    *rules("deprecated", r"The quantization method (?P<method>\S+) is deprecated .*--allow-deprecated-quantization"),
    *rules(
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
    *rules("dynamic-only", r"ptpc_fp8 as of now only support dynamic quantization"),  # 0.10-0.18.1
    *rules("online-config", r"OnlineQuantizationConfig requires at least one of global_scheme"),  # 0.20
)


# kernel-package: the kernel lives in a package that is not installed
PACKAGE = (
    *rules(
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


# quantization-unsupported: no kernel for this quantisation on this GPU or in this build
UNSUPPORTED = (
    *rules(
        "capability",
        r"The quantization method (?P<method>.+?) is not supported for the current GPU\. Minimum capability: "
        r"(?P<min>\d+)\. Current capability: (?P<cur>\d+)",  # 0.10-0.20
        r"Quantization scheme is not supported for\W+the current GPU\. (?:Required|Min) capability:\W*(?P<min>\d+)"
        r"\.\W+Current capability: (?P<cur>\d+)",  # 0.10-0.20, compressed-tensors (printed as a tuple)
    ),
    *rules(
        "nvfp4",
        r"Current platform does not support NVFP4 quantization",  # 0.10.0-0.15.0
        r"No valid NVFP4 GEMM backend found",  # 0.11.1-0.15.1
        r"No NVFP4 GEMM backend selected",  # 0.16-0.19.1
    ),
    *rules(
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
    *rules(
        "platform",
        r"(?P<method>\S+) quantization is currently not supported in (?P<device>\w+)",  # 0.10-0.20
        r"The 'petit' quantization backend is designed for AMD GPUs",  # 0.10.2-0.19.1
    ),
)


# checkpoint-format: no kernel in this vLLM for the checkpoint's quantisation scheme
FORMAT = rules(
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
