"""shapeprop: inter-procedural ONNX type and shape inference, specialization and inlining.

Each call of a model-local function is analysed in its own context (the types, shapes and
known values of its inputs, its attribute values), once per distinct context; the results
are written as graph ``value_info`` and ``FunctionProto.value_info`` (never a fact that is
false for some caller), and can specialize call sites (rank conditionals, ``CastLike``\\ s
and shape arithmetic folded) and inline functions by policy.

The functions follow ``onnx.shape_inference``'s conventions. ``model`` is an
``onnx.ModelProto`` (of whatever ``onnx`` version is installed: it crosses into C++ as its
serialized bytes), an ``onnx_ir.Model`` (serialized once through ``onnx_ir.serde``; see
also :mod:`shapeprop.ir` for its passes), ``bytes`` (a serialized model), or a path (``str`` or ``os.PathLike``:
binary ``.onnx`` or text ``.onnxtxt``). A call returns the same kind it was given, as a new
object (a path gives an ``onnx.ModelProto``), and never changes its argument. Errors raise
:class:`Error` (a ``ValueError``) with the diagnostics; ``return_report=True`` returns
``(model, report)``. The GIL is released while the C++ work runs, so that threads analyse
models in parallel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._report import Diagnostic, Error, Report

__all__ = [
    "Diagnostic",
    "Error",
    "Report",
    "check_model",
    "infer_shapes",
    "infer_shapes_path",
    "specialize",
]

__version__: str = _native.version
onnx_version: str = _native.onnx_version  # the ONNX C++ library shapeprop is built with

PathLike = Union[str, "os.PathLike[str]"]
Model = Any  # onnx.ModelProto, onnx_ir.Model, bytes, or a path

# An installed package carries the rules for ops outside ONNX's registry (schemas/) beside
# this file; a build tree finds them in the source tree. (Looked up once: a call does no
# file-system work of its own before the C++ side.)
_SHIPPED_RULES = Path(__file__).resolve().with_name("schemas")
_SHIPPED_RULES_FOLDER = str(_SHIPPED_RULES) if _SHIPPED_RULES.is_dir() else ""


def _source(model: Model) -> Tuple[bytes, bool, str, str]:
    """(source, from_path, origin, kind) for _native.run."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False, "<bytes>", "bytes"
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return os.fsencode(path), True, path, "path"
    if _is_onnx_ir_model(model):
        # Serialized once, through onnx_ir's own serde (the functions with the graph).
        import onnx_ir
        return onnx_ir.serde.serialize_model(model).SerializeToString(), False, "<onnx_ir.Model>", "onnx_ir"
    if callable(getattr(model, "SerializeToString", None)) and hasattr(model, "graph"):
        return model.SerializeToString(), False, "<%s.%s>" % (type(model).__module__, type(model).__name__), "proto"
    raise TypeError(
        "model must be an onnx.ModelProto, an onnx_ir.Model, bytes or a path, not %s" % type(model).__name__
    )


def _is_onnx_ir_model(model: Any) -> bool:
    """An onnx_ir.Model (told by its class, so that onnx_ir is imported only when given one)."""
    return any(c.__name__ == "Model" and c.__module__.split(".")[0] == "onnx_ir" for c in type(model).__mro__)


def _result(data: bytes, kind: str, model: Model) -> Model:
    """`data` as the kind of object `model` is (a new object)."""
    if kind == "bytes":
        return data
    if kind == "onnx_ir":
        import onnx
        import onnx_ir
        proto = onnx.ModelProto()
        proto.ParseFromString(data)
        return onnx_ir.serde.deserialize_model(proto)
    if kind == "proto":
        result = type(model)()
    else:
        try:
            import onnx
        except ImportError as e:  # pragma: no cover - onnx is installed where the tests run
            raise ImportError(
                "a path gives an onnx.ModelProto, and onnx is not installed: pass the model's bytes, "
                "or use infer_shapes_path"
            ) from e
        result = onnx.ModelProto()
    result.ParseFromString(data)
    return result


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (what, type(value).__name__))
    return value


def _shapes(dims: Optional[Mapping[str, int]] = None,
            input_shapes: Optional[Mapping[str, Sequence[Optional[int]]]] = None,
            dim_ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
            rename_dims: Optional[Mapping[str, str]] = None, name_dims: bool = False) -> dict:
    """The deployment shapes as _native.run takes them (the library checks them against the model)."""
    out: dict = {"name_dims": bool(name_dims)}
    out["dims"] = [(str(k), _whole(v, "dims[%r]" % (k,))) for k, v in (dims or {}).items()]
    out["input_shapes"] = [
        (str(k), [None if d is None else _whole(d, "input_shapes[%r] dims" % (k,)) for d in shape])
        for k, shape in (input_shapes or {}).items()]
    ranges = []
    for k, r in (dim_ranges or {}).items():
        lo, hi = r
        ranges.append((str(k), _whole(lo, "dim_ranges[%r] min" % (k,)), _whole(hi, "dim_ranges[%r] max" % (k,))))
    out["dim_ranges"] = ranges
    out["rename_dims"] = [(str(k), str(v)) for k, v in (rename_dims or {}).items()]
    return out


