#!/usr/bin/env bash
# scripts/bench.sh [L ...]: whole-process speed and memory on L-layer transformers built
# by gen-transformer (default L = 16 128 512 1024), each job run SHAPEPROP_BENCH_RUNS times
# (default 5), interleaved: wall time by bash's microsecond clock, peak RSS by /usr/bin/time -v:
#   onnx      onnx-infer-baseline: ONNX 1.17's load + InferShapes (data propagation) + save
#   onnx-jemalloc  the same under jemalloc, when onnx-infer-shapes links it (CMake option
#             SHAPEPROP_JEMALLOC): "/ same malloc" compares each job with it
#   floor     onnx-infer-shapes --no-infer: shapeprop's load + validation + save
#   annotate  onnx-infer-shapes (inferred types written per call site and into functions)
#   inline    onnx-infer-shapes --mode inline
# Prints a Markdown table: median wall time and peak RSS, ratios to ONNX's and to the
# floor, and growth from the previous L; then time(L=1024)/time(L=128) for annotate and
# inline (linear growth is 8.0). Needs a release build (scripts/test.sh or
# `cmake --preset release && cmake --build --preset release`).
set -euo pipefail
export LC_NUMERIC=C  # EPOCHREALTIME and awk: a decimal point
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${SHAPEPROP_BUILD:-build/release}
runs=${SHAPEPROP_BENCH_RUNS:-5}
layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=(16 128 512 1024)

tool=$build/tools/onnx-infer-shapes
baseline=$build/tools/onnx-infer-baseline
gen=$build/tools/gen-transformer
for need in "$tool" "$baseline" "$gen" /usr/bin/time; do
  [ -x "$need" ] || { echo "bench: $need is missing (build the release preset first)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The allocator the CLI links, if any: ONNX's run is timed under it as well. A CLI with
# jemalloc linked in (SHAPEPROP_STATIC_RUNTIME) exports its own malloc; ONNX's run then
# takes the system's shared jemalloc, the same allocator.
alloc=$(ldd "$tool" | awk '/libjemalloc/ { print $3 }')
if [ -z "$alloc" ] && nm -D --defined-only "$tool" | grep -qw malloc; then
  alloc=$(ldconfig -p | awk '/libjemalloc\.so\.2 / { print $NF; exit }')
fi
jobs=(onnx floor annotate inline)
[ -z "$alloc" ] || jobs=(onnx onnx-jemalloc floor annotate inline)

run_job() {  # run_job JOB MODEL OUT STATS
  local job=$1 model=$2 out=$3 stats=$4
  local start=$EPOCHREALTIME
  run_timed "$job" "$model" "$out" "$stats"
  local end=$EPOCHREALTIME
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.6f\n", b - a }' > "$stats.wall"
}

# time -v's wall clock has 10 ms steps, a tenth of a small model's run: the wall time is
# bash's microsecond clock around the whole job (time -v's start-up included, the same for
# every job); time -v gives the peak RSS.
run_timed() {
  local job=$1 model=$2 out=$3 stats=$4
  case $job in
    onnx) /usr/bin/time -v -o "$stats" "$baseline" "$model" "$out" ;;
    onnx-jemalloc) /usr/bin/time -v -o "$stats" env LD_PRELOAD="$alloc" "$baseline" "$model" "$out" ;;
    floor) /usr/bin/time -v -o "$stats" "$tool" "$model" -o "$out" --no-infer -q ;;
    annotate) /usr/bin/time -v -o "$stats" "$tool" "$model" -o "$out" -q ;;
    inline) /usr/bin/time -v -o "$stats" "$tool" "$model" -o "$out" -q --mode inline ;;
  esac
}

wall_of() { cat "$1.wall"; }
rss_of() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs per job: $runs (medians); the allocator onnx-infer-shapes links (ONNX's job also runs under it): ${alloc:-none of its own}"
echo
echo "| L | graph nodes | job | time | peak RSS | / ONNX time | / same malloc | / floor time | / ONNX RSS | growth from previous L |"
echo "|---|---|---|---|---|---|---|---|---|---|"
declare -A time_of rss_of_job
prev=""
for L in "${layers[@]}"; do
  model=$work/L$L.onnx
  nodes=$("$gen" --layers "$L" -o "$model" | sed -E 's/.* ([0-9]+) graph nodes.*/\1/')
  for r in $(seq "$runs"); do
    for job in "${jobs[@]}"; do
      run_job "$job" "$model" "$work/out.onnx" "$work/$job.$r.stats"
    done
  done
  for job in "${jobs[@]}"; do
    time_of[$L.$job]=$(for r in $(seq "$runs"); do wall_of "$work/$job.$r.stats"; done | median)
    rss_of_job[$L.$job]=$(for r in $(seq "$runs"); do rss_of "$work/$job.$r.stats"; done | median)
  done
  for job in "${jobs[@]}"; do
    t=${time_of[$L.$job]}
    rss=${rss_of_job[$L.$job]}
    growth="-"
    [ -n "$prev" ] && growth=$(awk -v a="$t" -v b="${time_of[$prev.$job]}" 'BEGIN { printf "%.2fx (L x%.0f)", a / b, 0 }' | sed "s/L x0/L x$((L / prev))/")
    awk -v L="$L" -v n="$nodes" -v job="$job" -v t="$t" -v rss="$rss" -v o="${time_of[$L.onnx]}" -v f="${time_of[$L.floor]}" \
        -v oj="${time_of[$L.onnx-jemalloc]:-}" -v orss="${rss_of_job[$L.onnx]}" -v g="$growth" \
        'BEGIN { same = oj == "" ? "-" : sprintf("%.2fx", t / oj)
                 printf "| %s | %s | %s | %.3f s | %.0f MiB | %.2fx | %s | %.2fx | %.2fx | %s |\n", L, n, job, t, rss / 1024, t / o, same, t / f, rss / orss, g }'
  done
  prev=$L
done
for a in 128; do
  for b in 1024; do
    if [ -n "${time_of[$a.annotate]:-}" ] && [ -n "${time_of[$b.annotate]:-}" ]; then
      echo
      for job in annotate inline; do
        awk -v j="$job" -v x="${time_of[$b.$job]}" -v y="${time_of[$a.$job]}" \
          'BEGIN { printf "%s: time(L=1024) / time(L=128) = %.2f (linear: 8.0)\n", j, x / y }'
      done
    fi
  done
done
