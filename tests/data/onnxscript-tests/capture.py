"""The models onnxscript's own optimizer and rewriter tests optimize, with the node counts
those tests leave and onnxscript's default optimizer leaves: run once in a Debian sid root
(capture.sh) on onnxscript's and onnx_ir's sources, which this repository does not hold.

usage: python3 capture.py ONNXSCRIPT_ROOT OUT_DIR TEST_MODULE...

Runs each test module's unittest cases (TEST_MODULE as a dotted name, e.g.
onnxscript.rewriter.rules.common._no_op_test) with onnxscript's entry points wrapped: the
model handed to the outermost call of a rule set, a rule, the constant folder, the
optimizer or the rewriter is saved (binary ONNX) as OUT_DIR/MODULE.TEST.K.onnx, and the
node count of the graph that call leaves (what the test's assertions then check) is
recorded. Identical models are kept once (the first test that made one names it). Each
model is kept only when ONNX's full checker passes it. Prints a TSV on stdout: model,
nodes_after (onnxscript.optimizer.optimize with its defaults on the saved model: every
node, subgraphs' and functions' too), nodes_test (what the test's call left in the main
graph), call (which entry point), test.
"""
import collections
import hashlib
import importlib
import io
import os
import sys
import unittest

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnxslim"))
from measure import count  # noqa: E402  (every node, subgraphs' too)

RECORDS = []
STATE = {"test": None, "depth": 0, "seen": set(), "index": collections.Counter()}


def total(model):
    return count(model.graph) + sum(len(f.node) for f in model.functions)


def wrap(owner, name, label):
    from onnxscript import ir

    original = getattr(owner, name)

    def to_proto(m):
        if isinstance(m, onnx.ModelProto):
            return m
        if isinstance(m, ir.Model):
            return ir.serde.serialize_model(m)
        return None

    def wrapper(*args, **kwargs):
        model = next((a for a in args if isinstance(a, (onnx.ModelProto, ir.Model))), kwargs.get("model"))
        outer = STATE["depth"] == 0 and STATE["test"] is not None and model is not None
        record = None
        if outer:
            try:
                proto = to_proto(model)
                record = {"proto": proto.SerializeToString(), "test": STATE["test"], "call": label}
            except Exception:
                record = None
        STATE["depth"] += 1
        try:
            result = original(*args, **kwargs)
        finally:
            STATE["depth"] -= 1
        if record is not None:
            after = result if isinstance(result, (onnx.ModelProto, ir.Model)) else model
            try:
                after_proto = to_proto(after)
                record["nodes_test"] = len(after_proto.graph.node)
            except Exception:
                record["nodes_test"] = "-"
            RECORDS.append(record)
        return result

    setattr(owner, name, wrapper)


def install_wrappers():
    import onnxscript.optimizer as optimizer
    import onnxscript.optimizer._constant_folding as constant_folding
    import onnxscript.rewriter as rewriter
    from onnxscript.rewriter import _rewrite_rule

    wrap(_rewrite_rule.RewriteRuleSet, "apply_to_model", "rule set")
    wrap(_rewrite_rule.RewriteRule, "apply_to_model", "rule")
    wrap(constant_folding, "fold_constants", "fold_constants")
    wrap(optimizer, "fold_constants", "fold_constants")
    wrap(optimizer, "optimize", "optimize")
    wrap(optimizer, "optimize_ir", "optimize")
    wrap(rewriter, "rewrite", "rewrite")


class Recorder(unittest.TextTestResult):
    def startTest(self, test):
        STATE["test"] = test.id()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        STATE["test"] = None


def main(argv):
    out_dir, modules = argv[2], argv[3:]
    sys.path.insert(0, argv[1])
    install_wrappers()
    import onnxscript.optimizer as optimizer

    suite = unittest.TestSuite()
    for m in modules:
        suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(m)))
    unittest.TextTestRunner(stream=io.StringIO(), resultclass=Recorder).run(suite)

    print("model\tnodes_after\tnodes_test\tcall\ttest")
    kept = 0
    for r in RECORDS:
        digest = hashlib.sha256(r["proto"]).hexdigest()
        if digest in STATE["seen"]:
            continue
        STATE["seen"].add(digest)
        model = onnx.ModelProto()
        model.ParseFromString(r["proto"])
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception:
            continue
        parts = r["test"].split(".")
        base = parts[-3].lstrip("_") + "." + parts[-1]
        STATE["index"][base] += 1
        name = f"{base}.{STATE['index'][base]}"
        try:
            optimized = optimizer.optimize(onnx.ModelProto.FromString(r["proto"]))
            after = total(optimized)
        except Exception as e:
            after = "-"
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))
        print(f"{name}\t{after}\t{r['nodes_test']}\t{r['call']}\t{r['test']}", flush=True)
        kept += 1
    sys.stderr.write(f"capture: {len(RECORDS)} calls, {kept} models kept\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
