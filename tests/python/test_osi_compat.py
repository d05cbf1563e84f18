"""shapeprop.osi_compat: onnx-shape-inference's infer_symbolic_shapes on an onnx_ir.Model,
in place, with its merge policies mapped onto what shapeprop does with declarations.
Collected only where onnx_ir imports (conftest.py); where onnx_shape_inference imports too
(SHAPEPROP_OSI_PATH, tests/dropin), the signature is compared with its own."""

import inspect
import logging

import onnx
import onnx_ir
import pytest

from conftest import CORPUS

from shapeprop.osi_compat import infer_symbolic_shapes

try:
    import onnx_shape_inference
except ImportError:
    onnx_shape_inference = None

CALLS = CORPUS / "torchlib-2024-03" / "models" / "t.onnx"


def declared_model(t_dims, nz_dims, t_type=onnx.TensorProto.FLOAT):
    """t = Concat(x, x) on axis 1, x: float[N, 4] (t is [N, 8]), and nz = NonZero(x) (int64[2,
    a size the data decide]), each declared by value_info as given (None: no declaration)."""
    h = onnx.helper
    infos = []
    if t_dims is not None:
        infos.append(h.make_tensor_value_info("t", t_type, t_dims))
    if nz_dims is not None:
        infos.append(h.make_tensor_value_info("nz", onnx.TensorProto.INT64, nz_dims))
    graph = h.make_graph(
        [h.make_node("Concat", ["x", "x"], ["t"], axis=1), h.make_node("Relu", ["t"], ["y"]),
         h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Identity", ["nz"], ["z"])], "g",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None),
         h.make_tensor_value_info("z", onnx.TensorProto.INT64, None)], value_info=infos)
    return onnx_ir.serde.deserialize_model(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)], ir_version=8))


def shapes(model):
    return {v.name: (None if v.shape is None else [d if isinstance(d, int) else d.value for d in v.shape.dims])
            for n in model.graph for v in n.outputs}


def test_the_signature_is_onnx_shape_inferences():
    params = inspect.signature(infer_symbolic_shapes).parameters
    assert [(p.name, p.kind, p.default) for p in params.values()] == [
        ("model", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
        ("policy", inspect.Parameter.KEYWORD_ONLY, "refine"),
        ("warn_on_missing", inspect.Parameter.KEYWORD_ONLY, True),
        ("adopt_declared_symbols", inspect.Parameter.KEYWORD_ONLY, True)]
    if onnx_shape_inference is not None:
        theirs = inspect.signature(onnx_shape_inference.infer_symbolic_shapes).parameters
        assert [(p.name, p.kind, p.default) for p in theirs.values()] == [
            (p.name, p.kind, p.default) for p in params.values()]


def test_in_place_and_returned():
    model = declared_model(None, None)
    assert infer_symbolic_shapes(model) is model
    got = shapes(model)
    assert got["t"] == ["N", 8] and got["y"] == ["N", 8]
    assert got["nz"][0] == 2 and isinstance(got["nz"][1], str)  # a fresh name: the data decide it
    assert model.graph.outputs[0].dtype == onnx_ir.DataType.FLOAT
    # The functions' bodies are left as they are, as onnx-shape-inference leaves them.
    calls = onnx_ir.serde.deserialize_model(onnx.load(str(CALLS)))
    before = [onnx_ir.serde.serialize_function(f) for f in calls.functions.values()]
    infer_symbolic_shapes(calls)
    assert [onnx_ir.serde.serialize_function(f) for f in calls.functions.values()] == before
    assert all(v.type is not None for n in calls.graph for v in n.outputs)


def test_override_writes_what_is_proven():
    model = declared_model(["N", 5], [2, 7])
    infer_symbolic_shapes(model, policy="override")
    got = shapes(model)
    assert got["t"] == ["N", 8]
    assert got["nz"][0] == 2 and isinstance(got["nz"][1], str) and got["z"] == got["nz"]
    assert "declared" not in model.metadata_props.get("shapeprop.assumptions", "")


def test_skip_keeps_every_existing_shape():
    model = declared_model(["N", 5], [2, 7])
    infer_symbolic_shapes(model, policy="skip")
    got = shapes(model)
    assert got["t"] == ["N", 5] and got["nz"] == [2, 7]
    assert got["y"] == ["N", 8]  # undeclared: inferred


def test_refine_keeps_a_declaration_where_nothing_finer_is_proven(caplog):
    model = declared_model(["N", "width"], [2, 7])
    with caplog.at_level(logging.WARNING):
        infer_symbolic_shapes(model)
    got = shapes(model)
    assert got["t"] == ["N", 8]  # a size is more specific than a name
    assert got["nz"] == [2, 7]  # the data decide it: the declaration is kept, on trust,
    assert got["z"] == [2, 7]  # and informs what is computed from it, as onnx-shape-inference's does
    assert "contradicts" not in caplog.text
    # The model says what it rests on.
    assert "declared" in model.metadata_props["shapeprop.assumptions"]
    untouched = declared_model(None, None)
    infer_symbolic_shapes(untouched)
    assert "declared" not in untouched.metadata_props.get("shapeprop.assumptions", "")


def test_refine_replaces_a_false_declaration_and_warns(caplog):
    model = declared_model(["N", 5], None)
    with caplog.at_level(logging.WARNING, logger="shapeprop.osi_compat"):
        infer_symbolic_shapes(model)
    assert shapes(model)["t"] == ["N", 8]
    assert "'t' contradicts what inference proves: dim 1 is 5, inferred 8" in caplog.text
    model = declared_model(["N", 8], None, t_type=onnx.TensorProto.INT32)
    infer_symbolic_shapes(model)
    assert model.graph.node(0).outputs[0].dtype == onnx_ir.DataType.FLOAT


@pytest.mark.parametrize("t_dims,t_type,message", [
    (["N", 5], onnx.TensorProto.FLOAT, "dim 1 is 5, inferred 8"),
    (["N", 8, 1], onnx.TensorProto.FLOAT, "rank 3, inferred 2"),
    (["N", 8], onnx.TensorProto.INT32, "element type INT32, inferred FLOAT"),
])
def test_strict_raises_on_a_contradiction_and_leaves_the_model(t_dims, t_type, message):
    model = declared_model(t_dims, None, t_type=t_type)
    before = onnx_ir.serde.serialize_model(model)
    with pytest.raises(ValueError, match="'t' contradicts what inference proves: " + message):
        infer_symbolic_shapes(model, policy="strict")
    assert onnx_ir.serde.serialize_model(model) == before
    # Without a contradiction strict refines.
    model = declared_model(["N", "width"], [2, 7])
    infer_symbolic_shapes(model, policy="strict")
    assert shapes(model)["t"] == ["N", 8] and shapes(model)["nz"] == [2, 7]


def test_warn_on_missing_logs_shapeprops_warnings(caplog):
    h = onnx.helper
    graph = h.make_graph([h.make_node("Mystery", ["x"], ["y"], domain="custom.ops")], "g",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N"])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("custom.ops", 1)], ir_version=8)
    with caplog.at_level(logging.WARNING, logger="shapeprop.osi_compat"):
        infer_symbolic_shapes(onnx_ir.serde.deserialize_model(proto))
    assert "Mystery" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="shapeprop.osi_compat"):
        infer_symbolic_shapes(onnx_ir.serde.deserialize_model(proto), warn_on_missing=False)
    assert caplog.text == ""


def test_errors(shapeprop):
    with pytest.raises(ValueError, match="policy must be one of 'skip', 'override', 'refine', 'strict', not 'loose'"):
        infer_symbolic_shapes(declared_model(None, None), policy="loose")
    with pytest.raises(TypeError, match="onnx_ir.Model"):
        infer_symbolic_shapes(onnx_ir.serde.serialize_model(declared_model(None, None)))
    model = declared_model(None, None)
    model.graph.node(0).replace_input_with(1, onnx_ir.Value(name="nowhere"))
    before = onnx_ir.serde.serialize_model(model)
    with pytest.raises(shapeprop.Error, match="nowhere") as caught:
        infer_symbolic_shapes(model)
    assert isinstance(caught.value, ValueError)  # as onnx-shape-inference's errors are
    assert onnx_ir.serde.serialize_model(model) == before


def run_cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "shapeprop.osi_compat", *map(str, args)], capture_output=True,
                          text=True)


