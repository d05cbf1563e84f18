"""shapeprop as onnx_ir passes, for exporters that hold models as ``onnx_ir.Model`` (torch's
``torch.onnx.export(..., dynamo=True).model``, onnxscript's optimizer and rewriter).

``InferShapesPass`` and ``SpecializePass`` are ``onnx_ir.passes.FunctionalPass``\\ es: each
returns a new model in a ``PassResult`` and leaves its input as it was, so they go in an
``onnx_ir.passes.PassManager`` beside onnxscript's passes::

    import onnx_ir as ir
    from shapeprop.ir import SpecializePass

    passes = ir.passes.PassManager([SpecializePass(inline="all", dims={"batch": 1})])
    result = passes(program.model)   # result.model: the specialized model

A pass serializes the model once through ``onnx_ir.serde`` (the functions with the graph),
runs the C++ library on the bytes, and reads the result back the same way; ``modified`` is
whether the result's bytes differ from the input's. Importing this module needs onnx_ir.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import onnx
import onnx_ir

from . import Report, infer_shapes, specialize

__all__ = ["InferShapesPass", "SpecializePass"]


class _ShapepropPass(onnx_ir.passes.FunctionalPass):
    _function: Callable[..., Any]

    def __init__(self, **options: Any):
        super().__init__()
        if "return_report" in options:
            raise TypeError("the pass keeps the report as .report; return_report is not an option")
        self.options = options
        # The report of the last run (shapeprop.Report), for what it counted and decided.
        self.report: Optional[Report] = None

    def call(self, model: onnx_ir.Model) -> onnx_ir.passes.PassResult:
        data = onnx_ir.serde.serialize_model(model).SerializeToString()
        out, self.report = type(self)._function(data, return_report=True, **self.options)
        proto = onnx.ModelProto()
        proto.ParseFromString(out)
        return onnx_ir.passes.PassResult(onnx_ir.serde.deserialize_model(proto), modified=out != data)


class InferShapesPass(_ShapepropPass):
    """Annotates the model's values with their types per call site
    (:func:`shapeprop.infer_shapes`; its keywords, but return_report, are the pass's)."""

    _function = staticmethod(infer_shapes)


class SpecializePass(_ShapepropPass):
    """Specializes every reached function per context, folds, rewrites and inlines by policy
    (:func:`shapeprop.specialize`; its keywords, but return_report, are the pass's:
    ``inline``, ``dims``, ``expand_ops``, ``target_opset``, ...)."""

    _function = staticmethod(specialize)
