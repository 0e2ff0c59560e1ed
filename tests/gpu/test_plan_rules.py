"""The memory planner's rules one at a time, on the published model configs in tests/data/gpu/configs and the GPU
sizes CUDA reports: vLLM's defaults per GPU, the KV arithmetic's edges, the utilisation it picks, and which boot
failure it predicts with which fix."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace

import pytest

from comic_narrator.errors import GpuError
from comic_narrator.gpu import estimates, params
from comic_narrator.gpu.doctor import diagnose
from comic_narrator.gpu.kv import kv_layout
from comic_narrator.gpu.model_info import model_info_from_config
from comic_narrator.gpu.plan import DeviceMemory, Plan, PlanRequest, TtsTenant, VllmFlags, make_plan
from comic_narrator.gpu.sizes import GIB, MIB, format_gib, gib_to_bytes, parse_bytes

from .conftest import CONFIGS, DATA, LOGS
from .test_plan import (
    BOOT_FLAGS,
    H200,
    QWEN2VL_FLAGS,
    RTX5090_TOTAL,
    _calibration,
    _flags_of,
    _model,
    _qwen2vl,
    _qwen2vl_calibration,
)

# --- vLLM's defaults per GPU ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "total_gib", "batched", "seqs"),
    [
        # CUDA's totals: PyTorch's "total capacity" of each card
        ("NVIDIA H100 80GB HBM3", 79.11, 8192, 1024),
        ("NVIDIA A100-SXM4-80GB", 79.15, 2048, 256),  # large, but vLLM keeps the A100 on the small defaults
        ("NVIDIA GeForce RTX 5090", 31.36, 2048, 256),
    ],
)
def test_vllms_serving_defaults_follow_the_gpu(name: str, total_gib: float, batched: int, seqs: int) -> None:
    plan = make_plan(PlanRequest(DeviceMemory(gib_to_bytes(total_gib), name), _model("llama-3-8b")))
    assert (plan.max_num_batched_tokens, plan.max_num_seqs) == (batched, seqs)
    assert ("--max-num-batched-tokens", str(batched)) == plan.flags[6:8]


def test_a_gpu_of_no_memory_is_refused_with_what_to_give() -> None:
    # `gpu plan --gpu-memory 0`
    with pytest.raises(GpuError, match="must be positive"):
        make_plan(PlanRequest(DeviceMemory(0), _model("llama-3-8b")))


# --- calibration ----------------------------------------------------------------------------------------------


def test_a_calibrated_plan_shows_the_weights_the_boot_loaded() -> None:
    # b-bt4096.log: "Model loading took 58.89 GiB"; the config's estimate (63.2e9 bytes) is what an uncalibrated
    # plan shows. (The KV figures alone cannot tell: the profiling peak is measured as what the weights leave.)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), BOOT_FLAGS, calibration=_calibration("b-bt4096.log"))
    )
    weights = next(line for line in plan.lines if line.item == "weights")
    assert (weights.num_bytes, weights.basis) == (gib_to_bytes(58.89), "calibrated")
    assert "b-bt4096.log" in weights.note


def test_a_vision_calibration_from_a_log_without_the_encoder_line_assumes_the_pass_vllm_would_profile() -> None:
    # qwen2vl-serve.log profiled one max-size image (16,384 tokens, over the 8,192 batched tokens: one image).
    # A log that does not say (a release without that line) gets the same one image from the estimate.
    told = _qwen2vl_calibration("qwen2vl-serve.log")
    assert (told.encoder_budget_tokens, told.encoder_items) == (16384, 1)
    untold = replace(told, encoder_budget_tokens=None, encoder_items=None)
    kv = [
        make_plan(PlanRequest(H200, _qwen2vl(), QWEN2VL_FLAGS, calibration=cal)).kv_cache_bytes
        for cal in (told, untold)
    ]
    assert kv[0] == pytest.approx(kv[1], rel=0.001)


# --- the hybrid model's Mamba state ----------------------------------------------------------------------------


def test_a_hybrid_models_mamba_state_is_shown_inside_the_kv_pool() -> None:
    plan = make_plan(PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), BOOT_FLAGS))
    model = _model("nemotron-3-nano-30b-a3b")
    assert model.mamba is not None
    # Each sequence holds a page in each Mamba layer slot: 23 layers and 1 padding layer ("Add 1 padding layers"),
    # each page padded to the attention page ("Padding mamba page size by 0.58%", b-bt4096.log).
    per_sequence = plan.mamba_state_bytes / plan.max_num_seqs
    assert per_sequence == plan.layout.mamba_groups * plan.layout.block_bytes
    assert 1 < per_sequence / model.mamba.sequence_state_bytes < 24 / 23 * 1.01
    items = [line.item for line in plan.lines]
    assert items[items.index("KV cache") + 1] == "  of which Mamba state"
    assert plan.total_bytes == sum(line.num_bytes for line in plan.lines if line.item != "  of which Mamba state")
    assert any("--max-num-seqs is set explicitly" in note for note in plan.unknowns)


def test_a_dense_model_has_no_mamba_state() -> None:
    plan = make_plan(PlanRequest(H200, _model("llama-3-8b"), BOOT_FLAGS))
    assert plan.mamba_state_bytes == 0
    assert "  of which Mamba state" not in [line.item for line in plan.lines]
    assert not any("--max-num-seqs" in note for note in plan.unknowns)


# --- fits, time-share, and the predicted failures -------------------------------------------------------------

TIME_SHARE = "time-share (vLLM sleep mode)"


def test_a_context_too_long_for_the_pool_does_not_fit_even_with_memory_to_spare() -> None:
    plan = make_plan(PlanRequest(DeviceMemory(gib_to_bytes(23.5)), _model("llama-3-8b"), VllmFlags(0.75, 131072, 4)))
    assert plan.total_bytes <= plan.device.total_bytes and plan.kv_cache_bytes > 0
    assert not plan.fits
    # The utilisation was given: sleeping would not help, so no time-share.
    assert not plan.timeshare and not any(TIME_SHARE in note for note in plan.unknowns)


def test_time_share_is_offered_only_when_the_planner_chose_the_utilisation_and_nothing_fits() -> None:
    device = DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090")
    mixtral = make_plan(PlanRequest(device, _model("mixtral-8x7b"), VllmFlags(max_model_len=4096)))
    assert not mixtral.fits and mixtral.timeshare and any(TIME_SHARE in note for note in mixtral.unknowns)
    given = make_plan(PlanRequest(device, _model("mixtral-8x7b"), VllmFlags(0.9, max_model_len=4096)))
    assert not given.fits and not given.timeshare and not any(TIME_SHARE in note for note in given.unknowns)
    pool = make_plan(
        PlanRequest(device, _model("mixtral-8x7b"), VllmFlags(max_model_len=4096, kv_cache_memory_bytes=GIB))
    )
    assert not pool.fits and not any(TIME_SHARE in note for note in pool.unknowns)
    qwen = make_plan(PlanRequest(device, _model("qwen2.5-vl-7b-instruct"), VllmFlags(max_model_len=16384)))
    assert qwen.fits and not qwen.timeshare and not any(TIME_SHARE in note for note in qwen.unknowns)


@pytest.mark.parametrize(
    ("eager", "fixes"),
    [(False, ["--max-num-batched-tokens 1024", "--enforce-eager"]), (True, ["--max-num-batched-tokens 1024"])],
)
def test_no_kv_memory_is_predicted_with_eager_only_where_graphs_are_on(eager: bool, fixes: list[str]) -> None:
    # Mixtral-8x7B (~87 GiB in bf16) on a 32 GiB card; the RTX 5090's default 2048 batched tokens halved.
    flags = VllmFlags(max_model_len=4096, enforce_eager=eager)
    plan = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090"), _model("mixtral-8x7b"), flags))
    (prediction,) = plan.predictions
    assert prediction.outcome == "no-kv-memory" and [f.render() for f in prediction.fixes] == fixes


def test_the_no_kv_fix_halves_what_vllm_profiles_with_on_an_h200() -> None:
    # Mixtral-8x7B's ~87 GiB at a 0.6 budget of an H200 (83.9 GiB): no KV pool. vLLM profiled with its H200
    # default, 8192 batched tokens, so half of that is the smaller peak to try, not half of 2048.
    flags = VllmFlags(0.6, max_model_len=4096, enforce_eager=True)
    plan = make_plan(PlanRequest(DeviceMemory(gib_to_bytes(139.8), "NVIDIA H200"), _model("mixtral-8x7b"), flags))
    (prediction,) = plan.predictions
    assert prediction.outcome == "no-kv-memory"
    assert [f.render() for f in prediction.fixes] == ["--max-num-batched-tokens 4096"]


@pytest.mark.parametrize(
    ("tts", "basis"),
    [
        (TtsTenant("kokoro", gib_to_bytes(1.5), "measured"), "measured"),
        (TtsTenant("kokoro", GIB, "profile kokoro"), "estimate"),
    ],
)
def test_the_tts_line_says_whether_it_was_measured(tts: TtsTenant, basis: str) -> None:
    plan = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL), _model("qwen2.5-vl-7b-instruct"), VllmFlags(), tts))
    line = next(line for line in plan.lines if line.item == "TTS kokoro")
    assert (line.num_bytes, line.basis) == (tts.footprint_bytes, basis)


# --- the KV arithmetic's edges --------------------------------------------------------------------------------


def test_the_longest_context_is_zero_when_not_even_one_block_fits() -> None:
    # vLLM's estimate_max_model_len returns 0 when one token does not fit; one block of Nemotron-3-Nano's hybrid
    # layout holds 2,096 tokens ("Setting attention block size to 2096 tokens", b-bt4096.log).
    layout = kv_layout(_model("nemotron-3-nano-30b-a3b"))
    one_block = layout.bytes_for_one_request(1)
    assert layout.estimated_max_model_len(one_block, 32768) == 2096
    assert layout.estimated_max_model_len(one_block - 1, 32768) == 0
    # vLLM's get_num_blocks: whole blocks only, never below 0.
    assert (layout.num_blocks(layout.block_bytes - 1), layout.num_blocks(layout.block_bytes)) == (0, 1)
    assert layout.tokens(layout.block_bytes - 1) == 0


@pytest.mark.parametrize(("log", "kv_gib"), [("device-run/fail-maxlen.log", 0.44), ("logs/b-bt4096.log", 24.21)])
def test_the_longest_context_is_the_last_token_that_fits(log: str, kv_gib: float) -> None:
    # The pools of two real boots ("Available KV cache memory"), for a hybrid and a dense model, searched up to
    # common context lengths and to 10 million tokens (past what either pool holds): each bound is a new search.
    kv_bytes = diagnose((DATA / log).read_text()).kv_cache_bytes
    assert kv_bytes == gib_to_bytes(kv_gib)
    for name in ("nemotron-3-nano-30b-a3b", "llama-3-8b"):
        layout = kv_layout(_model(name))
        for longest in (8192, 32768, 131072, 10**7):
            fitting = layout.estimated_max_model_len(kv_bytes, longest)
            assert 0 < fitting <= longest
            if fitting < longest:
                assert layout.bytes_for_one_request(fitting) <= kv_bytes < layout.bytes_for_one_request(fitting + 1)
            else:
                assert layout.bytes_for_one_request(longest) <= kv_bytes


# --- the profiling peak at another batch size -----------------------------------------------------------------


def _peak(batched: int) -> tuple[int, int]:
    """The calibrated profiling peak and KV pool of the b-bt4096 boot's plan at another --max-num-batched-tokens."""
    flags = replace(BOOT_FLAGS, max_num_batched_tokens=batched)
    plan = make_plan(
        PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), flags, calibration=_calibration("b-bt4096.log"))
    )
    return next(line.num_bytes for line in plan.lines if line.item == "profiling peak"), plan.kv_cache_bytes


