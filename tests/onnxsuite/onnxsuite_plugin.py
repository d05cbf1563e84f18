"""pytest plugin: ONNX's own Python test files, as they are, with shapeprop.onnx_compat in
place of onnx.shape_inference's functions and onnx.checker.check_model.

Loaded with ``-p onnxsuite_plugin`` (this folder on PYTHONPATH) so that the replacement is in
place before pytest imports a test file (inference_function_test imports
infer_node_outputs by name). The list ONNXSUITE_EXPECTED names each test that does not pass
through the replacement, with why; the run fails when a test fails that the list does not
name, when a test the list names passes, or when the list names a test that did not run.

Beside the tests' own assertions, every model, node and function the replacement infers is also inferred by
ONNX's own function, and a type of ours that contradicts ONNX's (element type, rank, or two
different constant dims) fails the run unless the list names the test (a false fact of
ours, or ONNX's); ONNXSUITE_CONTRADICTIONS names such tests and what was found.
ONNXSUITE_FAILURES=PATH writes each failing test with its error's last line, for the list.
"""

from __future__ import annotations

import os
import sys

import onnx
import onnx.shape_inference
import pytest

from shapeprop import onnx_compat

_onnx_infer_shapes = onnx.shape_inference.infer_shapes
_onnx_infer_node_outputs = onnx.shape_inference.infer_node_outputs
_onnx_infer_function_output_types = onnx.shape_inference.infer_function_output_types
onnx_compat.install()

_outcomes: dict = {}      # nodeid -> "passed" | "failed" | "skipped"
_errors: dict = {}        # nodeid -> the error's last line
_contradictions: dict = {}  # nodeid -> [what]
_current = [None]


def _read_list(path):
    listed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            test, sep, reason = line.partition("  ")
            if not sep or not reason.strip():
                raise pytest.UsageError(f"{path}:{number}: a test and its reason, two spaces apart: {line!r}")
            listed[test.strip()] = reason.strip()
    return listed


def _dims(t):
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim] if t.HasField("shape") else None


def _contradiction(ours, theirs):
    """What `ours` says that ONNX's `theirs` contradicts (tensors, and the tensors inside
    sequences and optionals), or None."""
    kind = ours.WhichOneof("value")
    if kind != theirs.WhichOneof("value") or kind is None:
        return None if kind is None or theirs.WhichOneof("value") is None else f"{kind} vs {theirs.WhichOneof('value')}"
    if kind in ("sequence_type", "optional_type"):
        a, b = getattr(ours, kind), getattr(theirs, kind)
        if a.HasField("elem_type") and b.HasField("elem_type"):
            return _contradiction(a.elem_type, b.elem_type)
        return None
    if kind != "tensor_type":
        return None
    a, b = ours.tensor_type, theirs.tensor_type
    if a.elem_type and b.elem_type and a.elem_type != b.elem_type:
        return f"element type {a.elem_type} vs {b.elem_type}"
    da, db = _dims(a), _dims(b)
    if da is None or db is None:
        return None
    if len(da) != len(db):
        return f"rank {len(da)} vs {len(db)}"
    for i, (x, y) in enumerate(zip(da, db)):
        if x is not None and y is not None and x != y:
            return f"dim {i}: {x} vs {y}"
    return None


def _compare(ours, theirs):
    """Notes each type of `ours` (name -> TypeProto) that ONNX's `theirs` contradicts."""
    for name, t in ours.items():
        if name in theirs:
            what = _contradiction(t, theirs[name])
            if what:
                _contradictions.setdefault(_current[0], []).append(f"{name}: {what}")


def _compared_infer_shapes(model, check_type=False, strict_mode=False, data_prop=False, **kw):
    ours = onnx_compat.infer_shapes(model, check_type, strict_mode, data_prop, **kw)
    try:
        theirs = _onnx_infer_shapes(model, check_type, False, True)
    except Exception:  # noqa: BLE001 - ONNX refusing the model says nothing of our facts
        return ours
    typed = lambda m: {vi.name: vi.type for vi in list(m.graph.value_info) + list(m.graph.output)}  # noqa: E731
    _compare(typed(ours), typed(theirs))
    return ours


def _compared_infer_node_outputs(*args, **kw):
    ours = onnx_compat.infer_node_outputs(*args, **kw)
    try:
        _compare(ours, _onnx_infer_node_outputs(*args, **kw))
    except Exception:  # noqa: BLE001
        pass
    return ours


def _compared_infer_function_output_types(*args, **kw):
    ours = onnx_compat.infer_function_output_types(*args, **kw)
    try:
        theirs = _onnx_infer_function_output_types(*args, **kw)
        _compare(dict(enumerate(ours)), dict(enumerate(theirs)))
    except Exception:  # noqa: BLE001
        pass
    return ours


onnx.shape_inference.infer_shapes = _compared_infer_shapes
onnx.shape_inference.infer_node_outputs = _compared_infer_node_outputs
onnx.shape_inference.infer_function_output_types = _compared_infer_function_output_types


def pytest_runtest_setup(item):
    _current[0] = item.nodeid


def pytest_runtest_logreport(report):
    node = report.nodeid
    if report.failed:
        _outcomes[node] = "failed"
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash else str(report.longrepr)
        _errors[node] = " ".join(text.split())[:600]
    elif report.skipped:
        _outcomes.setdefault(node, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(node, "passed")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("ONNXSUITE_EXPECTED")
    listed = _read_list(path) if path else {}
    failed = sorted(n for n, o in _outcomes.items() if o == "failed")
    passed = sorted(n for n, o in _outcomes.items() if o == "passed")
    out = sys.stdout
    problems = []
    problems += [f"fails, and is not listed: {n}: {_errors.get(n, '')}" for n in failed if n not in listed]
    problems += [f"passes, and is listed: {n}" for n in passed if n in listed]
    problems += [f"is listed, and did not run: {n}" for n in sorted(listed) if n not in _outcomes]
    problems += [f"contradicts ONNX's inference, and is not listed: {n}: {'; '.join(w)}"
                 for n, w in sorted(_contradictions.items()) if n not in listed]
    if os.environ.get("ONNXSUITE_FAILURES"):
        with open(os.environ["ONNXSUITE_FAILURES"], "w", encoding="utf-8") as f:
            for n in failed:
                f.write(f"{n}  {_errors.get(n, '')}\n")
    if os.environ.get("ONNXSUITE_CONTRADICTIONS"):
        with open(os.environ["ONNXSUITE_CONTRADICTIONS"], "w", encoding="utf-8") as f:
            for n, w in sorted(_contradictions.items()):
                f.write(f"{n}  {'; '.join(w)}\n")
    skipped = sum(1 for o in _outcomes.values() if o == "skipped")
    out.write(f"\nonnxsuite: {len(passed)} passed, {len(failed)} failed ({len(listed)} listed), {skipped} skipped; "
              f"{len(_contradictions)} tests where a type of ours contradicts ONNX's inference\n")
    for p in problems:
        out.write(f"onnxsuite: {p}\n")
    if exitstatus in (0, 1):
        session.exitstatus = 1 if problems else 0
