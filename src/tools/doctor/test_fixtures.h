// Test helper: reads a fixture from testdata/ (ARCSTORE_SOURCE_DIR when the
// environment names it, else the directory compiled in by CMake).
//
// Thread-safety: reentrant. Returns the file's text (empty when missing, and
// the test fails).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace arcstore::doctor::testing {

inline std::string FixturePath(const std::string& name) {
  const char* src = std::getenv("ARCSTORE_SOURCE_DIR");
  if (src) return std::string(src) + "/src/tools/doctor/testdata/" + name;
  return std::string(DOCTOR_TESTDATA_DIR) + "/" + name;
}

inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << FixturePath(name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace arcstore::doctor::testing
