"""What ships with the package: type stubs that match the compiled module, docstrings."""

import ast
import inspect
from pathlib import Path

import pytest


def top_level_parts(text):
    """`text` split at the commas outside brackets (types such as List[Tuple[str, int]])."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[(" and 1 or c in "])" and -1 or 0
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def test_the_stubs_match_the_compiled_module(shapeprop):
    from shapeprop import _native
    stub = Path(_native.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    attributes = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    public = {name for name in dir(_native) if not name.startswith("_")}
    assert public == set(functions) | attributes
    # The keyword arguments pybind11 reports are the stub's, in order.
    doc_signature = _native.run.__doc__.splitlines()[0]
    stub_args = [a.arg for a in functions["run"].args.args + functions["run"].args.kwonlyargs]
    pybind_args = [part.split(":")[0].strip().lstrip("*") for part in top_level_parts(
        doc_signature[doc_signature.index("(") + 1:doc_signature.rindex(")")])]
    assert [a for a in pybind_args if a] == stub_args
    assert (Path(_native.__file__).with_name("py.typed")).exists()


@pytest.mark.parametrize("name", ["infer_shapes", "infer_shapes_path", "specialize", "check_model", "Error", "Report",
                                  "Diagnostic"])
def test_public_names_are_documented(shapeprop, name):
    thing = getattr(shapeprop, name)
    assert inspect.getdoc(thing) and len(inspect.getdoc(thing)) > 80


def test_signatures_follow_onnx(shapeprop):
    p = inspect.signature(shapeprop.infer_shapes).parameters
    assert list(p)[:4] == ["model", "strict_mode", "annotate_functions", "assume_positive_dims"]
    assert list(inspect.signature(shapeprop.infer_shapes_path).parameters)[:2] == ["model_path", "output_path"]
    assert inspect.signature(shapeprop.infer_shapes_path).parameters["output_path"].default == ""
    s = inspect.signature(shapeprop.specialize).parameters
    assert s["inline"].default == "none" and s["small_limit"].default == 8
    assert issubclass(shapeprop.Error, ValueError)
    assert shapeprop.__version__ and shapeprop.onnx_version
