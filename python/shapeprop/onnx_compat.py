"""shapeprop.onnx_compat: the functions of ``onnx.shape_inference`` (and a ``check_model`` of
``onnx.checker``'s signature), with ONNX's signatures, defaults and exceptions, backed by
shapeprop.

Switching is one line::

    from shapeprop.onnx_compat import infer_shapes      # was: from onnx.shape_inference import infer_shapes

and for code you do not own, :func:`install` (or the context manager :func:`installed`)
puts these functions in place of ``onnx.shape_inference``'s and ``onnx.checker.check_model``
(docs/switching.md says what differs, and why).

ONNX's contract, which these functions follow and shapeprop's own functions do not by
default: a declared type of a computed value (a ``value_info`` entry, a graph output, a
subgraph's or a function's declarations) is taken as a fact where shapeprop proves nothing
finer, and checked where it proves something (a conflict is an InferenceError in strict
mode); an initializer that is also a graph input is read as its value. The result records
both as assumptions in ``metadata_props`` (``shapeprop.assumptions``) when it relied on
them. ``declared="check"`` and ``overridable_initializers="type"`` give shapeprop's sound
behaviour through the same signatures.

What differs from ONNX's functions beyond the contract: every ``If`` whose condition a call
site decides is inferred in its taken branch only (ONNX infers both, and a never-taken
branch can make strict mode fail); model-local functions are inferred per call site; data
is propagated whatever ``data_prop`` says; ``check_type`` adds nothing, as declarations are
checked anyway.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence

import onnx
import onnx.checker
import onnx.shape_inference
from onnx import helper

import shapeprop

__all__ = [
    "InferenceError",
    "check_model",
    "infer_function_output_types",
    "infer_node_outputs",
    "infer_shapes",
    "infer_shapes_path",
    "install",
    "installed",
    "uninstall",
]

InferenceError = onnx.shape_inference.InferenceError
ValidationError = onnx.checker.ValidationError

# ONNX's functions as they were when this module was imported: check_model runs ONNX's
# structural checker through it, and uninstall() puts them back. An ONNX older than a
# function (infer_node_outputs came with 1.14) has None here: install() adds ours, and
# uninstall() takes it away again.
_ONNX = {
    (module, name): getattr(module, name, None)
    for module, name in ((onnx.shape_inference, "infer_shapes"), (onnx.shape_inference, "infer_shapes_path"),
                         (onnx.shape_inference, "infer_node_outputs"),
                         (onnx.shape_inference, "infer_function_output_types"), (onnx.checker, "check_model"))
}
_onnx_check_model = onnx.checker.check_model


def _trust(declared: str, overridable_initializers: str) -> Dict[str, str]:
    return {"declared": declared, "overridable_initializers": overridable_initializers}


def _inference_error(error: shapeprop.Error) -> InferenceError:
    """ONNX's exception for what `error` says. ONNX's inference raises InferenceError for a
    malformed model too; shapeprop's run refuses one before inferring (ONNX's checker runs
    first), and says why in the message."""
    return InferenceError("[ShapeInferenceError] " + str(error))


def infer_shapes(model: Any, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False, *,
                 declared: str = "use", overridable_initializers: str = "value") -> onnx.ModelProto:
    """``onnx.shape_inference.infer_shapes``: the model (``ModelProto`` or ``bytes``) with
    the types of its values in ``graph.value_info``, a new ``ModelProto``. Nothing is written
    inside functions and the IR version stays, as ONNX does. ``strict_mode``: a conflict,
    an op without a schema or a failed inference raises InferenceError (otherwise inference
    goes on with what it knows). ``check_type`` and ``data_prop`` are accepted: declarations
    are compared anyway, and data is always propagated. ``declared`` and
    ``overridable_initializers``: shapeprop.infer_shapes's keywords (ONNX's contract by
    default)."""
    del check_type, data_prop
    if isinstance(model, str):
        raise TypeError("infer_shapes only accepts ModelProto or bytes,"
                        "you can use infer_shapes_path for the model path (String).")
    if not isinstance(model, (onnx.ModelProto, bytes)):
        raise TypeError(f"infer_shapes only accepts ModelProto or bytes, incorrect type: {type(model)}")
    proto = model if isinstance(model, onnx.ModelProto) else onnx.load_from_string(model)
    try:
        return shapeprop.infer_shapes(proto, strict_mode=strict_mode, annotate_functions=False,
                                      **_trust(declared, overridable_initializers))
    except shapeprop.Error as e:
        raise _inference_error(e) from None


def infer_shapes_path(model_path: Any, output_path: Any = "", check_type: bool = False, strict_mode: bool = False,
                      data_prop: bool = False, *, declared: str = "use",
                      overridable_initializers: str = "value") -> None:
    """``onnx.shape_inference.infer_shapes_path``: infers the model at ``model_path`` and
    saves it at ``output_path`` (by default over ``model_path``), atomically. Options as
    :func:`infer_shapes`."""
    del check_type, data_prop
    if isinstance(model_path, onnx.ModelProto):
        raise TypeError("infer_shapes_path only accepts model Path (String),"
                        "you can use infer_shapes for the ModelProto.")
    try:
        model_path = os.fspath(model_path)
        output_path = os.fspath(output_path)
    except TypeError as exp:
        raise TypeError("infer_shapes_path only accepts paths as a string or PathLike, "
                        f"incorrect path type: {type(model_path)}, {type(output_path)}") from exp
    try:
        shapeprop.infer_shapes_path(model_path, output_path or model_path, strict_mode=strict_mode,
                                    annotate_functions=False, **_trust(declared, overridable_initializers))
    except shapeprop.Error as e:
        raise _inference_error(e) from None


def _value_info(name: str, type_proto: onnx.TypeProto) -> onnx.ValueInfoProto:
    vi = onnx.ValueInfoProto(name=name)
    vi.type.CopyFrom(type_proto)
    return vi


def _outputs_of(model: onnx.ModelProto, names: Sequence[str]) -> Dict[str, onnx.TypeProto]:
    """The inferred types of `names` in a probe's main graph (those it typed). A fresh symbol
    shapeprop minted for a size it cannot tell (``dyn__N``) names nothing outside the probe:
    it is left an unknown dim, as ONNX leaves it."""
    typed = {vi.name: vi.type for vi in list(model.graph.value_info) + list(model.graph.output)
             if vi.type.WhichOneof("value") is not None}
    given = {d.dim_param for vi in model.graph.input for d in _dims_of(vi.type)}
    for t in typed.values():
        for d in _dims_of(t):
            if d.dim_param.startswith("dyn__") and d.dim_param not in given:
                d.Clear()
    return {name: typed[name] for name in names if name in typed}


def _dims_of(t: onnx.TypeProto) -> List[Any]:
    """The dims of a type's tensors (inside sequences, optionals and maps too)."""
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return list(getattr(t, kind).shape.dim)
    if kind in ("sequence_type", "optional_type"):
        return _dims_of(getattr(t, kind).elem_type)
    if kind == "map_type":
        return _dims_of(t.map_type.value_type)
    return []


