"""Reads lltm's checkpoint with safetensors.torch.load_file and checks that PyTorch's
LLTM (the tutorial's formulas) with those weights gives lltm's outputs.

usage: python3 scripts/torch_interop.py [out]   (after: bun scripts/interop.ts --out out)
"""
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import load_file


def lltm(input, weights, bias, old_h, old_cell):
    X = torch.cat([old_h, input], dim=1)
    gates = F.linear(X, weights, bias).chunk(3, dim=1)
    input_gate = torch.sigmoid(gates[0])
    output_gate = torch.sigmoid(gates[1])
    candidate_cell = F.elu(gates[2])
    new_cell = old_cell + candidate_cell * input_gate
    return torch.tanh(new_cell) * output_gate, new_cell


out = sys.argv[1] if len(sys.argv) > 1 else "out"
device = "cuda" if torch.cuda.is_available() else "cpu"
params = load_file(f"{out}/interop_model.safetensors", device=device)
io = load_file(f"{out}/interop_io.safetensors", device=device)
print("checkpoint:", {k: (tuple(v.shape), str(v.dtype)) for k, v in params.items()})
h, c = lltm(io["input"], params["weights"], params["bias"], io["old_h"], io["old_cell"])
err = max(((h - io["new_h"]).norm() / io["new_h"].norm()).item(), ((c - io["new_cell"]).norm() / io["new_cell"].norm()).item())
print(f"PyTorch {torch.__version__} on {device}: relative difference from lltm's outputs {err:.3e}")
sys.exit(0 if err <= 1e-12 else 1)
