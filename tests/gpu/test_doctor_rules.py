"""The doctor's rules one at a time, each on real vLLM 0.20.0 logs from the H200 or on vLLM's own wording: what makes
a boot ok, where the version and the flags are read from, and which fixes each failure gets and when."""

from __future__ import annotations

import pytest

from comic_narrator.gpu.doctor import Diagnosis, diagnose
from comic_narrator.gpu.flags import FlagChange, apply_flag_changes, flag_value, requested_bytes, utilization_within

from .conftest import DATA, LOGS

ENGINE_ERROR = "(EngineCore pid=832) ERROR 11-30 16:47:29 [core.py:1136] "
NO_KV = (
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
    "the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)


def _args_line(args: str) -> str:
    return f"(APIServer pid=655) INFO 11-30 16:46:38 [utils.py:233] non-default args: {{{args}}}\n"


def _fixes(text: str) -> list[str]:
    (found,) = diagnose(text).failures
    return [fix.render() for fix in found.fixes]


# --- ok, version, flags ---------------------------------------------------------------------------------------


def test_a_ready_boot_with_a_failure_after_it_is_not_ok() -> None:
    # The time-shared Qwen2-VL run became ready, then lost a cached image after a wake.
    report = diagnose((LOGS / "qwen2vl-sleep-mm-cache.log").read_text())
    assert report.ready and report.failures and not report.ok


def test_a_log_cut_before_it_is_ready_is_not_ok_though_nothing_failed() -> None:
    text = (LOGS / "b-bt4096.log").read_text()
    report = diagnose(text[: text.index("Available KV cache memory")])
    assert not report.ready and report.failures == () and not report.ok


def _lines_of(text: str, process: str) -> str:
    return "".join(line + "\n" for line in text.splitlines() if line.startswith(f"({process} "))


def test_the_version_is_read_from_the_banner_or_from_the_engine_alone() -> None:
    # The API server prints the banner ("version 0.20.0"); the engine core its "LLM engine (v0.20.0)" line. A log
    # of either process alone (e.g. an engine's output collected on its own) still names the release.
    text = (LOGS / "b-bt4096.log").read_text()
    api, engine = _lines_of(text, "APIServer"), _lines_of(text, "EngineCore")
    assert "version 0.20.0" in api and "LLM engine (v0.20.0)" not in api
    assert "LLM engine (v0.20.0)" in engine and "version 0.20.0" not in engine
    assert diagnose(api).vllm_version == "0.20.0"
    assert diagnose(engine).vllm_version == "0.20.0"


def test_the_string_flags_are_read_from_the_args_line() -> None:
    text = _args_line(
        "'model': 'nvidia/Qwen3-30B-A3B-FP4', 'quantization': 'modelopt_fp4', 'kv_cache_dtype': 'fp8', "
        "'moe_backend': 'triton', 'gpu_memory_utilization': 0.8"
    )
    args = diagnose(text).args
    assert (args.quantization, args.kv_cache_dtype, args.moe_backend) == ("modelopt_fp4", "fp8", "triton")
    plain = diagnose((LOGS / "b-bt4096.log").read_text()).args
    assert (plain.quantization, plain.kv_cache_dtype, plain.moe_backend) == (None, None, None)


def test_a_kernel_forced_by_the_environment_gets_no_flag_fix_when_the_args_line_names_no_backend() -> None:
    # vLLM 0.15-0.20's words when VLLM_USE_FLASHINFER_MOE_FP8=1 forced FlashInfer; the boot's flags name no
    # --moe-backend, so there is no flag to take out: the fix is unsetting the variable.
    text = _args_line("'model': 'Qwen/Qwen3-30B-A3B-FP8', 'gpu_memory_utilization': 0.9") + (
        f"{ENGINE_ERROR}NotImplementedError: Found VLLM_USE_FLASHINFER_MOE_FP8=1, but no FlashInfer FP8 MoE backend "
        "supports the configuration.\n"
    )
    (found,) = diagnose(text).failures
    assert found.kind == "forced-kernel" and found.fixes == ()
    assert found.unset_env[0] == "VLLM_USE_FLASHINFER_MOE_FP8"


def test_an_args_line_that_holds_no_dict_is_read_as_defaults_and_the_failure_still_found() -> None:
    # A hand-edited or garbled paste: braces around a set, not vLLM's dict of flags.
    text = "non-default args: {'enforce_eager', 'gpu_memory_utilization'}\n" + f"{ENGINE_ERROR}{NO_KV}\n"
    report = diagnose(text)
    assert report.args.gpu_memory_utilization is None and not report.args.enforce_eager
    assert [d.kind for d in report.failures] == ["no-kv-memory"]


# --- no memory for the KV cache -------------------------------------------------------------------------------


def test_no_kv_memory_names_vllms_error_line_and_keeps_eager_out_of_an_eager_boot() -> None:
    report = diagnose((DATA / "device-run" / "fail-nokv.log").read_text())
    (found,) = report.failures
    assert found.line == NO_KV
    assert report.args.enforce_eager and "--enforce-eager" not in [f.render() for f in found.fixes]


def test_vllms_line_alone_gets_vllms_default_batch_halved_and_eager_but_no_utilisation() -> None:
    # Nothing says the batched tokens or the utilisation: 2048 (vLLM's default below 70 GiB) halved, CUDA graphs
    # off, and no utilisation to raise.
    assert _fixes(f"{ENGINE_ERROR}{NO_KV}\n") == ["--max-num-batched-tokens 1024", "--enforce-eager"]


@pytest.mark.parametrize(("utilization", "raised"), [(0.93, "0.95"), (0.95, None)])
def test_the_utilisation_is_raised_only_up_to_095(utilization: float, raised: str | None) -> None:
    text = _args_line(f"'gpu_memory_utilization': {utilization}, 'enforce_eager': True") + f"{ENGINE_ERROR}{NO_KV}\n"
    expected = ["--max-num-batched-tokens 1024"] + ([f"--gpu-memory-utilization {raised}"] if raised else [])
    assert _fixes(text) == expected


def test_a_negative_kv_pool_is_the_failure_even_when_the_log_stops_before_vllms_error() -> None:
    text = (DATA / "device-run" / "fail-nokv.log").read_text()
    cut = text[: text.index("\n", text.index("Available KV cache memory")) + 1]
    assert "No available memory" not in cut
    (found,) = diagnose(cut).failures
    assert found.kind == "no-kv-memory" and found.line == "Available KV cache memory: -0.96 GiB"


# --- CUDA out of memory ---------------------------------------------------------------------------------------

OOM_WHILE_LOADING = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacity of 23.52 "
    "GiB of which 101.06 MiB is free. Including non-PyTorch memory, this process has 23.41 GiB memory in use. Of "
    "the allocated memory 22.87 GiB is allocated by PyTorch, and 112.43 MiB is reserved by PyTorch but unallocated."
)


