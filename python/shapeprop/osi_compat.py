"""onnx-shape-inference's entry point, backed by shapeprop: a drop-in for
``onnx_shape_inference.infer_symbolic_shapes`` (justinchuby/onnx-shape-inference 0.3.0),
which Olive and onnxscript users call on an ``onnx_ir.Model``::

    from shapeprop.osi_compat import infer_symbolic_shapes
    model = infer_symbolic_shapes(model, policy="refine")   # in place, and returned

As there, the model is changed in place and returned: each value a node of the main graph
or of a subgraph computes gets its element type (or its sequence/optional type) and shape,
merged with what the value already holds by ``policy``. The types are shapeprop's
(``shapeprop.infer_shapes`` of the model serialized once through ``onnx_ir.serde``; the
functions' bodies are left as they are, as onnx-shape-inference leaves them), which hold
for every valid input, but for what a policy takes on trust. A value's existing type is a
declaration (the exporter's ``value_info``, an earlier pass's result); the policies decide
what becomes of it:

- ``"override"``: what the graph alone proves (the model without its ``value_info`` and
  its outputs' shapes, ``declared="ignore"``) replaces it wherever shapeprop has a type;
- ``"skip"``: a value that has a type (a shape) keeps it; the others get what the graph
  alone proves;
- ``"refine"`` (the default): shapeprop's type where it is at least as specific, the
  existing one kept where shapeprop proves nothing finer, dim by dim (a known size or a
  named symbol is kept over a dim shapeprop leaves unknown or writes over a fresh name,
  ``dyn__N`` or ``unk__N``): the model's own declaration taken on trust there, as
  onnx-shape-inference takes it, and used as a fact for the values computed from it
  (``declared="use"``; the model's ``metadata_props`` then say so, under
  ``shapeprop.assumptions``).
  Where the existing type contradicts the proof (another element type, another rank,
  another size), onnx-shape-inference keeps the existing one; here the proof replaces
  it, with a warning: the declaration is false for some input.
- ``"strict"``: such a contradiction raises ``ValueError`` (naming the value) before
  anything is changed, as onnx-shape-inference's strict policy does; otherwise as
  ``"refine"``.

``warn_on_missing``: shapeprop's warnings (an op without a schema or rule, whose outputs
stay untyped) are logged through ``logging.getLogger("shapeprop.osi_compat")``.
``adopt_declared_symbols``: accepted; shapeprop's annotation already writes a declared
name where it proves the value has that size, and mints fresh names only where it knows
nothing, so it changes nothing. A model shapeprop cannot analyse raises
:class:`shapeprop.Error`, a ``ValueError`` as onnx-shape-inference's errors are; the model
is then left as it was. Importing this module needs onnx_ir.

onnx-shape-inference's command line is ``python3 -m shapeprop.osi_compat MODEL [-o OUT |
--in-place] [--policy strict|refine]`` (:func:`main`).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from typing import Iterator, List, Literal, NamedTuple, Optional, Tuple, Union

import onnx
import onnx_ir

from . import infer_shapes as _infer_shapes
from ._compat import exit_status, program_name, undeclared, write_atomically

__all__ = ["ShapeMergePolicy", "infer_symbolic_shapes", "main"]

logger = logging.getLogger(__name__)

ShapeMergePolicy = Literal["skip", "override", "refine", "strict"]
_POLICIES = ("skip", "override", "refine", "strict")

# The names shapeprop gives a dim it knows nothing of (docs/DESIGN.md), and identifiers.
_FRESH = re.compile(r"(unk|dyn)__[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Dim = Union[int, onnx_ir.SymbolicDim]

_ASSUMPTIONS = "shapeprop.assumptions"


def _known(dim: Dim) -> bool:
    """A size, or a name or an expression that says something: not unknown, and over no
    fresh name (``dyn__0+dyn__1``, the sum of sizes the data decide, says less than a
    declared ``6`` or ``width``)."""
    if isinstance(dim, int):
        return True
    return dim.value is not None and not any(_FRESH.fullmatch(n) for n in _IDENTIFIER.findall(dim.value))


def _plain(dim: Dim) -> Union[int, str, None]:
    return dim if isinstance(dim, int) else dim.value


def _conflict(existing: onnx_ir.Value, inferred: "_Proven") -> Optional[str]:
    """How the existing type contradicts the proof, or None (onnx-shape-inference's strict
    checks: element type, rank, two different sizes)."""
    if existing.type is not None and inferred.type is not None:
        if type(existing.type) is not type(inferred.type):
            return "type %s, inferred %s" % (existing.type, inferred.type)
        if existing.dtype is not None and inferred.dtype is not None and existing.dtype != inferred.dtype:
            return "element type %s, inferred %s" % (existing.dtype, inferred.dtype)
    if existing.shape is not None and inferred.shape is not None:
        if existing.shape.rank() != inferred.shape.rank():
            return "rank %d, inferred %d" % (existing.shape.rank(), inferred.shape.rank())
        for i, (e, n) in enumerate(zip(existing.shape.dims, inferred.shape.dims)):
            if isinstance(e, int) and isinstance(n, int) and e != n:
                return "dim %d is %d, inferred %d" % (i, e, n)
    return None


def _merge(value: onnx_ir.Value, inferred: "_Proven", policy: str) -> None:
    """Writes `inferred`'s type and shape into `value` by `policy`."""
    if inferred.type is None and inferred.shape is None:
        return
    had_type, had_shape = value.type is not None, value.shape is not None
    if policy == "skip":
        if not had_type and inferred.type is not None:
            value.type = inferred.type
        if not had_shape and inferred.shape is not None:
            value.shape = onnx_ir.Shape([_plain(d) for d in inferred.shape.dims])
        return
    conflict = _conflict(value, inferred) if policy != "override" else None
    if conflict is not None:
        message = "the type of %r contradicts what inference proves: %s" % (value.name, conflict)
        if policy == "strict":
            raise ValueError(message)
        logger.warning("%s; written as proven", message)
    if inferred.type is not None:
        if policy == "override" or conflict is not None or not had_type:
            value.type = inferred.type
    if inferred.shape is None:
        return
    if policy == "override" or conflict is not None or not had_shape or value.shape.rank() != inferred.shape.rank():
        value.shape = onnx_ir.Shape([_plain(d) for d in inferred.shape.dims])
        return
    dims = [_plain(n) if _known(n) or not _known(e) else _plain(e)
            for e, n in zip(value.shape.dims, inferred.shape.dims)]
    if dims != [_plain(d) for d in value.shape.dims]:
        value.shape = onnx_ir.Shape(dims)


