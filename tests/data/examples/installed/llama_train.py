import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)
torch.manual_seed(0)
model = LlamaForCausalLM(config)
ids = torch.randint(0, 128, (2, 16))
for _ in range(2):
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