def test_an_oom_outside_graph_capture_does_not_suggest_eager() -> None:
    # PyTorch's wording, raised while the weights load (before vLLM captures any graph).
    text = (
        _args_line("'gpu_memory_utilization': 0.9")
        + "(EngineCore pid=832) INFO 11-30 16:47:21 [gpu_model_runner.py:4777] Starting to load model m...\n"
        + f"{ENGINE_ERROR}{OOM_WHILE_LOADING}\n"
    )
    assert _fixes(text) == ["--gpu-memory-utilization 0.85"]


# --- the line that names a crash ------------------------------------------------------------------------------


def test_the_root_cause_is_named_even_when_the_wrapper_comes_first_in_the_log() -> None:
    # The same real boot gathered process by process (the API server's lines, then the engine core's), as a log
    # collector that keeps one stream per process gives it: the API server's "Engine core initialization failed"
    # now comes before the engine's ValueError that caused it.
    text = (LOGS / "c-cotenant-cached.log").read_text()
    regrouped = _lines_of(text, "APIServer") + _lines_of(text, "EngineCore")
    assert regrouped.index("Engine core initialization failed") < regrouped.index("ValueError: Free memory")
    report = diagnose(regrouped)
    assert report.error_line is not None and report.error_line.startswith("ValueError: Free memory on device cuda:0")


# --- kernel failures: what each group says, which variables it unsets, which flag value it takes out ------------


def _kernel_failure(line: str, args: str = "") -> Diagnosis:
    (found,) = diagnose((_args_line(args) if args else "") + f"{ENGINE_ERROR}{line}\n").failures
    return found


FP8_MOE_ENV = ("VLLM_USE_FLASHINFER_MOE_FP8", "VLLM_FLASHINFER_MOE_BACKEND", "VLLM_TEST_FORCE_FP8_MARLIN")


