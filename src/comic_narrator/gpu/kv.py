"""vLLM's KV block arithmetic: block size, layer groups, tokens, concurrency and the longest context that fits.

Mirrors vLLM 0.20.0 (vllm/v1/core/kv_cache_utils.py: get_num_blocks, _get_kv_cache_groups_uniform_page_size,
_report_kv_cache_config, get_max_concurrency_for_kv_cache_config; vllm/platforms/interface.py: the hybrid
attention block size), so the planner's token and concurrency figures are the ones vLLM prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from comic_narrator.gpu.model_info import ModelInfo

KERNEL_BLOCK_ALIGNMENT_TOKENS = 16
"""Default block size, and the alignment of FlashAttention's kernel block sizes."""


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class KvLayout:
    """How vLLM lays out the KV pool for one model and KV dtype."""

    block_size_tokens: int
    page_bytes: int
    """Bytes of one block of one layer (vLLM pads Mamba pages to the attention page)."""
    group_size: int
    """Layers per KV cache group = number of pool tensors; a block spans one page in each."""
    attention_groups: int
    mamba_groups: int
    padding_layers: int
    kv_bytes_per_token: int
    """Attention KV bytes per token over all attention layers."""

    @property
    def num_groups(self) -> int:
        return self.attention_groups + self.mamba_groups

    @property
    def block_bytes(self) -> int:
        return self.page_bytes * self.group_size

    def num_blocks(self, kv_cache_bytes: int) -> int:
        return max(int(kv_cache_bytes // self.page_bytes // self.group_size), 0)

    def tokens(self, kv_cache_bytes: int) -> int:
        """The 'GPU KV cache size: N tokens' figure."""
        return self.num_blocks(kv_cache_bytes) // self.num_groups * self.block_size_tokens

    def blocks_per_request(self, max_model_len: int) -> int:
        return self.attention_groups * cdiv(max_model_len, self.block_size_tokens) + self.mamba_groups

    def max_concurrency(self, kv_cache_bytes: int, max_model_len: int) -> float:
        """The 'Maximum concurrency for L tokens per request: C x' figure."""
        return self.num_blocks(kv_cache_bytes) / self.blocks_per_request(max_model_len)

    def bytes_for_one_request(self, max_model_len: int) -> int:
        """What vLLM requires before it starts: one request of max_model_len must fit."""
        return self.blocks_per_request(max_model_len) * self.block_bytes

    def bytes_for_requests(self, max_model_len: int, num_requests: int) -> int:
        """Pool bytes that hold num_requests full-length requests (input to --kv-cache-memory-bytes)."""
        return self.blocks_per_request(max_model_len) * num_requests * self.block_bytes

    def estimated_max_model_len(self, kv_cache_bytes: int, max_model_len: int) -> int:
        """vLLM's binary search for the longest context whose one request fits ('estimated maximum model length')."""
        if self.bytes_for_one_request(1) > kv_cache_bytes:
            return 0
        low, high, best = 1, max_model_len, 1
        while low <= high:
            mid = (low + high) // 2
            if self.bytes_for_one_request(mid) <= kv_cache_bytes:
                best, low = mid, mid + 1
            else:
                high = mid - 1
        return best

    def mamba_state_bytes(self, num_seqs: int) -> int:
        """Pool bytes that num_seqs running sequences hold for their Mamba state (one block per Mamba group)."""
        return self.mamba_groups * num_seqs * self.block_bytes


def kv_layout(info: ModelInfo, kv_cache_dtype: str = "auto", block_size_tokens: int = 16) -> KvLayout:
    """The KV layout vLLM builds for this model: dense (one group) or hybrid Mamba/attention (padded groups)."""
    per_token_layer = info.kv_bytes_per_token_per_layer(kv_cache_dtype)
    attention_layers = max(info.attention_layers, 0)
    if info.mamba is None or attention_layers == 0:
        layers = max(attention_layers, 1)
        return KvLayout(
            block_size_tokens=block_size_tokens,
            page_bytes=block_size_tokens * per_token_layer,
            group_size=layers,
            attention_groups=1,
            mamba_groups=0,
            padding_layers=0,
            kv_bytes_per_token=info.kv_bytes_per_token(kv_cache_dtype),
        )
    mamba_page = info.mamba.layer_state_bytes
    align = max(KERNEL_BLOCK_ALIGNMENT_TOKENS, block_size_tokens)
    hybrid_block = align * cdiv(mamba_page, align * per_token_layer)
    block = max(block_size_tokens, hybrid_block)
    mamba_layers = info.mamba.num_layers
    smallest, largest = min(attention_layers, mamba_layers), max(attention_layers, mamba_layers)
    group_size = largest if largest < smallest * 1.5 else smallest
    padding = sum((group_size - n % group_size) % group_size for n in (attention_layers, mamba_layers))
    return KvLayout(
        block_size_tokens=block,
        page_bytes=block * per_token_layer,
        group_size=group_size,
        attention_groups=cdiv(attention_layers, group_size),
        mamba_groups=cdiv(mamba_layers, group_size),
        padding_layers=padding,
        kv_bytes_per_token=info.kv_bytes_per_token(kv_cache_dtype),
    )
