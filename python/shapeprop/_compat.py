"""What the drop-ins for other tools' APIs share (ort_compat, osi_compat): reading a model's
subgraphs, the model without its declarations, and their command lines' name, exit status
and writes."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Callable, List

import onnx


def subgraphs(node: onnx.NodeProto) -> List[onnx.GraphProto]:
    out = []
    for attr in node.attribute:
        if attr.HasField("g"):
            out.append(attr.g)
        out.extend(attr.graphs)
    return out


def undeclared(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` without the declared types of its computed values: the value_info of
    the graph and its subgraphs and the shapes of the graph's outputs. (``declared="ignore"``
    neither uses nor checks them, but annotation still writes one that says more than is
    proven, a size where the data decide it.)"""
    out = onnx.ModelProto()
    out.CopyFrom(model)

    def clear(graph: onnx.GraphProto) -> None:
        del graph.value_info[:]
        for node in graph.node:
            for sub in subgraphs(node):
                clear(sub)

    clear(out.graph)
    for output in out.graph.output:
        if output.type.HasField("tensor_type"):
            output.type.tensor_type.ClearField("shape")
    return out


def program_name(module: str) -> str:
    """What a command line's messages call it: the interpreter's name (as the user typed it,
    where known) followed by ``-m module``."""
    interpreter = os.path.basename(sys.orig_argv[0]) if getattr(sys, "orig_argv", None) else ""
    return f"{interpreter or 'python'} -m {module}"


def exit_status(program: str, path: str, run: Callable[[], None]) -> int:
    """Runs a command line's work: 0 when it succeeds, else 1 with the error as one line on
    stderr (``PROGRAM: PATH: Kind: message``)."""
    try:
        run()
    except Exception as e:  # noqa: BLE001 - the command line reports any failure as one line
        print(f"{program}: {path}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def write_atomically(path: str, write: Callable[[str], None]) -> None:
    """`write(name)` writes the file under a temporary name beside `path`, which is then
    renamed to `path`: a failure leaves no partial file (and no temporary one)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=folder)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
