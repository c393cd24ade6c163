#include "volume/volume_impl.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace arcstore::volume {

namespace {
constexpr uint64_t kMaxLentBytes = 64 * kMiB;  // PrepareWrite lends record buffers up to this
}  // namespace

std::unique_ptr<PreparedWrite> VolumeImpl::PrepareWrite(uint64_t offset, uint64_t length) {
  // A range the write will refuse, or one too long to lend: a plain buffer.
  if (!CheckRange("write", offset, length, entry_.size_bytes).ok() || length > kMaxLentBytes ||
      env_.read_only) {
    return Volume::PrepareWrite(offset, length);
  }
  auto prepared = std::make_unique<RecordPreparedWrite>(this, offset, length);
  // The pieces are cut as WriteRange cuts them: one per record.
  auto each_piece = [&](auto&& fn) {
    for (uint64_t pos = 0; pos < length;) {
      const uint64_t in_record = (offset + pos) % record_bytes_;
      const uint64_t n = std::min<uint64_t>(record_bytes_ - in_record, length - pos);
      fn(n, in_record == 0 && n == record_bytes_);
      pos += n;
    }
  };
  uint64_t heap_bytes = 0;
  each_piece([&](uint64_t n, bool whole) { heap_bytes += whole ? 0 : n; });
  if (heap_bytes > 0) prepared->heap.reset(new uint8_t[heap_bytes]);
  uint64_t heap_at = 0;
  each_piece([&](uint64_t n, bool whole) {
    if (whole) {
      arc::ArcHold buffer = NewBuffer();
      prepared->Add(buffer.mutable_data(), std::move(buffer));
    } else {
      prepared->Add(std::span<uint8_t>(prepared->heap.get() + heap_at, n), arc::ArcHold());
      heap_at += n;
    }
  });
  return prepared;
}

Status VolumeImpl::WriteLent(RecordPreparedWrite* prepared, uint32_t write_flags,
                             WriterWaits* waits) {
  Status s = WriteRange(prepared->offset(), prepared->length(), nullptr, Dirty::Kind::kData,
                        "write", /*replay=*/false, prepared, waits);
  if (s.ok() && (write_flags & kFua) != 0) s = FlushNow();
  return s;
}

}  // namespace arcstore::volume
