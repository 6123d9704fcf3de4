// SPDX-License-Identifier: Apache-2.0
// A move-only std::function: completion handlers (Asio's included) are often move-only, and
// Debian's g++ 12 has no std::move_only_function in C++20 mode.
//
// A callable of up to `inline_size` bytes that moves without throwing lives inside the object:
// most of relock's callbacks (a lambda holding a pointer, a shared_ptr and an owner) do, and
// every lock and unlock makes several, so they cost no heap allocation (issue #36). Larger
// ones go to the heap.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace relock::detail {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
  static constexpr std::size_t inline_size = 6 * sizeof(void*);
  static constexpr std::size_t inline_align = alignof(std::max_align_t);

  template <class F>
  static constexpr bool fits_inline =
      sizeof(F) <= inline_size &&
      alignof(F) <= inline_align&& std::is_nothrow_move_constructible_v<F>;

 public:
  unique_function() = default;
  unique_function(std::nullptr_t) {}

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, unique_function>>>
  unique_function(F&& f) {
    using stored = std::decay_t<F>;
    if constexpr (fits_inline<stored>) {
      ::new (static_cast<void*>(storage_)) stored(std::forward<F>(f));
      ops_ = &inline_ops<stored>;
    } else {
      heap_ = new stored(std::forward<F>(f));
      ops_ = &heap_ops<stored>;
    }
  }

  unique_function(unique_function&& other) noexcept { take(other); }
  unique_function& operator=(unique_function&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  unique_function& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  ~unique_function() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  R operator()(Args... args) { return ops_->call(*this, std::forward<Args>(args)...); }

 private:
  struct operations {
    R (*call)(unique_function&, Args&&...);
    void (*move)(unique_function& to, unique_function& from) noexcept;  // from is left empty
    void (*destroy)(unique_function&) noexcept;
  };

  template <class F>
  F& inline_target() {
    return *std::launder(reinterpret_cast<F*>(storage_));
  }

  template <class F>
  static constexpr operations inline_ops{
      [](unique_function& self, Args&&... args) -> R {
        return self.inline_target<F>()(std::forward<Args>(args)...);
      },
      [](unique_function& to, unique_function& from) noexcept {
        ::new (static_cast<void*>(to.storage_)) F(std::move(from.inline_target<F>()));
        from.inline_target<F>().~F();
      },
      [](unique_function& self) noexcept { self.inline_target<F>().~F(); }};

  template <class F>
  static constexpr operations heap_ops{
      [](unique_function& self, Args&&... args) -> R {
        return (*static_cast<F*>(self.heap_))(std::forward<Args>(args)...);
      },
      [](unique_function& to, unique_function& from) noexcept {
        to.heap_ = std::exchange(from.heap_, nullptr);
      },
      [](unique_function& self) noexcept { delete static_cast<F*>(self.heap_); }};

  void take(unique_function& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move(*this, other);
    ops_ = std::exchange(other.ops_, nullptr);
  }
  void reset() noexcept {
    if (ops_ == nullptr) return;
    std::exchange(ops_, nullptr)->destroy(*this);
  }

  const operations* ops_ = nullptr;
  union {
    alignas(inline_align) unsigned char storage_[inline_size];
    void* heap_;
  };
};

}  // namespace relock::detail
