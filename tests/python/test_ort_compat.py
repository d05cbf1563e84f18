"""shapeprop.ort_compat: ORT's SymbolicShapeInference.infer_shapes and its command line,
backed by shapeprop (the signature, the defaults, the flags, what it writes, external data,
errors). Where onnxruntime imports (the sid root of tests/dropin), the signature and the
flags are compared with ORT's own; tests/dropin compares what both write on real exports."""

import inspect
import os
import subprocess
import sys

import pytest

from conftest import CORPUS

from shapeprop.ort_compat import IncompleteInferenceError, SymbolicShapeInference, parse_arguments

try:
    from onnxruntime.tools import symbolic_shape_infer as ort_tool
except ImportError:
    ort_tool = None

CALLS = CORPUS / "torchlib-2024-03" / "models" / "t.onnx"

# ORT 1.23's command line: every flag with its default.
ORT_FLAGS = {"input": "m.onnx", "output": None, "auto_merge": False, "int_max": 2**31 - 1,
             "guess_output_rank": False, "verbose": 0, "save_as_external_data": False,
             "all_tensors_to_one_file": False, "external_data_location": "./",
             "external_data_size_threshold": 1024}


def small_model(onnx, opset=18, weight_elements=4):
    """y = MatMul(x, w) + 1 with x: float[N, 4] and an initializer w: float[4, k], and an
    output declared without a shape."""
    import numpy as np
    import onnx.numpy_helper  # noqa: F401 - a submodule older onnx does not import itself
    h = onnx.helper
    w = onnx.numpy_helper.from_array(np.arange(4 * weight_elements, dtype=np.float32).reshape(4, weight_elements), "w")
    one = onnx.numpy_helper.from_array(np.ones((1,), dtype=np.float32), "one")
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["t"]), h.make_node("Add", ["t", "one"], ["y"])], "g",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], [w, one])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def same_model(onnx, a, b):
    """The same model, the weights compared as arrays (external data read back may be held
    in other fields than the original's)."""
    import onnx.numpy_helper  # noqa: F401
    arrays = [{t.name: onnx.numpy_helper.to_array(t).tolist() for t in m.graph.initializer} for m in (a, b)]
    assert arrays[0] == arrays[1]
    for m in (a, b):
        del m.graph.initializer[:]
    assert a == b


def dims(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_the_signature_is_orts():
    params = inspect.signature(SymbolicShapeInference.infer_shapes).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ("in_mp", inspect.Parameter.empty), ("int_max", 2**31 - 1), ("auto_merge", False),
        ("guess_output_rank", False), ("verbose", 0)]
    assert list(inspect.signature(SymbolicShapeInference).parameters) == [
        "int_max", "auto_merge", "guess_output_rank", "verbose", "prefix"]
    if ort_tool is not None:
        theirs = inspect.signature(ort_tool.SymbolicShapeInference.infer_shapes).parameters
        assert [(p.name, p.default) for p in theirs.values()] == [(p.name, p.default) for p in params.values()]


def test_the_flags_and_their_defaults_are_orts(monkeypatch):
    ours = vars(parse_arguments(["--input", "m.onnx"]))
    assert ours == ORT_FLAGS
    every = parse_arguments(["--input", "a", "--output", "b", "--auto_merge", "--int_max", "7", "--guess_output_rank",
                             "--verbose", "3", "--save_as_external_data", "--all_tensors_to_one_file",
                             "--external_data_location", "w.bin", "--external_data_size_threshold", "0"])
    assert vars(every) == {"input": "a", "output": "b", "auto_merge": True, "int_max": 7, "guess_output_rank": True,
                           "verbose": 3, "save_as_external_data": True, "all_tensors_to_one_file": True,
                           "external_data_location": "w.bin", "external_data_size_threshold": 0}
    if ort_tool is not None:
        monkeypatch.setattr(sys, "argv", ["symbolic_shape_infer.py", "--input", "m.onnx"])
        assert vars(ort_tool.parse_arguments()) == ours


def test_value_info_holds_every_computed_value_with_the_outputs(shapeprop, onnx):
    model = small_model(onnx)
    out = SymbolicShapeInference.infer_shapes(model)
    assert type(out) is onnx.ModelProto and out is not model
    assert model == small_model(onnx)  # the argument is unchanged
    infos = {vi.name: dims(vi) for vi in out.graph.value_info}
    assert infos == {"t": ["N", 4], "y": ["N", 4]}  # the graph's output too, as ORT writes it
    assert dims(out.graph.output[0]) == ["N", 4]
    assert out.ir_version == model.ir_version  # functions are not annotated: the IR version stays
    # The types are shapeprop's.
    annotated = shapeprop.infer_shapes(model, annotate_functions=False)
    assert {vi.name: vi.type for vi in annotated.graph.value_info} == {
        vi.name: vi.type for vi in out.graph.value_info if vi.name != "y"}


