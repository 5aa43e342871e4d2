"""PyTorch's peak device memory for a training step of the main job's character model,
to set beside `bun scripts/charlm.ts --device cuda`'s (cuda.maxMemoryAllocated): the
same sizes, float32, eager, Adam(W) and gradient clipping, with the peak counted as
lltm counts it, from the second step on (the first allocates what the others reuse).
--model lstm is ../shared/bench/torch_charlm.py's model (nn.LSTM on cuDNN); --model lltm
is the LLTM of torch_lltm.py (one step at a time in Python).

usage: python3 scripts/torch_charlm_memory.py [--model lstm|lltm] [--layers 2] [-s 512] [--seq 100] [-b 64]
                                              [-e 64] [--vocab 65] [--steps 20]
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_lltm import CharLM

p = argparse.ArgumentParser()
p.add_argument("--model", choices=["lstm", "lltm"], default="lstm")
p.add_argument("--layers", type=int, default=2)
p.add_argument("-s", type=int, default=512)
p.add_argument("--seq", type=int, default=100)
p.add_argument("-b", type=int, default=64)
p.add_argument("-e", type=int, default=64)
p.add_argument("--vocab", type=int, default=65)
p.add_argument("--steps", type=int, default=20)
a = p.parse_args()
dev = torch.device("cuda")
V, T, B = a.vocab, a.seq, a.b


class LSTMCharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, a.e)
        self.lstm = nn.LSTM(a.e, a.s, a.layers)
        self.head = nn.Linear(a.s, V)

    def forward(self, ids):
        return self.head(self.lstm(self.embed(ids))[0])


torch.manual_seed(0)
model = (LSTMCharLM() if a.model == "lstm" else CharLM(V, a.e, a.s, a.layers)).to(dev)
if a.model == "lltm":
    for t in model.parameters():
        nn.init.uniform_(t, -a.s ** -0.5, a.s ** -0.5)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
g = torch.Generator(device=dev).manual_seed(1)
for step in range(a.steps):
    xy = torch.randint(0, V, (T + 1, B), device=dev, generator=g)
    logits = model(xy[:-1])
    loss = F.cross_entropy(logits.reshape(-1, V), xy[1:].reshape(-1))
    opt.zero_grad(set_to_none=False)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step == 0:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
torch.cuda.synchronize()
mib = 2 ** 20
r = {"tool": "torch-charlm-memory", "model": a.model, "torch": torch.__version__, "device": torch.cuda.get_device_name(),
     "layers": a.layers, "state": a.s, "seq": T, "batch": B, "embedding": a.e, "vocab": V,
     "peak_memory_bytes": torch.cuda.max_memory_allocated(), "allocated_memory_bytes": torch.cuda.memory_allocated(),
     "reserved_memory_bytes": torch.cuda.memory_reserved()}
print(f"PyTorch {a.model}: peak {r['peak_memory_bytes'] / mib:.1f} MiB allocated during a training step "
      f"(torch.cuda.max_memory_allocated), {r['allocated_memory_bytes'] / mib:.1f} MiB between steps, "
      f"{r['reserved_memory_bytes'] / mib:.1f} MiB reserved")
print(json.dumps(r))
