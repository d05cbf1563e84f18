"""The torch export recipe of docs/python.md, run as written in a Debian sid root with
python3-torch and python3-onnxruntime (scripts/test-lite.sh runs it where that root is;
tests/python/torch_recipe.sh enters it): export a module with torch.onnx.export(...,
dynamo=True), run SpecializePass on onnx_program.model in an onnx_ir PassManager, save,
and run the result on ONNX Runtime: the same outputs as torch, at the bound batch and at
two sequence lengths; the unbound specialization too, at another batch."""

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx_ir as ir
import onnxruntime as ort
import torch

from shapeprop.ir import InferShapesPass, SpecializePass


class Block(torch.nn.Module):
    """A transformer block's shape work: LayerNorm, heads split and merged by view with
    symbolic sizes, scaled dot-product attention, a GELU MLP."""

    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(), torch.nn.Linear(2 * dim, dim))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        a = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(x)


def main():
    torch.manual_seed(0)
    module = Block().eval()
    example = torch.randn(2, 5, 16)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
    program = torch.onnx.export(module, (example,), dynamo=True, dynamic_shapes=({0: batch, 1: seq},))

    # The recipe: specialize for a deployment with batch 2, inline everything, in a PassManager.
    specialize = SpecializePass(inline="all", dims={"batch": 2})
    result = ir.passes.PassManager([specialize, InferShapesPass()])(program.model)
    out = Path(tempfile.mkdtemp()) / "block.onnx"
    ir.save(result.model, out)

    failures = []
    before = sum(1 for _ in program.model.graph.all_nodes())
    after = sum(1 for _ in result.model.graph.all_nodes())
    print("torch_recipe: %d nodes exported, %d after SpecializePass (batch=2): %s"
          % (before, after, specialize.report.summary[0]))
    if not result.modified or after >= before:
        failures.append("SpecializePass left the model as large as it was")
    untyped = [v.name for n in result.model.graph for v in n.outputs if v.type is None or v.shape is None]
    if untyped:
        failures.append("untyped values: %s" % untyped[:5])
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    for s in (5, 9):
        x = torch.randn(2, s, 16)
        expected = module(x).detach().numpy()
        (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
        error = float(np.max(np.abs(got - expected)))
        print("torch_recipe: batch 2, seq %d: max |difference| from torch %.2e" % (s, error))
        if not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
            failures.append("outputs differ from torch at seq %d (%.2e)" % (s, error))

    # Unbound: the specialization holds for every batch.
    free = ir.passes.PassManager([SpecializePass(inline="all")])(program.model).model
    ir.save(free, out)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = torch.randn(3, 7, 16)
    (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    if not np.allclose(got, module(x).detach().numpy(), rtol=1e-4, atol=1e-5):
        failures.append("the unbound specialization differs from torch at batch 3, seq 7")
    for f in failures:
        print("torch_recipe: FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
