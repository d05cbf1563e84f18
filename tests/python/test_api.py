"""The package's functions: what they take and give back, and how they fail."""

import copy
import os

import pytest

from conftest import CORPUS, run_cli, write_text_model

T = CORPUS / "torchlib-2024-03" / "models" / "t.onnx"
CLAMP = CORPUS / "torchlib-2024-03" / "models" / "clamp_min.onnx"


def load(onnx, path):
    return onnx.load_from_string(path.read_bytes())


def test_modelproto_in_modelproto_out(shapeprop, onnx):
    model = load(onnx, T)
    for result in (shapeprop.infer_shapes(model), shapeprop.specialize(model, inline="all")):
        assert type(result) is onnx.ModelProto
        assert result is not model
    # The same model as from bytes, read by the installed onnx.
    expected = onnx.load_from_string(shapeprop.infer_shapes(T.read_bytes()))
    assert shapeprop.infer_shapes(model) == expected


def test_the_installed_onnx_reads_and_checks_the_result(shapeprop, onnx):
    flat = shapeprop.specialize(load(onnx, CLAMP), inline="all")
    onnx.checker.check_model(flat)
    assert not [n for n in flat.graph.node if n.op_type in ("If", "CastLike")]
    assert len(flat.functions) == 0


def test_bytes_in_bytes_out(shapeprop):
    data = T.read_bytes()
    for mode in ("none", "all", "small"):
        result = shapeprop.specialize(data, inline=mode)
        assert isinstance(result, bytes) and result != data
    assert isinstance(shapeprop.infer_shapes(bytearray(data)), bytes)


def test_a_path_gives_a_modelproto(shapeprop, onnx):
    assert shapeprop.infer_shapes(T) == onnx.load_from_string(shapeprop.infer_shapes(T.read_bytes()))
    assert type(shapeprop.specialize(str(T))) is onnx.ModelProto


