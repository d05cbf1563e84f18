"""Every corpus model through the package gives the CLI's bytes."""

import pytest

from conftest import CORPUS, CORPUS_MODELS, REJECTED, run_cli

ACCEPTED = [m for m in CORPUS_MODELS if m not in REJECTED]


def test_the_corpus_is_there():
    assert len(ACCEPTED) >= 20 and REJECTED <= set(CORPUS_MODELS)


@pytest.mark.parametrize("model", ACCEPTED)
def test_infer_shapes_gives_the_cli_bytes(shapeprop, tmp_path, model):
    out = tmp_path / "out.onnx"
    run_cli(CORPUS / model, "-q", "-o", out)
    assert shapeprop.infer_shapes((CORPUS / model).read_bytes()) == out.read_bytes()


@pytest.mark.parametrize("model", ACCEPTED)
def test_specialize_inline_all_gives_the_cli_bytes(shapeprop, tmp_path, model):
    out = tmp_path / "out.onnx"
    run_cli(CORPUS / model, "--mode", "inline", "-q", "-o", out)
    assert shapeprop.specialize((CORPUS / model).read_bytes(), inline="all") == out.read_bytes()


@pytest.mark.parametrize("model", sorted(REJECTED))
def test_a_rejected_model_raises_the_cli_error(shapeprop, tmp_path, model):
    cli = run_cli(CORPUS / model, "-o", tmp_path / "out.onnx", check=False)
    assert cli.returncode == 2
    with pytest.raises(shapeprop.Error) as raised:
        shapeprop.infer_shapes(CORPUS / model)
    assert str(raised.value) == cli.stderr.strip()
    assert [d.severity for d in raised.value.diagnostics] == ["error"]
