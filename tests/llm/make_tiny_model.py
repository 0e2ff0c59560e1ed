"""Build a tiny randomly initialised Llama (head_dim 64) with a locally trained byte-level BPE tokenizer and a
chat template, so a real vLLM (the CPU build) can serve chat completions offline: python make_tiny_model.py OUT TEXT"""

import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
text = Path(sys.argv[2]).read_text()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=2048, special_tokens=["<s>", "</s>", "<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
)
tok.train_from_iterator([text] * 3, trainer)
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
fast.chat_template = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] if m['content'] is string else '' }}\n"
    "{% endfor %}assistant: "
)
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
LlamaForCausalLM(cfg).save_pretrained(out)
print("ok", len(fast))
