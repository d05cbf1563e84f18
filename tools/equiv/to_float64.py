"""A copy of an ONNX model that computes in float64 what the model computes in float32: every
float32 type (graph and function inputs, outputs, value_info), initializer, Constant and
ConstantOfShape value, and every Cast, CastLike target or dtype attribute that names float32
names float64 instead. Rounding then falls below float64's tolerance, so that two models
that agree here and differ in float32 compute the same arithmetic in another order or on
other kernels, while two models that differ here compute something else.

usage: python3 to_float64.py IN.onnx OUT.onnx

Exits 2, naming the node, where a float32 is fixed by something it does not convert (an
attribute holding a float32 tensor other than a Constant's or ConstantOfShape's value, a
sparse initializer); the conversion would otherwise be a model of mixed types.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

FLOAT = onnx.TensorProto.FLOAT
DOUBLE = onnx.TensorProto.DOUBLE

# Attributes that name an element type (Cast's `to`, RandomNormal's `dtype`, ...).
DTYPE_ATTRIBUTES = {"to", "dtype"}


class Unconvertible(Exception):
    pass


def _tensor(t):
    if t.data_type != FLOAT:
        return t
    d = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name)
    return d


def _type(tp):
    which = tp.WhichOneof("value")
    if which == "tensor_type" and tp.tensor_type.elem_type == FLOAT:
        tp.tensor_type.elem_type = DOUBLE
    elif which in ("sequence_type", "optional_type"):
        _type(getattr(tp, which).elem_type)
    elif which == "map_type":
        _type(tp.map_type.value_type)


def _nodes(nodes, where):
    """Converts each node; a Constant whose float value is a function's attribute
    (ref_attr_name) stays float32 and is followed by a Cast to float64."""
    converted = []
    for n in nodes:
        ref = n.op_type == "Constant" and any(a.ref_attr_name and a.name in ("value_float", "value_floats") for a in n.attribute)
        if not ref:
            _node(n, where)
            converted.append(n)
            continue
        out = n.output[0]
        n.output[0] = out + "__float32"
        converted += [n, onnx.helper.make_node("Cast", [n.output[0]], [out], to=DOUBLE)]
    del nodes[:]
    nodes.extend(converted)


def _node(n, where):
    for a in n.attribute:
        if a.name in DTYPE_ATTRIBUTES and a.type == onnx.AttributeProto.INT and a.i == FLOAT:
            a.i = DOUBLE
        if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == FLOAT:
            if n.op_type not in ("Constant", "ConstantOfShape"):
                raise Unconvertible(f"{where}: node {n.name or n.output[0]!r} ({n.op_type}) has a float tensor attribute {a.name!r}")
            a.t.CopyFrom(_tensor(a.t))
        if n.op_type == "Constant" and a.name in ("value_float", "value_floats"):
            values = [a.f] if a.name == "value_float" else list(a.floats)
            t = numpy_helper.from_array(np.array(values if a.name == "value_floats" else values[0], dtype=np.float64))
            a.Clear()
            a.name, a.type = "value", onnx.AttributeProto.TENSOR
            a.t.CopyFrom(t)
        if a.type == onnx.AttributeProto.GRAPH:
            _graph(a.g, f"{where}/{n.op_type}.{a.name}")
        for g in a.graphs:
            _graph(g, f"{where}/{n.op_type}.{a.name}")


def _graph(g, where):
    if len(g.sparse_initializer):
        raise Unconvertible(f"{where}: sparse initializers are not converted")
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        _type(vi.type)
    for i, t in enumerate(g.initializer):
        g.initializer[i].CopyFrom(_tensor(t))
    _nodes(g.node, where)


def convert(model):
    _graph(model.graph, model.graph.name or "graph")
    for f in model.functions:
        for vi in getattr(f, "value_info", ()):  # IR 10; onnx < 1.16 has no such field
            _type(vi.type)
        _nodes(f.node, f"function {f.name}")
    return model


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    model = onnx.load(argv[1])
    try:
        convert(model)
    except Unconvertible as e:
        sys.stderr.write(f"to_float64: {argv[1]}: {e}\n")
        return 2
    onnx.save(model, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
