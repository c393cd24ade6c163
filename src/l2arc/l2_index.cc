#include "l2arc/l2_index.h"

#include <bit>

#include "arc/flat_table.h"
#include "base/check.h"

namespace arcstore::l2arc {

namespace {

// A 64-bit mix of both halves of the key (splitmix64's finaliser).
uint64_t HashKey(const L2Key& key) {
  uint64_t h = key.where * 0x9E3779B97F4A7C15ULL ^ (key.birth + 0x632BE59BD9B4E019ULL);
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return h;
}

}  // namespace

L2Index::L2Index(uint32_t slot_count, uint64_t max_nodes)
    : max_nodes_(max_nodes), cells_(kInitialCells, 0), heads_(slot_count) {
  ARC_CHECK_LT(max_nodes, uint64_t{kNoNode});
  shift_ = 64 - std::countr_zero(kInitialCells);
}

uint64_t L2Index::Home(const L2Key& key) const { return HashKey(key) >> shift_; }

uint32_t L2Index::Find(const L2Key& key) const {
  const uint64_t mask = cells_.size() - 1;
  for (uint64_t i = Home(key);; i = (i + 1) & mask) {
    const uint32_t cell = cells_[i];
    if (cell == 0) return kNoNode;
    if (At(cell - 1).key == key) return cell - 1;
  }
}

L2Location L2Index::location(uint32_t node) const {
  const Node& n = At(node);
  return L2Location{n.slot, n.offset, n.bytes, n.checksum};
}

uint32_t L2Index::NewNode() {
  if (free_ != kNoNode) {
    const uint32_t id = free_;
    free_ = At(id).next;
    return id;
  }
  if (nodes_made_ % kChunkNodes == 0) chunks_.push_back(std::make_unique<Node[]>(kChunkNodes));
  return static_cast<uint32_t>(nodes_made_++);
}

void L2Index::Grow() {
  std::vector<uint32_t> old;
  old.swap(cells_);
  cells_.assign(old.size() * 2, 0);
  shift_--;
  const uint64_t mask = cells_.size() - 1;
  for (uint32_t cell : old) {
    if (cell == 0) continue;
    uint64_t i = Home(At(cell - 1).key);
    while (cells_[i] != 0) i = (i + 1) & mask;
    cells_[i] = cell;
  }
}

uint32_t L2Index::Insert(const L2Key& key, const L2Location& loc) {
  ARC_DCHECK_EQ(Find(key), kNoNode);
  if (size_ >= max_nodes_) return kNoNode;
  if ((size_ + 1) * 4 > cells_.size() * 3) Grow();
  const uint32_t id = NewNode();
  Node& n = At(id);
  n = Node{key, loc.checksum, loc.slot, loc.offset, loc.bytes, kNoNode};
  const uint64_t mask = cells_.size() - 1;
  uint64_t i = Home(key);
  while (cells_[i] != 0) i = (i + 1) & mask;
  cells_[i] = id + 1;
  size_++;
  if (loc.slot < slot_count()) Place(id, loc.slot);
  return id;
}

void L2Index::Place(uint32_t node, uint32_t slot) {
  Node& n = At(node);
  ARC_DCHECK_EQ(n.next, kNoNode);
  n.slot = slot;
  n.next = heads_[slot].first;
  heads_[slot].first = node;
  heads_[slot].count++;
}

void L2Index::Unchain(uint32_t node) {
  Node& n = At(node);
  if (n.slot >= slot_count()) return;
  Head& head = heads_[n.slot];
  uint32_t* link = &head.first;
  while (*link != node) {
    ARC_CHECK_NE(*link, kNoNode) << "l2arc index: node not on its slot's chain";
    link = &At(*link).next;
  }
  *link = n.next;
  head.count--;
}

void L2Index::EraseCell(uint32_t node) {
  const uint64_t mask = cells_.size() - 1;
  uint64_t i = Home(At(node).key);
  while (cells_[i] != node + 1) i = (i + 1) & mask;
  arc::EmptySlot(cells_.data(), mask, i,
                 [&](uint32_t cell) { return cell == 0 ? arc::kNoHome : Home(At(cell - 1).key); });
  size_--;
}

void L2Index::Erase(uint32_t node) {
  Unchain(node);
  EraseCell(node);
  Node& n = At(node);
  n = Node{};
  n.next = free_;
  free_ = node;
}

uint64_t L2Index::EraseSlot(uint32_t slot, uint64_t* bytes) {
  uint64_t count = 0;
  *bytes = 0;
  uint32_t id = heads_[slot].first;
  while (id != kNoNode) {
    Node& n = At(id);
    const uint32_t next = n.next;
    *bytes += n.bytes;
    EraseCell(id);
    n = Node{};
    n.next = free_;
    free_ = id;
    count++;
    id = next;
  }
  heads_[slot] = Head{};
  return count;
}

uint64_t L2Index::memory_bytes() const {
  return chunks_.capacity() * sizeof(chunks_[0]) + chunks_.size() * kChunkNodes * sizeof(Node) +
         cells_.capacity() * sizeof(uint32_t) + heads_.capacity() * sizeof(Head);
}

}  // namespace arcstore::l2arc