def save(model, path):
    onnx_ir.save(model, str(path))
    return path


def test_command_line(tmp_path):
    src = save(declared_model(["N", "width"], [2, 7]), tmp_path / "m.onnx")
    done = run_cli(src, "-o", tmp_path / "out.onnx")
    assert done.returncode == 0, done.stderr
    # onnx-shape-inference's messages: the values that got a shape (t and nz are declared),
    # and where the model went.
    assert done.stdout.splitlines() == ["New shapes created: 2", f"Saved inferred model to {tmp_path / 'out.onnx'}"]
    expected = infer_symbolic_shapes(declared_model(["N", "width"], [2, 7]))
    assert shapes(onnx_ir.load(str(tmp_path / "out.onnx"))) == shapes(expected)
    # Without -o nothing is written; --in-place writes over the input.
    done = run_cli(src)
    assert done.returncode == 0 and done.stdout == "New shapes created: 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "out.onnx"]
    done = run_cli(src, "--in-place", "--policy", "strict")
    assert done.returncode == 0, done.stderr
    assert shapes(onnx_ir.load(str(src))) == shapes(expected)


def test_command_line_errors(tmp_path):
    src = save(declared_model(["N", 5], None), tmp_path / "m.onnx")
    before = src.read_bytes()
    done = run_cli(src, "--in-place", "--policy", "strict")
    assert done.returncode == 1 and "'t' contradicts what inference proves" in done.stderr
    assert src.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    done = run_cli(src, "-o", tmp_path / "x.onnx", "--in-place")
    assert done.returncode == 2 and "mutually exclusive" in done.stderr
    done = run_cli(src, "--policy", "override")  # onnx-shape-inference's command line offers two
    assert done.returncode == 2 and "--policy" in done.stderr
    done = run_cli(tmp_path / "missing.onnx")
    assert done.returncode == 1 and "missing.onnx" in done.stderr


def help_flags(main, capsys):
    """The flags a command line's --help lists in its options: the lines that begin with one,
    up to the help text (two spaces on)."""
    import re
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = [line.strip().split("  ")[0] for line in capsys.readouterr().out.splitlines() if re.match(r"\s+-", line)]
    return {flag for spec in lines for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", spec)}


def test_command_line_flags_are_onnx_shape_inferences(capsys):
    from shapeprop.osi_compat import main
    ours = help_flags(main, capsys)
    assert {"-o", "--output", "--in-place", "--policy", "-h", "--help"} <= ours
    if onnx_shape_inference is not None:
        from onnx_shape_inference.__main__ import main as theirs
        assert help_flags(theirs, capsys) == ours
