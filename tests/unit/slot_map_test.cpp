// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <functional>
#include <ostream>

#include "support/reply_builders.hpp"
#include "topology/slot_map.hpp"

using relock::resp::reply;
using relock::topology::node;
using relock::topology::slot_count;
using relock::topology::slot_map;

// Readable failure messages (gtest would dump the bytes of 16384 slots).
namespace relock::topology {
void PrintTo(const node& n, std::ostream* os) { *os << n.address(); }
void PrintTo(const slot_map& map, std::ostream* os) {
  *os << "{";
  for (std::uint32_t first = 0; first < slot_count;) {
    const auto* m = map.master_of(static_cast<std::uint16_t>(first));
    auto last = first;
    while (last + 1 < slot_count && map.master_of(static_cast<std::uint16_t>(last + 1)) == m) {
      ++last;
    }
    *os << (first ? ", " : "") << first << "-" << last << ": " << (m ? m->address() : "none");
    first = last + 1;
  }
  *os << "}";
}
}  // namespace relock::topology

// The replies below were captured from redis-server 7.0.15, six nodes on 127.0.0.1:7101-7106
// made into 3 masters + 3 replicas by `redis-cli --cluster create --cluster-replicas 1`, read
// over RESP2 (the protocol relock speaks). Node ids are shortened.
namespace {

using relock::test::arr;
using relock::test::num;
using relock::test::str;

const std::string here = "127.0.0.1";

// One node of CLUSTER SHARDS, its fields in the server's order.
reply shard_node(std::string id, std::int64_t port, std::string role, std::string health,
                 std::string endpoint = here, std::string ip = here) {
  return arr({str("id"), str(std::move(id)), str("port"), num(port), str("ip"), str(std::move(ip)),
              str("endpoint"), str(std::move(endpoint)), str("role"), str(std::move(role)),
              str("replication-offset"), num(14), str("health"), str(std::move(health))});
}

reply shard(std::vector<reply> slots, std::vector<reply> nodes) {
  return arr({str("slots"), arr(std::move(slots)), str("nodes"), arr(std::move(nodes))});
}

// CLUSTER SHARDS of the healthy cluster. The shards come in the server's own order.
reply healthy_shards() {
  return arr({
      shard({num(5461), num(10922)}, {shard_node("50bb", 7102, "master", "online"),
                                      shard_node("1305", 7106, "replica", "online")}),
      shard({num(0), num(5460)}, {shard_node("8778", 7101, "master", "online"),
                                  shard_node("611a", 7105, "replica", "online")}),
      shard({num(10923), num(16383)}, {shard_node("631d", 7103, "master", "online"),
                                       shard_node("4329", 7104, "replica", "online")}),
  });
}

// One node of CLUSTER SLOTS: [host, port, id, metadata]; Redis 7 adds the (here empty)
// metadata, a flat key/value array.
reply slots_node(reply host, std::int64_t port, std::string id, std::vector<reply> meta = {}) {
  return arr({std::move(host), num(port), str(std::move(id)), arr(std::move(meta))});
}

// CLUSTER SLOTS of the same cluster, at the same moment.
reply healthy_slots() {
  return arr({
      arr({num(0), num(5460), slots_node(str(here), 7101, "8778"),
           slots_node(str(here), 7105, "611a")}),
      arr({num(5461), num(10922), slots_node(str(here), 7102, "50bb"),
           slots_node(str(here), 7106, "1305")}),
      arr({num(10923), num(16383), slots_node(str(here), 7103, "631d"),
           slots_node(str(here), 7104, "4329")}),
  });
}

node at(std::uint16_t port, std::string host = here) { return node{std::move(host), port}; }

std::vector<node> replicas(const slot_map& map, std::uint16_t slot) {
  auto span = map.replicas_of(slot);
  return {span.begin(), span.end()};
}

}  // namespace