@pytest.mark.parametrize(
    ("line", "cause", "unset_env"),
    [
        # 0.11.1-0.13.0: the variable vLLM suggests setting is not the one that forced the kernel.
        (
            "ValueError: FlashInfer FP8 MoE throughput backend does not support block quantization. Please use "
            "VLLM_FLASHINFER_MOE_BACKEND=latency instead.",
            "the FP8 MoE kernel forced by the environment (VLLM_USE_FLASHINFER_MOE_FP8)",
            FP8_MOE_ENV,
        ),
        # 0.10.1-0.15.1: the words name no format; the rule knows it is FP8's FlashInfer kernel.
        (
            "AssertionError: FusedMoE flashinfer kernels are only supported for Llama4",
            "the FP8 MoE kernel forced by the environment (VLLM_USE_FLASHINFER_MOE_FP8)",
            FP8_MOE_ENV,
        ),
        (
            "ValueError: VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 is set but the current device capability is not "
            "supported. Only SM90 (CUTLASS) and SM100+ (TRTLLM) are supported.",
            "forced by the environment (VLLM_USE_FLASHINFER_MOE_MXFP4_BF16)",
            (
                "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16",
                "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8",
                "VLLM_MXFP4_USE_MARLIN",
            ),
        ),
        ("AssertionError: DeepGemm only supports is_act_and_mul=True for now.", "DeepGEMM", ("VLLM_USE_DEEP_GEMM",)),
        (
            "ValueError: Unknown VLLM_NVFP4_GEMM_BACKEND=cutlas. Valid choices: ['flashinfer-cutlass', "
            "'flashinfer-trtllm', 'flashinfer-cudnn', 'cutlass', 'marlin', 'emulation']",
            "NVFP4 GEMM kernel forced by VLLM_NVFP4_GEMM_BACKEND",
            ("VLLM_NVFP4_GEMM_BACKEND",),
        ),
        (
            "ValueError: Marlin W4A8-FP8 only support SM89 or SM120 device (It is slower than Marlin W4A16 on other "
            "devices). You can consider using W4A8-INT8 instead(set VLLM_MARLIN_INPUT_DTYPE=int8).",
            "VLLM_MARLIN_INPUT_DTYPE asks Marlin",
            ("VLLM_MARLIN_INPUT_DTYPE",),
        ),
    ],
)
def test_a_kernel_forced_by_the_environment_names_the_variables_to_unset(
    line: str, cause: str, unset_env: tuple[str, ...]
) -> None:
    found = _kernel_failure(line)
    assert cause in found.cause and found.unset_env == unset_env and found.fixes == ()


def test_the_moe_backend_to_take_out_is_the_flags_value_not_vllms_kernel_name() -> None:
    # "moe_backend='triton'" is the flag's own value; "'DEEPGEMM'" is vLLM's name of a kernel, which no flag takes.
    named = _kernel_failure("ValueError: moe_backend='triton' is not supported for NvFP4 MoE")
    assert named.fixes[0].value == "triton" and "the NvFP4 MoE kernel chosen by --moe-backend (triton)" in named.cause
    kernel = _kernel_failure("ValueError: FP8 MoE backend 'DEEPGEMM' does not support the deployment configuration.")
    assert kernel.fixes[0].value == "" and "the FP8 MoE kernel chosen by --moe-backend or" in kernel.cause
    assert "DEEPGEMM" not in kernel.cause


def test_data_and_tensor_parallel_failures_get_their_own_advice() -> None:
    dp = _kernel_failure(
        "ValueError: CutlassExpertsFp4 doesn't support DP. Use flashinfer CUTLASS Fused MoE backend instead (set "
        "VLLM_USE_FLASHINFER_MOE_FP4=1)"
    )
    assert "data parallelism" in dp.cause and "VLLM_USE_FLASHINFER_MOE_FP4=1" in dp.advice
    tp = _kernel_failure("NotImplementedError: Online transforms with tensor parallelism is not supported")
    assert "tensor parallelism" in tp.cause and "--tensor-parallel-size 1" in tp.advice