def _run(model: Model, job: str, return_report: bool, *, output_path: str = "",
         schemas: Sequence[PathLike] = (), describe: Optional[bool] = None, **options: Any) -> Any:
    """Runs `job`; returns the result (and the report, when `return_report`). The report
    lists each function's contexts when `describe` (by default: when it is returned).
    `options`: the functions' own keywords, which _native.run takes by the same names (the
    option table's, shapeprop/options.def)."""
    source, from_path, origin, kind = _source(model)
    data, report_json = _native.run(
        source, from_path=from_path, origin=origin, job=job, schemas=[os.fspath(s) for s in schemas],
        shipped_rules=_SHIPPED_RULES_FOLDER, output_path=output_path,
        describe_contexts=return_report if describe is None else describe, **options)
    report = Report.from_json(report_json)
    if not report.ok:
        raise Error(report)
    result = _result(data, kind, model) if data is not None else None
    return (result, report) if return_report else result


def infer_shapes(model: Model, *, strict_mode: bool = False, annotate_functions: bool = True,
                 assume_positive_dims: bool = True, schemas: Sequence[PathLike] = (),
                 dims: Optional[Mapping[str, int]] = None,
                 input_shapes: Optional[Mapping[str, Sequence[Optional[int]]]] = None,
                 dim_ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
                 rename_dims: Optional[Mapping[str, str]] = None, name_dims: bool = False,
                 print_shapes: bool = False, declared: str = "check", overridable_initializers: str = "type",
                 return_report: bool = False) -> Any:
    """Infers types and shapes per call site and returns the model annotated.

    Writes graph ``value_info`` for every value, and ``FunctionProto.value_info`` for every
    value of every reached function: the join over that function's contexts (raising
    ``ir_version`` to 10 where it is lower, unless ``annotate_functions=False``).
    The same as ``onnx-infer-shapes MODEL`` (annotate mode), byte for byte.

    strict_mode: conflicts between declared and inferred types, ops without a schema or
        rule and failed inference are errors (raised) instead of warnings.
    annotate_functions: write ``FunctionProto.value_info`` (False keeps the IR version).
    assume_positive_dims: symbolic dims are at least 1, as PyTorch's exporter assumes, so
        that ``Size(x) == 0`` is false for ``x`` of shape ``[N, 8]``; the result records it
        in ``metadata_props`` (``shapeprop.assumptions``) when it relied on it.
    schemas: folders of rules (``*.rule``) for ops outside ONNX's registry, beside the shipped ones.
    dims: ``{"batch": 1, "seq": 128}``: every dim of that name of the graph's inputs and
        outputs takes that value before the analysis, as if the model had been exported so
        (``--set-dim``); the report's ``dims`` then lists the values left dynamic.
    input_shapes: ``{"x": [1, 3, None, None]}``: an input's dims, ``None`` keeping the
        declared one (``--input-shape``); a shape the declaration contradicts raises Error.
    dim_ranges: ``{"seq": (1, 128)}``: a dim stays symbolic within those bounds, which the
        analysis decides by and the result records in ``metadata_props`` (``--dim-range``).
    rename_dims: ``{"seq": "sequence"}``: a dim of the graph's inputs and outputs renamed
        (``--rename-dim``).
    name_dims: name the dims the exporter left anonymous (``--name-dims``).
    print_shapes: the report's ``value_shapes`` lists every value with its proven type, per
        function context (``--print-shapes``; ``report.value_shapes``).
    declared: what a declared type of a computed value (``value_info``, a graph output, a
        subgraph's or function's declarations) is (``--declared``): ``"check"`` (compared with
        what is proven, never a fact), ``"use"`` (ONNX's contract: also a fact where nothing
        finer is proven, recorded in ``metadata_props`` as an assumption and listed in the
        report's ``assumptions``) or ``"ignore"``.
    overridable_initializers: an initializer that is also a graph input is a default the
        caller may replace (``--overridable-initializers``): ``"type"`` (only its type is a
        fact) or ``"value"`` (its value too, as ONNX's inference reads it; recorded as an
        assumption).
    return_report: return ``(model, report)``.
    Raises Error when the model cannot be analysed (or in strict mode has errors).
    """
    return _run(model, "annotate", return_report, strict_mode=strict_mode, annotate_functions=annotate_functions,
                assume_positive_dims=assume_positive_dims, schemas=schemas, print_shapes=print_shapes,
                declared=declared, overridable_initializers=overridable_initializers,
                **_shapes(dims, input_shapes, dim_ranges, rename_dims, name_dims))


