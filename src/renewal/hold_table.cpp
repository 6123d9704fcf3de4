// SPDX-License-Identifier: Apache-2.0
#include "renewal/hold_table.hpp"

#include "topology/slot.hpp"

namespace relock::renewal {

hold_table::hold& hold_table::held(const std::string& key, const std::string& field,
                                   std::string owner, std::chrono::milliseconds lease,
                                   const renewer* renew,
                                   std::function<void(std::error_code)> on_lost, time_point sent_at,
                                   std::string_view token, std::int64_t holds) {
  const key_view id{key, field};
  if (auto gone = lost_.find(id); gone != lost_.end()) lost_.erase(gone);
  auto it = holds_.find(id);
  if (it == holds_.end()) {
    if (auto node = spare_holds_.take()) {
      node.key().first.assign(key);
      node.key().second.assign(field);
      it = holds_.insert(std::move(node)).position;
    } else {
      it = holds_.emplace(hold_key{key, field}, hold{}).first;
    }
  }
  hold& h = it->second;
  if (holds == 1) h.count = 0;  // the server says it is new
  if (h.count == 0) {
    h.generation = next_generation_++;
    h.first_token = token;
    h.taken_at = sent_at;
  }
  // A re-entry set the key's expiry afresh; an older confirmation says less.
  h.confirmed_at = h.count == 0 ? sent_at : std::max(h.confirmed_at, sent_at);
  ++h.count;
  h.lease = lease;
  h.valid_until = h.confirmed_at + lease - validity_margin(lease);
  h.renew = renew;
  h.owner = std::move(owner);
  if (on_lost) h.on_lost = std::move(on_lost);
  return h;
}

hold_table::release_plan hold_table::releasing(const std::string& key, const std::string& field,
                                               std::chrono::milliseconds unknown_lease) {
  const key_view id{key, field};
  release_plan plan;
  if (auto gone = lost_.find(id); gone != lost_.end()) {
    lost_.erase(gone);
    plan.known = plan.lost = true;
    return plan;
  }
  auto it = holds_.find(id);
  if (it == holds_.end()) {
    plan.lease = unknown_lease;
    return plan;
  }
  plan.known = true;
  plan.lease = it->second.lease;
  plan.taken_at = it->second.taken_at;
  if (--it->second.count <= 0) drop(it);
  return plan;
}

void hold_table::forget(const std::string& key, const std::string& field) {
  if (auto it = holds_.find(key_view{key, field}); it != holds_.end()) drop(it);
}

void hold_table::drop(hold_map::iterator it) {
  if (on_drop) on_drop(it->second);
  keep_spare(holds_.extract(it));
}

void hold_table::keep_spare(hold_map::node_type node) {
  // As a new hold, but with its strings' buffers: nothing it held (a listener, on_lost) stays.
  hold& h = node.mapped();
  std::string owner = std::move(h.owner);
  std::string token = std::move(h.first_token);
  h = hold{};
  owner.clear();
  token.clear();
  h.owner = std::move(owner);
  h.first_token = std::move(token);
  spare_holds_.keep(std::move(node));
}

std::optional<hold_table::call> hold_table::renewal_of(key_view id,
                                                       std::chrono::milliseconds lease) const {
  auto it = holds_.find(id);
  if (it == holds_.end() || it->second.renew == nullptr ||
      releasing_.find(id) != releasing_.end()) {
    return std::nullopt;
  }
  const hold& h = it->second;
  call c{&h.renew->script, {}, {std::to_string(lease.count())}, {{it->first, h.generation}}};
  h.renew->append(id.first, h.owner, h.count, c.keys, c.args);
  return c;
}

std::vector<hold_table::call> hold_table::renewals(std::chrono::milliseconds lease,
                                                   std::size_t batch, bool group_by_slot) const {
  std::map<std::pair<const exec::script*, std::uint16_t>, std::vector<const hold_key*>> groups;
  for (const auto& [id, h] : holds_) {
    if (h.renew == nullptr || releasing_.count(id) != 0) continue;
    const std::uint16_t slot = group_by_slot ? topology::slot_of(id.first) : 0;
    groups[{&h.renew->script, slot}].push_back(&id);
  }
  std::vector<call> calls;
  for (const auto& [group, ids] : groups) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (i % batch == 0)
        calls.push_back(call{group.first, {}, {std::to_string(lease.count())}, {}});
      const hold& h = holds_.at(*ids[i]);
      h.renew->append(ids[i]->first, h.owner, h.count, calls.back().keys, calls.back().args);
      calls.back().targets.push_back({*ids[i], h.generation});
    }
  }
  return calls;
}

