"""Shared pieces of the Python package's tests (run by ctest: tests/python/CMakeLists.txt).

ctest sets SHAPEPROP_CLI (the onnx-infer-shapes to compare with) and PYTHONPATH (the
package assembled in the build tree); the tests run on Debian's /usr/bin/python3 with
Debian's python3-onnx, python3-pytest and python3-jsonschema.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
SCHEMA = ROOT / "docs" / "report.schema.json"
REPORT_DOC = ROOT / "docs" / "report.md"
# onnx_ir in and out (test_onnx_ir.py) and onnx-shape-inference's entry point
# (test_osi_compat.py) where onnx_ir imports: their ctests python.onnx_ir and
# python.osi_compat are registered where configure found it; elsewhere pytest does not
# collect the files.
try:
    import onnx_ir  # noqa: F401
except ImportError:
    collect_ignore = ["test_onnx_ir.py", "test_osi_compat.py"]

CLI = os.environ.get("SHAPEPROP_CLI", str(ROOT / "build" / "release" / "tools" / "onnx-infer-shapes"))

# Every real model of the corpus; one of them is malformed on purpose (its README says why).
CORPUS_MODELS = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.onnx"))
REJECTED = {"torch-dynamo/dort_llama_rotary_1_inlined.onnx"}


def run_cli(*args, check=True):
    """onnx-infer-shapes ARGS; returns the CompletedProcess (stdout as bytes, stderr as text)."""
    done = subprocess.run([CLI, *map(str, args)], capture_output=True)
    done.stderr = done.stderr.decode()
    if check and done.returncode != 0:
        raise AssertionError("onnx-infer-shapes %s failed (%d):\n%s" % (" ".join(map(str, args)), done.returncode, done.stderr))
    return done


def summary_of(stderr):
    """The summary line of a run (without the tool's name)."""
    lines = [l for l in stderr.splitlines() if l.startswith("onnx-infer-shapes: ") and ": note:" not in l]
    assert len(lines) == 1, stderr
    return lines[0][len("onnx-infer-shapes: "):]


ANNOTATE_SUMMARY = re.compile(
    r"(\d+) call sites?, (\d+) distinct contexts? \((\d+) bod(?:y|ies) analysed\), (\d+) values? annotated in "
    r"the graph, (\d+) in functions, (\d+) errors?, (\d+) warnings?$")
TRANSFORM_SUMMARY = re.compile(
    r"(\d+) Ifs? folded, (\d+) CastLikes? folded, (\d+) values? folded to constants?, (\d+) nodes? removed "
    r"\((\d+) -> (\d+)\), functions (\d+) -> (\d+), (\d+) specializations? \((\d+) shared\)"
    r"(?:, (\d+) calls? inlined, (\d+) calls? kept)?"
    # The rewrites after folding, by kind (checked against the report below).
    r"(?:; rewrites: [^;]*)?$")


def summary_counts(line):
    """The numbers of a summary line, by the report's names for them."""
    m = ANNOTATE_SUMMARY.match(line)
    if m:
        keys = ["call_sites", "distinct_contexts", "body_analyses", "graph_values", "function_values", "errors", "warnings"]
        return {"inference": dict(zip(keys, map(int, m.groups())))}
    m = TRANSFORM_SUMMARY.match(line)
    assert m, "not a summary line: %r" % line
    g = [int(x) if x is not None else 0 for x in m.groups()]
    return {"transform": {"ifs_folded": g[0], "castlikes_folded": g[1], "constants_folded": g[2], "removed": g[3],
                          "nodes_before": g[4], "nodes_after": g[5], "functions_before": g[6],
                          "functions_after": g[7], "specializations": g[8], "shared": g[9],
                          "calls_inlined": g[10], "calls_kept": g[11]}}


def check_report_counts(report, line):
    """The report's counts are the summary line's."""
    expected = summary_counts(line)
    if "inference" in expected:
        for key, value in expected["inference"].items():
            assert report["inference"][key] == value, (key, line)
        return
    t = report["transform"]
    e = expected["transform"]
    counts = {key: n for counters in t["rewrites"].values() for key, n in counters.items()}
    for key in ("ifs_folded", "castlikes_folded", "constants_folded", "calls_inlined", "specializations", "shared"):
        assert counts[key] == e[key], (key, line)
    for key in ("nodes_before", "nodes_after", "functions_before", "functions_after"):
        assert t[key] == e[key], (key, line)
    # The rewrites after folding the summary line lists, each by its counter.
    rewrites = re.search(r"; rewrites: ([^;]*)$", line)
    listed = dict((m.group(2), int(m.group(1))) for m in re.finditer(r"(\d+) ([a-z ]+?)(?:, |$)", rewrites.group(1))) if rewrites else {}
    for text, n in listed.items():
        assert counts[text.replace(" ", "_")] == n, (text, line)
    if ", calls kept" in line or " call kept" in line:
        assert t["calls_kept"] == e["calls_kept"]
    assert e["removed"] == max(0, t["nodes_before"] - t["nodes_after"])
    assert report["counts"]["before"]["nodes"] == t["nodes_before"]
    assert report["counts"]["after"]["nodes"] == t["nodes_after"]
    assert report["counts"]["before"]["functions"] == t["functions_before"]
    assert report["counts"]["after"]["functions"] == t["functions_after"]


@pytest.fixture(scope="session")
def shapeprop():
    import shapeprop as package
    # The package under test is the build tree's, not an installed one.
    expected = os.environ.get("SHAPEPROP_PACKAGE_DIR")
    if expected:
        assert Path(package.__file__).resolve().parent == Path(expected).resolve(), package.__file__
    return package


@pytest.fixture(scope="session")
def onnx():
    import onnx as package
    return package


@pytest.fixture(scope="session")
def validate_report():
    import json

    import jsonschema
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    def validate(data):
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        assert not errors, "\n".join("%s: %s" % ("/".join(map(str, e.path)), e.message) for e in errors)

    return validate


def write_text_model(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path
