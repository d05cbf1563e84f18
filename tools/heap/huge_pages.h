// The CLI's heap on transparent huge pages, where the kernel has them free.
//
// A run touches its memory once, as it builds the model and its analysis. Backed by 4 KiB
// pages, each first touch is a page fault, and on virtual machines the faults (clear_page
// and the fault path, in perf) are a large part of a run. jemalloc with thp:always advises
// its chunks for 2 MiB pages, which takes a fault per 2 MiB instead, for a little more
// peak memory (docs/performance.md). The risk is the other way round: where no free 2 MiB
// block is left, the kernel compacts memory inside the fault (defrag "madvise"), which
// can make a run many times slower. So huge pages are kept only while the kernel's free
// lists hold blocks of 2 MiB or more for everything the run may need; otherwise the
// process turns them off (prctl PR_SET_THP_DISABLE) before it reads the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace shapeprop::heap {

// The bytes free in blocks of at least `block_bytes`, from /proc/buddyinfo's text (one
// line per zone: "Node 0, zone   Normal  c0 c1 ... c10", ck free blocks of 2^k pages of
// `page_bytes`); nullopt when the text is not of that form.
std::optional<uint64_t> free_in_blocks(std::string_view buddyinfo, uint64_t page_bytes, uint64_t block_bytes);

// What a run on an input of `input_bytes` (0: not known) may touch, generously: the bench's
// transformers take about ten times their file, models of weights about three times.
uint64_t run_estimate(uint64_t input_bytes);

// Keeps huge pages when the kernel offers them (THP not "never") and has `needed_bytes`
// free in blocks of its huge page size, and says so; otherwise turns them off for the
// process.
bool settle(uint64_t needed_bytes);

}  // namespace shapeprop::heap
