// onnx-infer-shapes: the executable around the command line (cli.h), with jemalloc's
// options where it is linked.
#include "cli.h"

#ifdef SHAPEPROP_JEMALLOC_LINKED
// jemalloc's options, read as it starts (the MALLOC_CONF variable still overrides them):
// its chunks advised for huge pages, which the run keeps only where the kernel has them
// free (heap/huge_pages.h); and freed pages kept for the process's own reuse, never
// handed back while it runs (no dirty or muzzy decay): purging splits huge pages and the
// next allocation faults them in again. A run is short and its heap only grows until the
// end, so the pages kept cost little memory and save the kernel's time (docs/performance.md).
// The thread cache is not garbage-collected (tcache_gc_incr_bytes past any run's
// allocations) and holds up to 400 objects of a size class rather than 200: a transform
// allocates and frees in bursts of one size class (a model's nodes, their strings), which
// the collection and the smaller cache sent back and forth to the arena, about a fortieth of
// --mode inline's instructions; the cache holds about 2 MiB more at its peak.
// One arena for every thread: ONNX's checker runs on a second thread beside the first
// analysis (JobOptions::check_alongside), and in an arena of its own the memory it frees
// was not reused by the analysis, which touched fresh pages instead (peak RSS of
// --mode inline 60 -> 63 MiB at 128 layers; with one arena 60 MiB, as with no thread).
// tests/tools/allocator_options.sh checks them.
extern "C" {
const char* malloc_conf =
    "thp:always,metadata_thp:auto,dirty_decay_ms:-1,muzzy_decay_ms:-1,"
    "tcache_gc_incr_bytes:1073741824,tcache_nslots_small_max:400,narenas:1";
}
#endif

int main(int argc, char** argv) { return cli::run_command_line(argc, argv, true); }
