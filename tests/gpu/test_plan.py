"""The planner against real vLLM 0.20.0 boots (H200 logs) and real published model figures."""

from __future__ import annotations

import json

import pytest

from comic_narrator.gpu.doctor import VllmArgs, diagnose
from comic_narrator.gpu.kv import kv_layout
from comic_narrator.gpu.model_info import ModelInfo, model_info_from_config
from comic_narrator.gpu.plan import (
    Calibration,
    DeviceMemory,
    PlanRequest,
    TtsTenant,
    VllmFlags,
    make_plan,
)
from comic_narrator.gpu.sizes import GIB, gib_to_bytes

from .conftest import CONFIGS, DATA, LOGS

H200 = DeviceMemory(total_bytes=150_109_880_320, name="NVIDIA H200")
"""CUDA's total on the lent H200 (torch.cuda.mem_get_info; NVML total 150,754,820,096 - reserved 644,939,776)."""

BOOT_FLAGS = VllmFlags(
    gpu_memory_utilization=0.6, max_model_len=32768, max_num_seqs=2, max_num_batched_tokens=4096, enforce_eager=True
)


def _model(name: str) -> ModelInfo:
    return model_info_from_config(json.loads((CONFIGS / f"{name}.config.json").read_text()), name=name)


def _calibration(log: str) -> Calibration:
    report = diagnose((LOGS / log).read_text())
    assert report.weights_bytes is not None and report.kv_cache_bytes is not None
    return Calibration(
        log,
        report.weights_bytes,
        report.kv_cache_bytes,
        report.cudagraph_estimate_bytes,
        report.args.gpu_memory_utilization,
        report.args.max_num_batched_tokens,
        report.args.max_num_seqs,
    )


def test_kv_layout_reproduces_vllm_token_and_concurrency_lines_for_a_hybrid_model() -> None:
    layout = kv_layout(_model("nemotron-3-nano-30b-a3b"))
    # "Setting attention block size to 2096 tokens"; "Add 1 padding layers" (b-bt4096.log)
    assert layout.block_size_tokens == 2096 and layout.padding_layers == 1
    assert (layout.group_size, layout.attention_groups, layout.mamba_groups) == (6, 1, 4)
    for log in ("b-bt4096.log", "g-graphs.log", "h-sleep.log"):
        report = diagnose((LOGS / log).read_text())
        assert report.kv_cache_bytes is not None
        assert layout.tokens(report.kv_cache_bytes) == report.kv_cache_tokens
        assert round(layout.max_concurrency(report.kv_cache_bytes, 32768), 2) == report.max_concurrency


def test_consistency_calibrated_on_a_boot_gives_that_boot_back() -> None:
    """Consistency check, not a prediction: calibrated on b-bt4096.log and compared with the same log, the KV
    figures match by algebra. It catches a planner that drops or misapplies the calibration; the budget (83.88 GiB)
    comes from another log (c-cotenant's vLLM line). The out-of-sample tests are the ones below it."""
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), BOOT_FLAGS, calibration=_calibration("b-bt4096.log"))
    )
    assert plan.vllm_budget_bytes / GIB == pytest.approx(83.88, abs=0.005)  # "(0.6, 83.88 GiB)" in c-cotenant
    assert plan.kv_cache_tokens == 844_688
    assert round(plan.max_concurrency, 2) == 100.90
    assert plan.fits and plan.boots


def test_calibration_predicts_another_utilisation_measured_later_on_the_device() -> None:
    """Out of sample: calibrated on one boot (b-bt4096, 0.6), compared with another boot's log."""
    # Device run (tests/data/gpu/device-run/retry-vllm-attempt2.log): utilisation 0.49 gave 8.83 GiB of KV,
    # 308,112 tokens, 36.80x. The plan is calibrated on a different boot (b-bt4096, utilisation 0.6).
    flags = VllmFlags(0.49, 32768, 2, 4096, enforce_eager=True)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags, calibration=_calibration("b-bt4096.log"))
    )
    real = diagnose((DATA / "device-run" / "retry-vllm-attempt2.log").read_text())
    assert real.kv_cache_tokens == 308_112
    assert plan.kv_cache_tokens == real.kv_cache_tokens
    assert round(plan.max_concurrency, 2) == real.max_concurrency == 36.80


