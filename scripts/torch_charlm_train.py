"""The PyTorch side of scripts/compare_charlm.ts: trains the LLTM character model of
torch_lltm.py (eager, float32, on the CPU) from lltm's initial weights on lltm's
batches, with the recipe lltm used (AdamW, cosine schedule, gradient clipping; all
read from the batches file's metadata), then prints one JSON object: the
validation loss in nats per character, the training time and tokens per second.

usage: python3 scripts/torch_charlm_train.py INIT.safetensors BATCHES.safetensors [--threads N]
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file

from torch_lltm import charlm_from

p = argparse.ArgumentParser()
p.add_argument("init")
p.add_argument("batches")
p.add_argument("--threads", type=int)
a = p.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)

with safe_open(a.init, "pt") as f:
    config = json.loads(f.metadata()["charlm"])
with safe_open(a.batches, "pt") as f:
    meta = f.metadata()
data = load_file(a.batches)
T, steps, lr = int(meta["T"]), int(meta["steps"]), float(meta["lr"])
train, valid = data["train"].long(), data["valid"].long()
offsets, valid_offsets = data["offsets"].long(), data["valid_offsets"].long()
model = charlm_from(config, load_file(a.init), torch.float32)
opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=float(meta["weightDecay"]))
schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr * float(meta["etaMinFraction"]))
window = torch.arange(T + 1)[:, None]


def batch(source, starts):
    """T+1 characters from each start: ids [T, B] and next-character targets [T, B]."""
    xy = source[starts[None, :] + window]
    return xy[:-1], xy[1:]


start, start_cpu = time.perf_counter(), time.process_time()
for step in range(steps):
    x, y = batch(train, offsets[step])
    loss = model.loss(x, y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), float(meta["clipNorm"]))
    opt.step()
    schedule.step()
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu

model.eval()
with torch.no_grad():
    total, count = 0.0, 0
    for starts in valid_offsets:
        x, y = batch(valid, starts)
        total += model.loss(x, y, reduction="sum").item()
        count += y.numel()
B = offsets.shape[1]
print(json.dumps({"tool": "torch-lltm-charlm", "torch": torch.__version__, "threads": torch.get_num_threads(),
                  "valid_nats": total / count, "train_loss_last": loss.item(), "seconds": seconds, "cpu_seconds": cpu_seconds, "steps": steps,
                  "tokens_per_second": steps * T * B / seconds}))
