#!/usr/bin/env bash
# Runs every fuzz target (tools/fuzz) for SECONDS each (default 60), built with clang 14
# under libFuzzer, ASan and UBSan (the asan preset, whose build also runs the sanitized test
# suites). Usage:
#
#   bash scripts/fuzz.sh [SECONDS]
#
# Each target's corpus grows in build/asan/fuzz-run/corpus/NAME across runs (seeded with the
# target's regressions, tools/fuzz/regressions/NAME, and for the model targets with the
# real exporters' models: tests/data/corpus and, where it is, tests/data/real-exports, as
# protobuf for model_binary and printed as text for model_text, beside the golden tests'
# text); inputs that crash, leak, hang (-timeout) or allocate too much (-malloc_limit_mb)
# land in build/asan/fuzz-run/findings/NAME, and the run exits 1. Environment:
#   SHAPEPROP_FUZZ_TARGETS  the targets to run (default: all five)
#   SHAPEPROP_FUZZ_PARALLEL how many targets run side by side (default 1); each fuzzer is
#                           one process on one core, so the number of free cores fits
#   SHAPEPROP_FUZZ_FORK     libFuzzer workers per target (-fork=N; default 1: no fork)
#   SHAPEPROP_FUZZ_TIMEOUT  seconds (wall) one input may take (-timeout; default 10: raise
#                           it for a run niced under other work, which starves it)
#   SHAPEPROP_FUZZ_CLOCK    wall (default) or cpu: SECONDS are the fuzzer's own CPU time
#                           (user + sys), so that a run niced on a shared machine gets its
#                           share whatever the load; it is then interrupted (libFuzzer
#                           prints its final stats and exits 72, taken as a normal end)
#   SHAPEPROP_JOBS          build jobs (default: nproc)
#   SHAPEPROP_FUZZ_RUNTIME  the runtime oracle's inputs per target (default 2000; 0: none):
#                           after a pipeline target (all but dim) has run, its corpus is
#                           replayed with SHAPEPROP_FUZZ_RUNTIME_DIR set, which saves every
#                           model written (fuzz_support.h), and tools/fuzz/runtime_facts.js
#                           runs up to that many inputs' written models on ONNX Runtime
#                           (the Node package of tools/equiv; skipped, saying so, where it
#                           is not installed): each declared type must be what it computes
#   SHAPEPROP_FUZZ_RUNTIME_TARGETS  the targets the runtime oracle follows (default: the
#                           four pipeline targets, model_binary model_text model_structured
#                           differential)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
targets=${SHAPEPROP_FUZZ_TARGETS:-model_binary model_text model_structured dim differential}
jobs=${SHAPEPROP_JOBS:-$(nproc)}
parallel=${SHAPEPROP_FUZZ_PARALLEL:-1}
fork=${SHAPEPROP_FUZZ_FORK:-1}
timeout=${SHAPEPROP_FUZZ_TIMEOUT:-10}
clock=${SHAPEPROP_FUZZ_CLOCK:-wall}
runtime_max=${SHAPEPROP_FUZZ_RUNTIME:-2000}
runtime_targets=" ${SHAPEPROP_FUZZ_RUNTIME_TARGETS:-model_binary model_text model_structured differential} "
case $clock in wall | cpu) ;; *) echo "fuzz: SHAPEPROP_FUZZ_CLOCK is wall or cpu, not '$clock'" >&2; exit 2 ;; esac
if [ "$clock" = cpu ] && [ "$fork" -gt 1 ]; then echo "fuzz: SHAPEPROP_FUZZ_CLOCK=cpu takes no fork mode" >&2; exit 2; fi

# Several runs at once (one target each, on several cores) configure and build one after
# the other: two CMake configures of one build folder at once break each other.
mkdir -p build
(
  flock 9
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs" --target onnx-infer-shapes $(for t in $targets; do printf 'fuzz-%s ' "$t"; done)
) 9>build/.asan-build.lock