def test_a_wrong_quantization_flag_is_taken_out_with_its_value() -> None:
    unknown = _kernel_failure(
        "ValueError: Unknown quantization method: fp4. Must be one of ['awq', 'fp8', 'gptq', 'modelopt_fp4'].",
        "'quantization': 'fp4'",
    )
    assert unknown.fixes[0].value == "fp4" and "'fp4'" in unknown.cause
    mismatch = _kernel_failure(
        "ValueError: Quantization method specified in the model config (awq) does not match the quantization "
        "method specified in the `quantization` argument (gptq).",
    )
    assert mismatch.fixes[0].value == "gptq" and "--quantization awq" in mismatch.advice
    assert "quantised with awq but --quantization says gptq" in mismatch.cause


@pytest.mark.parametrize(("args", "value"), [("'quantization': 'fp8'", "fp8"), ("", "")])
def test_a_quantization_the_checkpoint_is_not_stored_in_is_removed_from_the_command(args: str, value: str) -> None:
    # vLLM 0.10-0.20: fp8 asked of a checkpoint that is not stored in it (block-wise scales need it serialized).
    found = _kernel_failure(
        "ValueError: The block-wise quantization only supports fp8-serialized checkpoint for now.", args
    )
    assert found.fixes[0].value == value
    argv = ("vllm", "serve", "m", "--quantization", "fp8", "--port", "8000")
    assert apply_flag_changes(argv, found.fixes) == ("vllm", "serve", "m", "--port", "8000")
    assert "ptpc_fp8" not in found.cause


def test_ptpc_fp8_on_a_quantised_checkpoint_says_it_quantises_on_load() -> None:
    found = _kernel_failure("ValueError: ptpc_fp8 as of now only support dynamic quantization.")
    assert "ptpc_fp8 quantises on load" in found.cause


@pytest.mark.parametrize(
    ("line", "dtype", "cause"),
    [
        (
            "ValueError: torch.bfloat16 is not supported for quantization method gptq. Supported dtypes: "
            "[torch.float16]",
            "half",
            "gptq kernels do not take torch.bfloat16 activations",
        ),
        # gpt-oss's MXFP4 served with --dtype half.
        (
            "ValueError: torch.float16 is not supported for quantization method mxfp4. Supported dtypes: "
            "[torch.bfloat16]",
            "bfloat16",
            "mxfp4 kernels do not take torch.float16 activations",
        ),
        (
            "AssertionError: float16 is required for marlin24 compressed models. Set dtype=torch.float16",
            "half",
            "marlin24 kernels do not take this dtype activations",
        ),
    ],
)
def test_the_dtype_fix_is_the_first_one_the_quantisation_takes(line: str, dtype: str, cause: str) -> None:
    found = _kernel_failure(line)
    assert found.fixes[0].render() == f"--dtype {dtype}" and cause in found.cause


@pytest.mark.parametrize(
    ("line", "package"),
    [
        ("ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.48.1.", "bitsandbytes"),
        (
            "ImportError: Backend fbgemm requires fbgemm.f4f4bf16 operator, Please install with: pip install "
            "fbgemm-gpu-genai",
            "fbgemm-gpu-genai",
        ),
    ],
)
def test_a_missing_kernel_package_is_named(line: str, package: str) -> None:
    assert f"comes from {package}," in _kernel_failure(line).cause


NO_NVFP4_GEMM = (  # 0.16.0-0.19.1
    "ValueError: No NVFP4 GEMM backend selected, available backends: [<NvFp4LinearBackend.VLLM_CUTLASS: 'cutlass'>, "
    "<NvFp4LinearBackend.MARLIN: 'marlin'>]"
)


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (NO_NVFP4_GEMM, "native NVFP4 needs Blackwell"),
        ("ValueError: gptq_marlin quantization is currently not supported in ROCm.", "this GPU platform has no"),
        (
            "ValueError: Failed to find a kernel that can implement the WNA16 linear layer. Reasons: ",
            "none of this vLLM build's kernels",
        ),
    ],
)
def test_each_unsupported_quantisation_says_why(line: str, cause: str) -> None:
    assert cause in _kernel_failure(line).cause


def test_an_unsupported_quantisation_with_a_forced_moe_backend_says_to_try_without_it() -> None:
    assert "try without --moe-backend" in _kernel_failure(NO_NVFP4_GEMM, "'moe_backend': 'marlin'").advice
    assert "--moe-backend" not in _kernel_failure(NO_NVFP4_GEMM).advice


# --- applying a fix to a vLLM command line --------------------------------------------------------------------

