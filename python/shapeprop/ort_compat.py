"""ONNX Runtime's symbolic shape inference tool, backed by shapeprop: a drop-in for
``onnxruntime.tools.symbolic_shape_infer`` (ONNX Runtime 1.23), for code that calls it and
that you do not rewrite (ORT's transformer optimizer and quantizer, TensorRT flows)::

    from shapeprop.ort_compat import SymbolicShapeInference
    model = SymbolicShapeInference.infer_shapes(model, auto_merge=True)

and its command line, with the same flags::

    python3 -m shapeprop.ort_compat --input model.onnx --output out.onnx --auto_merge

What it writes, as ORT's tool does: a new ``onnx.ModelProto`` (the argument is not
changed) whose graph ``value_info`` holds the type of every value computed by a node, the
graph's outputs among them (ORT's optimizer and quantizer read ``value_info``), whose graph
outputs carry the inferred type, and whose subgraphs' ``value_info`` are filled the same
way. The types are what shapeprop proves from the graph alone, which hold for every valid
input: ``shapeprop.infer_shapes`` of the model without its ``value_info`` and its outputs'
shapes, with ``declared="ignore"`` (ORT's tool clears the one and overwrites the other), and
``annotate_functions=False`` (the IR version stays). Where the two differ, and
why:

- ``auto_merge``: ORT's tool, meeting two dims it cannot relate where they must be equal
  (the two sides of a broadcast, of a MatMul, of a Concat), merges their symbols into one;
  for inputs where they differ (a broadcast of 1 against N), the merged symbol is false
  (on ``masked_attention.dynamo-opt`` 35 of 40 values). shapeprop never merges what it
  cannot prove equal: a broadcast of ``a`` and ``b`` is ``max(a,b)``, other dims it cannot
  tell get a fresh symbol. So ``auto_merge`` changes nothing here; without it ORT's tool
  stops with "Incomplete symbolic shape inference" where it would have merged, and this
  one does not need to.
- ``int_max``: ORT's tool takes a Slice bound at or beyond ``int_max`` as "to the end",
  an assumption that every dim is smaller. shapeprop's Slice is exact for every bound
  (``min(seq, 100)`` where the bound is 100 and ``seq`` is free), so ``int_max`` is checked
  (an int) and changes nothing.
- ``guess_output_rank``: ORT's tool guesses that the output of an op it does not know has
  the rank and element type of its first input: a guess, false for many ops. shapeprop does
  not guess: such an output stays untyped. Without ``guess_output_rank`` ORT's tool raises
  when a value is left without an element type or a rank, and so does this one (the same
  message) for a value of the main graph; with it, this one returns the model with that
  value untyped, where ORT's would have written a guess. (The values of a branch the facts
  rule out, an ``If`` on the input's rank, stay untyped: nothing computes them.)
- ``verbose``: 0 logs nothing, 1 and 2 log shapeprop's warnings, 3 and more its notes too,
  through ``logging.getLogger("shapeprop.ort_compat")``.
- Errors: a model shapeprop cannot analyse raises :class:`shapeprop.Error` (a
  ``ValueError``, naming the node); ORT's tool raises whatever its inference function
  met (an ``AssertionError``, an ``AttributeError``), and writes ``sym_shape_infer_temp.onnx``
  into the working folder when it stops incomplete, which this one never does. A model
  without an ai.onnx opset, or with one below 7, gives ``None`` and a warning, as ORT's does.
- The graph inputs are left as declared (ORT's tool names their unnamed dims).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import List, Optional

import onnx

from . import infer_shapes as _infer_shapes
from ._compat import exit_status, program_name, subgraphs, undeclared, write_atomically

__all__ = ["IncompleteInferenceError", "SymbolicShapeInference", "main", "parse_arguments"]

logger = logging.getLogger(__name__)


class IncompleteInferenceError(Exception):
    """A value the main graph computes is left untyped (``guess_output_rank`` off): ORT's
    tool raises a plain ``Exception`` with the same message here, which this subclasses."""


def _opset(model: onnx.ModelProto) -> Optional[int]:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return None


def _incomplete(graph: onnx.GraphProto) -> List[str]:
    """The outputs of the graph's nodes that ORT's tool would call incomplete, in order:
    without a type, or a tensor without an element type or a shape (a rank). The main graph
    only: shapeprop types the branches a model takes, and leaves a branch that the facts
    rule out (an If on the input's rank) untyped, as nothing ever computes it."""
    types = {vi.name: vi.type for vi in list(graph.input) + list(graph.value_info) + list(graph.output)}
    out = []
    for node in graph.node:
        for name in node.output:
            t = types.get(name)
            if name and (t is None or t.WhichOneof("value") is None or (
                    t.HasField("tensor_type") and (not t.tensor_type.elem_type or not t.tensor_type.HasField("shape")))):
                out.append(name)
    return out


def _outputs_as_value_info(graph: onnx.GraphProto) -> None:
    """ORT's tool writes every node output as value_info, the graph's outputs included (its
    optimizer and quantizer look types up there); ONNX's convention leaves the outputs out.
    Adds them, in the graph and every subgraph."""
    present = {vi.name for vi in graph.value_info}
    produced = {name for node in graph.node for name in node.output}
    for output in graph.output:
        if output.name in produced and output.name not in present and output.type.WhichOneof("value") is not None:
            entry = graph.value_info.add()
            entry.name = output.name
            entry.type.CopyFrom(output.type)
    for node in graph.node:
        for sub in subgraphs(node):
            _outputs_as_value_info(sub)


class SymbolicShapeInference:
    """ORT's ``SymbolicShapeInference``: :meth:`infer_shapes` is the entry point its callers
    use. The constructor takes ORT's arguments and keeps them (for code that subclasses or
    builds one), but the inference itself is shapeprop's."""

    def __init__(self, int_max: int, auto_merge: bool, guess_output_rank: bool, verbose: int, prefix: str = ""):
        self.int_max_ = int_max
        self.auto_merge_ = auto_merge
        self.guess_output_rank_ = guess_output_rank
        self.verbose_ = verbose
        self.prefix_ = prefix

    @staticmethod
    def infer_shapes(in_mp: onnx.ModelProto, int_max: int = 2**31 - 1, auto_merge: bool = False,
                     guess_output_rank: bool = False, verbose: int = 0) -> Optional[onnx.ModelProto]:
        """Returns a new model with the type of every computed value in ``value_info`` (the
        module's docstring says what each argument does here and how it differs from ORT's);
        ``None`` for a model below ai.onnx opset 7."""
        if isinstance(int_max, bool) or not isinstance(int_max, int):
            raise TypeError("int_max must be an int, not %s" % type(int_max).__name__)
        if isinstance(verbose, bool) or not isinstance(verbose, int):
            raise TypeError("verbose must be an int, not %s" % type(verbose).__name__)
        if not isinstance(in_mp, onnx.ModelProto):
            raise TypeError("in_mp must be an onnx.ModelProto, not %s" % type(in_mp).__name__)
        opset = _opset(in_mp)
        if not opset or opset < 7:
            logger.warning("Only support models of onnx opset 7 and above.")
            return None
        # ORT's tool clears the model's value_info and overwrites its outputs' types: no
        # declaration of a computed value is read.
        out, report = _infer_shapes(undeclared(in_mp), annotate_functions=False, declared="ignore",
                                    return_report=True)
        if verbose > 0:
            for d in report.diagnostics:
                if d.severity in ("warning", "error") or verbose > 2:
                    logger.log(logging.WARNING if d.severity != "note" else logging.INFO, "%s", d)
        _outputs_as_value_info(out.graph)
        if not guess_output_rank:
            untyped = _incomplete(out.graph)
            if untyped:
                if verbose > 0:
                    logger.warning("untyped: %s", ", ".join(untyped[:20]))
                raise IncompleteInferenceError("Incomplete symbolic shape inference")
        return out


def parse_arguments(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """ORT 1.23's flags, with its defaults."""
    parser = argparse.ArgumentParser(
        prog=program_name("shapeprop.ort_compat"), description="ONNX Runtime's symbolic shape inference tool, backed by shapeprop.")
    parser.add_argument("--input", required=True, help="The input model file")
    parser.add_argument("--output", help="The output model file")
    parser.add_argument("--auto_merge", action="store_true", default=False,
                        help="accepted for ORT's callers; shapeprop merges no dims it cannot prove equal")
    parser.add_argument("--int_max", type=int, default=2**31 - 1,
                        help="accepted for ORT's callers; shapeprop's Slice is exact for every bound")
    parser.add_argument("--guess_output_rank", action="store_true", default=False,
                        help="do not fail when an op's output stays untyped (shapeprop guesses no rank)")
    parser.add_argument("--verbose", type=int, default=0,
                        help="0: quiet, 1: shapeprop's warnings, 3: its notes too")
    parser.add_argument("--save_as_external_data", action="store_true", default=False,
                        help="Saving an ONNX model to external data")
    parser.add_argument("--all_tensors_to_one_file", action="store_true", default=False,
                        help="Saving all the external data to one file")
    parser.add_argument("--external_data_location", default="./",
                        help="The file location to save the external file")
    parser.add_argument("--external_data_size_threshold", type=int, default=1024,
                        help="The size threshold for external data")
    return parser.parse_args(argv)


def _save(model: onnx.ModelProto, args: argparse.Namespace) -> None:
    """Saves as ORT's command line does: inline, or as external data by its four flags (the
    external data file, when asked for, is written under its own name, as ONNX writes it)."""
    def save(path: str) -> None:
        if args.save_as_external_data:
            onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=args.all_tensors_to_one_file,
                            location=args.external_data_location, size_threshold=args.external_data_size_threshold,
                            convert_attribute=False)
        else:
            onnx.save(model, path)

    write_atomically(args.output, save)


def main(argv: Optional[List[str]] = None) -> int:
    """The command line: the model at --input inferred and, with --output, saved there (with
    its weights, inline or as external data as the flags say; the weights are read once,
    for the save, from beside the input). Exit 0 on success, 1 with the error on stderr."""
    args = parse_arguments(argv)
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR, format="%(message)s")

    def run() -> None:
        # The analysis never reads the weights: they stay where they are until the save.
        model = onnx.load(args.input, load_external_data=False)
        out = SymbolicShapeInference.infer_shapes(model, args.int_max, args.auto_merge, args.guess_output_rank,
                                                  args.verbose)
        if args.output and out is not None:
            onnx.load_external_data_for_model(out, os.path.dirname(os.path.abspath(args.input)))
            _save(out, args)

    return exit_status(program_name("shapeprop.ort_compat"), args.input, run)


if __name__ == "__main__":
    sys.exit(main())
