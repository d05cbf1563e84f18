"""Node counts of the real exports with every symbolic input dim bound, three ways (issue 41):
as exported, through onnx-infer-shapes --mode inline --set-dim (made beforehand by
fixed_shape_counts.sh), and through ONNX Runtime's make_dynamic_shape_fixed (its
make_dim_param_fixed, per dim) followed by ONNX Runtime's own graph optimizations, saved to a
file (SessionOptions.optimized_model_filepath) at the basic level (ONNX ops only: constant
folding, redundant nodes) and at the all level (its fused com.microsoft ops too).

    python3 fixed_shape_counts.py MODELS_DIR OURS_DIR BINDINGS.json > fixed-shape-counts.tsv

Runs where python3-onnxruntime is (the Debian sid root of fixed_shape_counts.sh). Counts are
nodes of the graph, its subgraphs and its functions; shape ops are Shape and Size nodes.
"""

import json
import os
import sys
import tempfile

import onnx
import onnxruntime as ort
from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed


def counts(model):
    nodes = shape_ops = 0
    graphs = [model.graph]
    bodies = [f.node for f in model.functions]
    while graphs or bodies:
        if graphs:
            bodies.append(graphs.pop().node)
            continue
        for n in bodies.pop():
            nodes += 1
            if n.domain in ("", "ai.onnx") and n.op_type in ("Shape", "Size"):
                shape_ops += 1
            for a in n.attribute:
                if a.HasField("g"):
                    graphs.append(a.g)
                graphs.extend(a.graphs)
    return nodes, shape_ops


def ort_optimized(path, level, work):
    out = os.path.join(work, "ort.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = out
    so.intra_op_num_threads = 1
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return counts(onnx.load(out))


def main(models_dir, ours_dir, bindings_file):
    with open(os.path.join(models_dir, "origin.json")) as f:
        origin = json.load(f)["files"]
    with open(bindings_file) as f:
        sizes = json.load(f)["models"]
    print("file\tbindings\tnodes\tshape_ops\tshapeprop_nodes\tshapeprop_shape_ops\t"
          "ort_basic_nodes\tort_basic_shape_ops\tort_all_nodes\tort_all_shape_ops")
    for name in sorted(os.listdir(models_dir)):
        if not name.endswith(".onnx"):
            continue
        model = onnx.load(os.path.join(models_dir, name))
        carried = {d.dim_param for vi in model.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param}
        bind = {k: v for k, v in sizes[origin[name]["model"]].items() if k in carried}
        fixed = onnx.load(os.path.join(models_dir, name))
        for k, v in bind.items():
            make_dim_param_fixed(fixed.graph, k, v)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "fixed.onnx")
            onnx.save(fixed, path)
            basic = ort_optimized(path, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, work)
            full = ort_optimized(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL, work)
        ours = counts(onnx.load(os.path.join(ours_dir, name)))
        row = [name, ",".join("%s=%d" % kv for kv in bind.items()), *counts(model), *ours, *basic, *full]
        print("\t".join(str(x) for x in row))


if __name__ == "__main__":
    main(*sys.argv[1:])