run=build/asan/fuzz-run
# The real exporters' models, and each printed as text (once) for the text target.
exports=(tests/data/corpus/functions tests/data/corpus/torch-dynamo tests/data/corpus/torchlib-2024-03/models)
if [ -d tests/data/real-exports ]; then exports+=(tests/data/real-exports); fi
text_seeds=$run/seeds/model_text
mkdir -p "$text_seeds"
for model in $(find "${exports[@]}" -name '*.onnx' | sort); do
  text=$text_seeds/$(basename "$(dirname "$model")")-$(basename "$model" .onnx).onnxtxt
  [ -e "$text" ] || build/asan/tools/onnx-infer-shapes "$model" --no-infer --emit text -q -o "$text" 2>/dev/null || true
done
# Interrupts the fuzzer (PID, or the child of /usr/bin/time PID) once its user + sys time
# reaches SECONDS; /proc/PID/stat fields 14 and 15, in clock ticks.
stop_at_cpu_seconds() {
  local pid=$1 budget=$(( $2 * $(getconf CLK_TCK) )) fuzzer stat fields
  fuzzer=$pid
  if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = time ]; then
    fuzzer=
    while [ -z "$fuzzer" ] && kill -0 "$pid" 2>/dev/null; do fuzzer=$(pgrep -P "$pid" || true); sleep 0.2; done
  fi
  while stat=$(cat /proc/"$fuzzer"/stat 2>/dev/null); do
    read -ra fields <<<"${stat##*) }"  # after the command name, field 3 is fields[0]
    if [ $(( fields[11] + fields[12] )) -ge "$budget" ]; then kill -INT "$fuzzer" 2>/dev/null || true; return; fi
    sleep 2
  done
}

# runtime_oracle NAME: the written models of NAME's corpus on ONNX Runtime (see
# SHAPEPROP_FUZZ_RUNTIME above); its lines go to $run/NAME.runtime.log, the summary to the
# report. A finding's HASH.input.onnx in $run/runtime/NAME is a model_binary input.
runtime_oracle() {
  local t=$1 saved=$run/runtime/$1 log=$run/$1.runtime.log
  if ! command -v node >/dev/null || [ ! -d tools/equiv/node_modules/onnxruntime-node ]; then
    echo "fuzz: $t: runtime oracle skipped: node or tools/equiv/node_modules/onnxruntime-node is missing"
    return 0
  fi
  rm -rf "$saved" && mkdir -p "$saved"
  # Slow as the fuzzing run counts it (-report_slow_units, SHAPEPROP_FUZZ_TIMEOUT), not by
  # libFuzzer's 10 s: a real export's input, its written models saved, took 13 s under
  # ASan on a loaded machine, and 0.8 s in a release build.
  SHAPEPROP_FUZZ_RUNTIME_DIR=$saved ASAN_OPTIONS=detect_leaks=0 "build/asan/tools/fuzz/fuzz-$t" -runs=0 \
    -timeout="$timeout" -report_slow_units="$timeout" \
    -max_len=400000 -artifact_prefix="$run/findings/$t/" "$run/corpus/$t" >"$log" 2>&1 ||
    { echo "fuzz: $t: replaying the corpus failed (an input the fuzzer kept breaks an invariant now), see $log"; return 1; }
  local status=0
  node tools/fuzz/runtime_facts.js "$saved" --max "$runtime_max" >>"$log" 2>&1 || status=$?
  grep '^runtime_facts:' "$log" | tail -4 | sed "s/^/fuzz: $t: /"
  return $status
}