def test_declarations_are_not_read(onnx):
    model = small_model(onnx)
    # False declarations of computed values: ORT's tool clears value_info and overwrites
    # the outputs' types; so does this one.
    model.graph.value_info.append(onnx.helper.make_tensor_value_info("t", onnx.TensorProto.FLOAT, ["N", 5]))
    model.graph.output[0].CopyFrom(onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [7, 4]))
    out = SymbolicShapeInference.infer_shapes(model)
    assert {vi.name: dims(vi) for vi in out.graph.value_info} == {"t": ["N", 4], "y": ["N", 4]}
    assert dims(out.graph.output[0]) == ["N", 4]


def test_functions_are_typed_per_call_site(shapeprop, onnx):
    model = onnx.load(str(CALLS))
    out = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    produced = [o for n in out.graph.node for o in n.output if o]
    typed = {vi.name for vi in out.graph.value_info}
    assert produced and set(produced) <= typed
    assert out.ir_version == model.ir_version and all(not getattr(f, "value_info", ()) for f in out.functions)  # the field: ONNX 1.16


def test_auto_merge_and_int_max_change_nothing(onnx):
    model = small_model(onnx)
    base = SymbolicShapeInference.infer_shapes(model)
    for kwargs in ({"auto_merge": True}, {"int_max": 100}, {"verbose": 3}, {"guess_output_rank": True}):
        assert SymbolicShapeInference.infer_shapes(model, **kwargs) == base, kwargs
    # Positionally, as ORT's command line calls it.
    assert SymbolicShapeInference.infer_shapes(model, 2**31 - 1, True, False, 0) == base


def test_below_opset_7_gives_none_as_orts_does(onnx, caplog):
    model = small_model(onnx, opset=6)
    assert SymbolicShapeInference.infer_shapes(model) is None
    assert "opset 7" in caplog.text


def unknown_op_model(onnx):
    h = onnx.helper
    graph = h.make_graph([h.make_node("Mystery", ["x"], ["y"], domain="custom.ops"), h.make_node("Relu", ["x"], ["z"])],
                         "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None),
                          h.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("custom.ops", 1)], ir_version=8)


def test_an_untyped_output_is_incomplete_unless_guess_output_rank(onnx):
    model = unknown_op_model(onnx)
    with pytest.raises(IncompleteInferenceError, match="^Incomplete symbolic shape inference$"):
        SymbolicShapeInference.infer_shapes(model)
    assert issubclass(IncompleteInferenceError, Exception)  # what ORT's callers catch
    out = SymbolicShapeInference.infer_shapes(model, guess_output_rank=True)
    # No guess: y keeps what it declared (an element type, no shape); z is typed.
    infos = {vi.name: vi for vi in out.graph.value_info}
    assert dims(infos["z"]) == ["N", 4]
    assert not out.graph.output[0].type.tensor_type.HasField("shape")