def _probe_inputs(types: Dict[str, onnx.TypeProto]) -> Any:
    """Graph inputs of these types, and the nodes a probe needs: ONNX's checker wants a
    graph input's tensor type to have a shape, so an input of unknown rank is the result of
    a Reshape to an unknown shape (as ONNX's tests seed values), declared of its type."""
    inputs, nodes, declared = [], [], []
    for name, t in types.items():
        if t.WhichOneof("value") == "tensor_type" and not t.tensor_type.HasField("shape") and t.tensor_type.elem_type:
            seed, shape = name + "__probe_seed", name + "__probe_shape"
            inputs += [helper.make_tensor_value_info(seed, t.tensor_type.elem_type, ()),
                       helper.make_tensor_value_info(shape, onnx.TensorProto.INT64, (None,))]
            nodes.append(helper.make_node("Reshape", [seed, shape], [name]))
            declared.append(_value_info(name, t))
        else:
            inputs.append(_value_info(name, t))
    return inputs, nodes, declared


def _infer_probe(graph: onnx.GraphProto, opset_imports: Sequence[onnx.OperatorSetIdProto], ir_version: int,
                 functions: Sequence[onnx.FunctionProto] = ()) -> onnx.ModelProto:
    """A probe model of `graph`, inferred strictly as ONNX's single-node entry points do."""
    model = helper.make_model(graph, opset_imports=list(opset_imports), ir_version=ir_version,
                              functions=list(functions))
    try:
        return shapeprop.infer_shapes(model, strict_mode=True, annotate_functions=False, declared="use",
                                      overridable_initializers="value")
    except shapeprop.Error as e:
        raise _inference_error(e) from None


