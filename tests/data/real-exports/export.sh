#!/usr/bin/env bash
# export.sh PYDEPS [--baselines-only | --opset23 | MODEL...]: re-exports the models of this folder in a Debian sid root
# (scripts/sid-root.sh export ...: python3-torch, python3-transformers, python3-torchvision,
# python3-onnx, python3-onnxruntime) and remakes their coverage baselines.
#
# PYDEPS is a folder holding the pure-Python packages `onnxscript` and `onnx_ir` (torch's
# dynamo exporter needs both; Debian has no usable version), taken from the public
# microsoft/onnxscript and onnx/ir-py repositories (`git archive` of each, their
# onnxscript/ and src/onnx_ir/ folders), with a dist-info METADATA for each so that
# importlib.metadata finds their versions. It is put on PYTHONPATH inside the root; none
# of it belongs in this repository. For baselines.py's other peers PYDEPS may also hold
# `onnx_shape_inference` (justinchuby/onnx-shape-inference's src/ folder) and `onnxslim`
# (inisis/OnnxSlim's), each with a dist-info METADATA; OnnxSlim needs python3-colorama,
# which a root made before it was on the list below gets by `apt-get install` inside it.
# ONNXSCRIPT_COMMIT and ONNX_IR_COMMIT, when set, are
# recorded in origin.json as the commits PYDEPS came from.
#
# --opset23 exports the opset-23 models of opset23/ instead (opset23/export_opset23.py), alone.
#
# Runs export_models.py (the models; MODEL... picks some by name; --baselines-only none)
# and baselines.py (what
# ONNX's InferShapes and ORT's symbolic_shape_infer determine, judged against ORT's
# runtime shapes) inside the root: a private mount namespace with /proc, /sys, /dev and
# this folder bound in, then chroot. Needs root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 PYDEPS [MODEL...]" >&2; exit 2; }
pydeps=$(cd "$1" && pwd)
shift
for p in onnxscript onnx_ir; do
  [ -d "$pydeps/$p" ] || { echo "export.sh: $pydeps has no $p package" >&2; exit 2; }
done

root=$("$repo/scripts/sid-root.sh" export python3-torch python3-transformers python3-torchvision \
       python3-onnx python3-onnxruntime python3-colorama)

# A private mount namespace: nothing mounted here outlives the command.
unshare --mount --pid --fork --mount-proc="$root/proc" bash -euo pipefail -c '
root=$1 here=$2 pydeps=$3 onnxscript_commit=$4 onnx_ir_commit=$5
shift 5
mount -t sysfs sysfs "$root/sys" 2>/dev/null || mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
mkdir -p "$root/tmp/out" "$root/tmp/pydeps"
mount --bind "$here" "$root/tmp/out"
mount --bind -o ro "$pydeps" "$root/tmp/pydeps"
if [ "${1:-}" = --opset23 ]; then
  exec chroot "$root" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 PYTHONPATH=/tmp/pydeps \
    PYTHONHASHSEED=0 OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    ONNXSCRIPT_COMMIT="$onnxscript_commit" ONNX_IR_COMMIT="$onnx_ir_commit" \
    python3 /tmp/out/opset23/export_opset23.py /tmp/out/opset23
fi
[ "${1:-}" = --baselines-only ] ||
chroot "$root" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 PYTHONPATH=/tmp/pydeps \
  PYTHONHASHSEED=0 OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  ONNXSCRIPT_COMMIT="$onnxscript_commit" ONNX_IR_COMMIT="$onnx_ir_commit" \
  python3 /tmp/out/export_models.py /tmp/out "$@"
chroot "$root" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 PYTHONPATH=/tmp/pydeps \
  PYTHONHASHSEED=0 OMP_NUM_THREADS=1 \
  python3 /tmp/out/baselines.py /tmp/out
' _ "$root" "$here" "$pydeps" "${ONNXSCRIPT_COMMIT:-}" "${ONNX_IR_COMMIT:-}" "$@"
