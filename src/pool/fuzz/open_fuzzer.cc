// Fuzz target: open() on a mutated small pool image. The input is a list
// of patches, each [u8 region][u32 offset][u8 length][bytes], applied to a
// pool built once at start-up (labels, uberblock rings, a volume table,
// indirect blocks, records, the space log, an intent log to replay).
// Whatever the damage, opening,
// checking and reading the pool must fail cleanly or succeed; never crash,
// hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "format/label.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kImageBytes = 8 << 20;

struct Seed {
  std::vector<uint8_t> image;
  format::DeviceLayout layout;
  uint64_t used_end = 0;  // end of the space the seed's blocks use
};

Seed Build() {
  io::MemoryDeviceOptions mo;
  mo.size_bytes = kImageBytes;
  auto dev = *io::MemoryDevice::Create(mo);
  io::MemoryDevice* raw = dev.get();
  (void)PoolImpl::Format(raw, "fuzz");
  std::vector<uint8_t> seed_image;
  {
    PoolOptions po;
    po.work_threads = 0;
    auto p = *PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(raw), po);
    for (const char* name : {"a", "b"}) {
      VolumeOptions vo;
      vo.name = name;
      vo.size_bytes = 256 * 1024;
      vo.record_size_bytes = 4096;
      (void)p->CreateVolume(vo);
      auto v = *p->OpenVolume(name);
      std::vector<uint8_t> d(20000);
      for (size_t i = 0; i < d.size(); i++) d[i] = static_cast<uint8_t>(i * 7 + name[0]);
      (void)v->Write(3000, d);
      (void)v->Flush();
      (void)v->Trim(4096, 4096);
      (void)v->Flush();
    }
    // Taken before Close: the flushed changes are still only in the intent
    // log, so every open of the seed replays it.
    seed_image = raw->Contents();
    (void)p->Close();
  }
  Seed s;
  s.image = std::move(seed_image);
  s.layout = *format::ComputeLayout(kImageBytes, 4096);
  s.used_end = s.layout.data_begin + (2 << 20);
  return s;
}

const Seed& TheSeed() {
  static const Seed seed = Build();
  return seed;
}

}  // namespace
}  // namespace arcstore::pool

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore;
  const pool::Seed& seed = pool::TheSeed();
  std::vector<uint8_t> image = seed.image;
  const format::DeviceLayout& L = seed.layout;
  size_t pos = 0;
  for (int patches = 0; patches < 64 && pos + 6 <= size; patches++) {
    const uint8_t region = data[pos] & 3;
    uint32_t offset;
    std::memcpy(&offset, data + pos + 1, 4);
    size_t len = data[pos + 5] % 65;
    pos += 6;
    len = std::min(len, size - pos);
    uint64_t base = 0, span = image.size();
    if (region == 0) span = L.data_begin;                       // front label and ring
    if (region == 1) base = L.data_begin, span = seed.used_end - L.data_begin;  // blocks
    if (region == 2) base = L.back_ring, span = image.size() - L.back_ring;    // back
    const uint64_t at = base + offset % span;
    for (size_t i = 0; i < len && at + i < image.size(); i++) image[at + i] = data[pos + i];
    pos += len;
  }
  io::MemoryDeviceOptions mo;
  mo.size_bytes = image.size();
  auto dev = io::MemoryDevice::FromImage(mo, std::move(image));
  if (!dev.ok()) return 0;
  PoolOptions po;
  po.read_only = true;
  po.work_threads = 0;
  auto p = pool::PoolImpl::OpenOnDevice(std::move(*dev), po);
  if (!p.ok()) return 0;
  (void)(*p)->Check();
  for (const auto& info : (*p)->Info().volumes) {
    auto v = (*p)->OpenVolume(info.name);
    if (!v.ok()) continue;
    std::vector<uint8_t> buf(info.size_bytes);
    (void)(*v)->Read(0, buf);
    std::vector<Extent> e;
    (void)(*v)->BlockStatus(0, info.size_bytes, &e);
  }
  return 0;
}
