"""The drop-ins beside the tools they replace, on tests/data/real-exports (issue 51):

    ort       onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference.infer_shapes
              (ONNX Runtime 1.23, Debian's python3-onnxruntime), auto_merge=True as ORT's
              transformer optimizer calls it;
    ours_ort  shapeprop.ort_compat.SymbolicShapeInference.infer_shapes, the same call;
    osi       onnx_shape_inference.infer_symbolic_shapes (its sources, on an onnx_ir.Model),
              policy="refine" (its default);
    ours_osi  shapeprop.osi_compat.infer_symbolic_shapes, the same call;
    osi_declared, ours_osi_declared   the same two calls on the model as exported.

Each but the last two sees every model as baselines.py's tools do: without its value_info
(the graph's outputs keep their declared types), so that what it writes is derived from the
graph; the last two see it with its value_info, as Olive hands it to onnx-shape-inference,
whose "refine" merges the declarations with what it infers. Each
value a node of the main graph computes is judged against the shapes ONNX Runtime computes at
two bindings of every symbolic input dim (baselines.py's `judge`, with runs.json), and at
those extra_runs.json adds: a type is true when every dim it gives is the size at every binding (a number, an input's symbol, an
expression over those, or any other symbol taking one size per run). Then, per pair (ort and
ours_ort, osi and ours_osi, osi_declared and ours_osi_declared), on the values whose type
the tool gives truly:

    less     ours says less of the value than the tool does: it is untyped or rankless
             where the tool's is not, or one of its dims is less specific (a number above
             an expression of the inputs' symbols above another symbol above unknown);
    false    ours is false (counted over every value, whatever the tool says).

    python3 compare.py --check COUNTS     fails unless the counts are COUNTS' (a JSON file),
                                          any `false` or `less` of ours is not 0 (but for
                                          ours_osi's values that tests/realexports/
                                          peer_exceptions.json accepts, with the reason
                                          there, which the counts then hold), or COUNTS
                                          misses a model (or names one the folder lacks)
    python3 compare.py --write COUNTS     writes the counts
    python3 compare.py --times N          (tools/bench/dropin-times.sh) each tool's time per
                                          model, the least of N calls, and shapeprop's
                                          library's own part of ours (no judging)

Run in a Debian sid root with python3-onnxruntime and python3-onnx (tests/dropin/dropin.sh),
with shapeprop, onnx_ir and onnx_shape_inference on PYTHONPATH.
"""

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import onnx
import onnx_ir
from onnx_shape_inference import infer_symbolic_shapes as osi_infer
from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as OrtTool

import shapeprop
from shapeprop.ort_compat import SymbolicShapeInference as OursOrt
from shapeprop.osi_compat import infer_symbolic_shapes as ours_osi_infer

HERE = Path(__file__).resolve().parent
EXPORTS = HERE.parent / "data" / "real-exports"
sys.path.insert(0, str(EXPORTS))
import baselines  # noqa: E402 - the corpus's own oracle, beside the models

# Sizes judged beside runs.json's, where a tool's fact holds at those but not in general.
EXTRA_RUNS = json.loads((HERE / "extra_runs.json").read_text())

TOOLS = ("ort", "ours_ort", "osi", "ours_osi", "osi_declared", "ours_osi_declared")
PAIRS = (("ort", "ours_ort"), ("osi", "ours_osi"), ("osi_declared", "ours_osi_declared"))
THEIRS = {ours: theirs for theirs, ours in PAIRS}
# These see the model as exported, value_info and all: what Olive hands
# onnx-shape-inference, whose "refine" merges the declarations with what it infers.
DECLARED = {"osi_declared", "ours_osi_declared"}


def _ort(tool):
    def run(model):
        out = tool.infer_shapes(model, int_max=2**31 - 1, auto_merge=True, guess_output_rank=False, verbose=0)
        if out is None:
            raise RuntimeError("infer_shapes returned None")
        return out
    return run


def _osi(infer):
    def run(model):
        ir_model = onnx_ir.serde.deserialize_model(model)
        start = time.perf_counter()
        infer(ir_model, policy="refine")
        elapsed = time.perf_counter() - start
        return onnx_ir.serde.serialize_model(ir_model), elapsed
    return run


