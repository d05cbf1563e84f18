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
#   %within S MB [--cpu] [--baseline 'BASE'] -- CMD   CMD must end within S seconds (of CPU time with --cpu) and MB
#              megabytes of peak memory (within.py, through wait4), beyond BASE's peak when given;
#              passes CMD's exit status on
#
#   %ort-types M  every type M declares is the one ONNX Runtime computes, at the same two
#              bindings, and every value of its main graph is fully typed (ort_types.js)
#   %ort-types-at M --bind NAME=v1,v2,...  the same at the bindings the test gives (the
#              edges of a clamp or a rounding: seq=127,128,129 for a 128-long table)
#   %onnx-ir, %onnx-opset  the highest IR version and ai.onnx opset the linked ONNX reads
#
# Features: "root" when the tests run as root (mknod
# needs it; tests that make device files say REQUIRES: root and are reported UNSUPPORTED
# otherwise); "onnx-irN" and
# "onnx-opsetN" for every IR version and ai.onnx opset the linked ONNX reads (models of
# newer versions say REQUIRES: onnx-ir13, onnx-opset26), from onnx-infer-shapes --version;
# "onnx-MAJOR.MINOR", the ONNX shapeprop is built on (tests of what an older ONNX must
# refuse say which).
import os
import re
import subprocess
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
# The same on onnxruntime-node 1.31.1 (SHAPEPROP_ORT, tools/equiv/equiv.js), which loads opset 27
# only with ALLOW_RELEASED_ONNX_OPSET_ONLY=0 and no opset 28 at all (its official support ends at 26).
config.substitutions.append(("%equiv-ort131", "env SHAPEPROP_ORT=1.31 ALLOW_RELEASED_ONNX_OPSET_ONLY=0 node " + os.path.join(config.shapeprop_source_dir, "tools", "equiv", "equiv.js") + " --quiet --seeds 1,2,3 --bind N=2,3 --bind batch=1,3 --bind seq=2,5"))
config.substitutions.append(("%ort-types-ort131", "env SHAPEPROP_ORT=1.31 ALLOW_RELEASED_ONNX_OPSET_ONLY=0 node " + os.path.join(config.shapeprop_source_dir, "tools", "equiv", "ort_types.js") + " --quiet --require-full --bind N=2,3 --bind batch=1,3 --bind seq=2,5"))
# %equiv A B: A and B compute the same on ONNX Runtime (three seeds, two bindings of the
# symbolic dims the golden models use).
equiv = os.path.join(config.shapeprop_source_dir, "tools", "equiv", "equiv.js")
config.substitutions.append(("%equiv", "node " + equiv + " --quiet --seeds 1,2,3 --bind N=2,3 --bind batch=1,3 --bind seq=2,5"))
ort_types = os.path.join(config.shapeprop_source_dir, "tools", "equiv", "ort_types.js")
config.substitutions.append(("%ort-types-at", "node " + ort_types + " --quiet --require-full"))
config.substitutions.append(("%ort-types", "node " + ort_types + " --quiet --require-full --bind N=2,3 --bind batch=1,3 --bind seq=2,5"))
config.substitutions.append(("%bad-input", os.path.join(config.test_source_root, "bad_input.sh")))
config.substitutions.append(("%exit", os.path.join(config.test_source_root, "expect_exit.sh")))
config.substitutions.append(("%within", "python3 " + os.path.join(config.test_source_root, "within.py")))
config.substitutions.append(("%gen-deep", "python3 " + os.path.join(config.test_source_root, "gen_deep.py")))
if os.geteuid() == 0:
    config.available_features.add("root")
config.available_features.add("onnx-" + ".".join(config.shapeprop_onnx_version.split(".")[:2]))
config.environment["LC_ALL"] = "C"

version = subprocess.run([infer, "--version"], capture_output=True, text=True).stdout
found = re.search(r"\(IR (\d+), ai\.onnx opsets up to (\d+)\)", version)
if not found:
    lit_config.fatal("onnx-infer-shapes --version names no IR version and opset: " + version)
onnx_ir, onnx_opset = int(found.group(1)), int(found.group(2))
# %read-ir, %read-opset: what shapeprop reads, the linked ONNX's versions carried on by the
# rules where they extend it ("read through rules: IR up to 14, ai.onnx opsets 27 to 28").
through = re.search(r"read through rules: IR up to (\d+), ai\.onnx opsets \d+ to (\d+)", version)
config.substitutions.append(("%read-ir", through.group(1) if through else str(onnx_ir)))
config.substitutions.append(("%read-opset", through.group(2) if through else str(onnx_opset)))
config.substitutions.append(("%onnx-ir", str(onnx_ir)))
config.substitutions.append(("%onnx-opset", str(onnx_opset)))
for n in range(1, onnx_ir + 1):
    config.available_features.add("onnx-ir%d" % n)
for n in range(1, onnx_opset + 1):
    config.available_features.add("onnx-opset%d" % n)
