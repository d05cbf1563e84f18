"""Deployment shapes in Python: dims, input_shapes, dim_ranges, rename_dims and name_dims
give what the CLI's --set-dim, --input-shape, --dim-range, --rename-dim and --name-dims
give, byte for byte, with the bindings and the values left dynamic in the report."""

import json

import pytest

from conftest import ROOT, run_cli

SHAPES = ROOT / "tests" / "golden" / "shapes"
SET_DIM = SHAPES / "set_dim.onnxtxt"
INPUT_SHAPE = SHAPES / "input_shape.onnxtxt"
DATA_DEPENDENT = SHAPES / "data_dependent.onnxtxt"
NAMES = SHAPES / "names.onnxtxt"


def cli_bytes(*args):
    return run_cli(*args, "--emit", "binary", "-q").stdout


def binary(text_model):
    """The golden test's text model as a binary model (bytes in give bytes out)."""
    return cli_bytes(text_model, "--no-infer")


def test_dims_give_the_clis_bytes_and_a_static_graph(shapeprop, onnx):
    data, report = shapeprop.specialize(binary(SET_DIM), inline="all", dims={"batch": 2, "seq": 5},
                                        return_report=True)
    assert data == cli_bytes(SET_DIM, "--mode", "inline", "--set-dim", "batch=2,seq=5")
    model = onnx.load_from_string(data)
    assert not [n for n in model.graph.node if n.op_type in ("Shape", "Size", "Range")]
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [2, 5, 8]
    assert report.dims["bound"] == {"batch": 2, "seq": 5}
    assert report.dims["dynamic"] == [] and report.dims["values"] == 6
    assert report.summary[-1] == "every value static (6 values)"


def test_what_stays_dynamic_is_in_the_report(shapeprop):
    _, report = shapeprop.specialize(DATA_DEPENDENT, inline="all", dims={"batch": 3}, return_report=True)
    causes = {(d["value"], d["cause"], d["why"]) for d in report.dims["dynamic"]}
    # NonZero writes the output where_t itself (its Identity collapsed).
    assert causes == {("where_t", "node 'where_t' (NonZero)", "its size depends on the data"),
                      ("uniq", "node 'uniq' (Unique)", "its size depends on the data")}
    _, open_report = shapeprop.specialize(SET_DIM, dims={"batch": 2}, return_report=True)
    assert {d["cause"] for d in open_report.dims["dynamic"]} == {"input dim 'seq'"}


def test_input_shapes_none_keeps_a_dim(shapeprop):
    data = shapeprop.specialize(binary(INPUT_SHAPE), inline="all", input_shapes={"x": [2, None, 7], "y": [5, 4]})
    assert data == cli_bytes(INPUT_SHAPE, "--mode", "inline", "--input-shape", "x=2,?,7", "--input-shape", "y=5,4")


def test_ranges_are_recorded_as_assumptions(shapeprop, onnx):
    data, report = shapeprop.infer_shapes(binary(SET_DIM), dim_ranges={"seq": (1, 128)}, return_report=True)
    assert data == cli_bytes(SET_DIM, "--dim-range", "seq=1..128")
    entries = {e.key: e.value for e in onnx.load_from_string(data).metadata_props}
    assert "1 <= seq <= 128" in entries["shapeprop.assumptions"].split("; ")
    assert report.assumptions["ranges"] == ["1 <= seq <= 128"]
    assert report.dims["ranges"] == {"seq": {"min": 1, "max": 128}}
    assert report.dims["values"] is None and report.dims["dynamic"] is None


def test_renames_and_names(shapeprop):
    data, report = shapeprop.infer_shapes(binary(NAMES), rename_dims={"samples": "T"}, name_dims=True,
                                          return_report=True)
    assert data == cli_bytes(NAMES, "--rename-dim", "samples=T", "--name-dims")
    assert report.dims["renamed"] == {"samples": "T"}
    assert [n["name"] for n in report.dims["named_inputs"]] == ["w_0"]
    assert [n["name"] for n in report.dims["named_outputs"]] == ["strided_1", "doubled_1", "trimmed_1"]


def test_check_model_takes_dims(shapeprop):
    report = shapeprop.check_model(SET_DIM, dims={"batch": 2, "seq": 5}, return_report=True)
    assert report.ok and report.dims["bound"] == {"batch": 2, "seq": 5}


@pytest.mark.parametrize("kwargs, message", [
    ({"dims": {"sq": 5}}, "no input or output of the graph has a dim named 'sq'"),
    ({"input_shapes": {"x": [2, 3]}}, "input 'x': it has rank 3, and the shape given has 2 dims"),
    ({"input_shapes": {"x": [2, 4, 7]}}, "input 'x': dim 1 is 3, and the shape given says 4"),
    ({"dims": {"n": -1}}, "dim 'n' cannot be -1"),
    ({"dim_ranges": {"n": (5, 2)}}, "the range of dim 'n' is empty or negative (5..2)"),
    ({"rename_dims": {"n": "x y"}}, "dim 'n' cannot be renamed 'x y'"),
])
def test_bad_shapes_raise_with_the_clis_message(shapeprop, kwargs, message):
    with pytest.raises(shapeprop.Error) as e:
        shapeprop.specialize(INPUT_SHAPE, **kwargs)
    assert message in str(e.value)


@pytest.mark.parametrize("kwargs", [{"dims": {"n": True}}, {"dims": {"n": "2"}}, {"input_shapes": {"x": [2, "3", 7]}},
                                    {"dim_ranges": {"n": (1, 2.5)}}])
def test_values_must_be_ints(shapeprop, kwargs):
    with pytest.raises(TypeError):
        shapeprop.specialize(INPUT_SHAPE, **kwargs)


def test_the_report_validates(shapeprop):
    jsonschema = pytest.importorskip("jsonschema")
    from conftest import SCHEMA
    schema = json.loads(SCHEMA.read_text())
    for kwargs in ({"dims": {"batch": 2, "seq": 5}}, {"dim_ranges": {"seq": (1, 8)}, "name_dims": True}):
        _, report = shapeprop.specialize(SET_DIM, inline="all", return_report=True, **kwargs)
        jsonschema.validate(report.data, schema)
