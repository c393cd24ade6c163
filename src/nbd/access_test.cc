// The access file's grammar and its errors (access.h), and the PSK file's.
#include "nbd/access.h"

#include <gtest/gtest.h>

#include "nbd/psk_file.h"

namespace arcstore::nbd {
namespace {

std::shared_ptr<const AccessPolicy> MustParse(const std::string& text) {
  auto p = AccessPolicy::Parse(text, "acc");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : AccessPolicy::AllowAll();
}

std::string ErrorOf(const std::string& text) {
  auto p = AccessPolicy::Parse(text, "acc");
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.status().message();
}

TEST(AccessPolicyTest, GrantsByIdentityAndVolume) {
  auto p = MustParse(
      "# comment\n"
      "[alice]\n"
      "  vol0 = rw   # trailing comment\n"
      "vol1=ro\n"
      "\n"
      "[CN=backup host,O=Example]\r\n"
      "* = ro\r\n"
      "vol9 = rw\n"
      "[@anonymous]\n"
      "public = ro\n"
      "[@unix]\n"
      "[empty]\n");
  EXPECT_EQ(p->Lookup("alice", "vol0"), Access::kReadWrite);
  EXPECT_EQ(p->Lookup("alice", "vol1"), Access::kReadOnly);
  EXPECT_EQ(p->Lookup("alice", "vol2"), Access::kNone);
  EXPECT_EQ(p->Lookup("CN=backup host,O=Example", "anything"), Access::kReadOnly);
  EXPECT_EQ(p->Lookup("CN=backup host,O=Example", "vol9"), Access::kReadWrite);  // name beats *
  EXPECT_EQ(p->Lookup(kAnonymousIdentity, "public"), Access::kReadOnly);
  EXPECT_EQ(p->Lookup(kAnonymousIdentity, "vol0"), Access::kNone);
  EXPECT_EQ(p->Lookup(kUnixIdentity, "vol0"), Access::kNone);  // its section is empty
  EXPECT_EQ(p->Lookup("empty", "vol0"), Access::kNone);
  EXPECT_EQ(p->Lookup("mallory", "vol0"), Access::kNone);
  EXPECT_EQ(p->Lookup("ALICE", "vol0"), Access::kNone);  // names are exact
  EXPECT_EQ(p->identities(), 5u);
}

TEST(AccessPolicyTest, UnixClientsOpenEverythingUnlessNamed) {
  EXPECT_EQ(MustParse("[alice]\nvol0 = rw\n")->Lookup(kUnixIdentity, "x"), Access::kReadWrite);
  EXPECT_EQ(MustParse("")->Lookup("alice", "x"), Access::kNone);
  EXPECT_EQ(AccessPolicy::AllowAll()->Lookup("anyone", "x"), Access::kReadWrite);
}

TEST(AccessPolicyTest, ErrorsNameFileLineAndWhat) {
  EXPECT_EQ(ErrorOf("vol0 = rw\n"), "acc:1: grant before any [identity] section");
  EXPECT_EQ(ErrorOf("[a]\nvol0 = rx\n"), "acc:2: access of 'vol0' is 'rx', not ro or rw");
  EXPECT_EQ(ErrorOf("[a]\n\n[a]\n"), "acc:3: identity 'a' has a section already");
  EXPECT_EQ(ErrorOf("[a]\nv = ro\nv = rw\n"), "acc:3: volume 'v' granted twice in this section");
  EXPECT_EQ(ErrorOf("[a\n"), "acc:1: section header without a closing ']'");
  EXPECT_EQ(ErrorOf("[ ]\n"), "acc:1: empty identity in '[]'");
  EXPECT_EQ(ErrorOf("[a]\n= rw\n"), "acc:2: grant without a volume name");
  EXPECT_EQ(ErrorOf("[a]\nvol0\n"), "acc:2: expected '[identity]' or 'volume = ro|rw', got 'vol0'");
  EXPECT_NE(ErrorOf("[@root]\n").find("unknown special identity '@root'"), std::string::npos);
}

TEST(AccessPolicyTest, LoadNamesAMissingFile) {
  auto p = AccessPolicy::Load("/nonexistent/access");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/nonexistent/access"), std::string::npos);
}

TEST(PskFileTest, ParsesPsktoolLines) {
  auto f = PskFile::Parse("# keys\nalice:00ff10\nbob:ABCDEF01\n", "k");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->size(), 2u);
  ASSERT_NE(f->Find("alice"), nullptr);
  EXPECT_EQ(*f->Find("alice"), (std::vector<uint8_t>{0x00, 0xff, 0x10}));
  EXPECT_EQ(f->Find("carol"), nullptr);
}

TEST(PskFileTest, ErrorsNameFileLineAndWhat) {
  auto err = [](const std::string& text) {
    auto f = PskFile::Parse(text, "k");
    return f.ok() ? std::string() : f.status().message();
  };
  EXPECT_EQ(err("alice\n"), "k:1: not username:hexkey");
  EXPECT_EQ(err("a:00\n:00\n"), "k:2: username empty or longer than 255 bytes");
  EXPECT_EQ(err("a:0g\n"), "k:1: key of 'a' has a non-hex digit");
  EXPECT_EQ(err("a:000\n"),
            "k:1: key of 'a' is not an even number of hex digits (at most 128)");
  EXPECT_EQ(err("a:00\na:11\n"), "k:2: username 'a' given twice");
  EXPECT_EQ(err("# nothing\n"), "k: no keys");
}

}  // namespace
}  // namespace arcstore::nbd
