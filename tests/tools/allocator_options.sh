#!/usr/bin/env bash
# allocator_options.sh TOOL: onnx-infer-shapes, linked with jemalloc, starts it with the
# options main.cc gives it (malloc_conf): chunks advised for huge pages, and freed pages
# kept for the process's own reuse, never returned to the kernel while it runs (dirty and
# muzzy decay off: returning them splits huge pages, and the next allocation faults them
# in again); a thread cache that is not garbage-collected, of up to 400 objects a size
# class; and one arena for its two threads (main.cc says why). Read off what jemalloc says
# as it starts (MALLOC_CONF=confirm_conf:true prints each option it sets and where from;
# stats_print, which registers an exit handler as jemalloc starts, deadlocks a jemalloc
# linked in: glibc's atexit allocates, and the allocation waits for the start to end).
set -euo pipefail
tool=${1:?usage: allocator_options.sh TOOL}
said=$(MALLOC_CONF=confirm_conf:true timeout 60 "$tool" --version 2>&1 >/dev/null)
grep -qF 'global variable malloc_conf' <<<"$said" || { echo "FAIL: jemalloc read no malloc_conf of the CLI's"; echo "$said"; exit 1; }
for want in thp:always metadata_thp:auto dirty_decay_ms:-1 muzzy_decay_ms:-1 \
  tcache_gc_incr_bytes:1073741824 tcache_nslots_small_max:400 narenas:1; do
  grep -qxF -e "<jemalloc>: -- Set conf value: $want" <<<"$said" || { echo "FAIL: jemalloc does not set $want"; echo "$said"; exit 1; }
done
echo "jemalloc runs with huge pages, no decay and an uncollected thread cache of 400 slots, in one arena"