def test_uncalibrated_estimate_is_within_one_percent_of_the_real_kv_pool() -> None:
    plan = make_plan(PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), BOOT_FLAGS))
    assert abs(plan.kv_cache_bytes / GIB - 24.21) / 24.21 < 0.01
    assert abs(plan.kv_cache_tokens - 844_688) / 844_688 < 0.01
    budget = {line.item: line for line in plan.lines}
    assert budget["weights"].basis == "estimate" and budget["CUDA graphs"].num_bytes == 0


def test_consistency_cuda_graphs_calibrated_on_the_graphs_log_give_that_log_back() -> None:
    """Consistency check, not a prediction: calibrated on g-graphs.log and compared with the same log."""
    flags = VllmFlags(0.6, 32768, 2, 4096, enforce_eager=False)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags, calibration=_calibration("g-graphs.log"))
    )
    assert plan.kv_cache_tokens == 836_304  # g-graphs.log
    graphs = next(line for line in plan.lines if line.item == "CUDA graphs")
    assert graphs.basis == "calibrated" and graphs.num_bytes == gib_to_bytes(0.09)


def _flags_of(args: VllmArgs) -> VllmFlags:
    """The flags a logged boot ran with (vLLM's 'non-default args' line; 32768 tokens where the log leaves it)."""
    return VllmFlags(
        args.gpu_memory_utilization,
        args.max_model_len or 32768,
        args.max_num_seqs,
        args.max_num_batched_tokens,
        enforce_eager=args.enforce_eager,
    )


def test_out_of_sample_the_device_runs_low_utilisation_boot_predicts_the_first_boot() -> None:
    """Out of sample, the other way round: calibrated on the device run's boot at 0.49 (8.83 GiB of KV), the plan
    for b-bt4096's flags (0.6) gives that boot's own lines, read from its log and written out here."""
    real = diagnose((LOGS / "b-bt4096.log").read_text())
    assert (real.kv_cache_tokens, real.max_concurrency) == (844_688, 100.90)
    calibration = _calibration("../device-run/retry-vllm-attempt2.log")
    assert calibration.gpu_memory_utilization == 0.49
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), _flags_of(real.args), calibration=calibration)
    )
    assert plan.kv_cache_tokens == 844_688
    assert round(plan.max_concurrency, 2) == 100.90


def test_out_of_sample_cuda_graphs_on_without_a_graphs_calibration() -> None:
    """Out of sample: calibrated on an eager boot (b-bt4096), the plan for g-graphs.log's boot (graphs on, whose
    memory the planner estimates) lands within 1 % of that boot's pool (23.96 GiB, 836,304 tokens)."""
    real = diagnose((LOGS / "g-graphs.log").read_text())
    assert real.kv_cache_tokens == 836_304 and real.args.enforce_eager is False
    flags = _flags_of(real.args)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags, calibration=_calibration("b-bt4096.log"))
    )
    assert abs(plan.kv_cache_tokens - 836_304) / 836_304 < 0.01
    assert next(line for line in plan.lines if line.item == "CUDA graphs").num_bytes > 0


@pytest.mark.parametrize(
    ("log", "outcome"),
    [("fail-nokv.log", "no-kv-memory"), ("fail-maxlen.log", "max-model-len")],
)
def test_out_of_sample_failed_boots_are_predicted_from_a_good_boots_calibration(log: str, outcome: str) -> None:
    """Out of sample: calibrated on b-bt4096 (a boot that worked), the plans for two boots that failed on the H200
    (0.42: KV -0.96 GiB; 0.43 with 262,144 tokens: 0.44 GiB of KV, 'estimated maximum model length is 67072')
    predict the failure each log names."""
    text = (DATA / "device-run" / log).read_text()
    real = diagnose(text)
    assert [d.kind for d in real.failures] == [outcome]
    plan = make_plan(
        PlanRequest(
            H200, _model("nemotron-3-nano-30b-a3b"), _flags_of(real.args), calibration=_calibration("b-bt4096.log")
        )
    )
    assert not plan.boots
    assert [p.outcome for p in plan.predictions] == [outcome]
    if outcome == "max-model-len":
        assert "Available KV cache memory: 0.44 GiB" in text and plan.kv_cache_bytes / GIB == pytest.approx(
            0.44, abs=0.005
        )
        assert "estimated maximum model length is 67072" in text
        fitting = int(plan.predictions[0].fixes[0].value or 0)
        assert abs(fitting - 67_072) / 67_072 < 0.05