RUNNERS = {"ort": _ort(OrtTool), "ours_ort": _ort(OursOrt), "osi": _osi(osi_infer), "ours_osi": _osi(ours_osi_infer),
           "osi_declared": _osi(osi_infer), "ours_osi_declared": _osi(ours_osi_infer)}


def call(name, model):
    """(the tool's result as a ModelProto, its seconds); the call alone is timed (for the
    onnx_ir ones, not the conversions around it, which a caller holding an onnx_ir.Model
    does not make)."""
    arg = onnx.ModelProto()
    arg.CopyFrom(model)
    start = time.perf_counter()
    result = RUNNERS[name](arg)
    elapsed = time.perf_counter() - start
    if isinstance(result, tuple):
        result, elapsed = result
    return result, elapsed


def dim_rank(dim, syms, sizes):
    """How specific a described dim is: 3 a number, 2 an input's symbol or an expression of
    those, 1 another symbol, 0 unknown."""
    if dim is None:
        return 0
    if isinstance(dim, int):
        return 3
    if dim in syms or baselines.evaluate(dim, sizes) is not None:
        return 2
    return 1


def less_precise(theirs, ours, syms, sizes):
    if ours is None:
        return True
    if theirs[1] is None:
        return False
    if ours[1] is None:
        return True
    return any(dim_rank(o, syms, sizes) < dim_rank(t, syms, sizes) for t, o in zip(theirs[1], ours[1]))


@contextlib.contextmanager
def elsewhere():
    """ORT's tool writes sym_shape_infer_temp.onnx into the working folder when it stops
    incomplete: the calls run in a temporary one."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(old)


def first_line(e):
    line = next((l for l in str(e).splitlines() if l.strip()), "")
    return f"{type(e).__name__}: {line}"[:200]


def models(origin):
    return sorted(origin["files"])


def compare(file, origin, runs):
    model = onnx.load(str(EXPORTS / file))
    name = origin["files"][file]["model"]
    values = baselines.graph_values(model)
    syms = baselines.input_symbols(model)
    runs_sizes, int_range = baselines.bindings(runs, name, syms)
    runs_sizes += EXTRA_RUNS["models"].get(name, [])
    runtime = baselines.runtime_shapes(model, runs_sizes, int_range)
    bare = baselines.undeclared(model)
    entry = {"values": len(values)}
    judged = {}
    for tool in TOOLS:
        try:
            with elsewhere():
                result, _ = call(tool, model if tool in DECLARED else bare)
        except Exception as e:  # noqa: BLE001 - a tool's crash is a result here
            if tool.startswith("ours"):
                raise
            entry[tool] = {"error": first_line(e)}
            continue
        types = baselines.typed_map(result)
        status = baselines.judge(types, values, runtime, runs_sizes)
        judged[tool] = (status, {v: baselines.describe(types[v]) for v in values if status[v] in ("determined", "partial")})
        entry[tool] = {"determined": sum(s == "determined" for s in status.values()),
                       "false": sorted(v for v, s in status.items() if s == "false")}
    for theirs, ours in PAIRS:
        status, ours_types = judged[ours]
        less = []
        if theirs in judged:
            their_status, their_types = judged[theirs]
            for v in values:
                if their_status[v] in ("determined", "partial") and (
                        status[v] == "false" or any(less_precise(their_types[v], ours_types.get(v), syms, s)
                                                    for s in runs_sizes)):
                    less.append(v)
        entry[ours]["less"] = less
    return entry


def library_seconds(model):
    """What shapeprop's library itself takes of a drop-in's call (the report's phases: load,
    analysis, annotation, write), without the conversions to and from Python's objects."""
    _, report = shapeprop.infer_shapes(model.SerializeToString(), annotate_functions=False, return_report=True)
    return sum(report.phases.values())


