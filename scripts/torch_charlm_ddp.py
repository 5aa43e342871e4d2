"""PyTorch's DistributedDataParallel on the main job's character model, to set beside
`lltm-run --nproc-per-node N scripts/charlm.ts` (scripts/scaling.ts runs both). Launched by torchrun:

    python3 -m torch.distributed.run --standalone --nproc_per_node N scripts/torch_charlm_ddp.py [options]

Each rank trains on its own batch of B windows of the KJV text (global batch N*B), the windows
split between the ranks by torch.utils.data.DistributedSampler (non-overlapping windows of T+1
characters, reshuffled every epoch); NCCL on CUDA (cuda:LOCAL_RANK), gloo on the CPU.

--model lstm is ../shared/bench/torch_charlm.py's model (Embedding -> nn.LSTM on cuDNN -> Linear,
Adam at 2e-3, clipping at 1; embedding 128); --model lltm is scripts/torch_lltm.py's LLTM CharLM
with the main job's recipe (AdamW, weight decay 0.01, a cosine schedule down to a tenth, clipping
at 1; embedding 64). Both default to the GPU configuration 2x512, T=100, B=64 per rank.

On CUDA the whole step (forward, backward with DDP's all-reduce, clipping, the optimizer) is
captured in a CUDA graph the way PyTorch's CUDA-graphs notes ask for DDP: NCCL's async error
handling off before the group starts, DDP built (static_graph=True) and warmed up for at least
11 eager iterations on a side stream, then captured; if capture fails it says why and runs eagerly.
The JSON (--json) has scripts/charlm.ts --json's keys (its `graph` says which ran) plus the model's.

Rank 0 prints the tokens/s of the timed steps: N*B*T*steps over their wall time, after --warmup
untimed steps, every rank synchronised before and after.

usage: python3 -m torch.distributed.run --standalone --nproc_per_node N scripts/torch_charlm_ddp.py
           [--model lltm|lstm] [--device cuda|cpu] [--steps 200] [--warmup 20] [--seq 100] [-b 64] [-s 512]
           [-e E] [--layers 2] [--lr LR] [--seed 0] [--threads N] [--no-graph] [--json FILE]
"""
import argparse
import json
import math
import os
import pathlib
import time

# NVLink multicast stays off in every process (a program using it can put a shared host's GPUs out of service);
# NCCL reads these when the communicator is made, so they are set before torch.distributed starts one.
os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler

from torch_lltm import CharLM as LLTMCharLM

