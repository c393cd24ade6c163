// The whole of section 5 of ../shared/traces/README.md, ARC and LRU, exact
// to the request: P2, P3, P6 at c = 32768 and P12 at every size (OLTP runs
// in sim_test). Label `long`: ctest --preset release -L long.
#include <gtest/gtest.h>

#include "tools/sim/paper_counts_test_util.h"

namespace arcstore::sim {
namespace {

using testing::ExpectPaperRow;
using testing::kPaperRows;

class PaperTableTest : public ::testing::TestWithParam<size_t> {};

TEST_P(PaperTableTest, ArcHitsExact) { ExpectPaperRow(kPaperRows[GetParam()], SimPolicy::kArc); }
TEST_P(PaperTableTest, LruHitsExact) { ExpectPaperRow(kPaperRows[GetParam()], SimPolicy::kLru); }

INSTANTIATE_TEST_SUITE_P(Table, PaperTableTest,
                         ::testing::Range<size_t>(5, std::size(kPaperRows)),
                         [](const auto& info) {
                           std::string t = kPaperRows[info.param].trace;
                           return t.substr(0, t.find('.')) + "_c" +
                                  std::to_string(kPaperRows[info.param].cache_pages);
                         });

}  // namespace
}  // namespace arcstore::sim