# --- the RTX 5090 report (issue 5): 31.36 GiB usable; a TTS worker's ~9 GiB of cached blocks left 20.09 GiB free,
# below the 21.32 GiB that utilisation 0.68 requests. The model: Qwen2.5-VL-7B-Instruct (published config.json).
RTX5090_TOTAL = gib_to_bytes(31.36)
CONTEXT = 512 * 2**20


def test_rtx5090_preflight_catches_the_reported_failure() -> None:
    # NVML free before vLLM starts = what vLLM saw (20.09 GiB) + vLLM's own CUDA context.
    device = DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090", free_bytes=gib_to_bytes(20.09) + CONTEXT)
    flags = VllmFlags(gpu_memory_utilization=0.68, max_model_len=16384, max_num_seqs=8, limit_images_per_prompt=2)
    tts = TtsTenant("tts", footprint_bytes=gib_to_bytes(1.5), source="measured")
    plan = make_plan(PlanRequest(device, _model("qwen2.5-vl-7b-instruct"), flags, tts))
    assert [p.outcome for p in plan.predictions] == ["free-memory"]
    message = plan.predictions[0].message
    assert "(20.09/31.36 GiB)" in message and "(0.68, 21.32 GiB)" in message  # vLLM's own wording and figures
    fix = plan.predictions[0].fixes[0]
    assert fix.flag == "--gpu-memory-utilization" and float(fix.value or 0) * 31.36 <= 20.09
    # The avoiding plan: the TTS releases its cache (or starts after vLLM); then 0.68 boots and both fit.
    after_release = DeviceMemory(RTX5090_TOTAL, "RTX 5090", free_bytes=RTX5090_TOTAL - CONTEXT - gib_to_bytes(1.5))
    released = make_plan(PlanRequest(after_release, _model("qwen2.5-vl-7b-instruct"), flags, tts))
    assert released.boots and released.fits
    assert released.kv_cache_tokens > 16384


def test_rtx5090_chosen_utilisation_leaves_room_for_the_tts() -> None:
    device = DeviceMemory(RTX5090_TOTAL, "RTX 5090")
    tts = TtsTenant("tts", footprint_bytes=gib_to_bytes(1.5), source="measured")
    flags = VllmFlags(max_model_len=16384, max_num_seqs=8, limit_images_per_prompt=2)
    plan = make_plan(PlanRequest(device, _model("qwen2.5-vl-7b-instruct"), flags, tts))
    assert not plan.utilization_given and plan.fits and plan.boots
    # vLLM's budget + its context + the TTS (context + footprint) + headroom fit in the card.
    tts_total = gib_to_bytes(1.5) + CONTEXT
    assert plan.vllm_budget_bytes + CONTEXT + tts_total + 512 * 2**20 <= RTX5090_TOTAL
    assert plan.gpu_memory_utilization == pytest.approx(0.9, abs=0.01)
    assert "--gpu-memory-utilization" in plan.flags and "--max-num-seqs" in plan.flags


def test_image_limit_zero_removes_the_encoder_profiling_pass() -> None:
    model = _model("qwen2.5-vl-7b-instruct")
    with_images = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL), model, VllmFlags(0.8, 16384, 8)))
    no_images = make_plan(
        PlanRequest(DeviceMemory(RTX5090_TOTAL), model, VllmFlags(0.8, 16384, 8, limit_images_per_prompt=0))
    )
    encoder = {line.item: line.num_bytes for line in with_images.lines}["image encoder profiling"]
    assert encoder > 0
    assert no_images.kv_cache_bytes - with_images.kv_cache_bytes == encoder