def times(origin, repeat):
    """Each tool's time per model, the least of `repeat` calls; and the library's own part."""
    columns = TOOLS + ("shapeprop",)
    print("model\tvalues\t" + "\t".join(f"{t} (ms)" for t in columns))
    totals = dict.fromkeys(columns, 0.0)
    for file in models(origin):
        model = onnx.load(str(EXPORTS / file))
        bare = baselines.undeclared(model)
        row = [file, str(len(baselines.graph_values(model)))]
        for tool in columns:
            best = None
            for _ in range(repeat):
                try:
                    with elsewhere():
                        t = library_seconds(bare) if tool == "shapeprop" else call(
                            tool, model if tool in DECLARED else bare)[1]
                except Exception:  # noqa: BLE001 - crashed: no time
                    best = None
                    break
                best = t if best is None else min(best, t)
            row.append("crashed" if best is None else "%.1f" % (best * 1e3))
            totals[tool] += best or 0.0
        print("\t".join(row), flush=True)
    print("total (where run)\t\t" + "\t".join("%.1f" % (totals[t] * 1e3) for t in columns))


def accepted_less():
    """What tests/realexports/peer_exceptions.json accepts, each with its reason, where
    onnx-shape-inference says more than annotate from the graph alone ("osi"): file ->
    the values ours_osi may say less of (and must: a listed value that no longer shows is
    taken off that list)."""
    with open(HERE.parent / "realexports" / "peer_exceptions.json") as f:
        models = json.load(f)["models"]
    return {file: set(peers["osi"]["values"]) for file, peers in models.items() if "osi" in peers}


def check(found, expected):
    problems = []
    accepted = accepted_less()
    for file, entry in found.items():
        for ours, theirs in THEIRS.items():
            if entry[ours]["false"]:
                problems.append(f"{file}: {ours} false: {', '.join(entry[ours]['false'])}")
            less = [v for v in entry[ours]["less"] if not (ours == "ours_osi" and v in accepted.get(file, ()))]
            if less:
                problems.append(f"{file}: {ours} less precise than {theirs}: {', '.join(less)}")
        if file not in expected:
            problems.append(f"{file}: not in the counts file (run --write)")
        elif expected[file] != entry:
            problems.append(f"{file}: counts differ: expected {json.dumps(expected[file], sort_keys=True)}, "
                            f"found {json.dumps(entry, sort_keys=True)}")
    problems += [f"{file}: in the counts file, not in the folder" for file in expected if file not in found]
    return problems


def summary(found):
    lines = []
    for tool in TOOLS:
        ran = [e[tool] for e in found.values() if "error" not in e[tool]]
        lines.append(f"{tool}: ran on {len(ran)} of {len(found)} models, "
                     f"{sum(e['determined'] for e in ran)} values determined truly, "
                     f"{sum(len(e['false']) for e in ran)} false"
                     + (f", {sum(len(e['less']) for e in ran)} less precise than {THEIRS[tool]}" if tool in THEIRS else ""))
    return lines


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="COUNTS")
    mode.add_argument("--write", metavar="COUNTS")
    mode.add_argument("--times", metavar="N", type=int)
    parser.add_argument("--only", nargs="*", help="these files of the folder only (not with --check)")
    args = parser.parse_args(argv)
    origin = json.loads((EXPORTS / "origin.json").read_text())
    runs = json.loads((EXPORTS / "runs.json").read_text())
    if args.times:
        times(origin, args.times)
        return 0
    found = {}
    for file in models(origin):
        if args.only and file not in args.only:
            continue
        start = time.perf_counter()
        found[file] = compare(file, origin, runs)
        e = found[file]
        print(f"{file}: {e['values']} values; " + "; ".join(
            f"{t} " + (e[t]["error"] if "error" in e[t] else
                       f"{e[t]['determined']} determined, {len(e[t]['false'])} false"
                       + (f", {len(e[t]['less'])} less" if "less" in e[t] else ""))
            for t in TOOLS) + f" ({time.perf_counter() - start:.1f} s)", flush=True)
    print("\n".join(summary(found)))
    if args.write:
        with open(args.write + ".tmp", "w") as f:
            f.write("{\n")
            items = list(found.items())
            for i, (k, v) in enumerate(items):
                f.write(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}")
                f.write(",\n" if i + 1 < len(items) else "\n")
            f.write("}\n")
        os.replace(args.write + ".tmp", args.write)
        return 0
    problems = check(found, json.loads(Path(args.check).read_text()))
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
