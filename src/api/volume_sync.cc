// The synchronous wrappers of include/arcstore/volume.h, and the default
// (one plain buffer) zero-copy write.
#include <future>

#include "arcstore/volume.h"

namespace arcstore {
namespace {

// Runs one asynchronous call and waits for its completion.
template <typename Submit>
Status Wait(Submit submit) {
  std::promise<Status> p;
  std::future<Status> f = p.get_future();
  submit([&p](Status s) { p.set_value(std::move(s)); });
  return f.get();
}

// The default PreparedWrite: one heap buffer.
class PlainPreparedWrite final : public PreparedWrite {
 public:
  PlainPreparedWrite(uint64_t offset, uint64_t length)
      : PreparedWrite(offset, length), bytes_(new uint8_t[length]) {
    pieces_.emplace_back(bytes_.get(), length);
  }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
};

// `prepared`'s bytes in one span: its only piece, or a copy of them all
// into `gathered` (a PreparedWrite of another volume).
std::span<const uint8_t> Contiguous(const PreparedWrite& prepared,
                                    std::vector<uint8_t>* gathered) {
  if (prepared.pieces().size() == 1) return prepared.pieces()[0];
  gathered->reserve(prepared.length());
  for (std::span<uint8_t> p : prepared.pieces()) {
    gathered->insert(gathered->end(), p.begin(), p.end());
  }
  return *gathered;
}

}  // namespace

std::unique_ptr<PreparedWrite> Volume::PrepareWrite(uint64_t offset, uint64_t length) {
  return std::make_unique<PlainPreparedWrite>(offset, length);
}

void Volume::SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                            Completion done) {
  // Kept (with any gathered copy) until the write completes.
  struct Owned {
    std::unique_ptr<PreparedWrite> prepared;
    std::vector<uint8_t> gathered;
  };
  auto owned = std::make_shared<Owned>();
  owned->prepared = std::move(prepared);
  std::span<const uint8_t> data = Contiguous(*owned->prepared, &owned->gathered);
  SubmitWrite(owned->prepared->offset(), data, write_flags,
              [owned, done = std::move(done)](Status s) { done(std::move(s)); });
}

Status Volume::WritePrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags) {
  std::vector<uint8_t> gathered;
  return Write(prepared->offset(), Contiguous(*prepared, &gathered), write_flags);
}

Status Volume::Read(uint64_t offset, std::span<uint8_t> out) {
  return Wait([&](Completion c) { SubmitRead(offset, out, std::move(c)); });
}

Status Volume::Write(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags) {
  return Wait([&](Completion c) { SubmitWrite(offset, data, write_flags, std::move(c)); });
}

Status Volume::Flush() {
  return Wait([&](Completion c) { SubmitFlush(std::move(c)); });
}

Status Volume::Trim(uint64_t offset, uint64_t length) {
  return Wait([&](Completion c) { SubmitTrim(offset, length, std::move(c)); });
}

Status Volume::WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags) {
  return Wait([&](Completion c) { SubmitWriteZeroes(offset, length, zero_flags, std::move(c)); });
}

Status Volume::Cache(uint64_t offset, uint64_t length) {
  return Wait([&](Completion c) { SubmitCache(offset, length, std::move(c)); });
}

Status Volume::BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* extents) {
  std::promise<Status> p;
  std::future<Status> f = p.get_future();
  SubmitBlockStatus(offset, length, [&](Status s, std::vector<Extent> e) {
    *extents = std::move(e);
    p.set_value(std::move(s));
  });
  return f.get();
}

Status CheckRange(const char* op, uint64_t offset, uint64_t length, uint64_t size_bytes) {
  if (offset > size_bytes || length > size_bytes - offset) {
    return Status::OutOfRange(std::string(op) + " at offset " + std::to_string(offset) +
                              " length " + std::to_string(length) + " is past the end (size " +
                              std::to_string(size_bytes) + ")");
  }
  return Status::Ok();
}

}  // namespace arcstore
