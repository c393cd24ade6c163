// A writer's waits (volume_write.cc, WritePiece): each place a write can
// wait is timed on the volume's clock and counted under its own name
// (volumes.writer_waits_<where>, writer_wait_<where>_ns) once it lasts
// kWriterWaitMinNs; shorter ones are the cost of the call and not counted.
// The fake environment's manual clock moves only inside the wait the test
// makes, so the figures are exact.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "testing/volume/volume_env_fixture.h"

namespace arcstore::volume {
namespace {

using testing::VolumeFixtureOptions;

// Space admission that takes `wait_ns` of the fixture's manual clock per
// reservation (the clock is set once the fixture exists).
struct SlowSpace final : SpaceAccount {
  explicit SlowSpace(uint64_t wait) : wait_ns(wait) {}
  Status Reserve(uint64_t /*bytes*/, const std::string& /*volume*/) override {
    clock->AdvanceNs(wait_ns);
    reservations++;
    return Status::Ok();
  }
  void Settle(uint64_t, uint64_t, uint64_t) override {}

  const uint64_t wait_ns;
  testing::ManualClock* clock = nullptr;
  int reservations = 0;
};

class WriterWaitTest : public testing::VolumeTest {
 protected:
  int64_t Waits(WriterWait where) {
    return f_->Stat(("writer_waits_" + std::string(WriterWaitName(where))).c_str());
  }
  int64_t WaitNs(WriterWait where) {
    return f_->Stat(("writer_wait_" + std::string(WriterWaitName(where)) + "_ns").c_str());
  }
  void ExpectNoWaitsBut(WriterWait counted) {
    for (int i = 0; i < kNumWriterWaits; i++) {
      const WriterWait w = static_cast<WriterWait>(i);
      if (w == counted) continue;
      EXPECT_EQ(Waits(w), 0) << WriterWaitName(w);
      EXPECT_EQ(WaitNs(w), 0) << WriterWaitName(w);
    }
  }
};

TEST_F(WriterWaitTest, ARmwReadIsCountedAsTheWriterWaitedForIt) {
  VolumeFixtureOptions o;
  o.defer_partial_reads = false;  // a partial write reads its record first
  Make(o);
  Commit(1, 0x11);
  f_->Evict();
  const uint64_t before_ns = WaitNs(WriterWait::kRmwRead);

  // The partial write's read of record 1 stops at the store's gate; the
  // test moves the clock 250 us while it waits there.
  f_->store().read_gate().Arm();
  std::thread writer([&] { WriteOk(rb_ + 1000, Filled(300, 0x22)); });
  f_->store().read_gate().WaitArrived();
  f_->clock().AdvanceNs(250'000);
  f_->store().read_gate().Release();
  writer.join();

  EXPECT_EQ(Waits(WriterWait::kRmwRead), 1);
  EXPECT_EQ(WaitNs(WriterWait::kRmwRead) - before_ns, 250'000);
  ExpectNoWaitsBut(WriterWait::kRmwRead);
  std::vector<uint8_t> want = Filled(rb_, 0x11);
  std::fill(want.begin() + 1000, want.begin() + 1300, 0x22);
  EXPECT_EQ(ReadOk(rb_, rb_), want);
}

TEST_F(WriterWaitTest, SpaceAdmissionWaitsAreCountedPerWrite) {
  SlowSpace space(40'000);
  VolumeFixtureOptions o;
  o.space = &space;
  Make(o);
  space.clock = &f_->clock();

  // Three new records reserve space; a rewrite of one in the same txg
  // does not.
  for (uint64_t r = 0; r < 3; r++) WriteOk(r * rb_, Filled(rb_, 0x30));
  WriteOk(0, Filled(rb_, 0x31));
  EXPECT_EQ(space.reservations, 3);
  EXPECT_EQ(Waits(WriterWait::kSpace), 3);
  EXPECT_EQ(WaitNs(WriterWait::kSpace), 3 * 40'000);
  ExpectNoWaitsBut(WriterWait::kSpace);
}

TEST_F(WriterWaitTest, AWaitShorterThanTheFloorIsNotCounted) {
  SlowSpace space(kWriterWaitMinNs - 1);
  VolumeFixtureOptions o;
  o.space = &space;
  Make(o);
  space.clock = &f_->clock();
  WriteOk(0, Filled(rb_, 0x40));
  EXPECT_EQ(space.reservations, 1);
  EXPECT_EQ(Waits(WriterWait::kSpace), 0);
  EXPECT_EQ(WaitNs(WriterWait::kSpace), 0);
}

}  // namespace
}  // namespace arcstore::volume