def test_a_branch_never_taken_is_not_incomplete(onnx):
    import onnx.parser
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 4] x) => (float[N, 4] y) {
  s = Shape (x)
  n = Size (s)
  two = Constant <value_int = 2> ()
  c = Equal (n, two)
  y = If (c) <then_branch = t () => (float[N, 4] a) { a = Relu (x) },
              else_branch = e () => (float[N, 4] b) { u = Transpose <perm = [1, 0]> (x)  b = Transpose <perm = [1, 0]> (u) }>
}
""")
    out = SymbolicShapeInference.infer_shapes(model)  # x has rank 2: the else branch never runs
    assert {vi.name: dims(vi) for vi in out.graph.value_info} == {
        "s": [2], "n": [], "two": [], "c": [], "y": ["N", 4]}


def test_bad_arguments_raise(shapeprop, onnx):
    model = small_model(onnx)
    with pytest.raises(TypeError, match="int_max"):
        SymbolicShapeInference.infer_shapes(model, int_max="big")
    with pytest.raises(TypeError, match="verbose"):
        SymbolicShapeInference.infer_shapes(model, verbose=None)
    with pytest.raises(TypeError, match="in_mp"):
        SymbolicShapeInference.infer_shapes(model.SerializeToString())
    bad = small_model(onnx)
    bad.graph.node[0].input[1] = "nowhere"
    with pytest.raises(shapeprop.Error, match="nowhere"):
        SymbolicShapeInference.infer_shapes(bad)


def run_cli(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "shapeprop.ort_compat", *map(str, args)], capture_output=True,
                          text=True, env=env)


def test_command_line_writes_the_model(onnx, tmp_path):
    model = small_model(onnx)
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    done = run_cli("--input", src, "--output", dst, "--auto_merge")
    assert done.returncode == 0, done.stderr
    assert onnx.load(str(dst)) == SymbolicShapeInference.infer_shapes(model)
    # Without --output nothing is written, as with ORT's.
    done = run_cli("--input", src)
    assert done.returncode == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "out.onnx"]


def test_command_line_external_data(onnx, tmp_path):
    model = small_model(onnx, weight_elements=512)  # w: 8 KiB, one: 4 bytes
    src = tmp_path / "in.onnx"
    onnx.save(model, str(src))
    expected = SymbolicShapeInference.infer_shapes(model)
    copy = lambda m: type(m).FromString(m.SerializeToString())  # noqa: E731 - same_model empties its arguments
    # Every tensor over the threshold in one file, at the location given.
    done = run_cli("--input", src, "--output", tmp_path / "one.onnx", "--save_as_external_data",
                   "--all_tensors_to_one_file", "--external_data_location", "one.bin")
    assert done.returncode == 0, done.stderr
    saved = onnx.load(str(tmp_path / "one.onnx"), load_external_data=False)
    locations = {t.name: [e.value for e in t.external_data if e.key == "location"] for t in saved.graph.initializer}
    assert locations == {"w": ["one.bin"], "one": []}  # one: 4 bytes, under the default 1024
    assert (tmp_path / "one.bin").stat().st_size == 4 * 4 * 512
    same_model(onnx, onnx.load(str(tmp_path / "one.onnx")), copy(expected))
    # A threshold of 0: both tensors external, each in a file of its own (named as ONNX names them).
    out = tmp_path / "each"
    out.mkdir()
    done = run_cli("--input", src, "--output", out / "m.onnx", "--save_as_external_data",
                   "--external_data_size_threshold", "0")
    assert done.returncode == 0, done.stderr
    saved = onnx.load(str(out / "m.onnx"), load_external_data=False)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in saved.graph.initializer)
    assert len(list(out.iterdir())) == 3
    same_model(onnx, onnx.load(str(out / "m.onnx")), copy(expected))
    # A model whose weights are external data: read from beside it, written inline.
    done = run_cli("--input", tmp_path / "one.onnx", "--output", tmp_path / "inline.onnx")
    assert done.returncode == 0, done.stderr
    inline = onnx.load(str(tmp_path / "inline.onnx"), load_external_data=False)
    assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in inline.graph.initializer)
    same_model(onnx, inline, expected)


def test_command_line_errors(onnx, tmp_path):
    done = run_cli("--output", tmp_path / "x.onnx")
    assert done.returncode == 2 and "--input" in done.stderr  # argparse's usage error, as ORT's
    done = run_cli("--input", tmp_path / "missing.onnx", "--output", tmp_path / "x.onnx")
    assert done.returncode == 1 and "missing.onnx" in done.stderr
    bad = small_model(onnx)
    bad.graph.node[0].input[1] = "nowhere"
    onnx.save(bad, str(tmp_path / "bad.onnx"))
    done = run_cli("--input", tmp_path / "bad.onnx", "--output", tmp_path / "x.onnx")
    assert done.returncode == 1 and "nowhere" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.onnx"]  # no output, no temporary file left
    done = run_cli("--input", tmp_path / "bad.onnx", "--bogus")
    assert done.returncode == 2 and "--bogus" in done.stderr


if ort_tool is not None:
    def test_orts_quantizer_prepares_and_quantizes_with_it(onnx, monkeypatch, tmp_path):
        """ORT's quant_pre_process (which calls SymbolicShapeInference.infer_shapes with its
        defaults, auto_merge off) and quantize_dynamic, with this one in place of ORT's tool,
        on a real export (where ORT 1.23's own tool stops, in as_scalar): the model they make
        runs, and gives the original's output shapes."""
        import numpy as np
        import onnxruntime
        import onnxruntime.quantization.shape_inference as pre
        from onnxruntime.quantization import quantize_dynamic

        from conftest import ROOT
        model = onnx.load(str(ROOT / "tests" / "data" / "real-exports" / "bert.dynamo-opt.onnx"))
        monkeypatch.setattr(pre, "SymbolicShapeInference", SymbolicShapeInference)
        pre.quant_pre_process(model, str(tmp_path / "pre.onnx"))
        prepared = onnx.load(str(tmp_path / "pre.onnx"))
        assert {o for n in prepared.graph.node for o in n.output} <= {vi.name for vi in prepared.graph.value_info}
        quantize_dynamic(str(tmp_path / "pre.onnx"), str(tmp_path / "q.onnx"))
        assert any(n.op_type == "MatMulInteger" for n in onnx.load(str(tmp_path / "q.onnx")).graph.node)
        shapes = []
        for path in (None, tmp_path / "q.onnx"):
            session = onnxruntime.InferenceSession(model.SerializeToString() if path is None else str(path),
                                                   providers=["CPUExecutionProvider"])
            feeds = {i.name: np.ones([3 if isinstance(d, str) else d for d in i.shape], dtype=np.int64)
                     for i in session.get_inputs()}
            shapes.append([o.shape for o in session.run(None, feeds)])
        assert shapes[0] == shapes[1]
