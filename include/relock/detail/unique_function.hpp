// SPDX-License-Identifier: Apache-2.0
// A move-only std::function: completion handlers (Asio's included) are often move-only, and
// Debian's g++ 12 has no std::move_only_function in C++20 mode.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace relock::detail {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
 public:
  unique_function() = default;
  unique_function(std::nullptr_t) {}

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, unique_function>>>
  unique_function(F&& f) : impl_(std::make_unique<model<std::decay_t<F>>>(std::forward<F>(f))) {}

  unique_function(unique_function&&) noexcept = default;
  unique_function& operator=(unique_function&&) noexcept = default;

  explicit operator bool() const { return impl_ != nullptr; }
  R operator()(Args... args) { return impl_->call(std::forward<Args>(args)...); }

 private:
  struct concept_base {
    virtual ~concept_base() = default;
    virtual R call(Args... args) = 0;
  };
  template <class F>
  struct model final : concept_base {
    explicit model(F&& f) : fn(std::move(f)) {}
    explicit model(const F& f) : fn(f) {}
    R call(Args... args) override { return fn(std::forward<Args>(args)...); }
    F fn;
  };
  std::unique_ptr<concept_base> impl_;
};

}  // namespace relock::detail