# Per model: the embedding width, the optimizer, its learning rate, whether the cosine schedule runs.
RECIPES = {
    "lstm": {"embedding": 128, "optimizer": "adam", "lr": 2e-3, "cosine": False},
    "lltm": {"embedding": 64, "optimizer": "adamw", "lr": 3e-3, "cosine": True},
}
WEIGHT_DECAY, ETA_MIN_FRACTION, CLIP_NORM = 0.01, 0.1, 1.0  # scripts/charlm_train.ts's recipe
# PyTorch's CUDA-graphs notes: DDP needs at least 11 eager iterations before its backward is captured.
DDP_EAGER_ITERATIONS_BEFORE_CAPTURE = 11
# Replays before the timing starts: the first one uploads the graph.
GRAPH_REPLAYS_BEFORE_TIMING = 3
VALIDATION_BATCHES = 16

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--model", choices=sorted(RECIPES), default="lltm")
p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--steps", type=int, default=200, help="timed steps")
p.add_argument("--warmup", type=int, default=20, help="untimed steps before them")
p.add_argument("--seq", type=int, default=100)
p.add_argument("-b", type=int, default=64, help="batch per rank")
p.add_argument("-s", type=int, default=512)
p.add_argument("-e", type=int)
p.add_argument("--layers", type=int, default=2)
p.add_argument("--lr", type=float)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--threads", type=int, help="CPU threads per rank (default: the CPUs split between this node's ranks)")
p.add_argument("--no-graph", action="store_true")
p.add_argument("--json")
a = p.parse_args()
for name in ("steps", "seq", "b", "s", "layers", "e", "threads"):
    if getattr(a, name) is not None and getattr(a, name) < 1:
        p.error(f"{'--' if len(name) > 1 else '-'}{name} must be a positive integer, got {getattr(a, name)}")
if a.warmup < 0:
    p.error(f"--warmup must be 0 or more, got {a.warmup}")
recipe = RECIPES[a.model]
E = a.e if a.e is not None else recipe["embedding"]
lr = a.lr if a.lr is not None else recipe["lr"]
T, B = a.seq, a.b
gpu = a.device == "cuda"
graph = gpu and not a.no_graph

local_rank = int(os.environ.get("LOCAL_RANK", 0))
local_world = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
if "RANK" not in os.environ:
    p.error("run it under torchrun: python3 -m torch.distributed.run --standalone --nproc_per_node N scripts/torch_charlm_ddp.py ...")
if graph:
    # Captured collectives cannot be watched by the async error handler (PyTorch's CUDA-graphs notes, DDP section).
    os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0"
    os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "0"
dev = torch.device(f"cuda:{local_rank}" if gpu else "cpu")
if gpu:
    torch.cuda.set_device(dev)
else:
    # By default the machine's CPUs split between this node's ranks, as lltm-run splits them (LLTM_NUM_THREADS).
    torch.set_num_threads(a.threads or max(1, (os.cpu_count() or 1) // local_world))
dist.init_process_group("nccl" if gpu else "gloo")
rank, world = dist.get_rank(), dist.get_world_size()

# The text and its split as scripts/charlm_train.ts's loadCorpus: vocabulary its sorted characters, the last 10% held out.
text = (pathlib.Path(__file__).resolve().parent.parent / "data" / "kjv" / "genesis-joshua.txt").read_text(encoding="utf-8")
vocabulary = sorted(set(text))
V = len(vocabulary)
index = {c: i for i, c in enumerate(vocabulary)}
ids = torch.tensor([index[c] for c in text], dtype=torch.long)
cut = int(len(ids) * 0.9)
train_ids, valid_ids = ids[:cut], ids[cut:]


class LSTMCharLM(nn.Module):
    """../shared/bench/torch_charlm.py's model: Embedding -> nn.LSTM -> Linear, inputs time-major [T, B]."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.rnn = nn.LSTM(E, a.s, a.layers)
        self.head = nn.Linear(a.s, V)

    def forward(self, x):
        return self.head(self.rnn(self.emb(x))[0])


torch.manual_seed(a.seed)
if a.model == "lstm":
    model = LSTMCharLM()
else:
    model = LLTMCharLM(V, E, a.s, a.layers)
    # torch_lltm.py leaves its parameters uninitialised: LLTM's usual uniform(-1/sqrt(S), 1/sqrt(S)).
    with torch.no_grad():
        for t in model.parameters():
            t.uniform_(-a.s ** -0.5, a.s ** -0.5)
model = model.to(dev)

# The rank's windows: DistributedSampler over the non-overlapping (T+1)-character windows of the training text.
window_count = (len(train_ids) - 1) // T
sampler = DistributedSampler(range(window_count), num_replicas=world, rank=rank, shuffle=True, seed=a.seed, drop_last=True)
per_epoch = len(sampler) // B
if per_epoch == 0:
    p.error(f"batch {B} per rank over {world} ranks needs more than the {window_count} windows of T={T}")
train_dev = train_ids.to(dev)
window = torch.arange(T + 1, device=dev)[:, None]


def batches(count):
    """This rank's first `count` batches of B windows, [T+1, B] on the device, epoch after epoch; every epoch's
    sample is drawn and sent to the device before the first batch, so that no step waits for a copy from the host."""
    epochs = -(-count // per_epoch)
    order = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        order.append(torch.tensor(list(sampler)[:per_epoch * B], dtype=torch.long))
    starts = (torch.cat(order) * T).to(dev)
    for k in range(count):
        yield train_dev[starts[k * B:(k + 1) * B][None, :] + window]


def cosine_lr(step):
    """The learning rate of step `step` (0-based) of warmup + steps: CosineAnnealingLR to lr * ETA_MIN_FRACTION."""
    if not recipe["cosine"]:
        return lr
    total = a.warmup + a.steps
    return lr * ETA_MIN_FRACTION + (lr - lr * ETA_MIN_FRACTION) * (1 + math.cos(math.pi * step / total)) / 2


def build(capturable):
    """DDP around the model and its optimizer; a capturable optimizer's learning rate is a device tensor (changed in place)."""
    ddp = DistributedDataParallel(model, device_ids=[local_rank] if gpu else None, static_graph=True)
    rate = torch.tensor(lr, device=dev) if capturable else lr
    if recipe["optimizer"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=rate, capturable=capturable)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=rate, weight_decay=WEIGHT_DECAY, capturable=capturable)
    return ddp, opt


def set_lr(opt, value):
    for group in opt.param_groups:
        if isinstance(group["lr"], torch.Tensor):
            group["lr"].fill_(value)
        else:
            group["lr"] = value


def train_step(ddp, opt, xy):
    """One step on xy [T+1, B]: the loss (a device scalar), nothing read back."""
    opt.zero_grad(set_to_none=False)
    logits = ddp(xy[:-1])
    loss = F.cross_entropy(logits.reshape(-1, V), xy[1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
    opt.step()
    return loss.detach()


# Enough batches for the longest path: a capture's warm-up and replays, then (if it fails) the eager warm-up, then the timed steps.
data = batches(max(a.warmup, DDP_EAGER_ITERATIONS_BEFORE_CAPTURE) + GRAPH_REPLAYS_BEFORE_TIMING + a.warmup + a.steps)
step_index = 0
loss_sum = torch.zeros((), device=dev)
ran_graph, fallback = False, None
warmup = a.warmup
if graph:
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        static_xy = torch.empty(T + 1, B, dtype=torch.long, device=dev)
        with torch.cuda.stream(side):
            ddp, opt = build(capturable=True)
            warmup = max(a.warmup, DDP_EAGER_ITERATIONS_BEFORE_CAPTURE)
            for _ in range(warmup):
                static_xy.copy_(next(data))
                set_lr(opt, cosine_lr(step_index))
                train_step(ddp, opt, static_xy)
                step_index += 1
        torch.cuda.current_stream().wait_stream(side)
        cuda_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(cuda_graph):
            static_loss = train_step(ddp, opt, static_xy)
        ran_graph = True
    except Exception as e:  # noqa: BLE001 - any capture failure falls back to the eager step, said aloud
        fallback = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        if rank == 0:
            print(f"torch_charlm_ddp: CUDA graph capture with DDP failed ({fallback}); running eagerly", flush=True)
        torch.cuda.synchronize()
if ran_graph:
    def run(xy, step):
        static_xy.copy_(xy)
        set_lr(opt, cosine_lr(step))
        cuda_graph.replay()
        loss_sum.add_(static_loss)
else:
    # After a failed capture the capturable DDP goes first: its reducer's hooks leave the parameters with it.
    ddp = opt = None
    ddp, opt = build(capturable=False)
    warmup, step_index = a.warmup, 0

    def run(xy, step):
        set_lr(opt, cosine_lr(step))
        loss_sum.add_(train_step(ddp, opt, xy))

sync = torch.cuda.synchronize if gpu else (lambda: None)
for _ in range(GRAPH_REPLAYS_BEFORE_TIMING if ran_graph else warmup):
    run(next(data), step_index)
    step_index += 1
untimed_steps = step_index
# The eager warm-up before a capture adds nothing to loss_sum; every later step does.
summed_before_timing = untimed_steps - (warmup if ran_graph else 0)
sync()
dist.barrier()
start = time.perf_counter()
for _ in range(a.steps):
    run(next(data), step_index)
    step_index += 1
train_loss_mean = loss_sum.item() / (summed_before_timing + a.steps)
sync()
dist.barrier()
seconds = time.perf_counter() - start
tokens_per_second = world * B * T * a.steps / seconds
memory = {"peak_memory_bytes": torch.cuda.max_memory_allocated(dev), "allocated_memory_bytes": torch.cuda.memory_allocated(dev),
          "reserved_memory_bytes": torch.cuda.memory_reserved(dev)} if gpu else {}


def validation_loss():
    """Mean cross-entropy over consecutive windows of the held-out text (scripts/charlm_train.ts's validationOffsets)."""
    n = min(VALIDATION_BATCHES, (len(valid_ids) - 1) // (T * B))
    valid_dev = valid_ids.to(dev)
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for k in range(n):
            starts = (k * B + torch.arange(B, device=dev)) * T
            xy = valid_dev[starts[None, :] + window]
            total += F.cross_entropy(model(xy[:-1]).reshape(-1, V), xy[1:].reshape(-1), reduction="sum").item()
            count += T * B
    return total / count


def unigram_loss():
    """The unigram model's cross-entropy on the held-out text, nats per character (add-one smoothed counts)."""
    counts = torch.bincount(train_ids, minlength=V).double() + 1
    return -torch.log(counts[valid_ids] / counts.sum()).mean().item()


if rank == 0:
    valid_nats, unigram = validation_loss(), unigram_loss()
    name = "lltm (torch_lltm.py)" if a.model == "lltm" else "nn.LSTM"
    print(f"torch DDP {name} {a.layers}x{a.s} E={E} T={T} B={B} per rank, {world} ranks ({dist.get_backend()}), "
          f"{'graph' if ran_graph else 'eager'}: {a.steps} steps after {untimed_steps} warm-up in {seconds:.2f} s, "
          f"{tokens_per_second / 1e3:.1f} k tokens/s; validation {valid_nats:.4f} nats/char", flush=True)
    if a.json:
        result = {
            "valid_nats": valid_nats, "valid_bits": valid_nats / math.log(2), "unigram_nats": unigram, "unigram_bits": unigram / math.log(2),
            "seconds": seconds, "steps": a.steps, "tokens_per_second": tokens_per_second, "stopped_by_budget": False,
            "device": str(dev), "dtype": "float32", "graph": ran_graph, "fused": False, "world_size": world,
            "skipped_steps": 0, "final_scale": 1.0, **memory,
            "tool": "torch-charlm-ddp", "model": a.model, "torch": torch.__version__, "backend": dist.get_backend(),
            "device_name": torch.cuda.get_device_name(dev) if gpu else "cpu", "threads": torch.get_num_threads(), "warmup_steps": untimed_steps,
            "graph_fallback": fallback, "layers": a.layers, "state": a.s, "embedding": E, "seq": T, "batch": B, "vocab": V,
            "train_loss_mean": train_loss_mean,
        }
        pathlib.Path(a.json).write_text(json.dumps(result, indent=1))
dist.barrier()
dist.destroy_process_group()
