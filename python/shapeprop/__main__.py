"""``python -m shapeprop ARGS``: onnx-infer-shapes run from the package, in this process.

The same options, outputs and exit codes as the command-line tool (``--help`` lists them);
the shipped rules are the package's own copy.
"""

import sys

from . import _SHIPPED_RULES_FOLDER, _native


def main() -> int:
    # The tool writes to file descriptors 1 and 2 itself: what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.command_line(sys.argv[1:], shipped_rules=_SHIPPED_RULES_FOLDER)


if __name__ == "__main__":
    sys.exit(main())
