"""``python -m shapeprop ARGS``: onnx-infer-shapes run from the package, in this process.

The same options, outputs and exit codes as the command-line tool (``--help`` lists them);
the shipped rules are the package's own copy. Its usage line, errors and summary lines call
it as it was run: ``python3 -m shapeprop`` (the interpreter's name).
"""

import os
import sys

from . import _SHIPPED_RULES_FOLDER, _native


def program_name() -> str:
    """What the messages call the program: the interpreter's name (as the user typed it, where
    known) followed by ``-m shapeprop``."""
    interpreter = os.path.basename(sys.orig_argv[0]) if getattr(sys, "orig_argv", None) else ""
    return f"{interpreter or 'python'} -m shapeprop"


def main() -> int:
    # The tool writes to file descriptors 1 and 2 itself: what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.command_line(sys.argv[1:], shipped_rules=_SHIPPED_RULES_FOLDER, program=program_name())


if __name__ == "__main__":
    sys.exit(main())
