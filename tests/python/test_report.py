"""The report: its schema, its counts, the CLI's and the package's, the assumptions."""

import json
import re

import pytest

from conftest import CORPUS, CORPUS_MODELS, REJECTED, REPORT_DOC, SCHEMA, check_report_counts, run_cli, summary_of, write_text_model

MODES = {"annotate": [], "inline": ["--mode", "inline"], "specialize": ["--mode", "specialize"]}


def cli_report(tmp_path, model, mode):
    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    done = run_cli(model, *MODES[mode], "-o", out, "--report", report, check=False)
    return done, json.loads(report.read_text())


def comparable(report):
    """What the CLI's and the package's reports share: all but the time per phase and pass."""
    data = dict(report)
    data["phases"] = [p["phase"] for p in data["phases"]]
    data["pass_times"] = [p["pass"] for p in data["pass_times"]]
    return data


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("model", CORPUS_MODELS)
def test_every_corpus_report_validates_and_counts_as_the_summary(shapeprop, validate_report, tmp_path, model, mode):
    done, report = cli_report(tmp_path, CORPUS / model, mode)
    validate_report(report)
    if model in REJECTED:
        assert done.returncode == 2 and not report["ok"]
        [error] = [d for d in report["diagnostics"] if d["severity"] == "error"]
        assert error["text"] == done.stderr.strip()
        with pytest.raises(shapeprop.Error) as raised:
            package_run(shapeprop, CORPUS / model, mode)
        assert comparable(raised.value.report.data) == comparable(report)
        return
    assert done.returncode == 0 and report["ok"] and report["mode"] == mode
    [line] = report["summary"]
    assert line == summary_of(done.stderr)
    check_report_counts(report, line)
    # The package's report of the same run is the same report.
    _, own = package_run(shapeprop, CORPUS / model, mode)
    validate_report(own.data)
    assert comparable(own.data) == comparable(report)


@pytest.mark.parametrize("model", CORPUS_MODELS)
def test_every_corpus_check_report_validates_and_is_the_clis(shapeprop, validate_report, tmp_path, model):
    report_path = tmp_path / "report.json"
    done = run_cli(CORPUS / model, "--mode", "check", "--report", report_path, check=False)
    report = json.loads(report_path.read_text())
    validate_report(report)
    assert report["mode"] == "check" and report["ok"] == (done.returncode == 0)
    texts = [d["text"] for d in report["diagnostics"]]
    if report["diagnostics"] and report["diagnostics"][-1]["severity"] != "note":
        # A model the checker cannot get through prints one line: the first error and a
        # count of the rest; the report keeps each.
        errors = [t for t, d in zip(texts, report["diagnostics"]) if d["severity"] == "error"]
        more = len(errors) - 1
        texts = [errors[0] + (f" (and {more} more error{'s' if more > 1 else ''})" if more else "")]
    assert texts == done.stderr.splitlines()
    assert [p["phase"] for p in report["phases"]] == ["load", "check"]
    # The model is read, never changed; the checker's closing note, which a structural
    # error leaves out, is the summary.
    assert report["counts"]["after"] == report["counts"]["before"] and report["transform"] is None
    last = report["diagnostics"][-1]
    assert report["summary"] == ([last["message"]] if last["severity"] == "note" else [])
    if report["ok"]:
        assert report["summary"][0].startswith("checked ")
    if report["ok"]:
        own = shapeprop.check_model(str(CORPUS / model), return_report=True)
    else:
        with pytest.raises(shapeprop.Error) as raised:
            shapeprop.check_model(str(CORPUS / model))
        own = raised.value.report
    validate_report(own.data)
    assert comparable(own.data) == comparable(report)


def package_run(shapeprop, path, mode):
    if mode == "annotate":
        return shapeprop.infer_shapes(str(path), return_report=True)
    return shapeprop.specialize(str(path), inline="all" if mode == "inline" else "none", return_report=True)


def test_the_counts_are_the_models(shapeprop, onnx):
    model = CORPUS / "torchlib-2024-03" / "models" / "clamp_min.onnx"
    flat, report = shapeprop.specialize(model, inline="all", return_report=True)
    before = onnx.load(str(model))
    nodes = [n.op_type for n in before.graph.node] + [n.op_type for f in before.functions for n in f.node]
    assert report.before["functions"] == len(before.functions)
    # clamp_min's Ifs hold subgraphs, whose nodes count too.
    assert report.before["nodes"] > len(nodes)
    assert report.before["ifs"] == report.before["ops"]["If"] == 2
    assert report.after == {"nodes": len(flat.graph.node), "ifs": 0, "castlikes": 0, "functions": 0, "calls": 0,
                            "ops": {n.op_type: sum(1 for m in flat.graph.node if m.op_type == n.op_type)
                                    for n in flat.graph.node}}


def test_functions_contexts_and_specializations(shapeprop):
    model = CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"
    report = shapeprop.specialize(model, inline="small", small_limit=4, return_report=True)[1]
    functions = {f["function"]: f for f in report.functions}
    assert "pkg.onnxscript.torch_lib.aten_t" in functions
    for f in report.functions:
        assert [c["index"] for c in f["contexts"]] == list(range(len(f["contexts"])))
        assert all(c["call_sites"] >= 1 and c["signature"].startswith("(") for c in f["contexts"])
        served = sorted(i for s in f["specializations"] for i in s["contexts"])
        assert served == list(range(len(f["contexts"])))
    in_output = {s["name"] for f in report.functions for s in f["specializations"] if s["in_output"]}
    assert in_output <= set(report.after["ops"]) and in_output
    annotated = shapeprop.infer_shapes(model, return_report=True)[1]
    assert all(c["specialization"] is None for f in annotated.functions for c in f["contexts"])
    assert [f["function"] for f in annotated.functions] == [f["function"] for f in report.functions]


