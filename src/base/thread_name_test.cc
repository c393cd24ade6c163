#include "base/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <string>
#include <thread>

namespace arcstore {
namespace {

// A thread names itself and lowers its own priority; the thread that
// started it keeps its name and priority, and a nice value out of bounds
// is refused by name.
TEST(ThreadNameTest, AThreadNamesAndNicesOnlyItself) {
  const int before = ThisThreadNice();
  char name[16] = {};
  std::thread t([&] {
    NameThisThread("a_name_longer_than_fifteen_bytes");
    ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
    const int target = std::min(before + 3, 19);
    ASSERT_TRUE(NiceThisThread(target).ok());
    EXPECT_EQ(ThisThreadNice(), target);
    Status bad = NiceThisThread(20);
    EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.message().find("20"), std::string::npos) << bad.ToString();
  });
  t.join();
  EXPECT_EQ(std::string(name), "a_name_longer_t");
  EXPECT_EQ(ThisThreadNice(), before);
}

}  // namespace
}  // namespace arcstore
