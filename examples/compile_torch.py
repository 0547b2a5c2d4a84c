# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compiles a few small PyTorch models, the way a training job does before its first step.

    compile_torch.py [--models N] [--no-run]

Each model (a small convolutional network; model k has k + 1 residual blocks, so each is a
new class to compile) goes through:
  - torch.jit.script: TorchScript parses the Python source of every method into its IR;
  - torch.fx.symbolic_trace: FX runs forward() on proxies and records a graph;
  - torch.compile, where the installed PyTorch has it (2.0+): Dynamo and the default
    backend (TorchInductor); where that backend cannot run here (no C compiler), the
    "eager" backend, so that Dynamo's own work is still there to profile.
Then each compiled form runs once on a small batch, and the outputs are checked against the
plain model's. Made for `make demo-compile` (docs/usage.md: "Profiling a compilation"): nothing in
it knows about pyuprof.
"""

import argparse
import sys
import time

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F


def make_model(blocks):
    """A new nn.Module class with blocks residual blocks: each needs compiling again."""

    class Block(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(ch)
            self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(ch)

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(x + y)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1)
            self.blocks = nn.Sequential(*[Block(16) for _ in range(blocks)])
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.stem(x))
            x = self.blocks(x)
            x = x.mean(dim=(2, 3))
            return self.head(x)

    Net.__name__ = Net.__qualname__ = "Net%d" % blocks
    return Net().eval()


def compile_with_torch_compile(model, x):
    """torch.compile (2.0+), run once: compilation is lazy, at the first call."""
    try:
        return torch.compile(model)(x), "inductor"
    except Exception as e:  # e.g. no C compiler for TorchInductor's kernels
        print("torch.compile with its default backend failed (%s: %s); using the eager "
              "backend" % (type(e).__name__, str(e).splitlines()[0][:100]), file=sys.stderr)
        torch._dynamo.reset()
        return torch.compile(model, backend="eager")(x), "eager"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=4, help="models to compile (default 4)")
    ap.add_argument("--no-run", action="store_true", help="compile only")
    args = ap.parse_args()

    torch.manual_seed(0)
    x = torch.randn(2, 3, 16, 16)
    has_compile = hasattr(torch, "compile") and int(torch.__version__.split(".")[0]) >= 2
    print("torch %s: torch.jit.script, torch.fx.symbolic_trace%s" % (
        torch.__version__, ", torch.compile" if has_compile else " (no torch.compile)"))
    t0 = time.perf_counter()
    with torch.no_grad():
        for k in range(args.models):
            model = make_model(k + 1)
            want = model(x)
            scripted = torch.jit.script(model)
            traced = torch.fx.symbolic_trace(model)
            forms = [("jit.script", scripted), ("fx", traced)]
            if has_compile:
                got, backend = compile_with_torch_compile(model, x)
                if not torch.allclose(got, want, atol=1e-5):
                    sys.exit("torch.compile (%s) of %s gives other outputs" % (
                        backend, type(model).__name__))
            for name, form in forms:
                if not args.no_run and not torch.allclose(form(x), want, atol=1e-5):
                    sys.exit("%s of %s gives other outputs" % (name, type(model).__name__))
            print("compiled %s (%d blocks)" % (type(model).__name__, k + 1), flush=True)
    print("%d models compiled in %.2f s" % (args.models, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