def test_lowering_the_batched_tokens_shrinks_the_calibrated_peak_in_proportion() -> None:
    # DESIGN.md: the profiling run's activations follow --max-num-batched-tokens, and that peak stays reserved, so
    # lowering the tokens frees memory for the KV pool. The calibration boot ran at 4096.
    (peak_4096, kv_4096), (peak_2048, kv_2048), (peak_1024, _) = _peak(4096), _peak(2048), _peak(1024)
    assert peak_1024 < peak_2048 < peak_4096
    assert abs((peak_4096 - peak_2048) - 2 * (peak_2048 - peak_1024)) <= 2  # linear in the tokens, to the byte
    assert kv_2048 - kv_4096 == peak_4096 - peak_2048


def test_a_peak_measured_below_the_non_torch_figure_is_kept_at_its_own_batch_size() -> None:
    # A small model's boot can leave less than NON_TORCH_BYTES (100 MiB) to the peak once the log's 2-decimal GiB
    # figures are taken off; at the boot's own batch size the plan must give that boot back, not 100 MiB.
    measured = 50 * MIB
    assert estimates.rescale_profile_peak(measured, 4096, 4096) == measured


# --- sizes and parameter counts -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["32 GiBs", "9.5 gigs", "24000 MiO"])
def test_an_unknown_size_unit_is_a_clear_error(text: str) -> None:
    with pytest.raises(GpuError, match="unknown size unit"):
        parse_bytes(text)


