"""The report of a run, and the error a failed run raises.

A Report is the JSON document ``onnx-infer-shapes --report FILE.json`` writes (schema:
``docs/report.schema.json`` in the shapeprop repository, described in docs/report.md), parsed,
with attribute access to its main parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Diagnostic:
    """One error, warning or note, and where it arose.

    ``file`` (with ``line`` and ``column`` for text input) names the file, and
    ``call_path`` the place in the model, outermost first: ``("graph 'main'",
    "node 'y' (pkg.x.aten_t)", "function pkg.x.aten_t", ...)``.
    """

    severity: str
    message: str
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    call_path: Tuple[str, ...] = field(default_factory=tuple)
    text: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Diagnostic":
        return cls(
            severity=d["severity"],
            message=d["message"],
            file=d.get("file"),
            line=d.get("line"),
            column=d.get("column"),
            call_path=tuple(d.get("call_path", ())),
            text=d.get("text", d["message"]),
        )

    def __str__(self) -> str:
        """One line, compiler style: ``file: error: message [at a > b > c]``."""
        return self.text


class Report:
    """What a run did: counts before and after, contexts and specializations per function,
    rewrites by kind, diagnostics, time per phase, the assumptions relied on.

    ``report.data`` is the whole JSON document as a dict; ``report["key"]`` reads it too.
    """

    def __init__(self, data: Dict[str, Any]):
        self.data = data

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls(json.loads(text))

    def to_json(self) -> str:
        """The report as ``--report`` writes it (two-space indented JSON)."""
        return json.dumps(self.data, indent=2, ensure_ascii=False) + "\n"

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @property
    def ok(self) -> bool:
        """The run finished without an error."""
        return bool(self.data["ok"])

    @property
    def mode(self) -> str:
        """``annotate``, ``specialize``, ``inline`` or ``check``."""
        return str(self.data["mode"])

    @property
    def summary(self) -> List[str]:
        """The summary line(s), as the command-line tool prints them."""
        return list(self.data["summary"])

    @property
    def value_shapes(self) -> Optional[List[Dict[str, str]]]:
        """Every value with its proven type (``print_shapes=True``, ``--print-shapes``), in
        graph order per body and function context: ``scope``, ``context``, ``op``, ``node``,
        ``value``, ``type``; None when not asked for."""
        return self.data.get("value_shapes")

    @property
    def before(self) -> Optional[Dict[str, Any]]:
        """Counts of the input: nodes, ifs, castlikes, functions, calls, ops (by op type)."""
        return self.data["counts"]["before"]

    @property
    def after(self) -> Optional[Dict[str, Any]]:
        """Counts of the result, as ``before``."""
        return self.data["counts"]["after"]

    @property
    def functions(self) -> List[Dict[str, Any]]:
        """Per reached function: its contexts (signature, call sites, specialization) and its
        specializations (name, the contexts it serves, whether it is in the result)."""
        return list(self.data["functions"])

    @property
    def rewrites(self) -> Dict[str, Dict[str, int]]:
        """What each pass did, by pass and counter as passes.def names them
        ({"fold": {"ifs_folded": 2, ...}, "cse": {...}, ...}); empty when the run only
        annotated."""
        transform = self.data["transform"]
        return {p: dict(c) for p, c in transform["rewrites"].items()} if transform else {}

    @property
    def lowering(self) -> Optional[Dict[str, Any]]:
        """What ``expand_ops`` and ``target_opset`` did, None when neither was given: the
        request, the opset converted from, and per op type expanded its calls, bodies and
        the result's nodes that came from them, by op type (docs/report.md)."""
        return self.data.get("lowering")

    @property
    def assumptions(self) -> Dict[str, Any]:
        """Whether symbolic dims were taken to be >= 1, whether the result relied on it (and
        records it in its metadata_props), and the decisions that did."""
        return dict(self.data["assumptions"])

    @property
    def dims(self) -> Optional[Dict[str, Any]]:
        """The deployment shapes the run was given (None when none): the dims ``bound``,
        their ``ranges``, ``renamed``, the dims named (``named_inputs``, ``named_outputs``),
        and when a dim was bound, how many ``values`` the result has and which stay
        ``dynamic`` (value, where, type, cause, why)."""
        dims = self.data["dims"]
        return dict(dims) if dims is not None else None

    @property
    def diagnostics(self) -> List[Diagnostic]:
        return [Diagnostic.from_dict(d) for d in self.data["diagnostics"]]

    @property
    def phases(self) -> Dict[str, float]:
        """Seconds per phase (load, validation, analysis, specialization, ...), in order."""
        return {p["phase"]: p["seconds"] for p in self.data["phases"]}

    @property
    def pass_times(self) -> Dict[str, float]:
        """Seconds per pass of a transform (specialize, fold, dce, cse, ...), for the passes
        that ran, in the order of ``--list-passes``: every run added up. Empty outside the
        specialize and inline modes."""
        return {p["pass"]: p["seconds"] for p in self.data["pass_times"]}

    def __repr__(self) -> str:
        return "<shapeprop.Report %s ok=%s: %s>" % (self.mode, self.ok, "; ".join(self.summary) or "no summary")


class Error(ValueError):
    """A model shapeprop cannot work on, or a check that found errors.

    ``diagnostics`` holds the errors (each with its file and place in the model),
    ``report`` the report of the failed run; ``str(error)`` is one line per error.
    """

    def __init__(self, report: Report):
        self.report = report
        self.diagnostics = [d for d in report.diagnostics if d.severity == "error"]
        super().__init__("\n".join(str(d) for d in self.diagnostics) or "shapeprop: the run failed")
