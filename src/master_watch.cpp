// SPDX-License-Identifier: Apache-2.0
#include "master_watch.hpp"

#include <relock/errors.hpp>

#include "exec/sentinel_discovery.hpp"

namespace relock::detail {
namespace {

using steady = std::chrono::steady_clock;

// Without Sentinel only the count of replicas can change: a slower look is enough.
constexpr std::chrono::milliseconds replica_count_period{10'000};

}  // namespace

namespace {

// Calls f(line) for each "slaveN:ip=...,state=online,offset=...,lag=..." line of INFO.
template <class F>
void for_each_online_replica(std::string_view info, F f) {
  while (!info.empty()) {
    const auto end = info.find('\n');
    auto line = info.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool replica = line.starts_with("slave") && line.size() > 5 && line[5] >= '0' &&
                         line[5] <= '9' && line.find(':') != std::string_view::npos;
    if (replica && line.find("state=online") != std::string_view::npos) f(line);
    if (end == std::string_view::npos) break;
    info.remove_prefix(end + 1);
  }
}

// The number after `name` (e.g. "offset=") in `text`, or -1.
long long number_after(std::string_view text, std::string_view name) {
  const auto at = text.find(name);
  if (at == std::string_view::npos) return -1;
  long long value = 0;
  bool any = false;
  for (auto i = at + name.size(); i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + (text[i] - '0');
    any = true;
  }
  return any ? value : -1;
}

}  // namespace

int online_replicas(std::string_view info) {
  int online = 0;
  for_each_online_replica(info, [&](std::string_view) { ++online; });
  return online;
}

int caught_up_replicas(std::string_view info) {
  const long long master = number_after(info, "\nmaster_repl_offset:");
  int caught_up = 0;
  for_each_online_replica(info, [&](std::string_view line) {
    if (master >= 0 && number_after(line, ",offset=") >= master) ++caught_up;
  });
  return caught_up;
}

master_watch::master_watch(asio::io_context& io, exec::executor& executor,
                           master_watch_options options, topology::node master)
    : io_(io),
      executor_(executor),
      options_(std::move(options)),
      view_(options_.master_name, std::move(master), options_.sync.known_replicas,
            options_.sentinels.empty() ? replica_count_period
                                       : topology::sentinel_view::default_period),
      timer_(io) {}

master_watch::~master_watch() { *alive_ = false; }

void master_watch::log(log_level level, const std::string& text) const {
  if (options_.log) options_.log(level, text);
}

void master_watch::start() {
  executor_.sync_with(options_.sync.replicas_to_wait(), options_.aof);
  view_.asking(steady::now());  // the client has just asked
  if (sentinel()) {
    // Both connections move on to the next sentinel whenever theirs is lost.
    auto o = options_.sentinel_connection;
    o.target = options_.sentinels[turn_++ % options_.sentinels.size()];
    o.next_target = [this, alive = alive_]() -> std::optional<net::endpoint> {
      if (!*alive) return std::nullopt;
      return options_.sentinels[turn_++ % options_.sentinels.size()];
    };
    asker_ = net::connection::create(io_, o);
    asker_->start();
    o.push_mode = true;
    auto events = net::connection::create(io_, o);
    listener_ = pubsub::subscriber::create(io_, events, options_.command_timeout, false);
    // A refused SUBSCRIBE (the sentinel user's ACL rules) leaves failovers to the asking alone.
    listener_->on_refused([this, alive = alive_](const std::string& text) {
      if (!*alive) return;
      log(log_level::error, "sentinel events: " + text +
                                " (failovers are found by asking, once a second; README, "
                                "least privilege)");
    });
    for (auto channel : topology::sentinel_view::channels()) {
      channels_.push_back(listener_->add(
          std::string(channel), [this](const pubsub::event& e) { heard(e); },
          [](std::error_code) {}));
    }
    events->start();
  }
  schedule();
}

void master_watch::close() {
  closed_ = true;
  *alive_ = false;
  timer_.cancel();
  if (asker_) asker_->close();
  if (listener_) listener_->close();
  if (prober_) prober_->close();
}

void master_watch::trouble() {
  if (closed_) return;
  view_.trouble();
  if (!asking_) schedule();
}

void master_watch::schedule() {
  if (closed_) return;
  timer_.expires_at(view_.next_ask());
  timer_.async_wait([this, alive = alive_](std::error_code ec) {
    if (ec || !*alive) return;
    ask();
  });
}

void master_watch::ask() {
  if (asking_ || closed_) return;
  asking_ = true;
  view_.asking(steady::now());
  if (sentinel()) return ask_sentinel();
  ask_master();
}

void master_watch::ask_master() {
  if (options_.listed_replicas) {
    asking_ = false;
    return;  // nothing to learn, and no need to look again
  }
  executor_.run(
      "", resp::request{"INFO", "replication"},
      [this, alive = alive_](std::error_code ec, resp::reply r) {
        if (!*alive) return;
        asking_ = false;
        if (!ec && r.is_string()) counted(online_replicas(r.str));
        schedule();
      },
      /*idempotent=*/true);
}

void master_watch::ask_sentinel() {
  resp::request asked;
  asked.push({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
  asked.push({"SENTINEL", "REPLICAS", options_.master_name});
  asker_->send(std::move(asked), net::clock::now() + options_.command_timeout,
               [this, alive = alive_](std::error_code ec, net::reply_span replies) {
                 if (!*alive) return;
                 asking_ = false;
                 std::string why;
                 std::optional<topology::node> named;
                 if (ec || replies.size() != 2) {
                   why = replies.empty() ? ec.message() : replies.back().str;
                 } else {
                   named = topology::sentinel_view::read_master(replies[0], &why);
                 }
                 if (!named) {
                   // Another sentinel may know better: ask the next one soon.
                   log(log_level::warning, "sentinel " + asker_->target().address() +
                                               " did not name the master '" + options_.master_name +
                                               "': " + why);
                   view_.trouble();
                   asker_->retarget(options_.sentinels[turn_++ % options_.sentinels.size()]);
                   return schedule();
                 }
                 if (auto n = topology::sentinel_view::count_replicas(replies[1])) counted(*n);
                 if (*named != view_.master()) {
                   confirm(*named);
                 } else if (!executor_.master_up()) {
                   // The master is down and Sentinel has not named another yet: a failover is
                   // likely under way, so keep asking at the short gap, not the period.
                   view_.trouble();
                 }
                 schedule();
               });
}

void master_watch::heard(const pubsub::event& e) {
  if (closed_) return;
  if (e.kind != pubsub::event_kind::message) {
    // The sentinel connection dropped or came back: news may have been missed meanwhile.
    return trouble();
  }
  auto news = view_.heard(e.channel, e.payload);
  if (news.new_master && *news.new_master != view_.master()) confirm(*news.new_master);
  if (news.ask) trouble();
}

void master_watch::confirm(const topology::node& candidate) {
  if (confirming_ || closed_) return;
  confirming_ = true;
  auto o = options_.data;
  o.target.host = candidate.host;
  o.target.port = candidate.port;
  o.push_mode = false;
  o.next_target = {};
  auto probe = net::connection::create(io_, o);
  // The probe's callbacks hold only a weak reference: close() or the end of the reply lets it go.
  std::weak_ptr<net::connection> weak = probe;
  // `replicas`: those the new master's ROLE lists, until Sentinel is asked (at once): the count
  // of the old master would make the first writes there wait for replicas it does not have.
  auto finish = [this, candidate](bool is_master, const std::string& why, int replicas = 0) {
    confirming_ = false;
    if (!is_master) {
      std::string text = "Sentinel names " + candidate.address() + " as the master of '" +
                         options_.master_name + "', but it " + why + ": staying on " +
                         view_.master().address();
      if (text != refusal_logged_) {
        log(log_level::warning, text + " (said once while it lasts)");
        refusal_logged_ = std::move(text);
      }
      view_.trouble();
      return schedule();
    }
    refusal_logged_.clear();
    log(log_level::warning, "the master of '" + options_.master_name + "' moved from " +
                                view_.master().address() + " to " + candidate.address());
    view_.moved(candidate);
    counted(replicas);
    executor_.move_master(candidate);
    if (options_.on_moved) options_.on_moved(candidate);
    trouble();  // Sentinel's count of the new master's replicas
  };
  probe->start([this, alive = alive_, weak, finish](std::error_code ec, std::string why) mutable {
    auto c = weak.lock();
    if (!*alive || !c) return;
    if (ec) {
      c->close();
      return finish(false, "does not answer (" + why + ")");
    }
    c->send(resp::request{"ROLE"}, net::clock::now() + options_.command_timeout,
            [alive, weak, finish](std::error_code ec, net::reply_span replies) mutable {
              if (auto c = weak.lock()) c->close();
              if (!*alive) return;
              const std::string role = ec || replies.empty() ? "" : exec::role_of(replies.front());
              // ROLE of a master: ["master", offset, [[ip, port, offset], ...]].
              if (role == "master") {
                const auto& r = replies.front();
                const auto listed = r.elements.size() >= 3 && r.elements[2].is_array()
                                        ? r.elements[2].elements.size()
                                        : std::size_t{0};
                return finish(true, {}, static_cast<int>(listed));
              }
              finish(false, role.empty() ? "did not answer ROLE" : "says it is a " + role);
            });
  });
  prober_ = std::move(probe);
}

void master_watch::counted(int replicas) {
  if (replicas == options_.sync.known_replicas) return;
  log(log_level::info, "the master " + view_.master().address() + " has " +
                           std::to_string(replicas) + " replica(s) that can take over");
  options_.sync.known_replicas = replicas;
  view_.counted(replicas);
  executor_.sync_with(options_.sync.replicas_to_wait(), options_.aof);
}

}  // namespace relock::detail