def test_mla_attention_is_counted_with_its_compressed_projections() -> None:
    # DeepSeek-V2-Lite: 15.7 B parameters (model card). Its MLA attention (q 2048 x 16 x 192, kv_a 2048 x 576,
    # kv_b 512 x 16 x 256, o 16 x 128 x 2048: 13.76 M a layer) counted as plain attention of 16 heads of 128
    # (16.78 M a layer) would give 15.79 B, which the card would print as 15.8 B.
    cfg = json.loads((CONFIGS / "deepseek-v2-lite.config.json").read_text())
    count = params.estimate_parameter_count(cfg, model_info_from_config(cfg))
    assert round(count / 1e9, 1) == 15.7


@pytest.mark.parametrize("log", ["qwen2vl-serve.log", "qwen2vl-pages2k.log", "qwen2vl-skip-mm.log"])
def test_kv_layout_reproduces_vllms_token_and_concurrency_lines_for_a_dense_model(log: str) -> None:
    # The Qwen2-VL boots on the H200 (a dense 4-layer language model, one KV group). The log prints the pool to
    # 0.01 GiB, so the tokens agree within what 0.005 GiB holds (2,621 tokens of 2 KiB).
    layout = kv_layout(_model("qwen2-vl-tiny"))
    report = diagnose((LOGS / log).read_text())
    assert report.kv_cache_bytes is not None and report.kv_cache_tokens is not None
    assert report.max_concurrency is not None and report.concurrency_max_model_len == 32768
    slack_tokens = gib_to_bytes(0.005) / layout.kv_bytes_per_token
    assert abs(layout.tokens(report.kv_cache_bytes) - report.kv_cache_tokens) <= slack_tokens
    concurrency = layout.max_concurrency(report.kv_cache_bytes, 32768)
    assert abs(concurrency - report.max_concurrency) <= slack_tokens / 32768 + 0.005


