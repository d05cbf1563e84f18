# Type stubs of the compiled module (python/src/module.cc).
from typing import List, Optional, Sequence, Tuple

version: str
inline_policies: List[str]
onnx_version: str
inline_policies: List[str]

def run(
    source: bytes,
    *,
    from_path: bool,
    origin: str,
    job: str,
    inline: str = ...,
    small_limit: int = ...,
    strict_mode: bool = ...,
    annotate_functions: bool = ...,
    assume_positive_dims: bool = ...,
    schemas: List[str] = ...,
    shipped_rules: str = ...,
    output_path: str = ...,
    describe_contexts: bool = ...,
    print_shapes: bool = ...,
    dims: Sequence[Tuple[str, int]] = ...,
    input_shapes: Sequence[Tuple[str, Sequence[Optional[int]]]] = ...,
    dim_ranges: Sequence[Tuple[str, int, int]] = ...,
    rename_dims: Sequence[Tuple[str, str]] = ...,
    name_dims: bool = ...,
    expand_ops: Sequence[str] = ...,
    target_opset: Optional[int] = ...,
    declared: str = ...,
    overridable_initializers: str = ...,
) -> Tuple[Optional[bytes], str]: ...
def option_table() -> List[Tuple[str, str, bool, List[str]]]: ...
def command_line(args: List[str], *, shipped_rules: str = ..., program: str = ...) -> int: ...
