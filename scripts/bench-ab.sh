#!/usr/bin/env bash
# Two builds of onnx-infer-shapes on one model, run after each other RUNS times
# (interleaved, so that the machine's moods fall on both alike), timed by bash's clock:
# medians and quartiles in ms, and whether the last outputs are byte for byte the same.
# Usage:
#
#   bash scripts/bench-ab.sh BEFORE AFTER RUNS MODEL [ARGS...]
#
# e.g. bash scripts/bench-ab.sh /tmp/before/build/release/tools/onnx-infer-shapes \
#        build/release/tools/onnx-infer-shapes 31 L128.onnx --mode inline
# (the models as scripts/bench.sh writes them: build/release/tools/gen-transformer).
set -euo pipefail
if [ $# -lt 4 ]; then sed -n '2,11p' "$0" >&2; exit 2; fi
before=$1 after=$2 runs=$3 model=$4
shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -a tb ta
now() { date +%s%N; }
for _ in $(seq 1 "$runs"); do
  s=$(now); "$before" "$@" -q "$model" -o "$out/before.onnx"; e=$(now); tb+=($(( (e - s) / 100000 )))
  s=$(now); "$after" "$@" -q "$model" -o "$out/after.onnx"; e=$(now); ta+=($(( (e - s) / 100000 )))
done
quartiles() {
  printf '%s\n' "$@" | sort -n | awk '{ t[NR] = $1 } END {
    printf "%.1f ms [%.1f-%.1f]", t[int((NR + 1) / 2)] / 10, t[int((NR + 3) / 4)] / 10, t[int((3 * NR + 1) / 4)] / 10 }'
}
same=differ
cmp -s "$out/before.onnx" "$out/after.onnx" && same=same
echo "$(basename "$model") $*: before $(quartiles "${tb[@]}"), after $(quartiles "${ta[@]}"); outputs $same"