# --- a plan with nothing left for the KV cache, and the other processes on the card ---------------------------


def _mixtral_on_an_rtx5090(flags: VllmFlags) -> Plan:
    # Mixtral-8x7B (~87 GiB in bf16) on a 32 GiB card: no room for any KV cache.
    return make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090"), _model("mixtral-8x7b"), flags))


def test_a_plan_with_no_kv_memory_shows_an_empty_pool() -> None:
    plan = _mixtral_on_an_rtx5090(VllmFlags(max_model_len=4096))
    assert (plan.kv_cache_bytes, plan.kv_cache_memory_bytes, plan.kv_cache_tokens) == (0, 0, 0)
    assert plan.max_concurrency == 0.0
    assert next(line.num_bytes for line in plan.lines if line.item == "KV cache") == 0


@pytest.mark.parametrize(("batched", "halved"), [(1024, 512), (512, 512)])
def test_the_batched_tokens_fix_is_never_below_512(batched: int, halved: int) -> None:
    plan = _mixtral_on_an_rtx5090(VllmFlags(max_model_len=4096, max_num_batched_tokens=batched, enforce_eager=True))
    (prediction,) = plan.predictions
    assert [f.render() for f in prediction.fixes] == [f"--max-num-batched-tokens {halved}"]


def test_memory_other_processes_hold_is_shown_and_left_out_of_the_chosen_utilisation() -> None:
    # `gpu plan --other-memory 2GiB`: a desktop or another job that stays on the card.
    model, flags = _model("qwen2.5-vl-7b-instruct"), VllmFlags(max_model_len=16384)
    alone = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090"), model, flags))
    shared = make_plan(
        PlanRequest(DeviceMemory(RTX5090_TOTAL, "NVIDIA GeForce RTX 5090", other_bytes=2 * GIB), model, flags)
    )
    assert "other processes" not in [line.item for line in alone.lines]
    assert next(line.num_bytes for line in shared.lines if line.item == "other processes") == 2 * GIB
    # 2 GiB of 31.36 is 0.064 of the card: the 2-decimal utilisation drops by 0.06 or 0.07.
    assert 0.06 <= round(alone.gpu_memory_utilization - shared.gpu_memory_utilization, 2) <= 0.07
    assert shared.fits and shared.total_bytes <= RTX5090_TOTAL