class _Proven(NamedTuple):
    """A value's type and shape as the annotated model holds them (what _merge reads of a
    value), read from its TypeProto without building an onnx_ir model around it."""

    name: str
    type: Optional[onnx_ir.TypeProtocol]
    shape: Optional[onnx_ir.Shape]

    @property
    def dtype(self) -> Optional[onnx_ir.DataType]:
        return None if self.type is None else self.type.dtype

    @classmethod
    def of(cls, name: str, proto: Optional[onnx.TypeProto]) -> "_Proven":
        if proto is None:
            return cls(name, None, None)
        try:
            return cls(name, onnx_ir.serde.deserialize_type_proto_for_type(proto),
                       onnx_ir.serde.deserialize_type_proto_for_shape(proto))
        except NotImplementedError:  # a map, which onnx_ir does not hold
            return cls(name, None, None)


def _pairs(graph: onnx_ir.Graph, proto: onnx.GraphProto) -> Iterator[Tuple[onnx_ir.Value, _Proven]]:
    """Each value a node of `graph` (or of its subgraphs) computes, with what the annotated
    `proto` of the same graph says of it. Annotation adds value_info and changes no node,
    so the two hold the same nodes in the same order."""
    types = {vi.name: vi.type for vi in list(proto.input) + list(proto.value_info) + list(proto.output)}
    nodes = list(graph)
    assert len(nodes) == len(proto.node), "the annotated graph's nodes differ"
    for node, written in zip(nodes, proto.node):
        for value, name in zip(node.outputs, written.output):
            yield value, _Proven.of(name, types.get(name))
        attributes = {a.name: a for a in written.attribute}
        for attr in node.attributes.values():
            if isinstance(attr, onnx_ir.Attr) and attr.type == onnx_ir.AttributeType.GRAPH:
                yield from _pairs(attr.as_graph(), attributes[attr.name].g)
            elif isinstance(attr, onnx_ir.Attr) and attr.type == onnx_ir.AttributeType.GRAPHS:
                for sub, sub_proto in zip(attr.as_graphs(), attributes[attr.name].graphs):
                    yield from _pairs(sub, sub_proto)