H200_TOTAL_BYTES = 150_109_880_320
"""CUDA's total on the lent H200 (as tests/gpu/test_plan.py)."""


def test_the_utilisation_that_fits_is_lowered_when_rounding_would_ask_one_byte_too_many() -> None:
    # One byte under what 0.62 requests: free / total is 0.62 less 7e-12, which the 2-decimal floor (with its
    # 1e-9 guard against float error) reads as 0.62; vLLM's ceil(0.62 x total) would then be refused.
    at_062 = requested_bytes(H200_TOTAL_BYTES, 0.62)
    assert utilization_within(H200_TOTAL_BYTES, at_062) == 0.62
    assert utilization_within(H200_TOTAL_BYTES, at_062 - 1) == 0.61


FIX = FlagChange("--gpu-memory-utilization", "0.49", "fits")


@pytest.mark.parametrize(
    "argv",
    [
        ("vllm", "serve", "m", "--gpu-memory-utilization", "0.6", "--port", "8000"),
        ("vllm", "serve", "m", "--gpu-memory-utilization=0.6", "--port", "8000"),
        # vLLM's parser takes underscores for dashes, in both forms
        ("vllm", "serve", "m", "--gpu_memory_utilization", "0.6", "--port", "8000"),
        ("vllm", "serve", "m", "--gpu_memory_utilization=0.6", "--port", "8000"),
    ],
)
def test_a_flags_value_is_read_and_replaced_in_every_spelling(argv: tuple[str, ...]) -> None:
    assert flag_value(argv, "--gpu-memory-utilization") == "0.6"
    fixed = apply_flag_changes(argv, (FIX,))
    assert flag_value(fixed, "--gpu-memory-utilization") == "0.49"
    assert len(fixed) == len(argv) + (1 if "=" in argv[3] else 0) and fixed[-2:] == ("--port", "8000")
    assert "0.6" not in fixed and not any(token.endswith("=0.6") for token in fixed)


def test_a_switch_already_on_the_command_line_is_left_as_it_is() -> None:
    argv = ("vllm", "serve", "m", "--enforce-eager", "--port", "8000")
    assert apply_flag_changes(argv, (FlagChange("--enforce-eager", None, "no CUDA graphs"),)) == argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("vllm", "serve", "m", "--max-num-seqs", "--port", "8000"), ("--max-num-seqs", "434", "--port", "8000")),
        (("vllm", "serve", "m", "--max-num-seqs"), ("--max-num-seqs", "434")),
    ],
)
def test_a_flag_written_without_its_value_gets_the_fixs_value(argv: tuple[str, ...], expected: tuple[str, ...]) -> None:
    # A stack file's command with the value left out: the fix gives it one and leaves the next flag alone.
    fixed = apply_flag_changes(argv, (FlagChange("--max-num-seqs", "434", "one Mamba block each"),))
    assert fixed == ("vllm", "serve", "m", *expected)


@pytest.mark.parametrize(("utilization", "lowered"), [(0.9, "0.85"), (0.57, "0.52"), (0.58, "0.53"), (0.29, "0.24")])
def test_an_oom_lowers_the_utilisation_by_five_hundredths_exactly(utilization: float, lowered: str) -> None:
    # 0.57 x 100 is 56.99999999999999 in floating point: flooring it unguarded gave 0.51.
    text = _args_line(f"'gpu_memory_utilization': {utilization}") + f"{ENGINE_ERROR}{OOM_WHILE_LOADING}\n"
    assert _fixes(text) == [f"--gpu-memory-utilization {lowered}"]


@pytest.mark.parametrize(("batched", "halved"), [(4096, 2048), (1024, 512), (512, 512)])
def test_the_batched_tokens_are_halved_but_never_below_512(batched: int, halved: int) -> None:
    text = _args_line(f"'max_num_batched_tokens': {batched}, 'enforce_eager': True") + f"{ENGINE_ERROR}{NO_KV}\n"
    assert _fixes(text) == [f"--max-num-batched-tokens {halved}"]


def test_a_flag_at_the_end_of_the_command_line_is_read_and_replaced() -> None:
    argv = ("vllm", "serve", "m", "--port", "8000", "--gpu-memory-utilization", "0.6")
    assert flag_value(argv, "--gpu-memory-utilization") == "0.6"
    assert apply_flag_changes(argv, (FIX,)) == (*argv[:-1], "0.49")
