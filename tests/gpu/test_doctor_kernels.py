"""Every quantisation and MoE kernel failure vLLM 0.10-0.20 raises, as the doctor must recognise it.

The table is the list of raise sites in the vLLM 0.10.0 ... 0.20.0 wheels (all 21 releases and patch releases in
between), one row per distinct message with the first and last release that prints it; placeholders are filled
with values vLLM would print. Each row runs as its own test, inside a traceback as vLLM 0.20.0 logs it.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from comic_narrator.gpu.doctor import diagnose
from comic_narrator.gpu.render import report_json, report_text


class Phrasing(NamedTuple):
    versions: str
    line: str
    kind: str
    fix: str | None


def _rows(kind: str, fix: str | None, *rows: tuple[str, str]) -> list[Phrasing]:
    return [Phrasing(versions, line, kind, fix) for versions, line in rows]


FORCED = _rows(
    "forced-kernel",
    "remove --moe-backend",
    ("0.17.0-0.20.0", "ValueError: moe_backend='triton' is not supported for NvFP4 MoE"),  # as issue 15 quotes it
    (
        "0.17.0-0.20.0",
        "ValueError: moe_backend='triton' is not supported for NvFP4 MoE. Expected one of ['cutlass', "
        "'flashinfer_trtllm', 'flashinfer_cutlass', 'flashinfer_cutedsl', 'marlin', 'emulation'].",
    ),
    (
        "0.17.0-0.20.0",
        "ValueError: moe_backend='flashinfer_cutedsl' is not supported for FP8 MoE. Expected one of ['triton', "
        "'deep_gemm', 'cutlass', 'flashinfer_trtllm', 'flashinfer_cutlass', 'marlin', 'aiter'].",
    ),
    (
        "0.19.0-0.20.0",
        "ValueError: moe_backend='deep_gemm' is not supported for MXFP4 MoE. Expected one of ['triton', "
        "'flashinfer_trtllm', 'flashinfer_cutlass', 'marlin', 'aiter'].",
    ),
    (
        "0.18.0-0.20.0",
        "ValueError: moe_backend='marlin' is not supported for MXFP8 MoE. Expected one of ['flashinfer_trtllm', "
        "'flashinfer_cutlass'].",
    ),
    (
        "0.20.0",
        "ValueError: moe_backend='flashinfer_trtllm' is not supported for Int8 MoE. Expected one of ['triton'].",
    ),
    (
        "0.17.0-0.20.0",
        "ValueError: moe_backend='deep_gemm' is not supported for unquantized MoE. Expected one of ['triton', "
        "'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter'].",
    ),
    ("0.15.0-0.20.0", "ValueError: FP8 MoE backend 'DEEPGEMM' does not support the deployment configuration."),
    (
        "0.15.0-0.20.0",
        "ValueError: FP8 MoE backend FLASHINFER_TRTLLM does not support the deployment configuration since kernel "
        "does not support current device.",
    ),
    (
        "0.15.0-0.20.0",
        "ValueError: NvFp4 MoE backend 'FLASHINFER_CUTEDSL' does not support the deployment configuration.",
    ),
    (
        "0.15.0-0.20.0",
        "ValueError: NvFp4 MoE backend 'FLASHINFER_TRTLLM' does not support the deployment configuration since "
        "kernel does not support current device.",
    ),
    ("0.19.0-0.20.0", "ValueError: Mxfp4 MoE backend 'TRITON' does not support the deployment configuration."),
    (
        "0.19.0-0.20.0",
        "ValueError: Mxfp4 MoE backend 'FLASHINFER_TRTLLM_BF16' does not support the deployment configuration since "
        "kernel does not support current device.",
    ),
    ("0.20.0", "ValueError: Int8 MoE backend 'TRITON' does not support the deployment configuration."),
    (
        "0.20.0",
        "ValueError: Int8 MoE backend TRITON does not support the deployment configuration since kernel does not "
        "support current device.",
    ),
    ("0.20.0", "ValueError: WNA16 MoE backend 'MARLIN' does not support the deployment configuration."),
    (
        "0.20.0",
        "ValueError: WNA16 MoE backend 'MARLIN' does not support the deployment configuration since kernel does "
        "not support current device.",
    ),
    (
        "0.20.0",
        "ValueError: Unquantized MoE backend 'FLASHINFER_TRTLLM' does not support the deployment configuration.",
    ),
    (
        "0.20.0",
        "ValueError: Unquantized MoE backend FLASHINFER_CUTLASS does not support the deployment configuration since "
        "kernel does not support current device.",
    ),
    ("0.17.0-0.19.1", "ValueError: FlashInfer TRTLLM MoE backend is not available for this configuration."),
    ("0.17.0-0.19.1", "ValueError: FlashInfer CUTLASS MoE backend is not available for this configuration."),
    ("0.17.0-0.19.1", "ValueError: ROCm AITer MoE backend is not available for this configuration."),
    ("0.17.0-0.20.0", "ValueError: vLLM CUTLASS FP8 MoE backend is disabled for this configuration."),
    (
        "0.16.0-0.20.0",
        "NotImplementedError: DeepEPLLPrepareAndFinalize does not support defer_input_quant=True. Please select an "
        "MoE kernel that accepts quantized inputs.",
    ),
    ("0.20.0", "TypeError: Marlin WNA16 MoE backend requires GPTQMarlinConfig, got AWQMarlinConfig."),
) + _rows(
    "forced-kernel",
    None,
    (
        "0.15.0-0.20.0",
        "NotImplementedError: Found VLLM_USE_FLASHINFER_MOE_FP8=1, but no FlashInfer FP8 MoE backend supports the "
        "configuration.",
    ),
    (
        "0.15.0-0.20.0",
        "NotImplementedError: Found VLLM_USE_FLASHINFER_MOE_FP4=1, but no FlashInfer NVFP4 MoE backend supports the "
        "configuration.",
    ),
    (
        "0.20.0",
        "NotImplementedError: Found VLLM_USE_FLASHINFER_MOE_FP16=1, but no FlashInfer unquantized MoE backend "
        "supports the configuration.",
    ),
    ("0.17.0-0.20.0", "ValueError: FlashInfer MOE backend FlashinferMoeBackend.CUTEDSL does not support FP8 MoE."),
    (
        "0.20.0",
        "ValueError: FlashInfer MOE backend FlashinferMoeBackend.CUTEDSL does not support unquantized MoE.",
    ),
    (
        "0.11.1-0.13.0",
        "ValueError: FlashInfer FP8 MoE throughput backend does not support block quantization. Please use "
        "VLLM_FLASHINFER_MOE_BACKEND=latency instead.",
    ),
    (
        "0.14.0-0.14.1",
        "ValueError: FlashInfer FP8 MoE throughput backend does not support block quantization on SM100. Please use "
        "VLLM_FLASHINFER_MOE_BACKEND=latency to use the FlashInfer TRTLLM backend instead.",
    ),
    (
        "0.14.0-0.14.1",
        "ValueError: FlashInfer TRTLLM FP8 MoE backend only supports act_and_mul gate_up_project fusion. Please set "
        "VLLM_USE_FLASHINFER_MOE_FP8=throughput to use the FlashInfer CUTLASS backend instead.",
    ),
    (
        "0.14.0-0.14.1",
        "NotImplementedError: FlashInfer FP8 MoE backend does not support dynamic per token activation quantization.",
    ),
    (
        "0.14.0-0.14.1",
        "NotImplementedError: FlashInfer CUTLASS FP8 MoE backend only supports SiLU activation function, but got "
        "relu2_no_mul.",
    ),
    ("0.14.0-0.14.1", "NotImplementedError: FlashInfer CUTLASS FP8 MoE backend only supports block size [128, 128]."),
    ("0.14.0-0.14.1", "NotImplementedError: FlashInfer TRTLLM backend not supported for compressed-tensors yet."),
    ("0.15.0-0.16.0", "ValueError: FlashInfer MaskedGEMM not supported for FP8"),
    (
        "0.19.0-0.20.0",
        "ValueError: VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 is set but the current device capability is not "
        "supported. Only SM90 (CUTLASS) and SM100+ (TRTLLM) are supported.",
    ),
    ("0.16.0-0.20.0", "ValueError: Unquantized Moe Backend FlashInfer TRTLLM requires bfloat16 weights"),
    ("0.10.1-0.15.1", "AssertionError: FusedMoE flashinfer kernels are only supported for Llama4"),
    ("0.16.0", "AssertionError: FusedMoE flashinfer kernels with Llama4 routing method are only supported for Llama4"),
    ("0.16.0", "AssertionError: Custom routing function is only supported for Llama4"),
    ("0.15.0-0.16.0", "NotImplementedError: FLASHINFER_TRTLLM doesn't support Modular Kernel Interface"),
    ("0.10.1-0.10.2", "AssertionError: DeepGemm only supports is_act_and_mul=True for now."),
    (
        "0.19.0-0.20.0",
        "ValueError: No supported MXFP8 expert class for FLASHINFER_CUTLASS: kernel does not support current device.",
    ),
    (
        "0.20.0",
        "ValueError: Forced NVFP4 kernel FlashInferCutlassNvFp4LinearKernel is not supported: requires compute "
        "capability 100",
    ),
    (
        "0.20.0",
        "ValueError: Unknown VLLM_NVFP4_GEMM_BACKEND=cutlas. Valid choices: ['flashinfer-cutlass', "
        "'flashinfer-trtllm', 'flashinfer-cudnn', 'cutlass', 'marlin', 'emulation']",
    ),
    ("0.11.1-0.19.1", "AssertionError: FlashInfer is required for NvFp4LinearBackend.FLASHINFER_CUTLASS"),
    ("0.11.1-0.19.1", "AssertionError: Cutlass is required for NvFp4LinearBackend.VLLM_CUTLASS"),
    ("0.15.0-0.19.1", "AssertionError: Marlin is required for NvFp4LinearBackend.MARLIN"),
    (
        "0.12.0-0.20.0",
        "ValueError: Marlin W4A8-FP8 only support SM89 or SM120 device (It is slower than Marlin W4A16 on other "
        "devices). You can consider using W4A8-INT8 instead(set VLLM_MARLIN_INPUT_DTYPE=int8).",
    ),
    ("0.12.0-0.20.0", "AssertionError: W8A8-INT8 is not supported by marlin kernel."),
    ("0.12.0-0.20.0", "AssertionError: W8A8 is not supported by marlin kernel."),
    ("0.12.0-0.20.0", "AssertionError: INT8 weight + FP8 activation is not supported."),
    ("0.12.0-0.20.0", "RuntimeError: MXFP4 weight + INT8 activation is not supported."),
    ("0.12.0-0.20.0", "RuntimeError: NVFP4 weight + INT8/FP8 activation is not supported."),
    ("0.12.0-0.13.0", "RuntimeError: FP8 weight + INT8 activation is not supported."),
    ("0.14.0-0.20.0", "NotImplementedError: Marlin W8A8 is not supported."),
)

EPLB_METHODS = [  # "EPLB not supported for `X` yet." with the releases that name each method
    ("0.10.0-0.11.2", "AWQMoEMethod"),
    ("0.10.0-0.11.2", "BitsAndBytesMoEMethod"),
    ("0.10.0-0.11.2", "CompressedTensorsW4A4MoeMethod"),
    ("0.12.0-0.13.0", "CompressedTensorsW4A4MoEMethod"),
    ("0.13.0-0.20.0", "CompressedTensorsW4A8Fp8MoEMethod"),
    ("0.10.0", "CompressedTensorsW8A8Fp8MoECutlassMethod"),
    ("0.10.0-0.11.0", "CompressedTensorsW8A8Fp8MoEMethod"),
    ("0.10.0-0.11.2", "CompressedTensorsW8A8Int8MoEMethod"),
    ("0.10.0-0.11.2", "CompressedTensorsWNA16MarlinMoEMethod"),
    ("0.10.0-0.11.2", "CompressedTensorsWNA16MoEMethod"),
    ("0.10.0-0.11.2", "ExpertsInt8MoEMethod"),
    ("0.13.0-0.16.0", "Fp8MoEMethod"),
    ("0.10.0-0.11.2", "GGUFMoEMethod"),
    ("0.10.0-0.11.2", "GPTQMarlinMoEMethod"),
    ("0.10.0-0.13.0", "ModelOptFp8MoEMethod"),
    ("0.10.0-0.12.0", "ModelOptNvFp4FusedMoE"),
    ("0.10.0-0.11.2", "MoeWNA16Method"),
    ("0.11.1-0.11.2", "QuarkOCP_MX_MoEMethod"),
    ("0.10.0-0.11.0", "QuarkW4A4MXFp4MoEMethod"),
    ("0.17.0-0.20.0", "QuarkW4MXFp4MoEMethod_OSS"),
    ("0.10.0-0.11.2", "QuarkW8A8Fp8MoEMethod"),
    ("0.10.1-0.11.2", "RTNMoEMethod"),
]

FEATURE = (
    _rows(
        "kernel-feature",
        "remove --enable-eplb",
        *[
            (versions, f"NotImplementedError: EPLB not supported for `{method}` yet.")
            for versions, method in EPLB_METHODS
        ],
        ("0.10.0-0.11.0", "NotImplementedError: EPLB is only supported for FP8 quantization for now."),
        (
            "0.11.1-0.14.1",
            "NotImplementedError: EPLB is not supported GPTQMarlinMoEMethod. EPLB is only supported for FP8 "
            "quantization for now.",
        ),
        ("0.12.0-0.14.1", "NotImplementedError: EPLB is not supported for gptq_marlin."),
        ("0.15.0-0.20.0", "NotImplementedError: EPLB is not supported GPTQMarlinMoEMethod."),
        ("0.11.1-0.11.2", "NotImplementedError: EPLB is not supported for CompressedTensorsWNA16MoEMethod."),
        ("0.10.1-0.18.1", "NotImplementedError: EPLB is not supported for mxfp4"),
        ("0.14.0-0.16.0", "NotImplementedError: EPLB not supported for FlashInfer TRTLLM FP8 MoE Backend."),
        ("0.18.0-0.20.0", "NotImplementedError: EPLB is not supported for FlashInfer TRTLLM MXFP8 MoE backend."),
        ("0.11.0-0.20.0", "AssertionError: EPLB not supported for W4A8-int MoE yet."),
    )
    + _rows(
        "kernel-feature",
        "remove --enable-expert-parallel",
        (
            "0.10.0-0.13.0",
            "AssertionError: Expert Parallelism / expert_map is currently not supported for "
            "ModelOptNvFp4FusedMoE's cutlass_moe_fp4.",
        ),
        (
            "0.10.0-0.11.2",
            "AssertionError: Expert Parallelism / expert_map is currently not supported for "
            "CompressedTensorsW4A4MoeMethod.",
        ),
        (
            "0.12.0-0.13.0",
            "AssertionError: Expert Parallelism / expert_map is currently not supported for "
            "CompressedTensorsW4A4Nvfp4MoEMethod.",
        ),
        ("0.11.1-0.18.1", "NotImplementedError: Incompatible Mxfp4 backend (Mxfp4Backend.SM100_FI_MXFP4_BF16) for EP"),
        (
            "0.11.1-0.18.1",
            "NotImplementedError: Incompatible Mxfp4 backend (Mxfp4Backend.TRITON) for EP batched experts format",
        ),
        ("0.10.2-0.11.0", "NotImplementedError: Mxfp4 does not support batched experts format for EP"),
        ("0.10.2", "NotImplementedError: Mxfp4 does not support non-batched experts format for EP"),
        ("0.10.1-0.10.1.1", "AssertionError: EP is not supported for flashinfer mxfp4 moe backend yet."),
        ("0.17.0", "NotImplementedError: EP parallelism is not supported with TRTLLMper-tensor FP8 quantization."),
        ("0.10.0-0.14.1", "AssertionError: Marlin and ROCm AITER are not supported with all2all yet."),
    )
    + _rows(
        "kernel-feature",
        "remove --enable-lora",
        ("0.18.0-0.20.0", "NotImplementedError: LoRA is not supported for MXFP8 MoE."),
        ("0.15.0-0.20.0", "NotImplementedError: LoRA is not supported for flashinfer_cutlass_moe"),
        ("0.19.0-0.20.0", "NotImplementedError: Mxfp4 LoRA is currently only supported on CUDA."),
        ("0.13.0-0.19.1", "NotImplementedError: GPTQ-Marlin kernel does not support 8-bit weights."),
    )
    + _rows(
        "kernel-feature",
        None,
        (
            "0.10.0",
            "ValueError: CutlassExpertsFp4 doesn't support DP. Use flashinfer CUTLASS FusedMoE backend instead (set "
            "VLLM_USE_FLASHINFER_MOE_FP4=1)",
        ),
        (
            "0.10.1-0.14.1",
            "ValueError: CutlassExpertsFp4 doesn't support DP. Use flashinfer CUTLASS Fused MoE backend instead (set "
            "VLLM_USE_FLASHINFER_MOE_FP4=1)",
        ),
        ("0.10.2-0.20.0", "NotImplementedError: Online transforms with tensor parallelism is not supported"),
    )
    + _rows(
        "kernel-feature",
        "--all2all-backend allgather_reducescatter",
        (
            "0.20.0",
            "ValueError: The 'flashinfer_nvlink_one_sided' all2all backend only supports nvfp4 activation "
            "quantization, but got quant_dtype=torch.float8_e4m3fn. Use a different all2all backend (e.g. "
            "'flashinfer_nvlink_two_sided' or 'allgather_reducescatter') for non-nvfp4 models.",
        ),
    )
)

FLAG = [
    Phrasing(
        "0.10.0-0.20.0",
        "ValueError: Unknown quantization method: fp4. Must be one of ['awq', 'fp8', 'gptq', 'gptq_marlin', "
        "'awq_marlin', 'modelopt', 'modelopt_fp4', 'compressed-tensors', 'bitsandbytes', 'gguf', 'mxfp4'].",
        "quantization-flag",
        "remove --quantization",
    ),
    Phrasing(
        "0.10.0-0.20.0",
        "ValueError: Quantization method specified in the model config (awq) does not match the quantization "
        "method specified in the `quantization` argument (gptq).",
        "quantization-flag",
        "remove --quantization",
    ),
    Phrasing(
        "0.10.0-0.20.0",
        "ValueError: torch.bfloat16 is not supported for quantization method gptq. Supported dtypes: [torch.float16]",
        "quantization-flag",
        "--dtype half",
    ),
    Phrasing(
        "0.10.0-0.15.1",
        "AssertionError: float16 is required for marlin24 compressed models. Set dtype=torch.float16",
        "quantization-flag",
        "--dtype half",
    ),
    Phrasing(
        "0.14.0-0.20.0",
        "ValueError: The quantization method deepspeedfp is deprecated and will be removed in future versions of "
        "vLLM. To bypass, set `--allow-deprecated-quantization`.",
        "quantization-flag",
        "--allow-deprecated-quantization",
    ),
    *_rows(
        "quantization-flag",
        "remove --quantization",
        ("0.10.0-0.20.0", "ValueError: NVFP4 quantization was selected, dynamic quantization is not supported."),
        (
            "0.16.0-0.20.0",
            "ValueError: MXFP8 currently only supports serialized checkpoints. Dynamic quantization is not supported.",
        ),
        (
            "0.16.0-0.20.0",
            "ValueError: MXFP8 quantization requires a serialized checkpoint. Dynamic quantization is not supported.",
        ),
        (
            "0.16.0-0.20.0",
            "ValueError: MXFP8 quantization was selected, but checkpoint is not MXFP8 serialized. Dynamic "
            "quantization is not supported.",
        ),
        ("0.10.0-0.20.0", "ValueError: The block-wise quantization only supports fp8-serialized checkpoint for now."),
        ("0.14.0-0.20.0", "ValueError: FP8_PB_WO currently only supports FP8-serialized checkpoints."),
        ("0.14.0-0.20.0", "ValueError: FP8_PER_CHANNEL_PER_TOKEN currently only supports FP8-serialized checkpoints."),
        (
            "0.20.0",
            "NotImplementedError: OnlineQuantizationConfig does not support loading from a checkpoint config. Use "
            "quantization_config or quantization='fp8_per_tensor'/'fp8_per_block' instead.",
        ),
        (
            "0.20.0",
            "ValueError: quantization_config is only supported when quantization is one of ['fp8_per_block', "
            "'fp8_per_tensor', 'online'], got quantization=fp8",
        ),
        ("0.10.0-0.18.1", "ValueError: ptpc_fp8 as of now only support dynamic quantization."),
    ),
    Phrasing(
        "0.20.0",
        "ValueError: OnlineQuantizationConfig requires at least one of global_scheme, linear_scheme_override, or "
        "moe_scheme_override to be set.",
        "quantization-flag",
        None,
    ),
]

PACKAGE = _rows(
    "kernel-package",
    None,
    (
        "0.10.0",
        "ImportError: Please install bitsandbytes>=0.45.3 via `pip install bitsandbytes>=0.45.3` to use bitsandbytes "
        "quantizer.",
    ),
    ("0.10.0", "ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.45.3."),
    (
        "0.10.0-0.16.0",
        "ImportError: Please install bitsandbytes>=0.46.1 via `pip install bitsandbytes>=0.46.1` to use bitsandbytes "
        "quantizer.",
    ),
    ("0.10.0-0.16.0", "ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.46.1."),
    (
        "0.17.0-0.20.0",
        "ImportError: Please install bitsandbytes>=0.48.1 via `pip install bitsandbytes>=0.48.1` to use bitsandbytes "
        "quantizer.",
    ),
    ("0.17.0-0.20.0", "ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.48.1."),
    (
        "0.10.0-0.14.1",
        "ImportError: Please install deepspeed>=0.14.2 via `pip install deepspeed>=0.14.2` to use deepspeedfp "
        "quantizer.",
    ),
    ("0.10.0-0.14.1", "ImportError: deepspeed version is wrong. Please install deepspeed>=0.14.2."),
    (
        "0.10.0-0.20.0",
        "ImportError: Please install torchao>=0.10.0 via `pip install torchao>=0.10.0` to use torchao quantization.",
    ),
    (
        "0.10.0-0.20.0",
        "ImportError: The package `amd-quark` is required to use MX-FP4 models. Please install it with `pip install "
        "amd-quark`.",
    ),
    (
        "0.11.0",
        "ImportError: The package `amd-quark` is required to use AMD Quark MX-FP4 models. Please install it with "
        "`pip install amd-quark`.",
    ),
    (
        "0.11.1-0.20.0",
        "ImportError: The package `amd-quark` is required to use MX-FP6 models. Please install it with `pip install "
        "amd-quark`.",
    ),
    (
        "0.10.2-0.15.1",
        "ImportError: The package `flashinfer` is required to do MX-FP8 quantization. Please install it with`pip "
        "install flashinfer`",
    ),
    (
        "0.11.0-0.19.1",
        "ImportError: Backend fbgemm requires fbgemm.f4f4bf16 operator, Please install with: pip install "
        "fbgemm-gpu-genai",
    ),
    (
        "0.10.0-0.15.1",
        "ValueError: Trying to use the bitblas backend, but could not importwith the following error: No module named "
        "'bitblas'. Please install bitblas through the following command: `pip install bitblas>=0.1.0`",
    ),
    ("0.10.0-0.15.1", "ImportError: bitblas version is wrong. Please install bitblas>=0.1.0"),
    (
        "0.20.0",
        "AssertionError: humming is not available, please run 'pip install "
        "git+https://github.com/inclusionAI/humming' to install it.",
    ),
    ("0.10.2-0.19.1", "ImportError: Petit is not installed. Please install it with `pip install petit-kernel`."),
    ("0.10.1-0.11.0", "AssertionError: TRTLLM FP4 GEMM requires FlashInfer"),
    ("0.14.0-0.20.0", "NotImplementedError: TritonExperts requires Triton. Install triton or disable LoRA for MoE."),
    ("0.13.0", "RuntimeError: DeepGEMM requested for MoE layer but not installed."),
)

UNSUPPORTED = _rows(
    "quantization-unsupported",
    None,
    (
        "0.10.0-0.20.0",
        "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. "
        "Current capability: 86.",
    ),
    (
        "0.10.0-0.20.0",
        "ValueError: The quantization method moe_wna16 + awq is not supported for the current GPU. Minimum "
        "capability: 75. Current capability: 70.",
    ),
    (
        "0.10.0-0.20.0",
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Required capability: ', "
        "'90. Current capability: 89.')",
    ),
    (
        "0.10.0-0.20.0",
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 89. ', "
        "'Current capability: 86.')",
    ),
    (
        "0.10.0-0.11.0",
        "ValueError: Current platform does not support NVFP4 quantization. Please use Blackwell and above.",
    ),
    (
        "0.10.1-0.15.0",
        "ValueError: Current platform does not support NVFP4 quantization. Please use Blackwell GPUs or enable "
        "FlashInfer.",
    ),
    ("0.11.1-0.15.1", "ValueError: No valid NVFP4 GEMM backend found. Please check your platform capability."),
    (
        "0.16.0-0.19.1",
        "ValueError: No NVFP4 GEMM backend selected, available backends: [<NvFp4LinearBackend.VLLM_CUTLASS: "
        "'cutlass'>, <NvFp4LinearBackend.MARLIN: 'marlin'>]",
    ),
    ("0.10.0-0.20.0", "ValueError: Failed to find a kernel that can implement the WNA16 linear layer. Reasons: "),
    ("0.10.0-0.20.0", "ValueError: Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: "),
    (
        "0.20.0",
        "ValueError: Failed to find a kernel that can implement the MXFP8 linear layer. Reasons: "
        "FlashInferMxfp8LinearKernel: requires compute capability 100",
    ),
    (
        "0.20.0",
        "ValueError: Failed to find a kernel that can implement the NVFP4 linear layer. Reasons: "
        "MarlinNvFp4LinearKernel: requires compute capability 80",
    ),
    ("0.15.0-0.20.0", "NotImplementedError: No FP8 MoE backend supports the deployment configuration."),
    ("0.15.0-0.20.0", "NotImplementedError: No NvFp4 MoE backend supports the deployment configuration."),
    ("0.19.0-0.20.0", "NotImplementedError: No MXFP4 MoE backend supports the deployment configuration."),
    ("0.20.0", "NotImplementedError: No Int8 MoE backend supports the deployment configuration."),
    ("0.20.0", "NotImplementedError: No WNA16 MoE backend supports the deployment configuration."),
    ("0.20.0", "NotImplementedError: No Unquantized MoE backend supports the deployment configuration."),
    ("0.14.0-0.14.1", "ValueError: No NvFp4 kernel backend available for NvFp4 MoE."),
    ("0.19.0-0.20.0", "ValueError: No MXFP8 MoE backends available."),
    (
        "0.10.2-0.11.0",
        "AssertionError: No MXFP4 MoE backend (FlashInfer/Marlin/Triton) available.Please check your environment and "
        "try again.",
    ),
    (
        "0.11.1-0.18.1",
        "AssertionError: get_mxfp4_backend(with_lora_support=False) foundno compatible MXFP4 MoE backend "
        "(FlashInfer/Marlin/Triton).Please check your environment and try again.",
    ),
    ("0.10.1-0.18.1", "AssertionError: MXFP4 are not supported with this configuration."),
    (
        "0.10.0-0.18.1",
        "ValueError: Sparse CUTLASS not supported. vLLM must be built with CUDA 12.2 or later to use this feature",
    ),
    ("0.10.0-0.20.0", "ValueError: gptq_marlin quantization is currently not supported in ROCm."),
    (
        "0.10.2-0.19.1",
        "ValueError: The 'petit' quantization backend is designed for AMD GPUs and is not supported on the CUDA "
        "platform. For NVIDIA GPUs, please use a different quantization method such as FP8, AWQ, or GPTQ.",
    ),
)

FORMAT = _rows(
    "checkpoint-format",
    None,
    (
        "0.10.0-0.20.0",
        "RuntimeError: Unsupported FusedMoe scheme: num_bits=4 type='int' symmetric=True group_size=None "
        "strategy='channel' actorder=None, None",
    ),
    ("0.10.0-0.20.0", "RuntimeError: Unsupported FusedMoe scheme"),
    ("0.10.0-0.20.0", "ValueError: WNA16MoE is not supported with actorder=group/dynamic."),
    ("0.10.0-0.20.0", "ValueError: Unsupported num_bits = 3. Supported num_bits = dict_keys([4, 8])"),
    ("0.10.1-0.20.0", "ValueError: Unsupported num_bits = 8.Supported num_bits = dict_keys([4])"),
    ("0.10.0-0.20.0", "ValueError: Unsupported quantization config: bits=3, sym=False"),
    (
        "0.10.0-0.15.1",
        "ValueError: BitBLAS does not support weight_bits = 3. Only weight_bits = [1, 2, 4, 8] are supported.",
    ),
    ("0.10.0-0.15.1", "ValueError: BitBLAS does not support is_sym = False. Only sym = [True] are supported."),
    (
        "0.10.0-0.15.1",
        "ValueError: Marlin_24 does not support group_size = 64. Only group_sizes = [-1, 128] are supported.",
    ),
    (
        "0.10.0-0.15.1",
        "ValueError: Marlin_24 does not support quant_type = uint2b2. Only weight_bits = [uint4b8, uint8b128] are "
        "supported.",
    ),
    ("0.10.0-0.10.1.1", "ValueError: QQQ does not support weight_bits = 8. Only weight_bits = [4] are supported."),
    (
        "0.10.0-0.10.1.1",
        "ValueError: QQQ does not support group_size = 64. Only group_sizes = [-1, 128] are supported.",
    ),
    ("0.10.0-0.10.1.1", "ValueError: QQQ does not support is_sym = False. Only sym = [True] are supported."),
    ("0.10.0-0.14.1", "AssertionError: The only supported HQQ group size is currently 64."),
    ("0.10.0-0.14.1", "AssertionError: The only supported HQQ quantization bitsize is currently 4."),
    ("0.10.0-0.14.1", "AssertionError: Unsupported quant bitsize (must be 4)"),
    ("0.10.0-0.20.0", "ValueError: Unsupported GGUF quantization type IQ1_M in layer model.layers.0.mlp.down_proj."),
    ("0.10.0-0.20.0", "NotImplementedError: Unsupported GGUF quantization type: 29"),
    ("0.10.0-0.20.0", "NotImplementedError: Apply router weight on input is not supported forfused GGUF MoE method."),
    ("0.10.0-0.11.2", "ValueError: AWQMoEMethod only supports 4bit now."),
    ("0.12.0-0.20.0", "ValueError: AWQMarlinMoEMethod only supports 4bit now."),
    ("0.10.0-0.20.0", "ValueError: GPTQMarlinMoEMethod only supports int4 and int8 now."),
    ("0.10.0-0.20.0", "ValueError: moe_wna16 only support gptq and awq."),
    ("0.11.0-0.20.0", "ValueError: This method only supports 4-bit weights (num_bits=4)."),
    ("0.10.0-0.18.1", "ValueError: Cutlass only supports 8-bit quantization"),
    ("0.10.0-0.18.1", "ValueError: Quantization type not supported by Cutlass"),
    (
        "0.10.0-0.15.1",
        "ValueError: Unsupported weight strategy=group, supported strategies are ['channel', 'tensor']",
    ),
    (
        "0.14.0-0.20.0",
        "ValueError: Unsupported ModelOpt FP8 quant_algo for vLLM: FP8_BLOCK. Supported: FP8 / "
        "FP8_PER_CHANNEL_PER_TOKEN / FP8_PB_WO.",
    ),
    ("0.10.1-0.13.0", "ValueError: Unknown ModelOpt quant algo: W4A8_AWQ"),
    (
        "0.16.0-0.17.1",
        "NotImplementedError: MXFP8 quantization does not yet support MoE models. Please use FP8 or NVFP4 quantization "
        "for MoE models.",
    ),
    (
        "0.17.0-0.20.0",
        "ValueError: Unsupported OCP MX dtype combination for MoE: input_dtype=fp6_e3m2, weight_dtype=fp4. Please "
        "check that the combination is supported in OCP_MX_Scheme.",
    ),
    (
        "0.17.0-0.20.0",
        "NotImplementedError: Current input dtype fp8_e4m3 is not compatible with OCP MX (weight) MoE quantization. "
        "Please open an issue",
    ),
    (
        "0.10.0-0.20.0",
        "NotImplementedError: A 0 zero-point is not supported by Exllama due to a bug in the original GPTQ checkpoint "
        "format leading to exllama kernel adding 1 to the zero points during inference",
    ),
    ("0.10.0-0.20.0", "ValueError: Unsupported bnb_4bit_quant_storage: float16"),
    ("0.10.0-0.13.0", "ValueError: Unsupported backend: marlin, currently only support ['auto', 'gptq', 'awq']"),
    ("0.14.0-0.20.0", "ValueError: Unsupported backend: marlin, currently only support ['auto', 'gptq', 'awq']."),
    ("0.10.0-0.13.0", "ValueError: Unsupported data_type: float, currently only support ['int']"),
    ("0.14.0-0.20.0", "ValueError: Unsupported data_type: float, currently only support ['int']."),
    ("0.10.0-0.13.0", "ValueError: Unsupported packing_format: auto_round:auto_awq, currently only support ['auto']"),
    ("0.14.0-0.20.0", "ValueError: Unsupported packing_format: auto_round:auto_awq, currently only support ['auto']."),
    ("0.10.0-0.13.0", "ValueError: Unsupported weight_bits: 3, currently only support [2, 4, 8]"),
    ("0.14.0-0.20.0", "ValueError: Unsupported weight_bits: 3, currently only support [2, 4, 8]."),
    (
        "0.10.0-0.20.0",
        "ValueError: The block-wise quantization only supports dynamic activation scheme for now, but got static "
        "activation scheme.",
    ),
    ("0.10.0-0.20.0", "ValueError: Unsupported activation scheme per_token"),
    ("0.10.0-0.20.0", "ValueError: Unsupported model when in features size is not multiple of 16"),
    ("0.11.1-0.13.0", "AssertionError: Only support weight_block_size == [128, 128], got [64, 64]"),
    ("0.10.0-0.20.0", "AssertionError: gelu not supported for Marlin MoE."),
    (
        "0.10.1-0.14.1",
        "ValueError: Unsupported activation: gelu. Only silu and swigluoai activations are supported.",
    ),
    (
        "0.10.0-0.14.1",
        "NotImplementedError: Only support per-tensor scaling factor for compressed-tensors KV cache. Expected "
        "strategy: tensor, found strategy: channel",
    ),
    (
        "0.10.0-0.20.0",
        "NotImplementedError: Only support symmetric scaling factor for compressed-tensors KV cache. However found "
        "symmetric: False",
    ),
    (
        "0.10.0-0.20.0",
        "NotImplementedError: Only support per-tensor scaling factor for quark KV cache. Expected qscheme: "
        "per_tensor, found qscheme: per_channel",
    ),
    ("0.10.0-0.20.0", "ValueError: Only support per-tensor scaling factor for fp8 KV cache"),
    (
        "0.10.0-0.20.0",
        "NotImplementedError: Currently, Quark models with output_tensors and bias quantized are not supported",
    ),
    ("0.11.1-0.20.0", "ValueError: Unsupported forward_dtype: nvfp4"),
    ("0.11.1-0.20.0", "ValueError: Pseudoquantization is not supported for vLLM"),
    ("0.19.0-0.19.1", "ValueError: mxfp8 only supports dynamic activation scheme."),
    (
        "0.10.0-0.20.0",
        "ValueError: Found a different quantization schemes for ['q_proj', 'k_proj', 'v_proj'] in "
        "model.layers.0.self_attn.qkv_proj. vLLM requires all to use the same scheme.",
    ),
    (
        "0.10.0-0.20.0",
        "ValueError: Found a different quantization configuration for ['gate_proj', 'up_proj'] in "
        "model.layers.0.mlp.gate_up_proj. vLLM requires all to use the same scheme.",
    ),
    (
        "0.10.1-0.20.0",
        "ValueError: Fused MoE layer 'model.layers.0.mlp.experts' requires consistent quant config for all sub-layers",
    ),
    (
        "0.10.1-0.20.0",
        "ValueError: Fused module 'model.layers.0.self_attn.qkv_proj' requires consistent quant config for "
        "['q_proj', 'k_proj', 'v_proj']",
    ),
    (
        "0.17.0-0.20.0",
        "ValueError: Mixed quant_algo within fused layer model.layers.0.mlp.gate_up_proj: ['FP8', 'NVFP4']. All "
        "shards must use the same quantization.",
    ),
    (
        "0.17.0-0.20.0",
        "ValueError: MIXED_PRECISION quant_algo requires a non-empty 'quantized_layers' mapping in the quantization "
        "config.",
    ),
    (
        "0.10.0-0.20.0",
        "ValueError: NVFP4 quantization requires the following fields in hf_quant_config.json: ['group_size']",
    ),
    (
        "0.16.0-0.20.0",
        "ValueError: MXFP8 quantization requires the following fields in hf_quant_config.json: ['quant_algo']",
    ),
    ("0.14.0-0.14.1", "ValueError: CompressedTensorsW4A4Nvfp4MoEMethod does not yet support non gated MoE models."),
    (
        "0.12.0-0.13.0",
        "AssertionError: Non-gated activations are only supported by the flashinfer CUTLASS backend for modelopt "
        "checkpoints",
    ),
    (
        "0.14.0-0.14.1",
        "NotImplementedError: Non-gated activations are only supported by FlashInfer CUTLASS NvFP4 MoE backend.",
    ),
    (
        "0.18.0-0.20.0",
        "NotImplementedError: Dynamic FP8 activation quantization is not yet supported for W4A8. The current "
        "implementation expects static per-tensor FP8 scales stored in the checkpoint.",
    ),
    (
        "0.10.0-0.11.0",
        "NotImplementedError: QuarkW4A4MXFp4MoEMethod with static input scales is currently not implemented. Please "
        "open an issue.",
    ),
    (
        "0.11.1-0.20.0",
        "NotImplementedError: QuarkOCP_MX with static input scales is currently not implemented. Please open an issue.",
    ),
    (
        "0.17.0-0.20.0",
        "NotImplementedError: QuarkOCP_MX_MoEMethod with dynamic input scales is currently not implemented for OCP MX "
        "scheme w_mxfp4_a_mxfp6. Please open an issue.",
    ),
    ("0.10.1-0.11.0", "NotImplementedError: Mxfp4 linear layer is not implemented"),
    ("0.10.1-0.11.0", "NotImplementedError: Mxfp4 attention layer is not implemented"),
    ("0.11.0-0.20.0", "ValueError: W4A8-int MoE needs dynamic per-token activation quantization."),
    ("0.13.0-0.20.0", "ValueError: Unsupported weight_bits: 3"),
    ("0.14.0-0.20.0", "NotImplementedError: Unsupported quantization type."),
    ("0.15.0-0.20.0", "ValueError: Unsupported quantization scheme."),
    ("0.13.0-0.19.1", "AssertionError: Triton kernel only supports symmetric quantization"),
    ("0.10.0-0.19.1", "AssertionError: int8 quantization only supports block or channel-wise"),
    ("0.10.0-0.20.0", "AssertionError: w1_zp is not supported in CUTLASS MoE"),
    ("0.10.0-0.20.0", "AssertionError: w2_zp is not supported in CUTLASS MoE"),
    ("0.10.0-0.15.1", "NotImplementedError: Zero points not supported by BitBLAS"),
    ("0.10.0-0.15.1", "ValueError: Unsupported quant_method awq"),
    ("0.10.0-0.15.1", "ValueError: Unsupported zeros type: quantized"),
    ("0.10.0-0.20.0", "AssertionError: Unsupported groupsize = 48"),
    ("0.10.0-0.20.0", "AssertionError: Unsupported gptq type = uint2b2"),
    ("0.10.0-0.20.0", "ValueError: Only support per-tensor scaling factorfor fp8-quantized Q/prob"),
    (
        "0.17.0-0.20.0",
        "AssertionError: mm_mxfp8 requires K >= 128, got K=64. in_features is too small for mm_mxfp8.",
    ),
    (
        "0.17.0-0.20.0",
        "AssertionError: mm_mxfp8 requires N >= 128, got N=64. out_features is too small for mm_mxfp8.",
    ),
)

PHRASINGS = FORCED + FEATURE + FLAG + PACKAGE + UNSUPPORTED + FORMAT


def _in_a_traceback(line: str) -> str:
    """The line as vLLM 0.20.0 logs a failed engine start (EngineCore's logged traceback)."""
    prefix = "(EngineCore_DP0 pid=4242) ERROR 11-30 16:49:31 [core.py:1136] "
    return (
        f"{prefix}EngineCore failed to start.\n"
        f"{prefix}Traceback (most recent call last):\n"
        f'{prefix}  File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 1110, in run_engine_core\n'
        f"{prefix}    raise ValueError(\n"
        f"{prefix}{line}\n"
        "(APIServer pid=4100) RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}\n"
    )


@pytest.mark.parametrize(
    "phrasing", PHRASINGS, ids=[f"{p.versions}:{p.line.split(': ', 1)[-1][:48]}" for p in PHRASINGS]
)
def test_each_kernel_phrasing_is_recognised(phrasing: Phrasing) -> None:
    report = diagnose(_in_a_traceback(phrasing.line))
    assert [d.kind for d in report.failures] == [phrasing.kind]
    found = report.failures[0]
    assert found.line == phrasing.line.strip()
    assert (found.fixes[0].render() if found.fixes else None) == phrasing.fix
    assert found.cause and (found.advice or found.fixes)
    assert report.error_line == phrasing.line.strip()


def test_the_table_has_one_row_per_message() -> None:
    lines = [p.line for p in PHRASINGS]
    assert len(lines) == len(set(lines))


def test_the_issue_15_nvfp4_moe_backend_failure() -> None:
    text = (
        "(APIServer pid=1) INFO 01-02 03:04:05 [utils.py:253] non-default args: {'model': 'nvidia/Qwen3-30B-A3B-FP4', "
        "'moe_backend': 'triton', 'gpu_memory_utilization': 0.8}\n"
        + _in_a_traceback("ValueError: moe_backend='triton' is not supported for NvFP4 MoE")
    )
    report = diagnose(text)
    found = report.failures[0]
    assert found.kind == "forced-kernel" and "VLLM_USE_FLASHINFER_MOE_FP4" in found.unset_env
    assert found.fixes[0].render() == "remove --moe-backend" and found.fixes[0].value == "triton"
    printed = report_text(report)
    assert "fix:   remove --moe-backend" in printed and "unset VLLM_USE_FLASHINFER_MOE_FP4" in printed
    assert report_json(report)["failures"][0]["unset_env"][0] == "VLLM_USE_FLASHINFER_MOE_FP4"


def test_an_environment_choice_names_the_variable_and_vllms_suggestion() -> None:
    line = (
        "ValueError: FlashInfer FP8 MoE throughput backend does not support block quantization. Please use "
        "VLLM_FLASHINFER_MOE_BACKEND=latency instead."
    )
    found = diagnose(_in_a_traceback(line)).failures[0]
    assert found.fixes == () and "VLLM_USE_FLASHINFER_MOE_FP8" in found.unset_env
    assert "VLLM_FLASHINFER_MOE_BACKEND=latency" in found.advice


def test_a_capability_failure_names_both_capabilities() -> None:
    line = UNSUPPORTED[2].line
    found = diagnose(_in_a_traceback(line)).failures[0]
    assert "90" in found.cause and "89" in found.cause


def test_the_same_words_logged_while_vllm_tries_kernels_are_not_a_failure() -> None:
    # vLLM logs each kernel it rejects at DEBUG during automatic selection and then boots with another one.
    text = (
        "(EngineCore_DP0 pid=7) DEBUG 11-30 16:49:31 [nvfp4.py:265] NvFp4 MoE backend 'FLASHINFER_TRTLLM' does not "
        "support the deployment configuration since kernel does not support current device.\n"
        "(EngineCore_DP0 pid=7) INFO 11-30 16:49:31 [nvfp4.py:262] Using 'MARLIN' NvFp4 MoE backend out of potential "
        "backends: ['FLASHINFER_TRTLLM', 'MARLIN'].\n"
        "(APIServer pid=6) INFO 11-30 16:50:01 [launcher.py:47] Application startup complete.\n"
    )
    report = diagnose(text)
    assert report.ok and report.error_line is None
