// The cache simulators behind `arcstore sim`: one request = one page key.
//
//  - ArcSim runs the engine's own replacement policy (arc/policy.h, the one
//    piece of code the engine's ARC uses too) with PolicyOptions::Paper: a
//    fixed c, REPLACE inline, no refinements. Every page is `page_bytes`
//    bytes, so the policy's byte arithmetic is the paper's page arithmetic.
//  - LruSim is plain LRU, the baseline the paper compares against.
//
// Both keep their nodes in one array allocated up front (ARC tracks at most
// 2c pages, LRU c) and find them through a FlatTable, so a request costs a
// hash probe and a few pointer moves and never allocates.
//
// Thread-safety: none; one simulator per thread.
#pragma once

#include <cstdint>
#include <memory>

#include "arc/flat_table.h"
#include "arc/policy.h"

namespace arcstore::sim {

class ArcSim final : private arc::PolicyHooks {
 public:
  ArcSim(uint64_t cache_pages, uint64_t page_bytes);

  // One reference to `key`; true on a hit.
  bool Access(uint64_t key) {
    Node* n = table_.Find(key);
    if (n != nullptr) {
      if (arc::IsResident(n->state)) {
        hits_++;
        policy_.Hit(n, 0);
        return true;
      }
      const arc::ArcState ghost = policy_.GhostHit(n);
      policy_.Insert(n, arc::ArcState::kMfu, ghost == arc::ArcState::kMfuGhost, 0, false);
      return false;
    }
    n = free_;
    free_ = static_cast<Node*>(n->next);
    n->key = key;
    n->bytes = page_bytes_;  // <= kMaxNodeBytes (SimOptions::Validate)
    table_.Insert(key, n);
    policy_.Insert(n, arc::ArcState::kMru, false, 0, false);
    return false;
  }

  uint64_t hits() const { return hits_; }
  const arc::ArcPolicy& policy() const { return policy_; }

 private:
  struct Node : arc::PolicyNode {
    uint64_t key = 0;
  };
  void OnEvicted(arc::PolicyNode*) override {}
  void OnDropped(arc::PolicyNode* p) override {
    Node* n = static_cast<Node*>(p);
    table_.Erase(n->key);
    n->next = free_;
    free_ = n;
  }

  const uint32_t page_bytes_;
  std::unique_ptr<Node[]> nodes_;
  Node* free_ = nullptr;
  arc::FlatTable<Node> table_;
  arc::ArcPolicy policy_;
  uint64_t hits_ = 0;
};

class LruSim {
 public:
  explicit LruSim(uint64_t cache_pages);

  bool Access(uint64_t key) {
    Node* n = table_.Find(key);
    if (n != nullptr) {
      hits_++;
      Unlink(n);
      PushFront(n);
      return true;
    }
    if (size_ == capacity_) {
      Node* victim = static_cast<Node*>(head_.prev);
      Unlink(victim);
      table_.Erase(victim->key);
      n = victim;
    } else {
      n = &nodes_[size_++];
    }
    n->key = key;
    table_.Insert(key, n);
    PushFront(n);
    return false;
  }

  uint64_t hits() const { return hits_; }
  uint64_t size() const { return size_; }

 private:
  struct Node : arc::ListLinks {
    uint64_t key = 0;
  };
  void Unlink(Node* n) {
    n->prev->next = n->next;
    n->next->prev = n->prev;
  }
  void PushFront(Node* n) {
    n->prev = &head_;
    n->next = head_.next;
    head_.next->prev = n;
    head_.next = n;
  }

  const uint64_t capacity_;
  std::unique_ptr<Node[]> nodes_;
  uint64_t size_ = 0;
  arc::ListLinks head_;
  arc::FlatTable<Node> table_;
  uint64_t hits_ = 0;
};

}  // namespace arcstore::sim
