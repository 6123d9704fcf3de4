// SPDX-License-Identifier: Apache-2.0
// The async variant of uncontended and n-locks: C chains of async_lock -> async_unlock, each
// link started from the previous one's completion handler, so every handler runs on relock's
// I/O thread and no caller thread is woken per operation. Next to the sync figures, this
// separates what the round trips cost from what handing each call to the I/O thread and back
// costs.
#include <future>
#include <memory>
#include <optional>

#include <relock/client.hpp>

#include "driver.hpp"

namespace relock_bench {
namespace {

class chains {
 public:
  chains(relock::client& client, const std::string& prefix, int n, clock::time_point end)
      : end_(end), left_(n) {
    for (int i = 0; i < n; ++i) locks_.push_back(client.lock(prefix + std::to_string(i)));
    pair_.reserve(200'000);
  }

  std::future<void> run() {
    auto finished = done_->get_future();
    for (std::size_t i = 0; i < locks_.size(); ++i) next(i, clock::now());
    return finished;
  }

  samples& pairs() { return pair_; }
  std::int64_t errors() const { return errors_; }

 private:
  // Handlers run on the I/O thread, one at a time: no synchronisation needed here.
  void next(std::size_t i, clock::time_point started) {
    locks_[i].async_lock(me_, {}, [this, i, started](std::error_code ec) {
      if (ec) {
        ++errors_;
        return stop_one();
      }
      locks_[i].async_unlock(me_, [this, i, started](std::error_code ec) {
        if (ec) ++errors_;
        const auto now = clock::now();
        pair_.add(now - started);
        if (now >= end_ || pair_.count() >= max_pairs) return stop_one();
        next(i, now);
      });
    });
  }
  void stop_one() {
    // A local reference: set_value may still run here after the waiting thread woke up and
    // destroyed this object.
    if (--left_ == 0) std::shared_ptr<std::promise<void>>(done_)->set_value();
  }

  static constexpr std::size_t max_pairs = 2'000'000;
  const relock::owner me_ = relock::owner::unique();
  std::vector<relock::mutex> locks_;
  clock::time_point end_;
  int left_;
  samples pair_;
  std::int64_t errors_ = 0;
  std::shared_ptr<std::promise<void>> done_ = std::make_shared<std::promise<void>>();
};

}  // namespace

result run_async_pairs(const options& o, int n) {
  relock::config settings = client_settings(o);
  relock::client client(settings);
  const std::string prefix = "bench:" + base_scenario(o.scenario) + ":";
  {
    chains warm(client, prefix, n, clock::now() + std::chrono::milliseconds(100));
    warm.run().get();
  }
  server_probe probe(o.probe());
  std::optional<chains> run;  // made inside the window, as the chains start from their end
  const auto [window, cpu, server] = run_window(o, probe, [&](clock::time_point end) {
    run.emplace(client, prefix, n, end);
    run->run().get();
  });

  auto& pair = run->pairs();
  const auto pairs = static_cast<std::int64_t>(pair.count());
  result r = make_result(o);
  r.set("pairs_per_s", static_cast<double>(pairs) / window)
      .set("pair_p50_us", pair.percentile_us(0.50))
      .set("pair_p99_us", pair.percentile_us(0.99))
      .set("pair_max_us", pair.max_us())
      .set("chains", static_cast<std::int64_t>(n))
      .set("pairs", pairs)
      .set("errors", run->errors());
  add_common(r, o, window, cpu, server, pairs);
  return r;
}

}  // namespace relock_bench
