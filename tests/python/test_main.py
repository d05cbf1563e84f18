"""python -m shapeprop: the command line's job from the package, in the Python process: the
same stdout bytes, stderr and exit code as onnx-infer-shapes, for results, findings and errors,
but that its usage line, errors and summary lines call it `python3 -m shapeprop`."""

import os
import re
import subprocess
import sys

import pytest

from conftest import CLI, CORPUS, ROOT

CASES = [
    # annotate, text on stdout
    [ROOT / "examples" / "torchlib_calls.onnxtxt"],
    # inline, binary on stdout, with the listing of shapes instead
    [CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx", "--mode", "inline", "--emit", "binary", "-q"],
    [ROOT / "examples" / "torchlib_calls.onnxtxt", "--mode", "specialize", "--print-shapes"],
    # check mode: a false declaration, exit 1
    [ROOT / "tests" / "golden" / "check" / "function_output_unassigned.onnxtxt", "--mode", "check"],
    # bad usage and unreadable input: exit 2, one line
    ["--bogus"],
    [ROOT / "no-such-model.onnx"],
    ["--version"],
]


def run(command):
    done = subprocess.run(command, capture_output=True)
    return done.returncode, done.stdout, done.stderr.decode()


# What python -m shapeprop calls itself, run as sys.executable is.
PROGRAM = os.path.basename(sys.executable) + " -m shapeprop"


def as_python_m(stderr):
    """The tool's stderr with its name where python -m shapeprop writes its own."""
    return re.sub(r"^onnx-infer-shapes: ", PROGRAM + ": ", stderr, flags=re.M)


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(str(x).replace(str(ROOT) + "/", "") for x in a))
def test_python_m_is_the_command_line(shapeprop, args):
    args = [str(a) for a in args]
    expected = run([CLI, *args])
    got = run([sys.executable, "-m", "shapeprop", *args])
    if args == ["--version"]:
        # The package's shipped rules are its own copy, where the tool's are beside it.
        strip = lambda out: [l for l in out.decode().splitlines() if not l.startswith("shipped rules:")]
        assert got[0] == expected[0] == 0 and strip(got[1]) == strip(expected[1])
        return
    assert got == (expected[0], expected[1], as_python_m(expected[2]))
    assert expected[0] in (0, 1, 2)


def test_every_exit_code_is_covered():
    codes = {run([CLI, *map(str, args)])[0] for args in CASES}
    assert codes == {0, 1, 2}


def test_python_m_writes_the_output_file(shapeprop, tmp_path):
    model = CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"
    ours, theirs = tmp_path / "m.onnx", tmp_path / "cli.onnx"
    assert run([sys.executable, "-m", "shapeprop", str(model), "--mode", "inline", "-o", str(ours)])[0] == 0
    assert run([CLI, str(model), "--mode", "inline", "-o", str(theirs)])[0] == 0
    assert ours.read_bytes() == theirs.read_bytes()


def test_python_m_names_itself(shapeprop):
    status, out, err = run([sys.executable, "-m", "shapeprop", "--help"])
    assert status == 0 and out.decode().splitlines()[0] == f"usage: {PROGRAM} [options] INPUT"
    assert run([CLI, "--help"])[1].decode().splitlines()[0] == "usage: onnx-infer-shapes [options] INPUT"
    status, out, err = run([sys.executable, "-m", "shapeprop", "--bogus"])
    assert status == 2 and err.startswith(f"{PROGRAM}: error: ") and "onnx-infer-shapes" not in err
