"""Coverage baselines of the real-export corpus: what ONNX's InferShapes and ONNX Runtime's
symbolic_shape_infer determine of each model's graph values, judged against the shapes
ONNX Runtime computes. Run inside the sid root by export.sh (onnx 1.20, onnxruntime 1.23):

    python3 baselines.py DIR

Reads DIR/origin.json (the models) and DIR/runs.json (two bindings of every symbolic
input dim, the range of integer inputs), writes DIR/baselines.json. For every model:

  values   the graph values: the outputs of the main graph's nodes (not those inside
           subgraphs or function bodies, which neither tool types);
  onnx     onnx.shape_inference.infer_shapes(model, data_prop=True): the number of values
           it fully determines (element type, rank and every dim a number or a symbol)
           truly, the values whose type is false, and for every value it types truly, its
           element type and dims (a number, a symbol's text, null for unknown; dims null
           when the rank is unknown), for the "ONNX knows more" comparison;
  ort      SymbolicShapeInference.infer_shapes(model, auto_merge=True) as transformers'
           and ORT's optimizers call it: whether it ran (its error when not), the values
           it fully determines truly, the false ones, and for every value it types truly
           its element type and dims, as for onnx (the "exact dims" comparison: where it
           writes a number or an expression of the inputs' symbols, we must not leave a
           fresh symbol);
  osi      onnx-shape-inference's infer_symbolic_shapes(model) on an onnx_ir.Model (its
           default policy, "refine"), as Olive calls it, recorded as for ort;
  onnxslim OnnxSlim's shape inference (onnxslim.core.shape_infer: its fork of ORT's tool,
           ONNX's InferShapes where that fails), as onnxslim.slim runs it, recorded as
           for ort.
The last two run when their packages are on PYTHONPATH (export.sh's PYDEPS); their
versions go into "versions".

Every tool sees the model without its value_info (the graph's outputs keep their declared
types), so that what they determine is derived from the graph. True means: at both
bindings, the element type is the computed one, the rank is, every
numeric dim is, a dim naming an input's symbol is that input's size, a dim that is an
expression over input symbols (ORT writes sympy's `floor(height/2 - 1/2) + 1`) evaluates
to the size, and any other symbol takes one size everywhere in a run. A value typed so in
one run and false in another is false. Values inside functions are computed on the model
flattened by ONNX's inliner, whose main-graph values keep their names.
"""

import json
import os
import re
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import sympy
from onnx import helper, inliner, shape_inference

FUNCTIONS = {"floor", "ceiling", "ceil", "Max", "Min", "max", "min", "Mod", "Abs", "FloorDiv", "CeilDiv"}


def graph_values(model):
    return [o for n in model.graph.node for o in n.output if o]


def input_symbols(model):
    init = {t.name for t in model.graph.initializer}
    syms = []
    for vi in model.graph.input:
        if vi.name in init:
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param not in syms:
                syms.append(d.dim_param)
    return syms


def bindings(runs, name, syms):
    spec = dict(runs["default"])
    spec.update(runs["models"].get(name, {}))
    bind = spec["bind"]
    n = max(len(v) for v in bind.values())
    out = []
    for i in range(n):
        out.append({s: (bind[s][i] if len(bind[s]) > 1 else bind[s][0]) if s in bind else 2 for s in syms})
    return out, spec["int_range"]


def feeds(model, sizes, int_range, seed):
    rng = np.random.default_rng(seed)
    init = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else sizes.get(d.dim_param, 2) for d in tt.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.floating):
            out[vi.name] = rng.uniform(-1, 1, dims).astype(dtype)
        elif dtype == np.bool_:
            out[vi.name] = rng.integers(0, 2, dims).astype(np.bool_)
        else:
            out[vi.name] = rng.integers(int_range[0], int_range[1], dims).astype(dtype)
    return out