def test_fp8_kv_doubles_the_tokens_of_a_dense_model() -> None:
    device = DeviceMemory(gib_to_bytes(23.5), "RTX 4090")
    model = _model("llama-3-8b")
    bf16 = make_plan(PlanRequest(device, model, VllmFlags(0.9, 8192, 16)))
    fp8 = make_plan(PlanRequest(device, model, VllmFlags(0.9, 8192, 16, kv_cache_dtype="fp8")))
    assert bf16.layout.kv_bytes_per_token == 131_072
    assert fp8.kv_cache_tokens == pytest.approx(2 * bf16.kv_cache_tokens, abs=32)
    assert "--kv-cache-dtype" in fp8.flags


def test_moe_model_that_cannot_fit_is_reported_and_time_share_suggested() -> None:
    # Mixtral-8x7B in bf16 is ~87 GiB: it cannot fit a 32 GiB card at all.
    plan = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL), _model("mixtral-8x7b"), VllmFlags(max_model_len=4096)))
    assert not plan.fits and plan.timeshare
    assert [p.outcome for p in plan.predictions] == ["no-kv-memory"]


def test_too_long_context_is_predicted_with_the_length_that_fits() -> None:
    plan = make_plan(PlanRequest(DeviceMemory(gib_to_bytes(23.5)), _model("llama-3-8b"), VllmFlags(0.75, 131072, 4)))
    prediction = next(p for p in plan.predictions if p.outcome == "max-model-len")
    fitting = int(prediction.fixes[0].value or 0)
    assert 0 < fitting < 131072
    assert plan.layout.bytes_for_one_request(fitting) <= plan.kv_cache_bytes
    assert plan.layout.bytes_for_one_request(fitting + 16) > plan.kv_cache_bytes
    assert "the estimated maximum model length is" in prediction.message


def test_without_a_length_the_models_full_context_is_lowered_to_fit() -> None:
    model = _model("qwen2.5-vl-7b-instruct")  # 128,000 tokens x 56 KiB = 6.8 GiB for one request
    plan = make_plan(PlanRequest(DeviceMemory(gib_to_bytes(23.5)), model, VllmFlags(0.9, None, 4)))
    assert plan.max_model_len < 128_000 and plan.max_model_len % 1024 == 0 and plan.boots
    assert plan.layout.bytes_for_one_request(plan.max_model_len) <= plan.kv_cache_bytes
    assert any("lowered" in note for note in plan.unknowns)


def test_hybrid_model_with_too_many_sequences_for_its_mamba_blocks() -> None:
    # CUDA graphs on, 1024 sequences (the H200 default) but a small pool: vLLM refuses to capture graphs.
    plan = make_plan(PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), VllmFlags(0.46, 4096, 1024, 4096)))
    prediction = next(p for p in plan.predictions if p.outcome == "mamba-blocks")
    blocks = plan.layout.num_blocks(plan.kv_cache_bytes)
    assert prediction.fixes[0].value == str(blocks) and blocks < 1024


def test_kv_cache_memory_bytes_replaces_the_derived_pool() -> None:
    flags = VllmFlags(0.6, 32768, 2, 4096, enforce_eager=True, kv_cache_memory_bytes=10 * GIB)
    plan = make_plan(PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags))
    assert plan.kv_cache_bytes == 10 * GIB
    assert plan.kv_cache_tokens == kv_layout(_model("nemotron-3-nano-30b-a3b")).tokens(10 * GIB)


def test_calibration_carries_over_to_graphs_and_1024_sequences() -> None:
    # Calibrated on an eager boot with 2 sequences; the real boot had CUDA graphs and vLLM's default 1024
    # sequences (device-run/fail-mamba.log: KV 5.21 GiB, 180,256 tokens, 434 Mamba blocks).
    flags = VllmFlags(0.48, 32768, None, 4096)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags, calibration=_calibration("b-bt4096.log"))
    )
    assert abs(plan.kv_cache_bytes / GIB - 5.21) / 5.21 < 0.02
    prediction = next(p for p in plan.predictions if p.outcome == "mamba-blocks")
    assert abs(int(prediction.fixes[0].value or 0) - 434) <= 10