std::vector<hold_table::lost_hold> hold_table::renewed(const std::vector<target>& targets,
                                                       const resp::reply& reply, time_point sent_at,
                                                       time_point now) {
  std::vector<lost_hold> lost;
  for (std::size_t i = 0; i < targets.size() && i < reply.elements.size(); ++i) {
    auto it = holds_.find(targets[i].id);
    // Released or taken afresh since the renewal went out: not ours to judge.
    if (it == holds_.end() || it->second.generation != targets[i].generation) continue;
    if (reply.elements[i].integer != 0) {
      hold& h = it->second;
      h.confirmed_at = std::max(h.confirmed_at, sent_at);
      h.valid_until = h.confirmed_at + h.lease - validity_margin(h.lease);
    } else {
      lost.push_back(lose(it, errc::lock_lost, now));
    }
  }
  return lost;
}

std::vector<hold_table::lost_hold> hold_table::expire_unconfirmed(time_point now) {
  std::vector<lost_hold> lost;
  for (auto it = holds_.begin(); it != holds_.end();) {
    auto next = std::next(it);
    if (it->second.renew != nullptr && now >= it->second.valid_until) {
      lost.push_back(lose(it, errc::renewal_failed, now));
    }
    it = next;
  }
  return lost;
}

std::optional<hold_table::time_point> hold_table::next_deadline() const {
  std::optional<time_point> earliest;
  for (const auto& [id, h] : holds_) {
    if (h.renew != nullptr && (!earliest || h.valid_until < *earliest)) earliest = h.valid_until;
  }
  return earliest;
}

std::optional<hold_table::lost_hold> hold_table::checked(const hold_key& id,
                                                         std::uint64_t generation, bool exists,
                                                         time_point now) {
  auto it = holds_.find(id);
  if (exists || it == holds_.end() || it->second.generation != generation) return std::nullopt;
  return lose(it, errc::lock_lost, now);
}

void hold_table::count_up(count_map& counts, key_view id) {
  if (auto it = counts.find(id); it != counts.end()) {
    ++it->second;
    return;
  }
  auto node = spare_counts_.take();
  if (!node) {
    counts.emplace(hold_key{id.first, id.second}, 1);
    return;
  }
  node.key().first.assign(id.first);
  node.key().second.assign(id.second);
  node.mapped() = 1;
  counts.insert(std::move(node));
}

// One fewer in flight; the entry goes at zero. True when it went.
bool hold_table::count_down(count_map& counts, key_view id) {
  auto it = counts.find(id);
  if (it == counts.end()) return false;
  if (--it->second > 0) return false;
  spare_counts_.keep(counts, it);
  return true;
}

void hold_table::release_sent(key_view id) { count_up(releasing_, id); }

void hold_table::release_answered(key_view id) { count_down(releasing_, id); }

void hold_table::renewal_sent(const std::vector<target>& targets) {
  for (const auto& t : targets) count_up(renewing_, key_view(t.id.first, t.id.second));
}

std::vector<hold_table::hold_key> hold_table::renewal_answered(const std::vector<target>& targets) {
  std::vector<hold_key> settled;
  for (const auto& t : targets) {
    if (count_down(renewing_, key_view(t.id.first, t.id.second))) settled.push_back(t.id);
  }
  return settled;
}

const hold_table::hold* hold_table::find(const std::string& key, const std::string& field) const {
  auto it = holds_.find(key_view{key, field});
  return it == holds_.end() ? nullptr : &it->second;
}

hold_table::lost_hold hold_table::lose(hold_map::iterator it, errc why, time_point now) {
  lost_hold lost{
      it->first, why, std::move(it->second.on_lost),
      std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.confirmed_at)};
  lost_.insert(it->first);
  drop(it);
  return lost;
}

}  // namespace relock::renewal
