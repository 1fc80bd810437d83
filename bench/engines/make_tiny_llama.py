#!/usr/bin/env python3
"""Builds a tiny random-weight Llama-architecture model for engine tests.

Offline: no download. transformers + tokenizers only. The tokenizer is a
word-level vocabulary of 32000 tokens ("<unk>", "<s>", "</s>", then "w3" ..
"w31999"), so every token id magpie's random dataset sends (1000..31999) is
an ordinary token. The tokenizer carries a chat template (the role, a
colon, the content and "</s>" per message, then " assistant :"), so the
engines' chat endpoints serve it: with this word-level vocabulary a chat
prompt is 1 + sum(3 + words) + 2 tokens (check_workloads.sh counts on it).
Weights are drawn from a fixed seed; the model generates
nonsense quickly, which is all a serving benchmark of the machinery needs.

usage: make_tiny_llama.py OUT_DIR [--layers N] [--hidden N]
"""
import argparse
import os

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
import torch

VOCAB = 32000
# "<s> user : TEXT </s> assistant : TEXT </s> assistant :" split on spaces
CHAT_TEMPLATE = ("{{ bos_token }}{% for m in messages %} {{ m['role'] }} : {{ m['content'] }} </s>"
                 "{% endfor %}{% if add_generation_prompt %} assistant :{% endif %}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)  # head_dim 64: vLLM CPU attention needs it
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for i in range(3, VOCAB):
        vocab["w%d" % i] = i
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", model_max_length=2048)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(a.out)
    torch.manual_seed(0)
    # vocab_size = the tokenizer's size, so every id the model emits decodes
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=a.hidden, intermediate_size=a.hidden * 2,
                      num_hidden_layers=a.layers, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=2048, bos_token_id=1, eos_token_id=2,
                      torch_dtype="bfloat16", tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(a.out, safe_serialization=True)
    print("tiny llama written to", a.out)


if __name__ == "__main__":
    main()