def infer_shapes_path(model_path: PathLike, output_path: PathLike = "", *, strict_mode: bool = False,
                      annotate_functions: bool = True, assume_positive_dims: bool = True,
                      schemas: Sequence[PathLike] = (), dims: Optional[Mapping[str, int]] = None,
                      input_shapes: Optional[Mapping[str, Sequence[Optional[int]]]] = None,
                      dim_ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
                      rename_dims: Optional[Mapping[str, str]] = None, name_dims: bool = False,
                      declared: str = "check", overridable_initializers: str = "type",
                      return_report: bool = False) -> Optional[Report]:
    """Infers types and shapes of the model at ``model_path`` and saves the result at
    ``output_path`` (by default over ``model_path``, as ONNX's ``infer_shapes_path`` does),
    atomically: a failure leaves no partial file. The format follows the output's extension
    (``.onnxtxt`` text, otherwise binary). Options as :func:`infer_shapes`; returns the
    report when ``return_report``, else None.
    """
    out = os.fspath(output_path) or os.fspath(model_path)
    _, report = _run(model_path, "annotate", True, output_path=out, describe=return_report, strict_mode=strict_mode,
                     annotate_functions=annotate_functions, assume_positive_dims=assume_positive_dims,
                     schemas=schemas, declared=declared, overridable_initializers=overridable_initializers,
                     **_shapes(dims, input_shapes, dim_ranges, rename_dims, name_dims))
    return report if return_report else None


def specialize(model: Model, *, inline: str = "none", small_limit: int = 8, strict_mode: bool = False,
               assume_positive_dims: bool = True, schemas: Sequence[PathLike] = (),
               dims: Optional[Mapping[str, int]] = None,
               input_shapes: Optional[Mapping[str, Sequence[Optional[int]]]] = None,
               dim_ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
               rename_dims: Optional[Mapping[str, str]] = None, name_dims: bool = False,
               expand_ops: Sequence[str] = (), target_opset: Optional[int] = None,
               print_shapes: bool = False, return_report: bool = False) -> Any:
    """Specializes every reached function per distinct context and returns the result.

    Each function gets one folded copy per distinct context (identical copies shared):
    ``If``\\ s whose condition the context decides are replaced by their taken branch,
    ``CastLike`` becomes ``Cast`` or disappears, shape arithmetic with known results becomes
    constants, dead code goes; then functions are inlined by policy and the result is
    annotated. ``specialize(m, inline="all")`` is ``onnx-infer-shapes m --mode inline``,
    byte for byte. Run it on an exporter's model *before* anything inlines its functions.

    inline: ``"none"`` (keep every specialized function), ``"all"`` (a flat graph) or
        ``"small"`` (bodies of at most ``small_limit`` nodes after folding).
    dims: as :func:`infer_shapes`; with every dim bound the result is static (every Shape,
        Size and shape computation the sizes decide folded, every value's type static),
        but for sizes the data decide, which the report's ``dims["dynamic"]`` lists.
    expand_ops: ai.onnx op types (``["Attention", "RMSNormalization"]``, or
        ``["all-functions"]``) whose calls become the function body ONNX defines for them,
        built for each call's types and attributes, folded and inlined whatever ``inline``
        says (``--expand-ops``); an op without a body raises Error.
    target_opset: convert the result to this ai.onnx opset (``--target-opset``): ops it
        lacks are expanded, the rest converted by ONNX's version converter (the main graph
        only: use ``inline="all"`` when the model has functions). The report's ``lowering``
        lists the ops expanded per kind and the nodes they became.
    Other options as :func:`infer_shapes`.
    """
    if inline not in _native.inline_policies:
        names = ["'%s'" % name for name in _native.inline_policies]
        raise ValueError("inline must be %s or %s, not %r" % (", ".join(names[:-1]), names[-1], inline))
    if isinstance(expand_ops, str):
        raise TypeError("expand_ops takes a sequence of op types, not a string")
    return _run(model, "specialize", return_report, inline=inline, small_limit=small_limit,
                print_shapes=print_shapes,
                strict_mode=strict_mode, assume_positive_dims=assume_positive_dims, schemas=schemas,
                expand_ops=list(expand_ops), target_opset=target_opset,
                **_shapes(dims, input_shapes, dim_ranges, rename_dims, name_dims))


def check_model(model: Model, *, assume_positive_dims: bool = True, schemas: Sequence[PathLike] = (),
                dims: Optional[Mapping[str, int]] = None,
                input_shapes: Optional[Mapping[str, Sequence[Optional[int]]]] = None,
                dim_ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
                return_report: bool = False) -> Optional[Report]:
    """Checks a model without changing it, as ``onnx-infer-shapes --mode check`` does: a
    drop-in for ``onnx.checker.check_model(model, full_check=True)`` that passes the valid
    models whose never-taken branches ONNX's inference rejects. ONNX's structural checker,
    then strict inference per call site (only the branches a context takes), then every
    declared type (graph and function ``value_info``, subgraphs' declarations) compared
    with what it proves in every context; a declaration false in some context is an error,
    one that says less than is proven is not. ``schemas``: folders of rules for ops outside
    ONNX's registry, and ``dims``, ``input_shapes``, ``dim_ranges`` (the declarations are
    checked at those sizes), as for infer_shapes. Raises Error on any error; returns the report
    when ``return_report`` (its summary counts what was checked), else None.
    """
    _, report = _run(model, "check", True, describe=False, assume_positive_dims=assume_positive_dims,
                     schemas=schemas, **_shapes(dims, input_shapes, dim_ranges))
    return report if return_report else None