def test_text_models_are_read_from_their_path(shapeprop, onnx, tmp_path):
    path = write_text_model(tmp_path, "m.onnxtxt", """
<ir_version: 8, opset_import: ["" : 18]>
main (float[N, 3] x) => (y) {
  y = Relu (x)
}
""")
    model = shapeprop.infer_shapes(path)
    assert [vi.name for vi in model.graph.output] == ["y"]
    assert [d.dim_param or d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == ["N", 3]


def test_the_argument_is_unchanged(shapeprop, onnx):
    model = load(onnx, CLAMP)
    before = copy.deepcopy(model)
    data = CLAMP.read_bytes()
    shapeprop.infer_shapes(model)
    shapeprop.specialize(model, inline="all")
    shapeprop.check_model(model)
    shapeprop.infer_shapes(data)
    assert model == before
    assert data == CLAMP.read_bytes()


def test_infer_shapes_path_writes_the_cli_output(shapeprop, tmp_path):
    out = tmp_path / "out.onnx"
    assert shapeprop.infer_shapes_path(T, out) is None
    cli = tmp_path / "cli.onnx"
    run_cli(T, "-q", "-o", cli)
    assert out.read_bytes() == cli.read_bytes()
    text = tmp_path / "out.onnxtxt"
    report = shapeprop.infer_shapes_path(T, text, return_report=True)
    assert report.ok and text.read_text().startswith("<")


def test_infer_shapes_path_without_output_replaces_the_model(shapeprop, tmp_path):
    # As ONNX's infer_shapes_path does; atomically.
    path = tmp_path / "t.onnx"
    path.write_bytes(T.read_bytes())
    shapeprop.infer_shapes_path(path)
    assert path.read_bytes() == shapeprop.infer_shapes(T.read_bytes())


def test_options_reach_the_library(shapeprop, onnx):
    model = load(onnx, T)
    # (FunctionProto.value_info is newer than Debian's onnx: the report counts it.)
    kept, report = shapeprop.infer_shapes(model, annotate_functions=False, return_report=True)
    assert kept.ir_version == model.ir_version < 10
    assert report["inference"]["function_values"] == 0
    raised, report = shapeprop.infer_shapes(model, return_report=True)
    assert raised.ir_version == 10 and report["inference"]["function_values"] > 0
    assert report["inference"]["ir_version_raised_from"] == model.ir_version
    small = shapeprop.specialize(model, inline="small", small_limit=0, return_report=True)[1]
    assert small["options"] == {"inline": "small", "small_limit": 0, "strict": False,
                                "assume_positive_dims": True, "annotate_functions": True}
    with pytest.raises(ValueError):
        shapeprop.specialize(model, inline="some")
    with pytest.raises(TypeError):
        shapeprop.infer_shapes(42)


BAD_CALL = """
<ir_version: 8, opset_import: ["" : 18, "pkg.x" : 1]>
main (float[2] x) => (y) {
  y = pkg.x.f (x)
}

<domain: "pkg.x", opset_import: ["" : 18, "pkg.x" : 1]>
f (a) => (b) {
  b = pkg.x.g (a)
}
"""


def test_a_bad_model_raises_an_error_with_its_place(shapeprop, tmp_path):
    path = write_text_model(tmp_path, "bad.onnxtxt", BAD_CALL)
    with pytest.raises(shapeprop.Error) as raised:
        shapeprop.infer_shapes(path)
    error = raised.value
    assert isinstance(error, ValueError)
    [d] = error.diagnostics
    assert d.severity == "error" and d.file == str(path)
    assert "pkg.x.g" in d.message
    assert d.call_path and "function pkg.x.f" in " ".join(d.call_path)
    assert str(error) == d.text
    cli = run_cli(path, "-o", tmp_path / "out.onnx", check=False)
    assert cli.returncode == 2 and cli.stderr.strip() == str(error)
    assert not error.report.ok


def test_unreadable_input_raises(shapeprop, tmp_path):
    for bad in (b"", b"\x08\x01garbage"):
        with pytest.raises(shapeprop.Error) as raised:
            shapeprop.infer_shapes(bad)
        assert raised.value.diagnostics[0].file == "<bytes>"
    with pytest.raises(shapeprop.Error) as raised:
        shapeprop.infer_shapes(tmp_path / "missing.onnx")
    assert "missing.onnx" in str(raised.value)


CONFLICT = """
<ir_version: 8, opset_import: ["" : 18]>
main (float[2, 3] x) => (int64[2, 3] y) {
  y = Relu (x)
}
"""


def test_check_model(shapeprop, tmp_path):
    # ONNX 1.17's full checker rejects t.onnx (it infers the never-taken branch of aten_t).
    assert shapeprop.check_model(T) is None
    report = shapeprop.check_model(T.read_bytes(), return_report=True)
    assert report.ok and report.mode == "check" and report.summary[0].startswith("checked ")
    path = write_text_model(tmp_path, "conflict.onnxtxt", CONFLICT)
    with pytest.raises(shapeprop.Error) as raised:
        shapeprop.check_model(path)
    [error] = raised.value.diagnostics  # the errors; the report has the closing note too
    assert "'y' is declared int64[2,3] (graph output) but proven float[2,3]" in error.message
    assert error.file == str(path) and error.call_path == ("graph 'main'", "node 'y' (Relu)")
    # The diagnostics are those of onnx-infer-shapes --mode check, line for line.
    done = run_cli(path, "--mode", "check", check=False)
    assert done.returncode == 1 and [str(d) for d in raised.value.report.diagnostics] == done.stderr.splitlines()


def test_return_report(shapeprop):
    model, report = shapeprop.specialize(T.read_bytes(), inline="all", return_report=True)
    assert isinstance(model, bytes) and isinstance(report, shapeprop.Report)
    assert report.ok and report.mode == "inline"
    assert report.after["functions"] == 0 and report.before["functions"] > 0
    assert report.rewrites["fold"]["ifs_folded"] >= 1
    assert repr(report).startswith("<shapeprop.Report inline ok=True: ")
    assert "analysis" in report.phases and all(s >= 0 for s in report.phases.values())
    # The time per pass: the passes of --mode inline's pipeline that ran, in registry order
    # (the opt-in ones never), each never negative.
    passes = list(report.pass_times)
    assert passes[:3] == ["specialize", "fold", "dce"] and passes[-2:] == ["cse", "inline"]
    assert "expand-elim" not in passes and all(s >= 0 for s in report.pass_times.values())
    _, annotated = shapeprop.infer_shapes(T.read_bytes(), return_report=True)
    assert annotated.pass_times == {}


def test_user_rules(shapeprop, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "double.rule").write_text("op my.ops.Double\ntype T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n")
    path = write_text_model(tmp_path, "m.onnxtxt", """
<ir_version: 8, opset_import: ["" : 18, "my.ops" : 1]>
main (float[4, 5] x) => (y) {
  y = my.ops.Double (x)
}
""")
    def problems(report):
        return [d.message for d in report.diagnostics if d.severity != "note"]

    report = shapeprop.infer_shapes(path, return_report=True)[1]
    assert [m.split(" at ")[0] for m in problems(report)] == ["no schema or rule for my.ops.Double"]
    model, report = shapeprop.infer_shapes(path, schemas=[rules], return_report=True)
    assert problems(report) == []
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [4, 5]
    # The check reads the same rules: the op's declared output is then proven false.
    wrong = write_text_model(tmp_path, "wrong.onnxtxt", """
<ir_version: 8, opset_import: ["" : 18, "my.ops" : 1]>
main (float[4, 5] x) => (float[4, 6] y) {
  y = my.ops.Double (x)
}
""")
    with pytest.raises(shapeprop.Error) as raised:
        shapeprop.check_model(wrong, schemas=[rules])
    assert [d.message.split(": dim")[0] for d in raised.value.diagnostics] == [
        "'y' is declared float[4,6] (graph output) but proven float[4,5]"]
