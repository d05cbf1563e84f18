"""Lowering in Python: expand_ops and target_opset give what the CLI's --expand-ops and
--target-opset give, byte for byte, with the ops expanded per kind and the nodes they
became in the report; an op without a function body, or a model newer than the linked
ONNX, raises Error with the CLI's message."""

import pytest

from conftest import ROOT, run_cli

LOWER = ROOT / "tests" / "golden" / "lower"
TARGET = LOWER / "target_opset.onnxtxt"  # opset 23: Attention, RMSNormalization
OPSET18 = LOWER / "errors.onnxtxt"       # opset 18: LayerNormalization, MatMul, Col2Im


def cli_bytes(*args):
    return run_cli(*args, "--emit", "binary", "-q").stdout


def binary(text_model):
    """The golden test's text model as a binary model (bytes in give bytes out)."""
    return cli_bytes(text_model, "--no-infer")


def reads_opset_23(shapeprop):
    return run_cli(TARGET, "--no-infer", check=False).returncode == 0


def test_expand_ops_gives_the_clis_bytes(shapeprop, onnx):
    data, report = shapeprop.specialize(binary(OPSET18), expand_ops=["LayerNormalization"], return_report=True)
    assert data == cli_bytes(OPSET18, "--mode", "specialize", "--expand-ops", "LayerNormalization")
    ops = [n.op_type for n in onnx.load_from_string(data).graph.node]
    assert "LayerNormalization" not in ops and "ReduceMean" in ops
    lowering = report.lowering
    assert lowering["expand_ops"] == ["LayerNormalization"] and lowering["target_opset"] is None
    [ln] = lowering["expanded"]
    assert (ln["op"], ln["calls"], ln["bodies"]) == ("LayerNormalization", 1, 1)
    assert ln["nodes"]["ReduceMean"] == 2 and sum(ln["nodes"].values()) == ops.count("ReduceMean") + 10
    assert report.summary[-1].startswith("expanded: LayerNormalization (1 call, 1 body) into ")
    assert shapeprop.specialize(OPSET18, return_report=True)[1].lowering is None


def test_an_op_without_a_body_raises(shapeprop):
    with pytest.raises(shapeprop.Error, match="defines no function body for MatMul that holds"):
        shapeprop.specialize(OPSET18, expand_ops=["MatMul"])
    with pytest.raises(TypeError):
        shapeprop.specialize(OPSET18, expand_ops="MatMul")
    with pytest.raises(ValueError, match="target_opset must be"):
        shapeprop.specialize(OPSET18, target_opset=0)


def test_target_opset(shapeprop, onnx):
    if not reads_opset_23(shapeprop):
        # ONNX 1.17 reads opsets up to 22: the model is one clear error, as in the CLI.
        with pytest.raises(shapeprop.Error, match="the model needs ONNX 1.18 or newer"):
            shapeprop.specialize(TARGET, inline="all", target_opset=20)
        return
    data, report = shapeprop.specialize(binary(TARGET), inline="all", target_opset=20, return_report=True)
    assert data == cli_bytes(TARGET, "--mode", "inline", "--target-opset", "20")
    model = onnx.load_from_string(data)
    assert [o.version for o in model.opset_import if o.domain == ""] == [20]
    assert not {"Attention", "RMSNormalization"} & {n.op_type for n in model.graph.node}
    assert report.lowering["converted_from_opset"] == 23
    assert [e["op"] for e in report.lowering["expanded"]] == ["RMSNormalization", "Attention"]
