// SPDX-License-Identifier: Apache-2.0
// Take-backs not yet answered, per lock key and owner, for the whole client: no I/O.
//
// A try whose reply was lost is undone by a take-back: a release under the try's own latch
// (release_op, `take_back`). Any copy of it that Redis runs leaves the latch, after which no
// copy (nor the try) changes anything until the latch expires. Until some copy has been
// answered, though, a copy may still be on the wire (held by a partition, queued on a
// connection the client gave up on) and would release whatever the owner holds when it lands:
// a hold that a later try of the same owner was granted. So before any try of an owner on a
// key, every take-back of that owner on that key still in this book is sent again, under its
// latch, to wherever the key's slot lives now, and the try waits for the answers
// (acquire_op). An answer to any copy takes the take-back out of the book.
//
// Not thread-safe: the I/O thread only.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "waiting/release_op.hpp"

namespace relock::detail::waiting {

class take_back_book {
 public:
  using id = std::pair<std::string, std::string>;  // lock key, owner

  // `request` is the take-back, its latch set (request.latch).
  void add(const id& who, release_request request);
  // A copy of the take-back under `latch` was answered by the server.
  void answered(const id& who, std::string_view latch);
  // The take-backs of `who` not answered yet, to send again before its next try.
  std::vector<release_request> pending(const id& who) const;
  // Whether `key` and `owner` have any: asked before every try, so it copies nothing, and an
  // empty book (the usual case) answers at once.
  bool has(std::string_view key, std::string_view owner) const;
  bool empty() const { return pending_.empty(); }
  std::size_t size() const;

 private:
  // By key, then owner; looked up by views too, so a question copies no string.
  struct id_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const std::string_view ak(a.first), bk(b.first);
      return ak != bk ? ak < bk : std::string_view(a.second) < std::string_view(b.second);
    }
  };
  std::map<id, std::vector<release_request>, id_less> pending_;
};

}  // namespace relock::detail::waiting
