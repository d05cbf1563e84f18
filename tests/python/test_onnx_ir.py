"""onnx_ir in and out: shapeprop's functions take and return onnx_ir.Model, and its passes
(shapeprop.ir) run in an onnx_ir PassManager beside onnx_ir's own. Collected only where
onnx_ir imports (conftest.py; the ctest python.onnx_ir is registered only there)."""

import onnx
import onnx.parser
import onnx_ir
import onnx_ir.passes.common
import pytest

from conftest import CORPUS, ROOT

from shapeprop.ir import InferShapesPass, SpecializePass

MODEL = CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"
CALLS = ROOT / "examples" / "torchlib_calls.onnxtxt"


def ir_model(shapeprop, path):
    """The model at `path` as onnx_ir holds it (a text model through ONNX's parser)."""
    proto = onnx.load(str(path)) if path.suffix == ".onnx" else onnx.parser.parse_model(path.read_text())
    return onnx_ir.serde.deserialize_model(proto)


def as_proto(model):
    return onnx_ir.serde.serialize_model(model)


@pytest.mark.parametrize("path", [MODEL, CALLS], ids=lambda p: p.name)
def test_functions_take_and_return_onnx_ir_models(shapeprop, path):
    model = ir_model(shapeprop, path)
    before = as_proto(model).SerializeToString()
    for function, options in [(shapeprop.infer_shapes, {}), (shapeprop.specialize, {"inline": "all"})]:
        result = function(model, **options)
        assert isinstance(result, onnx_ir.Model) and result is not model
        # The same as the library's run on the same bytes, read back by onnx_ir.
        expected = onnx.ModelProto()
        expected.ParseFromString(function(before, **options))
        assert as_proto(result) == as_proto(onnx_ir.serde.deserialize_model(expected))
    assert as_proto(model).SerializeToString() == before  # the argument is unchanged


def test_passes_in_a_pass_manager(shapeprop):
    model = ir_model(shapeprop, CALLS)
    before = as_proto(model).SerializeToString()
    infer = InferShapesPass()
    specialize = SpecializePass(inline="all")
    manager = onnx_ir.passes.PassManager(
        [specialize, onnx_ir.passes.common.RemoveUnusedNodesPass(), infer])
    result = manager(model)
    assert isinstance(result, onnx_ir.passes.PassResult) and result.modified
    assert as_proto(model).SerializeToString() == before
    graph = result.model.graph
    assert not result.model.functions and all(n.domain in ("", "ai.onnx") for n in graph)
    assert not any(n.op_type in ("If", "CastLike") for n in graph)
    # Every value typed, and the reports kept.
    assert all(v.type is not None and v.shape is not None for n in graph for v in n.outputs)
    assert specialize.report.ok and specialize.report.mode == "inline"
    assert infer.report.ok
    # Annotating an annotated model changes nothing.
    again = InferShapesPass()(result.model)
    assert not again.modified and again.model is not result.model


def test_pass_keywords_and_errors(shapeprop):
    model = ir_model(shapeprop, CALLS)
    with pytest.raises(TypeError):
        SpecializePass(return_report=True)
    with pytest.raises(shapeprop.Error, match="nosuch"):
        SpecializePass(input_shapes={"nosuch": [1]})(model)
    bound = SpecializePass(inline="all", input_shapes={"v": [3, 7]})(model).model
    v = next(i for i in bound.graph.inputs if i.name == "v")
    assert [int(d) for d in v.shape] == [3, 7]