def infer_symbolic_shapes(model: onnx_ir.Model, *, policy: ShapeMergePolicy = "refine", warn_on_missing: bool = True,
                          adopt_declared_symbols: bool = True) -> onnx_ir.Model:
    """Infers the type and shape of every value a node computes (in the main graph and its
    subgraphs) and merges them into ``model`` in place by ``policy`` (this module's
    docstring says how); returns ``model``."""
    if not isinstance(model, onnx_ir.Model):
        raise TypeError("model must be an onnx_ir.Model, not %s" % type(model).__name__)
    if policy not in _POLICIES:
        raise ValueError("policy must be one of %s, not %r" % (", ".join(repr(p) for p in _POLICIES), policy))
    # "refine" and "strict" take a declaration as a fact where nothing finer is proven, as
    # onnx-shape-inference does, so that it also informs the values computed from it
    # (declared="use", which records the trust in metadata_props); "override" and "skip"
    # merge what the graph alone proves.
    proto = onnx_ir.serde.serialize_model(model)
    if policy in ("refine", "strict"):
        out, report = _infer_shapes(proto, annotate_functions=False, declared="use", return_report=True)
    else:
        out, report = _infer_shapes(undeclared(proto), annotate_functions=False, declared="ignore",
                                    return_report=True)
    if warn_on_missing:
        for d in report.diagnostics:
            if d.severity == "warning":
                logger.warning("%s", d)
    pairs = list(_pairs(model.graph, out.graph))
    if policy == "strict":  # all or nothing: a conflict leaves the model as it was
        for value, proven in pairs:
            conflict = _conflict(value, proven)
            if conflict is not None:
                raise ValueError("the type of %r contradicts what inference proves: %s" % (value.name, conflict))
    for value, proven in pairs:
        _merge(value, proven, policy)
    # What the result rests on (declarations taken on trust, dims at least 1), as
    # shapeprop records it in every model it writes.
    for entry in out.metadata_props:
        if entry.key == _ASSUMPTIONS:
            model.metadata_props[_ASSUMPTIONS] = entry.value
    return model


def _shapes_count(model: onnx_ir.Model) -> int:
    return sum(v.shape is not None for node in model.graph.all_nodes() for v in node.outputs)


def main(argv: Optional[List[str]] = None) -> int:
    """onnx-shape-inference's command line (``onnx-shape-inference MODEL [-o OUT | --in-place]
    [--policy strict|refine]``), with its messages: how many values got a shape, and where
    the model was saved. The file is written atomically (under a temporary name beside it,
    then renamed); an error is one line on stderr and exit 1, with nothing written."""
    program = program_name("shapeprop.osi_compat")
    parser = argparse.ArgumentParser(prog=program, description="onnx-shape-inference's command line, backed by shapeprop.")
    parser.add_argument("model", help="Path to the input ONNX model.")
    parser.add_argument("-o", "--output", default=None,
                        help="Path to save the inferred model. If not provided, the model is not saved.")
    parser.add_argument("--in-place", action="store_true", help="Save the inferred model back to the input path.")
    parser.add_argument("--policy", choices=["strict", "refine"], default="refine",
                        help="Shape merge policy (default: refine).")
    args = parser.parse_args(argv)
    if args.output and args.in_place:
        parser.error("--output and --in-place are mutually exclusive.")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    def run() -> None:
        model = onnx_ir.load(args.model)
        before = _shapes_count(model)
        infer_symbolic_shapes(model, policy=args.policy)
        print(f"New shapes created: {_shapes_count(model) - before}")
        path = args.model if args.in_place else args.output
        if path:
            write_atomically(path, lambda name: onnx_ir.save(model, name))
            print(f"Saved inferred model to {path}")

    return exit_status(program, args.model, run)


if __name__ == "__main__":
    sys.exit(main())