def runtime_shapes(model, runs_sizes, int_range):
    """Per run: value name -> (elem type, dims) as ONNX Runtime computes them."""
    flat = onnx.ModelProto()
    flat.CopyFrom(model)
    if flat.functions:
        flat = inliner.inline_local_functions(flat)
    names = graph_values(model)
    del flat.graph.value_info[:]
    outputs = [o.name for o in flat.graph.output]
    del flat.graph.output[:]
    for n in outputs + [v for v in names if v not in outputs]:
        flat.graph.output.add().name = n
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(flat.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    order = [o.name for o in sess.get_outputs()]
    result = []
    for i, sizes in enumerate(runs_sizes):
        vals = sess.run(order, feeds(model, sizes, int_range, seed=i + 1))
        # Sequences and optionals are not tensors: neither tool types them here.
        result.append({n: (helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                       for n, v in zip(order, vals) if isinstance(v, np.ndarray)})
    return result


def undeclared(model):
    """The model without what it declares about the values inside it (value_info), so
    that each tool derives them from the graph; the graph's outputs keep their declared
    types, part of the model's interface as its inputs'."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.graph.value_info[:]
    for f in bare.functions:
        del f.value_info[:]
    return bare


def evaluate(text, sizes):
    """The size an expression over input symbols names, or None when it is not one."""
    idents = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    if not idents or idents - FUNCTIONS - set(sizes) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return None
    local = {s: sympy.Symbol(s) for s in idents - FUNCTIONS}
    local.update(floor=sympy.floor, ceiling=sympy.ceiling, ceil=sympy.ceiling, Max=sympy.Max, Min=sympy.Min,
                 max=sympy.Max, min=sympy.Min, Mod=sympy.Mod, Abs=sympy.Abs)
    try:
        expr = sympy.sympify(text, locals=local)
        v = expr.subs({local[s]: sizes[s] for s in idents - FUNCTIONS})
        return int(v) if v.is_integer else None
    except Exception:  # noqa: BLE001 - not an expression we read: an opaque name
        return None


def judge(types, values, runtime, runs_sizes):
    """Per value: 'untyped' | 'false' | 'partial' | 'determined'."""
    status = {}
    for v in values:
        t = types.get(v)
        if t is None or not t.HasField("tensor_type") or t.tensor_type.elem_type == 0:
            status[v] = "untyped"
    false = set()
    partial = set()
    for run, sizes in zip(runtime, runs_sizes):
        opaque = {}  # symbol -> {size: [values]}
        for v in values:
            if v in status or v not in run:
                continue
            tt = types[v].tensor_type
            elem, dims = run[v]
            if tt.elem_type != elem:
                false.add(v)
                continue
            if not tt.HasField("shape"):
                partial.add(v)
                continue
            if len(tt.shape.dim) != len(dims):
                false.add(v)
                continue
            for d, size in zip(tt.shape.dim, dims):
                if d.HasField("dim_value"):
                    if d.dim_value != size:
                        false.add(v)
                elif d.HasField("dim_param"):
                    p = d.dim_param
                    if p in sizes:
                        if sizes[p] != size:
                            false.add(v)
                        continue
                    e = evaluate(p, sizes)
                    if e is not None:
                        if e != size:
                            false.add(v)
                    else:
                        opaque.setdefault(p, {}).setdefault(size, []).append(v)
                else:
                    partial.add(v)
        for by_size in opaque.values():
            if len(by_size) > 1:  # one symbol, several sizes: every value naming it is false
                for vs in by_size.values():
                    false.update(vs)
    for v in values:
        if v not in status:
            status[v] = "false" if v in false else "partial" if v in partial else "determined"
    return status


def typed_map(model):
    return {vi.name: vi.type for vi in list(model.graph.value_info) + list(model.graph.output)}


def describe(t):
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return [tt.elem_type, None]
    dims = []
    for d in tt.shape.dim:
        dims.append(d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None)
    return [tt.elem_type, dims]


def run_peer(where, infer, model, values, runtime, runs_sizes):
    """What one symbolic tool truly determines of the model without its value_info: as
    "ort" in the header, or {"ran": False, "error": ...} where it crashed (a result here),
    `where` naming the module whose innermost frame the error names."""
    try:
        inferred = infer(undeclared(model))
        if inferred is None:
            raise RuntimeError("infer_shapes returned None (incomplete symbolic shape inference)")
        types = typed_map(inferred)
        st = judge(types, values, runtime, runs_sizes)
        return {
            "ran": True,
            "determined": sum(s == "determined" for s in st.values()),
            "false": sorted(v for v, s in st.items() if s == "false"),
            "determined_values": sorted(v for v, s in st.items() if s == "determined"),
            "typed": {v: describe(types[v]) for v in values if st[v] in ("determined", "partial")},
        }
    except Exception as e:  # noqa: BLE001 - a crash of the tool is a result here
        first = next((l for l in str(e).splitlines() if l.strip()), "")
        frames = [fr for fr in traceback.extract_tb(e.__traceback__) if where in fr.filename]
        at = f" (in {frames[-1].name})" if frames else ""
        return {"ran": False, "error": f"{type(e).__name__}{at}: {first}"[:300]}


def other_peers(versions):
    """onnx-shape-inference and OnnxSlim's shape inference, where importable: key ->
    (module path part for errors, ModelProto -> ModelProto); their versions into
    `versions`."""
    peers = {}
    try:
        import onnx_ir
        import onnx_shape_inference
    except ImportError:
        pass
    else:
        versions["onnx_shape_inference"] = onnx_shape_inference.__version__
        versions["onnx_ir"] = onnx_ir.__version__

        def osi(m):
            model = onnx_ir.serde.deserialize_model(m)
            onnx_shape_inference.infer_symbolic_shapes(model)
            return onnx_ir.serde.serialize_model(model)

        peers["osi"] = ("onnx_shape_inference", osi)
    try:
        import onnxslim
        from onnxslim.core import shape_infer
    except ImportError:
        pass
    else:
        versions["onnxslim"] = onnxslim.__version__
        peers["onnxslim"] = ("onnxslim", shape_infer)
    return peers


def main(argv):
    here = argv[1]
    with open(os.path.join(here, "origin.json")) as f:
        origin = json.load(f)
    with open(os.path.join(here, "runs.json")) as f:
        runs = json.load(f)
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    out = {"about": __doc__.split("\n\n")[0].replace("\n", " "),
           "versions": {"onnx": onnx.__version__, "onnxruntime": ort.__version__},
           "models": {}}
    peers = other_peers(out["versions"])
    for file in sorted(origin["files"]):
        model = onnx.load(os.path.join(here, file))
        name = origin["files"][file]["model"]
        values = graph_values(model)
        runs_sizes, int_range = bindings(runs, name, input_symbols(model))
        runtime = runtime_shapes(model, runs_sizes, int_range)
        entry = {"values": len(values)}

        bare = undeclared(model)
        inferred = shape_inference.infer_shapes(bare, data_prop=True)
        types = typed_map(inferred)
        st = judge(types, values, runtime, runs_sizes)
        entry["onnx"] = {
            "determined": sum(s == "determined" for s in st.values()),
            "false": sorted(v for v, s in st.items() if s == "false"),
            "typed": {v: describe(types[v]) for v in values if st[v] in ("determined", "partial")},
        }

        entry["ort"] = run_peer("symbolic_shape_infer", lambda m: SymbolicShapeInference.infer_shapes(
            m, int_max=2**31 - 1, auto_merge=True, guess_output_rank=False, verbose=0), model, values, runtime,
            runs_sizes)
        for key, (where, infer) in peers.items():
            entry[key] = run_peer(where, infer, model, values, runtime, runs_sizes)
        out["models"][file] = entry
        o = entry["onnx"]
        said = [f"{key} " + (f"{r['determined']} determined, {len(r['false'])} false" if r["ran"] else f"failed: {r['error']}")
                for key, r in entry.items() if isinstance(r, dict) and "ran" in r]
        print(f"{file}: {len(values)} values; ONNX {o['determined']} determined, {len(o['false'])} false; "
              + "; ".join(said), flush=True)
    path = os.path.join(here, "baselines.json")
    with open(path + ".tmp", "w") as f:
        f.write("{\n")
        f.write(f' "about": {json.dumps(out["about"])},\n "versions": {json.dumps(out["versions"])},\n "models": {{\n')
        items = list(out["models"].items())
        for i, (k, v) in enumerate(items):
            f.write(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}")
            f.write(",\n" if i + 1 < len(items) else "\n")
        f.write(" }\n}\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(sys.argv)
