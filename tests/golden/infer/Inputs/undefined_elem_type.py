"""undefined_elem_type.py KIND: writes to stdout, as binary protobuf (the text syntax has
no spelling for it), a model whose graph input SEED_y is a tensor of element type
UNDEFINED, as ONNX's shape_inference_test._make_graph builds it for a seed value given
by name only: KIND empty_graph (test_empty_graph) or concat (test_concat_missing_shape).
Each seed value v is Reshape(SEED_v, UNKNOWN_SHAPE_v) with v's type in value_info. No
onnx module needed: the few messages are encoded here."""
import sys

FLOAT, INT64, UNDEFINED = 1, 7, 0


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def tensor_type(elem_type, dims):
    """TypeProto.tensor_type; dims None for no shape, a dim None for an unknown one."""
    t = field(1, elem_type)
    if dims is not None:
        t += field(2, b"".join(field(1, b"" if d is None else field(1, d)) for d in dims))
    return field(1, t)


def value_info(name, type_proto=None):
    return field(1, name) + (field(2, type_proto) if type_proto is not None else b"")


def node(op, inputs, outputs, **ints):
    n = b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs) + field(4, op)
    for k, v in ints.items():
        n += field(5, field(1, k) + field(3, v) + field(20, 2))  # AttributeProto INT
    return n


def make_graph(seeds, nodes):
    inputs, value_infos, reshapes = [], [], []
    for name, elem_type, dims in seeds:
        value_infos.append(value_info(name, None if elem_type is None else tensor_type(elem_type, dims)))
        inputs.append(value_info("SEED_" + name, tensor_type(UNDEFINED if elem_type is None else elem_type, [])))
        inputs.append(value_info("UNKNOWN_SHAPE_" + name, tensor_type(INT64, [None])))
        reshapes.insert(0, node("Reshape", ["SEED_" + name, "UNKNOWN_SHAPE_" + name], [name]))
    g = b"".join(field(1, n) for n in reshapes + nodes) + field(2, "test")
    g += b"".join(field(11, i) for i in inputs) + b"".join(field(13, v) for v in value_infos)
    return g


kind = sys.argv[1]
if kind == "empty_graph":
    graph = make_graph([("y", None, None)], [])
elif kind == "concat":
    graph = make_graph([("x", FLOAT, [2, 4, 3]), ("y", None, None), ("z", FLOAT, [None, None, None])],
                       [node("Concat", ["x", "y", "z"], ["out"], axis=0)])
else:
    sys.exit("kind: empty_graph or concat")
model = field(1, 8) + field(8, field(1, "") + field(2, 18)) + field(7, graph)
sys.stdout.buffer.write(model)
