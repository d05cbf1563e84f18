// The CLI's decision to keep huge pages (tools/heap/huge_pages.h): the free memory in
// blocks of 2 MiB or more, read from /proc/buddyinfo's text.
#include <gtest/gtest.h>

#include "heap/huge_pages.h"

namespace {

using shapeprop::heap::free_in_blocks;

constexpr uint64_t kPage = 4096, kHuge = 2 << 20;

TEST(HugePages, CountsOnlyBlocksOfTheHugePageSizeAndLarger) {
  // Orders 0..10; order 9 is 2 MiB, order 10 is 4 MiB.
  const char* text =
      "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
      "Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753 \n"
      "Node 0, zone   Normal   4914   2878   2577   2629   1355    982    503    303    235    138    315 \n";
  const uint64_t mib = 1 << 20;
  EXPECT_EQ(free_in_blocks(text, kPage, kHuge), (1 + 1 + 138) * 2 * mib + (3 + 753 + 315) * 4 * mib);
  // With 1 MiB blocks wanted, order 8 counts too.
  EXPECT_EQ(free_in_blocks(text, kPage, mib), (1 + 3 + 235) * mib + (1 + 1 + 138) * 2 * mib + (3 + 753 + 315) * 4 * mib);
}

TEST(HugePages, NoFreeBlockIsNothing) {
  EXPECT_EQ(free_in_blocks("Node 0, zone   Normal   4914   2878   0 0 0 0 0 0 0 0 0\n", kPage, kHuge), 0u);
  // A zone whose counts stop before the huge page's order has no such block.
  EXPECT_EQ(free_in_blocks("Node 0, zone   Normal   4914   2878\n", kPage, kHuge), 0u);
}

TEST(HugePages, RefusesTextOfAnotherForm) {
  EXPECT_EQ(free_in_blocks("", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("\n\n", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("Node 0, zone Normal 1 2 x 4\n", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("Node 0, zone Normal\n", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("Zone 0, node Normal 1 2 3\n", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("Node 0, zone Normal -1 2 3\n", kPage, kHuge), std::nullopt);
  EXPECT_EQ(free_in_blocks("Node 0, zone Normal 1 2 3\n", 0, kHuge), std::nullopt);
}

TEST(HugePages, TheEstimateGrowsWithTheInput) {
  using shapeprop::heap::run_estimate;
  EXPECT_GE(run_estimate(0), uint64_t{256} << 20);
  EXPECT_GE(run_estimate(uint64_t{1} << 30) - run_estimate(0), uint64_t{10} << 30);
}

}  // namespace
