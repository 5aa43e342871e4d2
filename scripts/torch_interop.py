"""Reads lltm's checkpoint with safetensors.torch.load_file and checks that PyTorch's
LLTM (the tutorial's formulas) with those weights gives lltm's outputs; checks the main
job's character model, its logits, loss and gradients (torch_charlm_check.py); checks that
lltm's bfloat16 and float16 tensors read as PyTorch's torch.bfloat16 and torch.float16
with the values lltm gives them; and writes bfloat16 and float16 tensors of its own
(torch_half.safetensors) for `bun scripts/interop.ts --read` to check.

usage: python3 scripts/torch_interop.py [out]   (after: bun scripts/interop.ts --out out)
"""
import sys

import torch
from safetensors.torch import load_file, save_file

from torch_charlm_check import check as check_charlm
from torch_lltm import lltm_cell


out = sys.argv[1] if len(sys.argv) > 1 else "out"
device = "cuda" if torch.cuda.is_available() else "cpu"
params = load_file(f"{out}/interop_model.safetensors", device=device)
io = load_file(f"{out}/interop_io.safetensors", device=device)
print("checkpoint:", {k: (tuple(v.shape), str(v.dtype)) for k, v in params.items()})
h, c = lltm_cell(io["input"], params["weights"], params["bias"], io["old_h"], io["old_cell"])
err = max(((h - io["new_h"]).norm() / io["new_h"].norm()).item(), ((c - io["new_cell"]).norm() / io["new_cell"].norm()).item())
print(f"PyTorch {torch.__version__} on {device}: relative difference from lltm's outputs {err:.3e}")
ok = err <= 1e-12

for dtype in ("float64", "float32"):
    result = check_charlm(out, dtype)
    print(f"character model in {dtype}: largest difference from PyTorch's {result['max_error']:.3e} ({result['worst']}), "
          f"tolerance {result['tolerance']:g}")
    ok = ok and result["ok"]

half = load_file(f"{out}/interop_half.safetensors", device=device)
for name, dtype in (("bfloat16", torch.bfloat16), ("float16", torch.float16)):
    t, values = half[name], half[f"{name}_values"]
    same = t.dtype == dtype and torch.equal(t.float(), values)
    # PyTorch's own rounding of the float32 values gives the same bits (they are representable).
    same = same and torch.equal(values.to(dtype).view(torch.int16), t.view(torch.int16))
    print(f"lltm's {name} read as {t.dtype}: {'the same values' if same else 'DIFFERENT values'}")
    ok = ok and same

generator = torch.Generator().manual_seed(7)
wide = torch.randn(64, generator=generator, dtype=torch.float64) * torch.logspace(-6, 4, 64, dtype=torch.float64)
mine = {}
for name, dtype in (("bfloat16", torch.bfloat16), ("float16", torch.float16)):
    mine[name] = wide.to(dtype)
    mine[f"{name}_values"] = mine[name].float()
save_file(mine, f"{out}/torch_half.safetensors")
print(f"wrote {out}/torch_half.safetensors")
sys.exit(0 if ok else 1)