TEST(slot_map, from_cluster_shards) {
  auto map = slot_map::from_shards(healthy_shards(), here);
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->covers_all());
  EXPECT_EQ(*map->master_of(0), at(7101));
  EXPECT_EQ(*map->master_of(5460), at(7101));
  EXPECT_EQ(*map->master_of(5461), at(7102));
  EXPECT_EQ(*map->master_of(10922), at(7102));
  EXPECT_EQ(*map->master_of(10923), at(7103));
  EXPECT_EQ(*map->master_of(16383), at(7103));
  EXPECT_EQ(replicas(*map, 0), std::vector{at(7105)});
  EXPECT_EQ(replicas(*map, 16383), std::vector{at(7104)});
  // By the first slot each serves, not in the reply's order.
  EXPECT_EQ(map->masters(), (std::vector{at(7101), at(7102), at(7103)}));
  EXPECT_EQ(map->master_of(slot_count), nullptr);
  EXPECT_TRUE(map->replicas_of(slot_count).empty());
}

TEST(slot_map, from_cluster_slots_is_the_same_map) {
  auto shards = slot_map::from_shards(healthy_shards(), here);
  auto slots = slot_map::from_slots(healthy_slots(), here);
  ASSERT_TRUE(shards && slots);
  EXPECT_EQ(*slots, *shards);
  EXPECT_EQ(*slots->master_of(8000), at(7102));
  EXPECT_EQ(replicas(*slots, 8000), std::vector{at(7106)});
}

// Slot 100 moved from 7101 to 7102 (CLUSTER SETSLOT 100 NODE on both): SHARDS lists two ranges
// for 7102, SLOTS splits 7101's range around it.
TEST(slot_map, several_ranges_per_master) {
  auto shards = healthy_shards();
  shards.elements[0].elements[1] = arr({num(100), num(100), num(5461), num(10922)});
  shards.elements[1].elements[1] = arr({num(0), num(99), num(101), num(5460)});
  auto from_shards = slot_map::from_shards(shards, here);
  ASSERT_TRUE(from_shards);
  EXPECT_EQ(*from_shards->master_of(99), at(7101));
  EXPECT_EQ(*from_shards->master_of(100), at(7102));
  EXPECT_EQ(*from_shards->master_of(101), at(7101));
  EXPECT_TRUE(from_shards->covers_all());

  auto slots = arr({
      arr({num(0), num(99), slots_node(str(here), 7101, "8778"),
           slots_node(str(here), 7105, "611a")}),
      arr({num(100), num(100), slots_node(str(here), 7102, "50bb"),
           slots_node(str(here), 7106, "1305")}),
      arr({num(101), num(5460), slots_node(str(here), 7101, "8778"),
           slots_node(str(here), 7105, "611a")}),
      arr({num(5461), num(10922), slots_node(str(here), 7102, "50bb"),
           slots_node(str(here), 7106, "1305")}),
      arr({num(10923), num(16383), slots_node(str(here), 7103, "631d"),
           slots_node(str(here), 7104, "4329")}),
  });
  auto from_slots = slot_map::from_slots(slots, here);
  ASSERT_TRUE(from_slots);
  EXPECT_EQ(*from_slots, *from_shards);
  EXPECT_EQ(from_slots->masters().size(), 3u);
}

// 7103 killed: 7104 took over. SHARDS lists the dead master apart, with no slots; SLOTS leaves
// it out.
TEST(slot_map, after_a_failover) {
  auto shards = arr({
      shard({num(10923), num(16383)}, {shard_node("4329", 7104, "master", "online")}),
      healthy_shards().elements[0],
      healthy_shards().elements[1],
      shard({}, {shard_node("631d", 7103, "master", "fail")}),
  });
  auto map = slot_map::from_shards(shards, here);
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->covers_all());
  EXPECT_EQ(*map->master_of(12000), at(7104));
  EXPECT_TRUE(map->replicas_of(12000).empty());
  EXPECT_EQ(map->masters(), (std::vector{at(7101), at(7102), at(7104)}));

  auto slots = healthy_slots();
  slots.elements[2] = arr({num(10923), num(16383), slots_node(str(here), 7104, "4329")});
  EXPECT_EQ(slot_map::from_slots(slots, here), map);
}

