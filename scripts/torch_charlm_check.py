"""Loads the main job's character model as lltm saved it (scripts/charlm_interop.ts) into
the PyTorch LLTM model of torch_lltm.py, runs the same batch in float64, and compares
lltm's logits, loss and every parameter's gradient with PyTorch's, each as the norm-wise
relative difference |lltm - torch| / |torch|, against the tolerance written in the file's
metadata. Prints one JSON object per dtype; exits 1 when a difference is over the tolerance.

usage: python3 scripts/torch_charlm_check.py DIR [float64] [float32]
"""
import json
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file

from torch_lltm import charlm_from


def relative(mine, theirs):
    return ((mine.double() - theirs).norm() / theirs.norm()).item()


def check(dir, dtype):
    stem = f"{dir}/charlm_interop_{dtype}"
    with safe_open(f"{stem}.safetensors", "pt") as f:
        config = json.loads(f.metadata()["charlm"])
    with safe_open(f"{stem}_io.safetensors", "pt") as f:
        tolerance = float(f.metadata()["tolerance"])
    io = load_file(f"{stem}_io.safetensors")
    # PyTorch in float64 on the very weights lltm used (float32 ones are exact in float64).
    model = charlm_from(config, load_file(f"{stem}.safetensors"), torch.float64)
    logits = model(io["ids"])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), io["targets"].reshape(-1).long())
    loss.backward()
    errors = {"logits": relative(io["logits"], logits.detach()), "loss": relative(io["loss"], loss.detach().reshape(1))}
    for name, p in model.named_parameters():
        errors[f"grad.{name}"] = relative(io[f"grad.{name}"], p.grad)
    worst = max(errors, key=errors.get)
    return {"dtype": dtype, "torch": torch.__version__, "tolerance": tolerance, "worst": worst,
            "max_error": errors[worst], "ok": errors[worst] <= tolerance, "errors": errors}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    results = [check(sys.argv[1], dtype) for dtype in (sys.argv[2:] or ["float64", "float32"])]
    for r in results:
        print(json.dumps(r))
    sys.exit(0 if all(r["ok"] for r in results) else 1)