def test_value_shapes_are_the_clis_print_shapes(shapeprop, validate_report, tmp_path):
    """print_shapes=True gives the rows of --print-shapes's report table, which validates; one
    row per input and node output of each body and function context; absent unless asked."""
    model = CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"
    report = shapeprop.infer_shapes(model, print_shapes=True, return_report=True)[1]
    validate_report(report.data)
    rows = report.value_shapes
    assert rows and rows[0]["scope"].startswith("graph '") and rows[0]["op"] == "input"
    contexts = {(f["function"], c["signature"]) for f in report.functions for c in f["contexts"]}
    listed = {(r["scope"][len("function '"):].split("'")[0], r["context"]) for r in rows
              if r["scope"].startswith("function '")}
    assert listed == contexts
    out = tmp_path / "shapes.json"
    run_cli(str(model), "--print-shapes", "-q", "-o", str(tmp_path / "m.onnx"), "--report", str(out))
    assert json.loads(out.read_text())["value_shapes"] == rows
    assert shapeprop.infer_shapes(model, return_report=True)[1].value_shapes is None
    inlined = shapeprop.specialize(model, inline="all", print_shapes=True, return_report=True)[1]
    assert inlined.value_shapes and all(r["scope"].startswith("graph '") for r in inlined.value_shapes)


def test_a_failed_run_writes_its_report_and_no_model(validate_report, tmp_path):
    path = write_text_model(tmp_path, "unknown.onnxtxt", """
<ir_version: 8, opset_import: ["" : 18, "my.ops" : 1]>
main (float[2] x) => (y) {
  y = my.ops.Mystery (x)
}
""")
    out, report_path = tmp_path / "out.onnx", tmp_path / "report.json"
    done = run_cli(path, "--strict", "-o", out, "--report", report_path, check=False)
    assert done.returncode == 1 and not out.exists()
    report = json.loads(report_path.read_text())
    validate_report(report)
    assert not report["ok"]
    [d] = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert d["call_path"] == ["graph 'main'", "node 'y' (my.ops.Mystery)"] and d["text"] in done.stderr


def test_the_report_never_replaces_the_input_or_output(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes((CORPUS / "torchlib-2024-03" / "models" / "t.onnx").read_bytes())
    for target, which in ((model, "input"), (tmp_path / "out.onnx", "output")):
        before = model.read_bytes()
        done = run_cli(model, "-o", tmp_path / "out.onnx", "--report", target, check=False)
        assert done.returncode == 2 and ("would replace the " + which) in done.stderr
        assert model.read_bytes() == before and not (tmp_path / "out.onnx").exists()  # nothing was run


NEEDS_ASSUMPTION = """
<ir_version: 8, opset_import: ["" : 18]>
main (float[N, 8] x) => (y) {
  n = Size (x)
  zero = Constant <value = int64 {0}> ()
  empty = Equal (n, zero)
  y = If (empty) <then_branch = g1 () => (float[N, 8] a) {
    a = Identity (x)
  }, else_branch = g2 () => (float[N, 8] b) {
    b = Relu (x)
  }>
}
"""


def metadata(model):
    return {p.key: p.value for p in model.metadata_props}


@pytest.mark.parametrize("run", ["infer_shapes", "specialize"])
def test_a_decision_that_needs_the_assumption_is_recorded(shapeprop, tmp_path, run):
    path = write_text_model(tmp_path, "needs.onnxtxt", NEEDS_ASSUMPTION)
    model, report = getattr(shapeprop, run)(path, return_report=True)
    assert metadata(model) == {"shapeprop.assumptions": "symbolic dims >= 1"}
    a = report.assumptions
    assert a["symbolic_dims_at_least_1"] and a["relied_on"] and a["recorded_in_model"]
    assert a["decisions"] == [{"op": "Equal", "call_path": ["graph 'main'", "node 'empty' (Equal)"]}]
    if run == "specialize":
        assert [n.op_type for n in model.graph.node] == ["Relu"]
    # A second run keeps the record as it is.
    again = getattr(shapeprop, run)(model)
    assert metadata(again) == metadata(model)


def test_without_the_assumption_nothing_relies_on_it(shapeprop, tmp_path):
    path = write_text_model(tmp_path, "needs.onnxtxt", NEEDS_ASSUMPTION)
    model, report = shapeprop.specialize(path, assume_positive_dims=False, return_report=True)
    assert metadata(model) == {}
    assert report.assumptions == {"symbolic_dims_at_least_1": False, "relied_on": False, "recorded_in_model": False,
                                  "decisions": [], "ranges": []}
    assert [n.op_type for n in model.graph.node].count("If") == 1


def test_a_decision_that_does_not_need_the_assumption_is_not_recorded(shapeprop, tmp_path):
    path = write_text_model(tmp_path, "static.onnxtxt", NEEDS_ASSUMPTION.replace("N, 8", "2, 8"))
    model, report = shapeprop.specialize(path, return_report=True)
    assert [n.op_type for n in model.graph.node] == ["Relu"]  # folded all the same
    assert metadata(model) == {}
    assert not report.assumptions["relied_on"] and report.assumptions["decisions"] == []


def test_the_report_doc_describes_every_field_of_the_schema():
    schema = json.loads(SCHEMA.read_text())
    described = set(re.findall(r"`([a-z_0-9]+)`", REPORT_DOC.read_text()))

    def fields(node):
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                yield key
            for value in node.values():
                yield from fields(value)
        elif isinstance(node, list):
            for value in node:
                yield from fields(value)

    missing = sorted(set(fields(schema)) - described)
    assert not missing, "fields of docs/report.schema.json that docs/report.md does not describe: %s" % missing