// Then 7104 killed too, with no replica left: cluster_state:fail. SHARDS says the master failed
// and its slots stay uncovered, so the caller refreshes; SLOTS has no health and keeps it.
TEST(slot_map, a_failed_master_serves_nothing) {
  auto shards = arr({
      shard({num(10923), num(16383)}, {shard_node("4329", 7104, "master", "fail")}),
      healthy_shards().elements[0],
      healthy_shards().elements[1],
      shard({}, {shard_node("631d", 7103, "master", "fail")}),
  });
  auto map = slot_map::from_shards(shards, here);
  ASSERT_TRUE(map);
  EXPECT_FALSE(map->covers_all());
  EXPECT_EQ(map->master_of(10923), nullptr);
  EXPECT_EQ(map->master_of(16383), nullptr);
  EXPECT_EQ(*map->master_of(10922), at(7102));
  EXPECT_EQ(map->masters(), (std::vector{at(7101), at(7102)}));

  auto slots = healthy_slots();
  slots.elements[2] = arr({num(10923), num(16383), slots_node(str(here), 7104, "4329")});
  auto from_slots = slot_map::from_slots(slots, here);
  ASSERT_TRUE(from_slots);
  EXPECT_EQ(*from_slots->master_of(16383), at(7104));
}

// A failed master whose replica is still online (the moment before the failover): nothing.
// A master listed after a failed one in the same shard is the one that counts.
TEST(slot_map, only_a_master_that_has_not_failed_counts) {
  auto map = slot_map::from_shards(
      arr({shard({num(0), num(16383)}, {shard_node("a", 7101, "master", "fail"),
                                        shard_node("b", 7102, "replica", "online")})}),
      here);
  ASSERT_TRUE(map);
  EXPECT_EQ(map->master_of(0), nullptr);
  EXPECT_TRUE(map->replicas_of(0).empty());

  map = slot_map::from_shards(
      arr({shard({num(0), num(16383)}, {shard_node("a", 7101, "master", "fail"),
                                        shard_node("b", 7102, "master", "online")})}),
      here);
  ASSERT_TRUE(map);
  EXPECT_EQ(*map->master_of(0), at(7102));
}

// Right after `--cluster create` the replicas were still syncing: health "loading". A loading
// master keeps its slots (it answers LOADING, a transient error), a loading replica is left out.
TEST(slot_map, loading_nodes) {
  auto shards = healthy_shards();
  for (auto& s : shards.elements) s.elements[3].elements[1].elements[13] = str("loading");
  shards.elements[1].elements[3].elements[0].elements[13] = str("loading");
  auto map = slot_map::from_shards(shards, here);
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->covers_all());
  EXPECT_EQ(*map->master_of(0), at(7101));
  for (std::uint16_t slot : {0, 6000, 12000}) EXPECT_TRUE(map->replicas_of(slot).empty()) << slot;
}

// cluster-preferred-endpoint-type unknown-endpoint (nodes behind a load balancer): SHARDS gives
// endpoint "", SLOTS a null host with the ip in the metadata, and MOVED ":7103". The documented
// answer is the host the client reached the cluster by, whatever the ip says.
TEST(slot_map, unknown_endpoint_is_the_answering_host) {
  auto shards = healthy_shards();
  for (auto& s : shards.elements) {
    for (auto& n : s.elements[3].elements) n.elements[7] = str("");
  }
  auto map = slot_map::from_shards(shards, "lb.example");
  ASSERT_TRUE(map);
  EXPECT_EQ(*map->master_of(0), at(7101, "lb.example"));
  EXPECT_EQ(replicas(*map, 0), std::vector{at(7105, "lb.example")});

  auto slots = arr(
      {arr({num(0), num(16383), slots_node(reply::make_nil(), 7101, "8778", {str("ip"), str(here)}),
            slots_node(reply::make_nil(), 7105, "611a", {str("ip"), str(here)})})});
  auto from_slots = slot_map::from_slots(slots, "lb.example");
  ASSERT_TRUE(from_slots);
  EXPECT_EQ(*from_slots->master_of(16383), at(7101, "lb.example"));
  EXPECT_EQ(replicas(*from_slots, 0), std::vector{at(7105, "lb.example")});
}

