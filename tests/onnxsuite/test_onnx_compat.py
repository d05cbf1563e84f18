"""shapeprop.onnx_compat beyond what ONNX's own tests call: install() and its context
manager, infer_shapes_path, check_model's full check, and the sound options through ONNX's
signature."""

import os
import pathlib

import onnx
import onnx.checker
import onnx.parser
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

import shapeprop
from shapeprop import onnx_compat

HERE = pathlib.Path(__file__).resolve().parent
# torchlib's aten_t (If on Rank(self) == 2: Transpose, else Identity) called on ranks 1, 2
# and 3, every type declared: valid, and ONNX's full check fails on the never-taken branch.
CLEAN = HERE.parent / "golden" / "check" / "clean.onnxtxt"


def seeded_relu():
    """`t` comes from an op nothing knows and is declared float[N,3]; y = Relu(t)."""
    graph = helper.make_graph(
        [helper.make_node("Unknown", ["x"], ["t"], domain="com.x"), helper.make_node("Relu", ["t"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        value_info=[helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.x", 1)])


def dims(model, name):
    for vi in list(model.graph.value_info) + list(model.graph.output):
        if vi.name == name:
            return [d.dim_value or d.dim_param or None for d in vi.type.tensor_type.shape.dim] \
                if vi.type.tensor_type.HasField("shape") else None
    return "absent"


def assumptions(model):
    return {p.key: p.value for p in model.metadata_props}.get("shapeprop.assumptions", "")


def test_onnx_contract_by_default_and_the_sound_one_through_the_same_signature():
    used = onnx_compat.infer_shapes(seeded_relu())
    assert dims(used, "y") == ["N", 3]
    assert "declared types taken as facts" in assumptions(used)
    sound = onnx_compat.infer_shapes(seeded_relu(), declared="check", overridable_initializers="type")
    assert dims(sound, "y") != ["N", 3]
    assert assumptions(sound) == ""
    # shapeprop's own function keeps its default, and takes the keyword.
    assert dims(shapeprop.infer_shapes(seeded_relu()), "y") != ["N", 3]
    assert dims(shapeprop.infer_shapes(seeded_relu(), declared="use"), "y") == ["N", 3]
    with pytest.raises(ValueError, match="declared must be 'check', 'use' or 'ignore', not 'trust'"):
        shapeprop.infer_shapes(seeded_relu(), declared="trust")


def relu_declared(shape):
    """y = Relu(x) for x float[N,3], with y declared of `shape`."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Identity", ["x"], ["z"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 3])],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_conflict_is_an_inference_error_in_strict_mode():
    model = relu_declared(["N", 4])
    with pytest.raises(onnx.shape_inference.InferenceError, match="conflicts with inferred"):
        onnx_compat.infer_shapes(model, strict_mode=True)
    assert dims(onnx_compat.infer_shapes(model), "y") == ["N", 3]  # a warning only; the proof is written


def test_infer_shapes_path_writes_over_the_model_by_default(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(seeded_relu(), os.fspath(path))
    assert onnx_compat.infer_shapes_path(path) is None
    assert dims(onnx.load(os.fspath(path)), "y") == ["N", 3]
    with pytest.raises(TypeError):
        onnx_compat.infer_shapes_path(seeded_relu())
    with pytest.raises(TypeError):
        onnx_compat.infer_shapes(os.fspath(path))


def test_install_replaces_onnx_functions_until_uninstall():
    onnx_infer_shapes, onnx_check_model = onnx.shape_inference.infer_shapes, onnx.checker.check_model
    with onnx_compat.installed():
        assert onnx.shape_inference.infer_shapes is onnx_compat.infer_shapes
        assert onnx.checker.check_model is onnx_compat.check_model
        assert onnx.shape_inference.infer_node_outputs is onnx_compat.infer_node_outputs
        assert dims(onnx.shape_inference.infer_shapes(seeded_relu()), "y") == ["N", 3]
    assert onnx.shape_inference.infer_shapes is onnx_infer_shapes
    assert onnx.checker.check_model is onnx_check_model
    onnx_compat.install()
    onnx_compat.uninstall()
    assert onnx.shape_inference.infer_shapes is onnx_infer_shapes


def test_check_model_full_check_takes_the_branches_a_call_site_takes(tmp_path):
    model = onnx.parser.parse_model(CLEAN.read_text())
    # ONNX's full check infers aten_t's never-taken branch too, and fails.
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(model, full_check=True)
    onnx_compat.check_model(model, full_check=True)
    path = tmp_path / "clean.onnx"
    onnx.save(model, os.fspath(path))
    onnx_compat.check_model(os.fspath(path), full_check=True)
    # ONNX's structural checker first, with its exception.
    broken = onnx.ModelProto()
    broken.CopyFrom(model)
    broken.ir_version = 0
    with pytest.raises(onnx.checker.ValidationError):
        onnx_compat.check_model(broken)


def test_check_model_full_check_refuses_a_false_declaration():
    model = relu_declared(["N", 4])
    onnx_compat.check_model(model)  # structure only
    with pytest.raises(onnx.shape_inference.InferenceError, match="dim 1 is 4, proven 3"):
        onnx_compat.check_model(model, full_check=True)
