"""Estimates of what only a real boot measures: profiling peak, CUDA graphs, image encoder pass, TTS footprints.

Each constant is fitted to a real vLLM 0.20.0 boot on the H200 (tests/data/gpu/logs) and labelled 'estimate' in
the plan; `gpu plan --calibrate LOGFILE` replaces them with the figures of a real boot of the model.
"""

from __future__ import annotations

from comic_narrator.gpu.model_info import ModelInfo, VisionEncoder
from comic_narrator.gpu.sizes import GIB, MIB

ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN_ELEMENT = 32
"""Peak activation of the dummy forward per batched token, in units of hidden_size x dtype bytes.
Fitted: Nemotron-3-Nano (hidden 2688, bf16) at 4096 batched tokens reserved 0.78 GiB (b-bt4096.log:
0.6 x 139.8 - 58.89 weights - 24.21 KV)."""

NON_TORCH_BYTES = 100 * MIB
"""NCCL/cuBLAS workspaces that vLLM counts as non-torch memory during profiling."""

CUDA_GRAPH_BASE_BYTES = 63 * MIB
CUDA_GRAPH_BYTES = 58 * MIB // 10
"""Graph pool = base + per graph. Fitted to vLLM's own estimates on the H200: 0.09 GiB for 5 graphs
(g-graphs.log, max_num_seqs 2) and 0.64 GiB for 102 graphs (device-run/fail-mamba.log, max_num_seqs 1024); both
hold only for 5.7 to 5.9 MiB a graph (a whole 6 MiB gave 0.66 GiB for the second)."""

LOGITS_BYTES_PER_SEQ_PER_VOCAB = 12
"""The sampler's dummy run over max_num_seqs sequences: fp32 logits and two copies (fitted: fail-mamba.log
reserved 2.36 GiB at 1024 sequences against 0.78 GiB at 2, same 4096 batched tokens)."""

ENCODER_BYTES_PER_PATCH_PER_HIDDEN_ELEMENT = 11
"""The image encoder's profiling pass per image patch, in units of the vision hidden size x 2 bytes. Fitted to
three boots of Qwen2-VL's vision tower (1280 wide, 32 blocks) on the H200 (docs/logs/vllm-0.20.0-h200-qwen2vl-*):
torch's profiling peak rose 1.79 GiB over a boot without the pass (--skip-mm-profiling) for one 16,384-token image
(65,536 patches; 11.5 units) and 0.85 GiB for four 2,048-token images (32,768 patches; 10.9 units); the KV
pools agree (68.28 GiB without the pass, 66.50 and 67.44 GiB with it)."""

TTS_PROFILES_BYTES: dict[str, int] = {
    "none": 0,
    "piper": 0,  # runs on the CPU (onnxruntime)
    "kokoro": 1 * GIB,  # Kokoro-82M on CUDA: weights 0.3 GiB + working set
    "fish-speech": 4 * GIB,  # fish-speech 1.5 (about 0.5B params) with its decoder, measured by users ~4 GiB
    "xtts": 3 * GIB,
    "f5-tts": 3 * GIB,
}
"""Steady footprints (weights + working set, beside the 0.5 GiB CUDA context) when none was measured."""


def profile_peak_bytes(model: ModelInfo, max_num_batched_tokens: int, max_num_seqs: int) -> int:
    """Activation peak of vLLM's profiling run plus non-torch memory; it stays reserved for the server's life."""
    activations = (
        max_num_batched_tokens * model.hidden_size * model.dtype_bytes * ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN_ELEMENT
    )
    return activations + sampler_bytes(model, max_num_seqs, max_num_batched_tokens) + NON_TORCH_BYTES


def sampler_bytes(model: ModelInfo, max_num_seqs: int, max_num_batched_tokens: int) -> int:
    """The sampler's dummy run: logits over the vocabulary for every sequence of a full batch."""
    return min(max_num_seqs, max_num_batched_tokens) * model.vocab_size * LOGITS_BYTES_PER_SEQ_PER_VOCAB


def rescale_profile_peak(measured_bytes: int, measured_batched: int, batched: int) -> int:
    """A calibrated peak at another --max-num-batched-tokens: the activation part scales with the tokens."""
    if measured_batched == batched or measured_batched <= 0:
        return measured_bytes
    activations = max(measured_bytes - NON_TORCH_BYTES, 0)
    return NON_TORCH_BYTES + activations * batched // measured_batched


def cudagraph_capture_sizes(max_num_seqs: int) -> list[int]:
    """vLLM's default capture sizes: 1, 2, 4, then steps of 8 to 256, then 16, up to min(2 x seqs, 512)."""
    largest = min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, 513, 16)]
    return [size for size in sizes if size <= largest]


def cudagraph_count(max_num_seqs: int, *, hybrid: bool) -> int:
    """PIECEWISE graphs for every capture size plus FULL decode graphs up to max_num_seqs."""
    sizes = cudagraph_capture_sizes(max_num_seqs)
    return len(sizes) + len([size for size in sizes if size <= max_num_seqs])


def cudagraph_bytes(num_graphs: int) -> int:
    return CUDA_GRAPH_BASE_BYTES + num_graphs * CUDA_GRAPH_BYTES if num_graphs else 0


def profiled_images(
    model: ModelInfo, limit_images_per_prompt: int | None, max_num_batched_tokens: int, max_num_seqs: int
) -> int:
    """Max-size images in the encoder profiling pass, as vLLM 0.20.0 counts them (multimodal/encoder_budget.py):
    as many as the encoder budget (the batched tokens, at least one image's) holds, but no more than a full batch
    of sequences can carry (max_num_seqs x images per prompt); none when --limit-mm-per-prompt sets 0."""
    vision = model.vision
    if vision is None or limit_images_per_prompt == 0:
        return 0
    tokens_per_image = max(vision.max_patches_per_image // max(vision.spatial_merge_size**2, 1), 1)
    by_budget = max(max_num_batched_tokens, tokens_per_image) // tokens_per_image
    if limit_images_per_prompt is None:
        return max(1, by_budget)
    return max(1, min(by_budget, max_num_seqs * limit_images_per_prompt))


def encoder_patch_bytes(vision: VisionEncoder, patches: int) -> int:
    """The encoder pass's peak over ``patches`` image patches at once."""
    return patches * vision.hidden_size * 2 * ENCODER_BYTES_PER_PATCH_PER_HIDDEN_ELEMENT


def encoder_peak_bytes(vision: VisionEncoder, images: int) -> int:
    return encoder_patch_bytes(vision, images * vision.max_patches_per_image)