// cluster-preferred-endpoint-type hostname on a node with no cluster-announce-hostname: "?" in
// SHARDS, SLOTS and MOVED ("MOVED 12182 ?:7103"); the node's ip is the best address known.
// With a hostname announced, SHARDS adds a "hostname" field and SLOTS puts it first.
TEST(slot_map, hostnames) {
  auto shards = healthy_shards();
  for (auto& s : shards.elements) {
    for (auto& n : s.elements[3].elements) n.elements[7] = str("?");
  }
  auto& b = shards.elements[0].elements[3].elements[0];
  b.elements[7] = str("node-b.local");
  b.elements.insert(b.elements.begin() + 8, {str("hostname"), str("node-b.local")});
  ASSERT_EQ(b.elements.size(), 16u);
  auto map = slot_map::from_shards(shards, "elsewhere");
  ASSERT_TRUE(map);
  EXPECT_EQ(*map->master_of(0), at(7101));
  EXPECT_EQ(*map->master_of(6000), at(7102, "node-b.local"));

  auto slots = arr({
      arr({num(0), num(5460), slots_node(str("?"), 7101, "8778", {str("ip"), str(here)})}),
      arr({num(5461), num(16383),
           slots_node(str("node-b.local"), 7102, "50bb", {str("ip"), str(here)})}),
  });
  auto from_slots = slot_map::from_slots(slots, "elsewhere");
  ASSERT_TRUE(from_slots);
  EXPECT_EQ(*from_slots->master_of(0), at(7101));
  EXPECT_EQ(*from_slots->master_of(6000), at(7102, "node-b.local"));
}

TEST(slot_map, no_usable_address_falls_back_to_the_answering_host) {
  // "?" with no ip known ("" when a node does not know its own address yet), or no ip at all.
  auto shards =
      arr({shard({num(0), num(16383)}, {shard_node("a", 7101, "master", "online", "?", "")})});
  EXPECT_EQ(*slot_map::from_shards(shards, "seed")->master_of(0), at(7101, "seed"));
  auto slots = arr({arr({num(0), num(16383), slots_node(str("?"), 7101, "a")})});
  EXPECT_EQ(*slot_map::from_slots(slots, "seed")->master_of(0), at(7101, "seed"));
  slots = arr({arr({num(0), num(16383), arr({str(""), num(7101)})})});  // Redis 3: no id
  EXPECT_EQ(*slot_map::from_slots(slots, "seed")->master_of(0), at(7101, "seed"));
}

TEST(slot_map, ipv6) {
  auto shards =
      arr({shard({num(0), num(16383)}, {shard_node("a", 7000, "master", "online", "::1", "::1")})});
  auto map = slot_map::from_shards(shards, "::1");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->master_of(0)->host, "::1");
  EXPECT_EQ(map->master_of(0)->address(), "[::1]:7000");
  EXPECT_EQ(at(7000).address(), "127.0.0.1:7000");
}

// With TLS, SHARDS adds "tls-port" and leaves "port" out when there is no plain-text port.
TEST(slot_map, a_tls_only_node_is_refused_with_a_reason) {
  auto shards = healthy_shards();
  auto& n = shards.elements[1].elements[3].elements[0];
  n.elements[2] = str("tls-port");
  std::string why;
  EXPECT_EQ(slot_map::from_shards(shards, here, &why), std::nullopt);
  EXPECT_NE(why.find("TLS"), std::string::npos) << why;
  // Beside a plain-text port it is just another field.
  shards = healthy_shards();
  auto& m = shards.elements[1].elements[3].elements[0];
  m.elements.insert(m.elements.begin() + 4, {str("tls-port"), num(17101)});
  EXPECT_EQ(slot_map::from_shards(shards, here), slot_map::from_shards(healthy_shards(), here));
}

TEST(slot_map, slots_without_a_master_are_not_covered) {
  auto one = arr({healthy_shards().elements[1]});  // only 0-5460
  auto map = slot_map::from_shards(one, here);
  ASSERT_TRUE(map);
  EXPECT_FALSE(map->covers_all());
  EXPECT_EQ(*map->master_of(5460), at(7101));
  EXPECT_EQ(map->master_of(5461), nullptr);
  EXPECT_TRUE(map->replicas_of(5461).empty());

  auto empty = slot_map::from_slots(arr({}), here);  // a node with no slots assigned yet
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->covers_all());
  EXPECT_TRUE(empty->masters().empty());
  EXPECT_EQ(*empty, slot_map());
  EXPECT_EQ(*slot_map::from_shards(arr({}), here), slot_map());
}

