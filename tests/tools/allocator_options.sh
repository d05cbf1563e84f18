#!/usr/bin/env bash
# allocator_options.sh TOOL: onnx-infer-shapes, linked with jemalloc, starts it with the
# options main.cc gives it (malloc_conf): chunks advised for huge pages, and freed pages
# kept for the process's own reuse, never returned to the kernel while it runs (dirty and
# muzzy decay off: returning them splits huge pages, and the next allocation faults them
# in again); a thread cache that is not garbage-collected, of up to 400 objects a size
# class; and one arena for its two threads (main.cc says why). Read off jemalloc's own statistics (MALLOC_CONF=stats_print:true
# prints them at exit, with the options it runs with).
set -euo pipefail
tool=${1:?usage: allocator_options.sh TOOL}
stats=$(MALLOC_CONF=stats_print:true "$tool" --version 2>&1 >/dev/null)
for want in 'opt.thp: "always"' 'opt.metadata_thp: "auto"' 'opt.dirty_decay_ms: -1' 'opt.muzzy_decay_ms: -1' \
  'opt.tcache_gc_incr_bytes: 1073741824' 'opt.tcache_nslots_small_max: 400' 'opt.narenas: 1'; do
  grep -qF -e "$want" <<<"$stats" || { echo "FAIL: jemalloc does not run with $want"; grep -E 'opt\.(thp|metadata_thp|dirty_decay_ms|muzzy_decay_ms|tcache_gc_incr_bytes|tcache_nslots_small_max|narenas)' <<<"$stats"; exit 1; }
done
echo "jemalloc runs with huge pages, no decay and an uncollected thread cache of 400 slots, in one arena"