def infer_node_outputs(schema: Any, node: onnx.NodeProto, input_types: Dict[str, onnx.TypeProto],
                       input_data: Optional[Dict[str, onnx.TensorProto]] = None,
                       input_sparse_data: Optional[Dict[str, onnx.SparseTensorProto]] = None,
                       opset_imports: Optional[List[onnx.OperatorSetIdProto]] = None,
                       ir_version: int = onnx.IR_VERSION) -> Dict[str, onnx.TypeProto]:
    """``onnx.shape_inference.infer_node_outputs``: the types of `node`'s outputs, given its
    inputs' types (``input_types``, by name; names outside ``node.input`` are values its
    subgraphs read) and the values known of some (``input_data``). The node is inferred as
    the only node of a probe model, strictly (a failure raises InferenceError). Outputs
    nothing is proven of are left out, as ONNX leaves them."""
    input_data = input_data or {}
    if opset_imports is None:
        opset_imports = [helper.make_opsetid(schema.domain, schema.since_version)]
    # ONNX checks the node against its schema first (arity, attributes): ValidationError.
    context = onnx.checker.C.CheckerContext()
    context.ir_version = ir_version
    context.opset_imports = {o.domain: o.version for o in opset_imports}
    onnx.checker.check_node(node, context)
    initializers, sparse = [], []
    for name, value in input_data.items():
        if name in input_types:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(value)
            tensor.name = name
            initializers.append(tensor)
    for name, value in (input_sparse_data or {}).items():
        if name in node.input and name in input_types:
            sparse_tensor = onnx.SparseTensorProto()
            sparse_tensor.CopyFrom(value)
            sparse_tensor.values.name = name
            sparse.append(sparse_tensor)
    known = {t.name for t in initializers} | {t.values.name for t in sparse}
    inputs, seeds, declared = _probe_inputs({n: t for n, t in input_types.items() if n not in known})
    outputs = [n for n in node.output if n]
    graph = helper.make_graph(seeds + [node], "infer_node_outputs", inputs,
                              [onnx.ValueInfoProto(name=n) for n in outputs], initializer=initializers,
                              sparse_initializer=sparse, value_info=declared)
    try:
        return _outputs_of(_infer_probe(graph, opset_imports, ir_version), outputs)
    except InferenceError as e:
        # ONNX checks the inputs' types against the schema's constraints before inferring
        # (OpSchema::CheckInputOutputType), raising ValidationError.
        if "type constraint broken" in str(e):
            raise ValidationError(str(e)) from None
        raise


def infer_function_output_types(function: onnx.FunctionProto, input_types: Sequence[onnx.TypeProto],
                                attributes: Sequence[onnx.AttributeProto]) -> List[onnx.TypeProto]:
    """``onnx.shape_inference.infer_function_output_types``: the types of `function`'s
    outputs for inputs of these types and these attribute values, as a call of it in a
    probe model (one call site: its taken branches only). A failure raises InferenceError;
    an output nothing is proven of is an empty TypeProto."""
    # An input without a type is an omitted optional input, as ONNX takes it.
    names = ["input_%d" % i if t.WhichOneof("value") else "" for i, t in enumerate(input_types)]
    outputs = ["output_%d" % i for i in range(len(function.output))]
    call = helper.make_node(function.name, names, outputs, domain=function.domain)
    if function.overload:
        call.overload = function.overload
    call.attribute.extend(attributes)
    inputs, seeds, declared = _probe_inputs({n: t for n, t in zip(names, input_types) if n})
    graph = helper.make_graph(seeds + [call], "infer_function_output_types", inputs,
                              [onnx.ValueInfoProto(name=n) for n in outputs], value_info=declared)
    opsets = {o.domain: o.version for o in function.opset_import}
    opsets.setdefault(function.domain, 1)
    opset_imports = [helper.make_opsetid(d, v) for d, v in opsets.items()]
    inferred = _outputs_of(_infer_probe(graph, opset_imports, onnx.IR_VERSION, [function]), outputs)
    return [inferred.get(n, onnx.TypeProto()) for n in outputs]


def check_model(model: Any, full_check: bool = False, skip_opset_compatibility_check: bool = False,
                check_custom_domain: bool = False) -> None:
    """``onnx.checker.check_model``: ONNX's checker (raising its ValidationError), then, with
    ``full_check``, shapeprop's strict inference in place of ONNX's: per call site, the taken
    branch of every ``If`` a call site decides, every declared type compared with what is
    proven (a declaration false for some input raises InferenceError, as ONNX's full check
    does for one that conflicts with its inference)."""
    _onnx_check_model(model, False, skip_opset_compatibility_check, check_custom_domain)
    if not full_check:
        return
    try:
        shapeprop.check_model(model.SerializeToString() if isinstance(model, onnx.ModelProto) else model)
    except shapeprop.Error as e:
        raise _inference_error(e) from None


_OURS = {
    (onnx.shape_inference, "infer_shapes"): infer_shapes,
    (onnx.shape_inference, "infer_shapes_path"): infer_shapes_path,
    (onnx.shape_inference, "infer_node_outputs"): infer_node_outputs,
    (onnx.shape_inference, "infer_function_output_types"): infer_function_output_types,
    (onnx.checker, "check_model"): check_model,
}


def install() -> None:
    """Puts this module's functions in place of ``onnx.shape_inference``'s and of
    ``onnx.checker.check_model``, for code you do not own: every call through those modules
    (``onnx.shape_inference.infer_shapes(m)``) then runs shapeprop, until :func:`uninstall`.
    A name imported before (``from onnx.shape_inference import infer_shapes``) keeps ONNX's
    function: install first. ONNX's C++ code (its checker's own full check) is not affected."""
    for (module, name), function in _OURS.items():
        setattr(module, name, function)


def uninstall() -> None:
    """Puts ONNX's functions back."""
    for (module, name), function in _ONNX.items():
        if function is not None:
            setattr(module, name, function)
        elif hasattr(module, name):
            delattr(module, name)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """``with installed(): ...``: :func:`install` for the block, ONNX's functions after it."""
    install()
    try:
        yield
    finally:
        uninstall()
