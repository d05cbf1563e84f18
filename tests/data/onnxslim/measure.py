"""Node counts of OnnxSlim's output on each model: onnxslim.slim(MODEL) with its defaults
(shape inference on, every optimization and fusion, no size threshold), run once in a
Debian sid root (measure.sh) on OnnxSlim's sources, which this repository does not hold.

usage: python3 measure.py OUT_DIR MODEL...

Writes OUT_DIR/NAME.onnx (OnnxSlim's output) for each model and prints a TSV on stdout:
model (file name without .onnx), nodes (every node of the output once ONNX's inliner has
expanded the model-local functions OnnxSlim keeps, with its subgraphs' nodes, as
tools/inline-report counts shapeprop's flat output), and check: "ok" when ONNX's full
checker passes OnnxSlim's output, else what it or OnnxSlim said. Whether the output gives ONNX
Runtime's outputs is measure.sh's second step.
"""
import os
import sys
import traceback

import onnx
import onnx.inliner


def count(graph):
    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count(a.g)
            for g in a.graphs:
                n += count(g)
    return n


def total(model):
    if len(model.functions):
        model = onnx.inliner.inline_local_functions(model)
    return count(model.graph) + sum(len(f.node) for f in model.functions)


def one_line(text):
    return " ".join(str(text).split())[:200]


def main(argv):
    import onnxslim  # on PYTHONPATH in the root (measure.sh)

    out_dir, models = argv[1], argv[2:]
    print("model\tnodes\tcheck")
    for path in models:
        name = os.path.basename(path)[: -len(".onnx")]
        try:
            slimmed = onnxslim.slim(path)
        except Exception as e:  # OnnxSlim refuses or fails: no count
            print(f"{name}\t-\tonnxslim failed: {type(e).__name__}: {one_line(e)}", flush=True)
            traceback.print_exc(file=sys.stderr)
            continue
        if slimmed is None:
            print(f"{name}\t-\tonnxslim gave no model", flush=True)
            continue
        out = os.path.join(out_dir, name + ".onnx")
        onnx.save(slimmed, out)
        try:
            onnx.checker.check_model(slimmed, full_check=True)
            check = "ok"
        except Exception as e:
            check = f"full check fails: {one_line(e)}"
        print(f"{name}\t{total(slimmed)}\t{check}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
