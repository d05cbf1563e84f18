# Type stubs of the compiled module (python/src/module.cc).
from typing import List, Optional, Tuple

version: str
onnx_version: str

def run(
    source: bytes,
    *,
    from_path: bool,
    origin: str,
    job: str,
    inline_policy: str = ...,
    small_limit: int = ...,
    strict: bool = ...,
    annotate_functions: bool = ...,
    assume_positive_dims: bool = ...,
    schemas: List[str] = ...,
    shipped_rules: str = ...,
    output_path: str = ...,
    describe_contexts: bool = ...,
) -> Tuple[Optional[bytes], str]: ...