TEST(slot_map, refuses_what_it_cannot_read_with_a_reason) {
  auto expect_refused = [](const std::optional<slot_map>& map, const std::string& why,
                           std::string_view says) {
    EXPECT_EQ(map, std::nullopt);
    EXPECT_NE(why.find(says), std::string::npos) << why;
  };
  std::string why;
  auto redis6 = reply::make_error("ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP.");
  expect_refused(slot_map::from_shards(redis6, here, &why), why, "unknown subcommand");
  auto standalone = reply::make_error("ERR This instance has cluster support disabled");
  expect_refused(slot_map::from_slots(standalone, here, &why), why, "cluster support disabled");
  expect_refused(slot_map::from_shards(str("OK"), here, &why), why, "not an array");
  expect_refused(slot_map::from_slots(num(1), here, &why), why, "not an array");

  auto shards_with = [](std::vector<reply> slots) {
    return arr({shard(std::move(slots), {shard_node("a", 7101, "master", "online")})});
  };
  const std::vector<std::vector<reply>> bad_ranges = {
      {num(5), num(4)}, {num(0), num(16384)}, {num(-1), num(3)}};
  for (const auto& slots : bad_ranges) {
    expect_refused(slot_map::from_shards(shards_with(slots), here, &why), why, "out of 0..16383");
  }
  expect_refused(slot_map::from_shards(shards_with({num(0)}), here, &why), why, "lacks");
  expect_refused(slot_map::from_shards(shards_with({str("0"), str("9")}), here, &why), why,
                 "out of");
  auto twice = healthy_shards();
  twice.elements[0].elements[1] = arr({num(5460), num(10922)});
  expect_refused(slot_map::from_shards(twice, here, &why), why, "slot 5460 twice");
  auto slots_twice = healthy_slots();
  slots_twice.elements[1].elements[0] = num(5000);
  expect_refused(slot_map::from_slots(slots_twice, here, &why), why, "slot 5000 twice");

  auto no_role = healthy_shards();
  no_role.elements[2].elements[3].elements[1].elements[8] = str("rule");
  expect_refused(slot_map::from_shards(no_role, here, &why), why, "without a role");

  auto bad_port = healthy_slots();
  bad_port.elements[0].elements[2].elements[1] = num(0);
  expect_refused(slot_map::from_slots(bad_port, here, &why), why, "unreadable master");
  bad_port.elements[0].elements[2].elements[1] = num(65536);
  expect_refused(slot_map::from_slots(bad_port, here, &why), why, "unreadable master");
  auto bad_replica = healthy_slots();
  bad_replica.elements[0].elements[3] = str("127.0.0.1:7105");
  expect_refused(slot_map::from_slots(bad_replica, here, &why), why, "unreadable replica");
  auto short_entry = healthy_slots();
  short_entry.elements[0].elements.resize(2);
  expect_refused(slot_map::from_slots(short_entry, here, &why), why, "is not [start, end");
}

TEST(slot_map, moved) {
  auto map = *slot_map::from_shards(healthy_shards(), here);
  const auto before = map;
  // To a known master: the slot joins its shard, replicas included.
  map.moved(100, at(7102));
  EXPECT_EQ(*map.master_of(100), at(7102));
  EXPECT_EQ(replicas(map, 100), std::vector{at(7106)});
  EXPECT_EQ(*map.master_of(99), at(7101));
  EXPECT_NE(map, before);
  map.moved(100, at(7101));
  EXPECT_EQ(map, before);

  // To a node the map has not seen as a master (a promoted replica, a new node): no replicas
  // known until the next refresh.
  map.moved(12182, at(7104));
  EXPECT_EQ(*map.master_of(12182), at(7104));
  EXPECT_TRUE(map.replicas_of(12182).empty());
  EXPECT_EQ(map.masters(), (std::vector{at(7101), at(7102), at(7103), at(7104)}));

  map.moved(slot_count, at(7104));  // out of range: ignored
  EXPECT_EQ(map.master_of(slot_count), nullptr);
}