@pytest.mark.parametrize(("pool_mib", "length"), [(96, 768), (192, 1024), (255, 1024)])
def test_a_context_lowered_to_fit_is_a_whole_number_of_1024_tokens_when_it_can_be(pool_mib: int, length: int) -> None:
    # Llama-3-8B keeps 128 KiB a token: 96 MiB holds 768 tokens (kept as they are, under 1024); 192 and 255 MiB
    # hold 1,536 and 2,032 tokens, lowered to 1024.
    flags = VllmFlags(0.9, kv_cache_memory_bytes=pool_mib * MIB)
    plan = make_plan(PlanRequest(DeviceMemory(RTX5090_TOTAL), _model("llama-3-8b"), flags))
    assert plan.max_model_len == length and plan.boots


# --- CUDA graphs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("log", "seqs"), [("logs/g-graphs.log", 2), ("device-run/fail-mamba.log", 1024)])
def test_the_graphs_planned_are_the_ones_vllm_captured(log: str, seqs: int) -> None:
    # Both boots ran with CUDA graphs on: g-graphs.log with 2 sequences, fail-mamba.log with the H200's default
    # 1024. vLLM prints its capture sizes in the engine's config line and its own estimate of the graph memory.
    text = (DATA / log).read_text()
    report = diagnose(text)
    assert not report.args.enforce_eager and report.cudagraph_estimate_bytes is not None
    plan = make_plan(PlanRequest(H200, _model("nemotron-3-nano-30b-a3b"), _flags_of(report.args)))
    assert plan.max_num_seqs == seqs
    sizes = re.search(r"'cudagraph_capture_sizes': (\[[\d, ]*\])", text)
    assert sizes is not None
    assert estimates.cudagraph_capture_sizes(seqs) == ast.literal_eval(sizes.group(1))
    graphs = next(line for line in plan.lines if line.item == "CUDA graphs")
    assert format_gib(graphs.num_bytes) == format_gib(report.cudagraph_estimate_bytes)


def test_the_graph_count_is_vllms_piecewise_and_full_captures() -> None:
    # g-graphs.log's progress bars: "(mixed prefill-decode, PIECEWISE): ... 3/3" and "(decode, FULL): ... 2/2".
    totals = dict(re.findall(r"Capturing CUDA graphs \(([^)]*)\):.*?\d+/(\d+)", (LOGS / "g-graphs.log").read_text()))
    assert set(totals) == {"mixed prefill-decode, PIECEWISE", "decode, FULL"}
    assert estimates.cudagraph_count(2, hybrid=True) == sum(int(total) for total in totals.values())
