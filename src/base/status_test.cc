#include "arcstore/status.h"

#include <gtest/gtest.h>

#include "base/result.h"

namespace arcstore {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd value " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  ARC_ASSIGN_OR_RETURN(int h, Half(x));
  ARC_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckQuarter(int x) {
  ARC_RETURN_IF_ERROR(Quarter(x).status());
  return Status::Ok();
}

TEST(StatusTest, OkAndErrorsPrint) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  Status s = Status::Corruption("block 12");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.ToString(), "Corruption: block 12");
}

TEST(StatusTest, ContextIsPrefixed) {
  Status s = Status::IOError("EIO").WithContext("volume vol0 offset 4096");
  EXPECT_EQ(s.message(), "volume vol0 offset 4096: EIO");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(ResultTest, PropagatesThroughMacros) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "odd value 3");
  EXPECT_TRUE(CheckQuarter(12).ok());
  EXPECT_EQ(CheckQuarter(10).message(), "odd value 5");
  EXPECT_EQ(Quarter(5).value_or(-1), -1);
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = Status::NotFound("vol9");
  EXPECT_DEATH((void)r.value(), "vol9");
}

}  // namespace
}  // namespace arcstore
