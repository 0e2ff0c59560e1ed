"""Build a tiny Llama (head_dim 64) with a locally trained byte-level BPE tokenizer and a chat template, so a real
vLLM (the CPU build) can serve chat completions offline: python make_tiny_model.py OUT TEXT

Random weights under greedy, schema-constrained decoding tend to write one string forever, so no complete answer
could be expected of them. The model is instead trained for a few hundred steps (seconds on a CPU) to answer
MESSAGES with ANSWER: a test can then require vLLM to return a complete, schema-valid answer. It knows nothing
else; it stands in for a model, not for vLLM. Constants are importable without torch or transformers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MESSAGES = [
    {"role": "system", "content": "You read comic pages."},
    {"role": "user", "content": "Text regions: [0] panel 1, speech: 'HELLO THERE'"},
]
ANSWER = {
    "characters": [{"name": "Pepper", "gender": "female", "age": "young", "nature": "human"}],
    "texts": [
        {
            "index": 0,
            "text": "Hello there!",
            "kind": "speech",
            "speaker": "Pepper",
            "emotion": "excited",
            "translation": None,
        }
    ],
}
ANSWER_TEXT = json.dumps(ANSWER, separators=(",", ":"))
"""What vLLM's structured output can emit when served with disable_any_whitespace (no spaces between tokens)."""
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] if m['content'] is string else '' }}\n"
    "{% endfor %}assistant: "
)
TRAIN_STEPS = 400


def main(out: Path, text: str) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2048,
        special_tokens=["<s>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([text] * 3, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    cfg = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        torch_dtype="float32",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    # The prompt as vLLM renders it (the chat template, no special tokens added), then the answer and the end.
    prompt = fast.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    prompt_ids = fast(prompt, add_special_tokens=False)["input_ids"]
    answer_ids = fast(ANSWER_TEXT, add_special_tokens=False)["input_ids"] + [fast.eos_token_id]
    ids = torch.tensor([prompt_ids + answer_ids])
    labels = ids.clone()
    labels[0, : len(prompt_ids)] = -100  # learn the answer, not the prompt
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(TRAIN_STEPS):
        loss = model(input_ids=ids, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    with torch.no_grad():
        greedy = model.generate(
            torch.tensor([prompt_ids]), max_new_tokens=len(answer_ids) + 8, do_sample=False, pad_token_id=0
        )
    said = fast.decode(greedy[0, len(prompt_ids) :], skip_special_tokens=True)
    if said != ANSWER_TEXT:
        raise SystemExit(f"training did not take (loss {loss.item():.4f}): the model says {said[:200]!r}")
    model.save_pretrained(out)
    print("ok", len(fast), f"loss {loss.item():.5f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]).read_text())
