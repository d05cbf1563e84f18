# lit configuration for shapeprop's golden tests.
#
# Substitutions:
#   %infer     onnx-infer-shapes, checking every output it writes: the output passes
#              ONNX's full checker, prints as text that parses back unchanged, and a
#              second run on it changes nothing
#   %infer-raw onnx-infer-shapes without those checks (for bad-input cases)
#   %FileCheck FileCheck from llvm-14-tools
#   %corpus    the test corpus (tests/data/corpus)
#   %equiv A B the two models compute the same on ONNX Runtime (tools/equiv)
#   %exit N -- CMD   runs CMD and fails unless it exits with status N
#   %bad-input OUT -- CMD   CMD must exit 2 with one line on stderr and leave no OUT
#   %gen-deep KIND N   writes a model that nests deep or grows fast (gen_deep.py)
#   %within S MB [--baseline 'BASE'] -- CMD   CMD must end within S seconds and MB
#              megabytes of peak memory (/usr/bin/time), beyond BASE's peak when given;
#              passes CMD's exit status on
#
# Features: "root" when the tests run as root (mknod needs it; tests that make device
# files say REQUIRES: root and are reported UNSUPPORTED otherwise); "onnx-MAJOR.MINOR",
# the ONNX shapeprop is built on (tests of what an older ONNX must refuse say which).
import os
import lit.formats

config.name = "shapeprop-golden"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".onnxtxt", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.shapeprop_tools_dir, "..", "tests", "golden")

infer = os.path.join(config.shapeprop_tools_dir, "onnx-infer-shapes")
config.substitutions.append(("%infer-raw", infer))
config.substitutions.append(("%infer", infer + " --verify-roundtrip --verify-full-check --verify-idempotent"))
config.substitutions.append(("%FileCheck", config.filecheck + " --dump-input=fail"))
config.substitutions.append(("%corpus", config.shapeprop_corpus_dir))
# %equiv A B: A and B compute the same on ONNX Runtime (three seeds, two bindings of the
# symbolic dims the golden models use).
equiv = os.path.join(config.shapeprop_source_dir, "tools", "equiv", "equiv.js")
config.substitutions.append(("%equiv", "node " + equiv + " --quiet --seeds 1,2,3 --bind N=2,3 --bind batch=1,3 --bind seq=2,5"))
config.substitutions.append(("%bad-input", os.path.join(config.test_source_root, "bad_input.sh")))
config.substitutions.append(("%exit", os.path.join(config.test_source_root, "expect_exit.sh")))
config.substitutions.append(("%within", os.path.join(config.test_source_root, "within.sh")))
config.substitutions.append(("%gen-deep", "python3 " + os.path.join(config.test_source_root, "gen_deep.py")))
if os.geteuid() == 0:
    config.available_features.add("root")
config.available_features.add("onnx-" + ".".join(config.shapeprop_onnx_version.split(".")[:2]))
config.environment["LC_ALL"] = "C"
