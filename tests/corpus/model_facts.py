#!/usr/bin/env python3
"""Facts about an ONNX model that annotate_corpus.sh needs, read straight from the binary
protobuf (python3 here has no onnx package; this decodes the few fields it needs and
skips the rest).

  model_facts.py survey MODEL...
      one line per model: its path, a tab, "functions" or "no-functions" (whether it has
      model-local functions), a tab, and the symbolic dims (dim_param) of the main
      graph's inputs, comma-separated (empty when there are none); a file this decoder
      cannot read is listed as "unreadable" with the dims "?"
  model_facts.py check-function-value-info MODEL DEBUG_LOG
      MODEL is onnx-infer-shapes' output, DEBUG_LOG the stderr of the same run with
      --debug-analysis. For every function the analysis reached ("contexts of F: n"),
      every value the function defines (its inputs, every node output, and the inputs and
      node outputs of subgraphs inside it, to any depth) must have a value_info entry in
      that function, or be listed under "no value_info in F for:" with a reason. Prints
      one line per value that is neither; exit 1 if there is one.
"""
import re
import sys

VARINT, I64, LEN, I32 = 0, 1, 2, 5

# Field numbers from onnx.proto.
MODEL_GRAPH, MODEL_FUNCTIONS = 7, 25
GRAPH_NODE, GRAPH_INPUT, GRAPH_OUTPUT, GRAPH_VALUE_INFO = 1, 11, 12, 13
NODE_OUTPUT, NODE_ATTRIBUTE = 2, 5
ATTR_G, ATTR_GRAPHS = 6, 11
FUNC_NAME, FUNC_INPUT, FUNC_NODE, FUNC_DOMAIN, FUNC_VALUE_INFO, FUNC_OVERLOAD = 1, 4, 7, 10, 12, 13
VI_NAME, VI_TYPE = 1, 2
TYPE_TENSOR, TENSOR_SHAPE, SHAPE_DIM, DIM_PARAM = 1, 2, 1, 2


def varint(buf, pos):
    result, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf):
    """Yields (field number, value): ints for varints, bytes for the rest."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = varint(buf, pos)
        elif wire == I64:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == I32:
            value, pos = buf[pos:pos + 4], pos + 4
        elif wire == LEN:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(buf):
            raise ValueError("truncated field")
        yield field, value


def repeated(buf, number):
    return [v for f, v in fields(buf) if f == number]


def string(buf, number, default=""):
    for f, v in fields(buf):
        if f == number:
            return v.decode("utf-8")
    return default


def load(path):
    with open(path, "rb") as f:
        return f.read()


def main_graph(model):
    graphs = repeated(model, MODEL_GRAPH)
    return graphs[0] if graphs else b""


def graph_dims(model):
    dims = []
    for vi in repeated(main_graph(model), GRAPH_INPUT):
        for t in repeated(vi, VI_TYPE):
            for tensor in repeated(t, TYPE_TENSOR):
                for shape in repeated(tensor, TENSOR_SHAPE):
                    for d in repeated(shape, SHAPE_DIM):
                        p = string(d, DIM_PARAM)
                        if p and p not in dims:
                            dims.append(p)
    return dims


def values_of_nodes(nodes, out):
    """The outputs of `nodes` and, depth first, the inputs and node outputs of their
    subgraphs. An explicit worklist: bodies can nest deeply."""
    work = list(reversed(nodes))
    while work:
        node = work.pop()
        out.extend(o.decode("utf-8") for o in repeated(node, NODE_OUTPUT) if o)
        subgraphs = []
        for a in repeated(node, NODE_ATTRIBUTE):
            subgraphs += repeated(a, ATTR_G) + repeated(a, ATTR_GRAPHS)
        for g in subgraphs:
            out.extend(string(vi, VI_NAME) for vi in repeated(g, GRAPH_INPUT))
            work.extend(reversed(repeated(g, GRAPH_NODE)))


def function_id(f):
    domain, name, overload = string(f, FUNC_DOMAIN), string(f, FUNC_NAME), string(f, FUNC_OVERLOAD)
    fid = f"{domain}.{name}" if domain else name
    return f"{fid}:{overload}" if overload else fid


def parse_debug(text):
    """Reached functions, and per function the values listed without value_info (with
    a non-empty reason)."""
    reached = set(re.findall(r"^contexts of (\S+): \d+$", text, re.M))
    dropped = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^no value_info in (\S+) for:$", line)
        if m:
            current = dropped.setdefault(m.group(1), [])
        elif current is not None and line.startswith("    "):
            current.append(line[4:])
        else:
            current = None
    return reached, dropped


def check_function_value_info(model_path, debug_path):
    model = load(model_path)
    with open(debug_path, encoding="utf-8", errors="replace") as f:
        reached, dropped = parse_debug(f.read())
    problems, checked = [], 0
    functions = {function_id(f): f for f in repeated(model, MODEL_FUNCTIONS)}
    for fid in sorted(reached):
        f = functions.get(fid)
        if f is None:
            problems.append(f"{fid}: reached according to --debug-analysis, but not in the model")
            continue
        values = [v.decode("utf-8") for v in repeated(f, FUNC_INPUT)]
        values_of_nodes(repeated(f, FUNC_NODE), values)
        annotated = {string(vi, VI_NAME) for vi in repeated(f, FUNC_VALUE_INFO)}
        listed = dropped.get(fid, [])
        for v in dict.fromkeys(values):  # once each, in order
            checked += 1
            if v in annotated:
                continue
            reason = next((l[len(v) + 2:] for l in listed if l.startswith(v + ": ")), None)
            if not reason or not reason.strip():
                problems.append(f"{fid}: value '{v}' has no value_info and is not listed with a reason")
    for line in problems:
        print(line)
    print(f"{len(reached)} reached functions, {checked} values, {len(problems)} unaccounted for")
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "survey":
        for path in argv[2:]:
            try:
                model = load(path)
                has = "functions" if repeated(model, MODEL_FUNCTIONS) else "no-functions"
                print(f"{path}\t{has}\t{','.join(graph_dims(model))}")
            except (OSError, ValueError, IndexError, UnicodeDecodeError):
                print(f"{path}\tunreadable\t?")
        return 0
    if len(argv) == 4 and argv[1] == "check-function-value-info":
        return check_function_value_info(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
