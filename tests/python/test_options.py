"""The package's keywords are the option table's (shapeprop/options.def): each keyword of
its functions that is an option of onnx-infer-shapes has the table's name for it, in a
mode that takes it, and _native.run takes every keyword the table gives Python."""

import inspect

import pytest

# Keywords that are no option of onnx-infer-shapes: what a call returns, where it saves,
# and --inline small:N's N.
NOT_OPTIONS = {"return_report", "output_path", "small_limit"}
# The modes each function runs in.
MODES = {
    "infer_shapes": {"annotate"},
    "infer_shapes_path": {"annotate"},
    "specialize": {"specialize", "inline"},
    "check_model": {"check"},
}


def table():
    from shapeprop import _native
    return {key: (flag, python, set(modes)) for flag, key, python, modes in _native.option_table() if key}


def keywords(function):
    params = inspect.signature(function).parameters
    return {name for name, p in params.items() if p.kind == p.KEYWORD_ONLY} - NOT_OPTIONS


def test_each_keyword_is_the_tables_in_a_mode_that_takes_it(shapeprop):
    rows = table()
    for name, modes in MODES.items():
        for key in keywords(getattr(shapeprop, name)):
            assert key in rows, "%s(%s=...) is not in the option table" % (name, key)
            flag, python, takes = rows[key]
            assert python, "%s(%s=...): the table does not give %s to Python" % (name, key, flag)
            assert modes <= takes, "%s(%s=...): %s is not taken in %s" % (name, key, flag, modes - takes)


def test_each_python_option_is_a_keyword_of_a_function(shapeprop):
    used = set().union(*(keywords(getattr(shapeprop, name)) for name in MODES))
    assert {key for key, (_, python, _) in table().items() if python} == used


def test_native_run_takes_the_tables_keywords(shapeprop):
    from shapeprop import _native
    signature = _native.run.__doc__.splitlines()[0]
    taken = {part.split(":")[0].strip().lstrip("*") for part in signature[signature.index("(") + 1:].split(", ")}
    assert {key for key, (_, python, _) in table().items() if python} <= taken


def test_the_table_names_the_modes(shapeprop):
    from shapeprop import _native
    rows = _native.option_table()
    assert len({flag for flag, _, _, _ in rows}) == len(rows)
    for flag, _, _, modes in rows:
        assert set(modes) <= {"annotate", "specialize", "inline", "check"} and modes, flag


def test_inline_takes_the_policies_the_library_names(shapeprop):
    from shapeprop import _native
    assert _native.inline_policies == ["none", "all", "small"]
    with pytest.raises(ValueError, match=r"^inline must be 'none', 'all' or 'small', not 'some'$"):
        shapeprop.specialize(b"", inline="some")
