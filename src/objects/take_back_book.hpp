// Take-backs on their way, per lock key and owner field, for the whole client: no I/O.
//
// A try whose reply was lost is taken back by a release (acquire_op). That release may itself
// be delayed on the wire (a slow proxy, a resend after a reconnect) and land after a later try
// by the same owner on the same key, releasing what that try granted. Within one acquire the
// next try already waited for it; the owner's next acquire is another operation, and must wait
// too: a new try of (key, field) goes only once no take-back of (key, field) is outstanding.
//
// Not thread-safe: the I/O thread only.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <relock/detail/unique_function.hpp>

namespace relock::detail {

class take_back_book {
 public:
  using id = std::pair<std::string, std::string>;  // lock key, owner field
  using continuation = unique_function<void()>;

  void begin(const id& who) { ++pending_[who].count; }
  // One take-back of `who` was answered; when it was the last, returns the tries that waited
  // for it (the caller runs them).
  std::vector<continuation> end(const id& who);
  bool pending(const id& who) const { return pending_.count(who) != 0; }
  // Runs `then` once no take-back of `who` is outstanding (it must be pending now).
  void after(const id& who, continuation then) { pending_[who].waiting.push_back(std::move(then)); }
  std::size_t size() const { return pending_.size(); }

 private:
  struct entry {
    int count = 0;
    std::vector<continuation> waiting;
  };
  std::map<id, entry> pending_;
};

inline std::vector<take_back_book::continuation> take_back_book::end(const id& who) {
  auto it = pending_.find(who);
  if (it == pending_.end() || --it->second.count > 0) return {};
  auto waiting = std::move(it->second.waiting);
  pending_.erase(it);
  return waiting;
}

}  // namespace relock::detail