// A whole master's slots moved one MOVED at a time, to a node and then on to another: the
// result is the map the server would give, and the emptied entries are reused, not piled up.
TEST(slot_map, moved_slot_by_slot) {
  auto map = *slot_map::from_shards(healthy_shards(), here);
  for (int round = 0; round < 50; ++round) {
    const std::uint16_t port = static_cast<std::uint16_t>(8000 + round);
    for (std::uint32_t slot = 10923; slot < slot_count; ++slot) {
      map.moved(static_cast<std::uint16_t>(slot), at(port));
    }
    EXPECT_EQ(map.masters(), (std::vector{at(7101), at(7102), at(port)}));
  }
  auto expected = healthy_slots();
  expected.elements[2] = arr({num(10923), num(16383), slots_node(str(here), 8049, "new")});
  EXPECT_EQ(map, slot_map::from_slots(expected, here));
}

TEST(slot_map, equality_ignores_the_order_of_shards_and_replicas) {
  auto shards = healthy_shards();
  std::swap(shards.elements[0], shards.elements[2]);
  auto& nodes = shards.elements[1].elements[3].elements;
  nodes.push_back(shard_node("9999", 7107, "replica", "online"));
  auto reordered = shards;
  std::swap(reordered.elements[1].elements[3].elements[1],
            reordered.elements[1].elements[3].elements[2]);
  auto a = slot_map::from_shards(shards, here);
  auto b = slot_map::from_shards(reordered, here);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(replicas(*a, 0), (std::vector{at(7105), at(7107)}));
  EXPECT_NE(*a, *slot_map::from_shards(healthy_shards(), here));  // one replica more
  auto copy = *a;
  EXPECT_EQ(copy, *a);
  copy.moved(16383, at(7101));
  EXPECT_NE(copy, *a);
}

// Every element of the captured replies, in turn, replaced by a value of each other type and
// each array cut short: the parsers must neither throw nor crash, and whatever map they accept
// has a usable address for every served slot.
TEST(slot_map, survives_mangled_replies) {
  const std::vector<reply> substitutes = {reply::make_nil(),
                                          num(-1),
                                          num(0),
                                          num(7000),
                                          num(70000),
                                          str(""),
                                          str("?"),
                                          str("x"),
                                          reply::make_error("ERR x"),
                                          reply::make_status("OK"),
                                          arr({}),
                                          arr({num(1), num(2)})};
  std::size_t accepted = 0, refused = 0;
  auto check = [&](const reply& r) {
    for (bool shards : {true, false}) {
      std::optional<slot_map> map;
      EXPECT_NO_THROW(map = shards ? slot_map::from_shards(r, "seed")
                                   : slot_map::from_slots(r, "seed"));
      if (!map) {
        ++refused;
        continue;
      }
      ++accepted;
      for (const auto& m : map->masters()) {
        EXPECT_FALSE(m.host.empty());
        EXPECT_NE(m.port, 0);
      }
      for (std::uint32_t slot = 0; slot < slot_count; slot += 97) {
        const auto* m = map->master_of(static_cast<std::uint16_t>(slot));
        if (m) {
          EXPECT_NE(m->port, 0);
        }
      }
    }
  };
  // Visits every element (the root too) with a way to change it in a copy of the whole.
  std::function<void(const reply&, const std::function<void(std::function<void(reply&)>)>&)> visit =
      [&](const reply& r, const std::function<void(std::function<void(reply&)>)>& edit) {
        for (const auto& s : substitutes) edit([&](reply& x) { x = s; });
        for (std::size_t keep = 0; keep < r.elements.size(); ++keep) {
          edit([&](reply& x) { x.elements.resize(keep); });
        }
        for (std::size_t i = 0; i < r.elements.size(); ++i) {
          visit(r.elements[i], [&](std::function<void(reply&)> change) {
            edit([&](reply& x) { change(x.elements[i]); });
          });
        }
      };
  for (const auto& original : {healthy_shards(), healthy_slots()}) {
    visit(original, [&](std::function<void(reply&)> change) {
      reply copy = original;
      change(copy);
      check(copy);
    });
  }
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(refused, 100u);
}
