"""Parameter-count estimate from config.json (dense, MoE, Mamba/attention hybrids, vision towers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ModelInfo(Protocol):
    """The shape fields of gpu.model_info.ModelInfo this estimate reads (a Protocol, so this module does not
    import the one that calls it)."""

    @property
    def hidden_size(self) -> int: ...
    @property
    def num_hidden_layers(self) -> int: ...
    @property
    def num_attention_heads(self) -> int: ...
    @property
    def num_kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def mla_kv_dim(self) -> int: ...
    @property
    def num_experts(self) -> int: ...
    @property
    def quantization(self) -> str | None: ...
    @property
    def dtype_bytes(self) -> int: ...


# Approximate stored bytes per parameter for quantised checkpoints (weights + scales/zeros).
_QUANT_BYTES: dict[str, float] = {
    "fp8": 1.0,
    "compressed-tensors": 1.0,
    "modelopt": 1.0,
    "awq": 0.56,
    "gptq": 0.56,
    "bitsandbytes": 0.56,
    "mxfp4": 0.53,
}


def _get(cfg: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = cfg.get(key, default)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _gated(cfg: Mapping[str, Any]) -> bool:
    """SwiGLU-style MLPs have three matrices; relu2 (Nemotron-H) and gelu (GPT-2 style) have two."""
    act = str(cfg.get("mlp_hidden_act") or cfg.get("hidden_act") or "silu")
    return act not in ("relu2", "gelu_new", "gelu_pytorch_tanh") or bool(cfg.get("gated_mlp", False))


def _attention_params(cfg: Mapping[str, Any], info: ModelInfo) -> int:
    hidden = info.hidden_size
    if info.mla_kv_dim:
        q_rank = _get(cfg, "q_lora_rank")
        qk_dim = _get(cfg, "qk_nope_head_dim") + _get(cfg, "qk_rope_head_dim")
        v_dim = _get(cfg, "v_head_dim")
        heads = info.num_attention_heads
        q = hidden * q_rank + q_rank * heads * qk_dim if q_rank else hidden * heads * qk_dim
        kv = hidden * info.mla_kv_dim + _get(cfg, "kv_lora_rank") * heads * (
            qk_dim - _get(cfg, "qk_rope_head_dim") + v_dim
        )
        return q + kv + heads * v_dim * hidden
    q_out = info.num_attention_heads * info.head_dim
    kv_out = info.num_kv_heads * info.head_dim
    return hidden * q_out + 2 * hidden * kv_out + q_out * hidden + hidden


def _mlp_params(hidden: int, intermediate: int, gated: bool) -> int:
    return (3 if gated else 2) * hidden * intermediate


def _moe_params(cfg: Mapping[str, Any], info: ModelInfo, gated: bool) -> int:
    hidden = info.hidden_size
    expert_inter = _get(cfg, "moe_intermediate_size") or _get(cfg, "intermediate_size")
    shared_inter = _get(cfg, "moe_shared_expert_intermediate_size") or _get(cfg, "shared_expert_intermediate_size")
    shared = _get(cfg, "n_shared_experts", 1 if shared_inter else 0)
    if shared and not shared_inter:
        shared_inter = expert_inter * shared
    router = hidden * info.num_experts
    return (
        info.num_experts * _mlp_params(hidden, expert_inter, gated) + _mlp_params(hidden, shared_inter, gated) + router
    )


def _mamba_params(cfg: Mapping[str, Any], hidden: int) -> int:
    heads = _get(cfg, "mamba_num_heads")
    inner = heads * _get(cfg, "mamba_head_dim")
    groups_state = 2 * _get(cfg, "n_groups", 1) * _get(cfg, "ssm_state_size")
    conv_dim = inner + groups_state
    in_proj = hidden * (2 * inner + groups_state + heads)
    conv = conv_dim * (_get(cfg, "conv_kernel", 4) + 1)
    return in_proj + conv + 3 * heads + inner + inner * hidden + hidden


def _vision_params(cfg: Mapping[str, Any]) -> int:
    vision = cfg.get("vision_config")
    if not isinstance(vision, Mapping):
        return 0
    hidden = _get(vision, "hidden_size") or _get(vision, "embed_dim")
    depth = _get(vision, "depth") or _get(vision, "num_hidden_layers")
    inter = _get(vision, "intermediate_size", 4 * hidden)
    gated = str(vision.get("hidden_act", "gelu")) == "silu"
    patch = _get(vision, "patch_size", 14)
    blocks = depth * (4 * hidden * hidden + _mlp_params(hidden, inter, gated))
    patch_embed = 3 * _get(vision, "temporal_patch_size", 1) * patch * patch * hidden
    out = _get(vision, "out_hidden_size")
    merge = _get(vision, "spatial_merge_size", 1)
    merger = (hidden * merge * merge) ** 2 + hidden * merge * merge * out if out else 0
    return blocks + patch_embed + merger


def estimate_parameter_count(cfg: Mapping[str, Any], info: ModelInfo) -> int:
    """Parameters of embeddings, every layer by kind, the LM head and any vision tower (biases mostly ignored)."""
    hidden = info.hidden_size
    gated = _gated(cfg)
    embeddings = info.vocab_size * hidden * (1 if cfg.get("tie_word_embeddings", False) else 2)
    attention = _attention_params(cfg, info)
    inter = _get(cfg, "intermediate_size", 4 * hidden)
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        layers = 0
        for kind in pattern:
            if kind == "*":
                layers += attention
            elif kind == "M":
                layers += _mamba_params(cfg, hidden)
            elif kind == "E":
                layers += _moe_params(cfg, info, gated)
            else:  # '-': a dense MLP layer
                layers += _mlp_params(hidden, inter, gated)
    else:
        dense_first = _get(cfg, "first_k_dense_replace")
        moe_layers = info.num_hidden_layers - dense_first if info.num_experts else 0
        dense_layers = info.num_hidden_layers - moe_layers
        layers = info.num_hidden_layers * (attention + 2 * hidden)
        layers += dense_layers * _mlp_params(hidden, inter, gated)
        layers += moe_layers * _moe_params(cfg, info, gated) if moe_layers else 0
    return embeddings + layers + hidden + _vision_params(cfg)


def bytes_per_parameter(info: ModelInfo) -> float:
    if info.quantization:
        return _QUANT_BYTES.get(info.quantization, 1.0)
    return float(info.dtype_bytes)
