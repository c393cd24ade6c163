// --print-fio-command: the same jobs for real fio's nbd engine.
#include <gtest/gtest.h>

#include "bench/fio_command.h"

namespace arcstore::bench {
namespace {

TEST(FioCommand, SameOptionsOverNbd) {
  JobEnv env = JobEnv::FromSystem();
  auto set = ParseJobText(
      "[global]\nfilename=/FILE/PATH/raw.bin\ntime_based\nruntime=60\ndirect=1\n"
      "[randwrite-4K]\nbs=4K\nrw=randwrite\nioengine=psync\ndescription=two words\n",
      "seed.fio", ".", env);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::string cmd = FioCommandFor(*set, [](const std::string& v) {
    return "nbd+unix:///" + v + "?socket=/tmp/a.sock";
  });
  EXPECT_EQ(cmd,
            "fio --time_based --runtime=60 --direct=1 --name=randwrite-4K --bs=4K --rw=randwrite "
            "'--description=two words' --ioengine=nbd "
            "'--uri=nbd+unix:///raw.bin?socket=/tmp/a.sock'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace arcstore::bench