# fuzz_target NAME: runs that target; its report lines go to $run/NAME.report, and
# $run/NAME.failed marks a problem found.
fuzz_target() {
  local t=$1 corpus findings seeds asan rss_limit options timer status fuzzing watcher
  corpus=$run/corpus/$t findings=$run/findings/$t
  mkdir -p "$corpus" "$findings"
  seeds=()  # kept findings, where a target has some
  if [ -d "tools/fuzz/regressions/$t" ]; then seeds+=("tools/fuzz/regressions/$t"); fi
  asan=detect_leaks=1:allocator_may_return_null=0 rss_limit=2048
  case $t in
    # ASan's own memory, not the target's, filled the RSS limit here: the differential
    # target runs ONNX's inliner and inference beside shapeprop on every input, and with
    # the default quarantine (256 MB of freed chunks held back) the process grew by about
    # 100 KB an execution (1,354 MB after 4,000 on one corpus; 274 MB with no quarantine,
    # 669 MB with 64 MB of it; the release build replaying that corpus three times stays at
    # 48 MB, and heaptrack finds 98 KB still reachable at its exit). A smaller quarantine
    # still catches a use after free of anything freed in the last 64 MB of frees. What
    # still grows then (about 30 KB an execution) is ASan's depot of allocation stacks,
    # which keeps each distinct one, and this target reaches the most: its RSS limit is
    # 4 GB (a single input's blow-up is still caught by -malloc_limit_mb).
    differential) asan+=:quarantine_size_mb=64 rss_limit=4096 ;;
  esac
  # Slow units (written beside the findings) are those slower than the timeout, not than
  # libFuzzer's 10 s: a run niced under other work reports wall time.
  options=(-timeout="$timeout" -report_slow_units="$timeout" -rss_limit_mb="$rss_limit" -malloc_limit_mb=2048
           -print_final_stats=1 -artifact_prefix="$findings/")
  case $t in
    # Long enough for the real exports (up to ~330 KB); mutations still start small.
    model_binary)
      seeds+=("${exports[@]}")
      options+=(-dict=tools/fuzz/onnx.dict -max_len=400000) ;;
    model_text)
      seeds+=(tests/golden examples "$text_seeds")
      options+=(-dict=tools/fuzz/onnx.dict -max_len=400000) ;;
    *)  # the bytes are choices: long inputs from the start, not grown slowly
      options+=(-max_len=4096 -len_control=0) ;;
  esac
  if [ "$clock" = wall ]; then options+=(-max_total_time="$seconds"); fi
  if [ "$fork" -gt 1 ]; then options+=(-fork="$fork" -ignore_crashes=0); fi
  # The fuzzer's own CPU time (the build and the seeds' printing above not counted), by GNU
  # time where it is, appended to the log.
  timer=()
  if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f $'time::user_s: %U\ntime::sys_s: %S\ntime::wall_s: %e' -o "$run/$t.time"); fi
  status=0
  ASAN_OPTIONS=$asan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "${timer[@]}" "build/asan/tools/fuzz/fuzz-$t" "${options[@]}" "$corpus" "${seeds[@]}" >"$run/$t.log" 2>&1 &
  fuzzing=$! watcher=
  if [ "$clock" = cpu ]; then stop_at_cpu_seconds "$fuzzing" "$seconds" & watcher=$!; fi
  wait "$fuzzing" || status=$?
  if [ -n "$watcher" ]; then wait "$watcher" || true; fi
  if [ "$clock" = cpu ] && [ "$status" -eq 72 ]; then status=0; fi  # interrupted at its CPU time
  if [ ${#timer[@]} -gt 0 ]; then grep '^time::' "$run/$t.time" >>"$run/$t.log" || true; fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE|^time::(user|sys)_s' "$run/$t.log" | tail -5 |
    sed "s/^/fuzz: $t: /" || true
  if [[ $runtime_targets == *" $t "* ]] && [ "$runtime_max" -gt 0 ]; then runtime_oracle "$t" || status=1; fi
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    echo "fuzz: $t FOUND A PROBLEM (exit $status); see $run/$t.log and $findings"
    grep -E 'ERROR|invariant|SUMMARY' "$run/$t.log" | head -5 || true
    touch "$run/$t.failed"
  fi
}

echo "fuzz: ${targets// /, } for ${seconds}s ($clock) each, $parallel at a time"
running=0
for t in $targets; do
  rm -f "$run/$t.failed"
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_target "$t" >"$run/$t.report" 2>&1 &
  running=$((running + 1))
done
wait
failed=()
for t in $targets; do
  cat "$run/$t.report"
  if [ -e "$run/$t.failed" ]; then failed+=("$t"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: problems found by: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${targets// /, }: nothing found in ${seconds}s ($clock) each"