# Qwen2-VL's vision tower behind a small language model, booted three times on the H200 with random weights
# (benchmarks/gpu_vlm_device.sh): with the encoder's profiling pass for one 16,384-token image (the processor's
# largest), without the pass (--skip-mm-profiling), and with pages capped at 2,048 image tokens (four images).
QWEN2VL_FLAGS = VllmFlags(
    gpu_memory_utilization=0.5, max_model_len=32768, max_num_seqs=32, enforce_eager=True, limit_images_per_prompt=1
)


def _qwen2vl(max_pixels: int = 12_845_056) -> ModelInfo:
    from dataclasses import replace

    model = _model("qwen2-vl-tiny")
    assert model.vision is not None
    return replace(model, vision=replace(model.vision, max_patches_per_image=max_pixels // 196))


def _qwen2vl_calibration(log: str) -> Calibration:
    report = diagnose((LOGS / log).read_text())
    cal = _calibration(log)
    from dataclasses import replace

    return replace(cal, encoder_budget_tokens=report.encoder_budget_tokens, encoder_items=report.encoder_items)


def _kv_gib(plan_request: PlanRequest) -> float:
    return make_plan(plan_request).kv_cache_bytes / GIB


def test_the_doctor_reads_a_multimodal_boot_whose_arguments_hold_a_config_object() -> None:
    """vLLM prints --structured-outputs-config as StructuredOutputsConfig(...) among the non-default args."""
    report = diagnose((LOGS / "qwen2vl-serve.log").read_text())
    assert "StructuredOutputsConfig(" in (LOGS / "qwen2vl-serve.log").read_text()
    assert (report.args.gpu_memory_utilization, report.args.max_num_seqs, report.args.enforce_eager) == (0.5, 32, True)
    assert (report.encoder_budget_tokens, report.encoder_items) == (16384, 1)
    skipped = diagnose((LOGS / "qwen2vl-skip-mm.log").read_text())
    assert (skipped.encoder_budget_tokens, skipped.encoder_items) == (0, 0)


def test_out_of_sample_the_image_encoder_item_from_a_boot_without_it() -> None:
    """Calibrated on the boot without the encoder's pass (KV 68.28 GiB), the plan adds its image-encoder item and
    predicts the boot with the pass for one max-size image: vLLM gave 66.50 GiB."""
    cal = _qwen2vl_calibration("qwen2vl-skip-mm.log")
    predicted = _kv_gib(PlanRequest(H200, _qwen2vl(), QWEN2VL_FLAGS, calibration=cal))
    assert predicted == pytest.approx(66.50, abs=0.1)


def test_out_of_sample_smaller_pages_from_the_max_size_boot() -> None:
    """Calibrated on the max-size boot (one 16,384-token image profiled), the plan for pages capped at 2,048
    tokens (vLLM profiles four of them within its 8,192-token budget) predicts that boot's 67.44 GiB."""
    cal = _qwen2vl_calibration("qwen2vl-serve.log")
    plan = make_plan(PlanRequest(H200, _qwen2vl(max_pixels=1_605_632), QWEN2VL_FLAGS, calibration=cal))
    assert {line.item: line.note for line in plan.lines}["image encoder profiling"] == "4 max-size image(s)"
    assert plan.kv_cache_bytes / GIB == pytest.approx(67.44, abs=0.1)


def test_uncalibrated_multimodal_estimate_is_within_two_percent_of_the_real_kv_pool() -> None:
    for max_pixels, log in ((12_845_056, "qwen2vl-serve.log"), (1_605_632, "qwen2vl-pages2k.log")):
        real = diagnose((LOGS / log).read_text()).kv_cache_bytes
        assert real is not None
        predicted = make_plan(PlanRequest(H200, _qwen2vl(max_pixels), QWEN2VL_FLAGS)).kv_cache_bytes
        assert predicted == pytest.approx(real, rel=0.02), log
