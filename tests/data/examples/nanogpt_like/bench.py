"""nanoGPT's bench.py in miniature: globals overridden by ``--key=value`` (configurator.py,
read from the current folder), the model under ``torch.amp.autocast`` in the chosen dtype on
CUDA (a ``nullcontext`` on the CPU), a few training steps; writes benched.txt at its end."""

from contextlib import nullcontext

import torch

from model import GPT, GPTConfig

batch_size = 8
block_size = 256
seed = 1337
device = "cuda"
dtype = "bfloat16"
compile = False
exec(open("configurator.py").read())

torch.manual_seed(seed)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = (
    nullcontext()
    if device_type == "cpu"
    else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
)

gptconf = GPTConfig(block_size=block_size, n_layer=2, n_head=4, n_embd=128, bias=False)
model = GPT(gptconf)
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
if compile:
    model = torch.compile(model)


def get_batch():
    x = torch.randint(gptconf.vocab_size, (batch_size, block_size), device=device)
    y = torch.randint(gptconf.vocab_size, (batch_size, block_size), device=device)
    return x, y


X, Y = get_batch()
for k in range(3):
    with ctx:
        logits, loss = model(X, Y)
    X, Y = get_batch()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"{k}/3 loss: {loss.item():.4f}")

with open("benched.txt", "w") as fh:
    fh.write("done\n")
