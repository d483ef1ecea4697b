// Tests of compat/redis.hpp: CRC16/XMODEM, the hash-tag rule and slots against the vectors
// published by redis.io's cluster specification and Dragonfly's tests, the slot map
// and its bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/redis.hpp>
#include <keyplace/compat/redis_planner.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using keyplace::compat::redis_cluster;
using keyplace::compat::redis_slot;
using keyplace::compat::slot_range;
using keyplace::node;
using namespace keyplace_test;

TEST_CASE("redis: CRC16/XMODEM check value", "[redis][golden]") {
    STATIC_REQUIRE(keyplace::compat::crc16_xmodem("123456789") == 0x31C3);
    STATIC_REQUIRE(keyplace::compat::crc16_xmodem("") == 0);
}

TEST_CASE("redis: slots and hash tags as the server computes them", "[redis][golden]") {
    const std::vector<std::pair<std::string, int>> vectors{
        // published: redis.io CLUSTER KEYSLOT, cluster spec; Dragonfly docs
        {"somekey", 11058}, {"foo{hash_tag}", 2515}, {"bar{hash_tag}", 2515}, {"{user1}.following", 8106},
        // computed by an independent CRC16/XMODEM implementation
        {"foo", 12182}, {"bar", 5061}, {"hello", 866}, {"key", 12539}, {"user1000", 3443},
        {"{user1000}.following", 3443}, {"{user1000}.followers", 3443}, {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015}, {"foo{bar}{zap}", 5061}, {"{}", 15257}, {"{", 4092}, {"}", 12090},
        {"a{b}", 3300}, {"{a}b", 15495}, {"foo{bar", 15278}, {"123456789", 12739}, {"mykey", 14687},
        {"user:1000", 1649}, {"{user}.name", 5474}, {"key1", 9189}, {"key2", 4998}, {"", 0},
    };
    for (const auto& [key, slot] : vectors) {
        INFO(key);
        CHECK(redis_slot(key) == slot);
    }
    // The rule itself: the first '{', the first '}' after it, an empty tag hashes the whole key.
    STATIC_REQUIRE(keyplace::compat::redis_hash_tag("foo{}{bar}") == "foo{}{bar}");
    STATIC_REQUIRE(keyplace::compat::redis_hash_tag("foo{{bar}}zap") == "{bar");
    STATIC_REQUIRE(keyplace::compat::redis_hash_tag("foo{bar}{zap}") == "bar");
    STATIC_REQUIRE(keyplace::compat::redis_hash_tag("{a}b") == "a");
    STATIC_REQUIRE(keyplace::compat::redis_hash_tag("foo{bar") == "foo{bar");
    CHECK(redis_slot("{a}b") == redis_slot("a"));
}

TEST_CASE("redis: a slot map places keys by slot", "[redis]") {
    const std::vector<node> nodes{{"m1"}, {"m2"}, {"m3"}};
    const std::vector<slot_range> ranges{{0, 5460, "m1"}, {5461, 10922, "m2"}, {10923, 16383, "m3"}};
    const auto c = redis_cluster::build(nodes, ranges);
    CHECK(keyplace::locate(c, "somekey").id == "m3");     // slot 11058
    CHECK(keyplace::locate(c, "foo{hash_tag}").id == "m1");  // slot 2515
    CHECK(keyplace::locate(c, "hello").id == "m1");       // slot 866
    CHECK(keyplace::locate(c, "{user1}.following").id == "m2");  // slot 8106
    CHECK(c.nodes()[c.pick(5461).value].id == "m2");
    CHECK(c.nodes()[c.pick(16384 + 5460).value].id == "m1");  // only the low 14 bits count
    // build_even: floor(i * 16384 / 3) = 0, 5461, 10922.
    const auto even = redis_cluster::build_even(nodes);
    const auto explicit_even =
        redis_cluster::build(nodes, std::vector<slot_range>{{0, 5460, "m1"}, {5461, 10921, "m2"}, {10922, 16383, "m3"}});
    for (std::uint64_t s = 0; s < keyplace::compat::redis_slot_count; ++s) {
        REQUIRE(even.pick(s) == explicit_even.pick(s));
    }
}

TEST_CASE("redis: bad slot maps are rejected with an error naming the slot", "[redis][errors]") {
    using keyplace::errc;
    const std::vector<node> nodes{{"m1"}, {"m2"}};
    auto build = [&](std::vector<slot_range> r) { return [&nodes, r] { return redis_cluster::build(nodes, r); }; };
    expect_error(build({{0, 8191, "m1"}, {8193, 16383, "m2"}}), errc::slot_gap, "slot 8192 is not assigned");
    expect_error(build({{0, 8192, "m1"}, {8192, 16383, "m2"}}), errc::slot_overlap,
                 "slot 8192 is assigned twice ('m1' and 'm2')");
    expect_error(build({{0, 16384, "m1"}}), errc::invalid_slot_range, "slot range 0-16384 is not within 0-16383");
    expect_error(build({{100, 50, "m1"}}), errc::invalid_slot_range, "slot range 100-50 ends before it starts");
    expect_error(build({{10, 5, "m1"}}), errc::invalid_slot_range, "slot range 10-5");
    expect_error(build({{0, 16383, "m9"}}), errc::unknown_id, "names node 'm9', which is not a member");
    expect_error([] { return redis_cluster::build_even(std::vector<node>{}); }, errc::empty_membership, "empty");
}

// ---- the planner (compat/redis_planner.hpp): cases checked against a real
// redis-cli 7.0.15 on loopback (--cluster create and --cluster rebalance).

namespace {
using keyplace::compat::redis_rebalance_options;

auto ranges_of(const std::vector<slot_range>& r) -> std::vector<std::pair<int, int>> {
    std::vector<std::pair<int, int>> out;
    for (const auto& x : r) {
        out.emplace_back(x.first, x.last);
    }
    return out;
}

auto addresses(int first_port, int count) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) {
        out.push_back("127.0.0.1:" + std::to_string(first_port + i));
    }
    return out;
}

auto members(const std::vector<std::string>& ids) -> std::vector<node> {
    std::vector<node> out;
    for (const auto& id : ids) {
        out.push_back(node{id});
    }
    return out;
}

// Moves as (count, from, to), the way redis-cli prints "Moving N slots from A to B".
auto moves_of(const keyplace::compat::redis_rebalance_plan& p) -> std::vector<std::tuple<std::size_t, std::string, std::string>> {
    std::vector<std::tuple<std::size_t, std::string, std::string>> out;
    for (const auto& m : p.moves) {
        out.emplace_back(m.slots.size(), m.from, m.to);
    }
    return out;
}
}  // namespace

TEST_CASE("redis planner: cluster create splits the slots as redis-cli does", "[redis][planner][golden]") {
    using keyplace::compat::redis_create_ranges;
    using R = std::vector<std::pair<int, int>>;
    CHECK(ranges_of(redis_create_ranges(addresses(7000, 3))) == R{{0, 5460}, {5461, 10922}, {10923, 16383}});
    CHECK(ranges_of(redis_create_ranges(addresses(7000, 5))) ==
          R{{0, 3276}, {3277, 6553}, {6554, 9829}, {9830, 13106}, {13107, 16383}});
    CHECK(ranges_of(redis_create_ranges(addresses(7000, 7))) ==
          R{{0, 2340}, {2341, 4680}, {4681, 7021}, {7022, 9361}, {9362, 11702}, {11703, 14042}, {14043, 16383}});
    // One host: masters in the order given.
    const auto three = redis_create_ranges(addresses(7000, 3));
    CHECK(three[0].node_id == "127.0.0.1:7000");
    CHECK(three[2].node_id == "127.0.0.1:7002");
    // Several hosts: interleaved, one node of each host in turn (hosts in first-seen order).
    const std::vector<std::string> mixed{"10.0.0.1:1", "10.0.0.1:2", "10.0.0.2:1", "10.0.0.2:2"};
    const auto m = redis_create_ranges(mixed);
    REQUIRE(m.size() == 4);
    CHECK(m[0].node_id == "10.0.0.1:1");
    CHECK(m[1].node_id == "10.0.0.2:1");
    CHECK(m[2].node_id == "10.0.0.1:2");
    CHECK(m[3].node_id == "10.0.0.2:2");
    // Every split covers every slot once, for every master count up to a thousand.
    for (int n = 3; n <= 1000; ++n) {
        const auto r = redis_create_ranges(addresses(1, n));
        REQUIRE(r.front().first == 0);
        REQUIRE(r.back().last == 16383);
        for (std::size_t i = 1; i < r.size(); ++i) {
            REQUIRE(r[i].first == r[i - 1].last + 1);
        }
    }
    const auto c = redis_cluster::build(members(addresses(7000, 3)), three);
    CHECK(c.nodes()[c.pick(5461).value].id == "127.0.0.1:7001");
}

TEST_CASE("redis planner: rebalance onto an empty master", "[redis][planner][golden]") {
    const auto ids = addresses(7101, 4);
    auto ranges = keyplace::compat::redis_create_ranges(std::vector<std::string>(ids.begin(), ids.begin() + 3));
    const auto cluster = redis_cluster::build(members(ids), ranges);
    redis_rebalance_options o;
    // Without --cluster-use-empty-masters the empty master is left out: three equal masters are
    // within 2% (5461 vs 5461), so nothing moves.
    CHECK_FALSE(keyplace::compat::redis_rebalance(cluster, ids, o).needed);
    o.use_empty_masters = true;
    const auto plan = keyplace::compat::redis_rebalance(cluster, ids, o);
    REQUIRE(plan.needed);
    using M = std::vector<std::tuple<std::size_t, std::string, std::string>>;
    CHECK(moves_of(plan) == M{{1366, "127.0.0.1:7102", "127.0.0.1:7104"},
                              {1365, "127.0.0.1:7103", "127.0.0.1:7104"},
                              {1365, "127.0.0.1:7101", "127.0.0.1:7104"}});
    // The source's lowest-numbered slots move first (clusterManagerComputeReshardTable).
    CHECK(plan.moves[0].slots.front() == 5461);
    CHECK(plan.moves[0].slots.back() == 5461 + 1365);
    CHECK(plan.moves[2].slots.front() == 0);
    const auto after = keyplace::compat::redis_apply(cluster, plan);
    std::vector<std::size_t> count(4, 0);
    for (std::size_t s = 0; s < keyplace::compat::redis_slot_count; ++s) {
        ++count[after.pick(s).value];
    }
    CHECK(count == std::vector<std::size_t>{4096, 4096, 4096, 4096});
    // Applying it and planning again: balanced, nothing to do.
    CHECK_FALSE(keyplace::compat::redis_rebalance(after, ids, o).needed);
}

TEST_CASE("redis planner: weighted rebalance, float expectations and the rounding fix-up", "[redis][planner][golden]") {
    const auto ids = addresses(7221, 3);
    const auto cluster = redis_cluster::build(members(ids), keyplace::compat::redis_create_ranges(ids));
    using M = std::vector<std::tuple<std::size_t, std::string, std::string>>;
    redis_rebalance_options o;
    o.weights = {{"127.0.0.1:7223", 2.0}};
    const auto two = keyplace::compat::redis_rebalance(cluster, ids, o);
    CHECK(moves_of(two) == M{{1366, "127.0.0.1:7222", "127.0.0.1:7223"}, {1365, "127.0.0.1:7221", "127.0.0.1:7223"}});
    // Weight 1.1: expected (int)(16384 / 3.1f) = 5285 and 5813, balances 176 / 177 / -352 sum
    // to +1, and the fix-up makes the receiver's -353.
    o.weights = {{"127.0.0.1:7223", 1.1}};
    const auto eleven = keyplace::compat::redis_rebalance(cluster, ids, o);
    CHECK(moves_of(eleven) == M{{177, "127.0.0.1:7222", "127.0.0.1:7223"}, {176, "127.0.0.1:7221", "127.0.0.1:7223"}});
    using B = std::vector<std::pair<std::string, std::int64_t>>;
    CHECK(eleven.balances == B{{"127.0.0.1:7221", 176}, {"127.0.0.1:7222", 177}, {"127.0.0.1:7223", -353}});
    o.threshold = 1.0;
    CHECK(moves_of(keyplace::compat::redis_rebalance(cluster, ids, o)) == moves_of(eleven));
    // A threshold above every master's error: nothing to do (|100 - 100*5813/5461| = 6.4%).
    o.threshold = 7.0;
    CHECK_FALSE(keyplace::compat::redis_rebalance(cluster, ids, o).needed);
    // Threshold 0: redis-cli skips the test (`if (threshold > 0)`), so no master is ever over it
    // and it reports "No rebalancing needed".
    o.threshold = 0.0;
    CHECK_FALSE(keyplace::compat::redis_rebalance(cluster, ids, o).needed);
}

TEST_CASE("redis planner: bad input is refused with a message naming it", "[redis][planner][errors]") {
    using keyplace::errc;
    using keyplace::compat::redis_create_ranges;
    expect_error([] { return redis_create_ranges(addresses(1, 2)); }, errc::invalid_argument,
                 "2 masters: Redis Cluster requires at least 3");
    expect_error([] { return redis_create_ranges(addresses(1, 16385)); }, errc::too_many_nodes, "16385 masters");
    expect_error([] { return redis_create_ranges(std::vector<std::string>{"a:1", "a:1", "b:1"}); }, errc::duplicate_id,
                 "'a:1'");
    const auto ids = addresses(7221, 3);
    const auto cluster = redis_cluster::build(members(ids), redis_create_ranges(ids));
    redis_rebalance_options o;
    o.weights = {{"127.0.0.1:9999", 2.0}};
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, ids, o); }, errc::unknown_id,
                 "no such master node '127.0.0.1:9999'");
    o.weights = {{"127.0.0.1:7221", -1.0}};
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, ids, o); }, errc::invalid_weight,
                 "of '127.0.0.1:7221' is not a finite number >= 0");
    o.weights = {{"127.0.0.1:7221", 0.0}, {"127.0.0.1:7222", 0.0}, {"127.0.0.1:7223", 0.0}};
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, ids, o); }, errc::invalid_weight,
                 "weights sum to 0");
    o.weights.clear();
    o.threshold = -1;
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, ids, o); }, errc::invalid_argument,
                 "is not a non-negative percentage");
    o.threshold = 2;
    const std::vector<std::string> short_order{ids[0], ids[1]};
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, short_order, o); }, errc::invalid_argument,
                 "the order lists 2 of the 3 masters");
    const std::vector<std::string> twice{ids[0], ids[0], ids[1]};
    expect_error([&] { return keyplace::compat::redis_rebalance(cluster, twice, o); }, errc::duplicate_id,
                 "is listed twice");
    keyplace::compat::redis_rebalance_plan bad;
    bad.moves.push_back({ids[0], ids[1], {16000}});
    expect_error([&] { return keyplace::compat::redis_apply(cluster, bad); }, errc::invalid_argument,
                 "slot 16000 is not held by '127.0.0.1:7221'");
    // The cluster itself is a value: nothing above changed it.
    CHECK(cluster.nodes()[cluster.pick(16000).value].id == "127.0.0.1:7223");
}

TEST_CASE("redis: the README's form, build(nodes, {{0, 5460, m1}, ...}), compiles and equals the vector form",
          "[redis][readme]") {
    namespace compat = keyplace::compat;
    const std::vector<node> nodes{{"m1"}, {"m2"}, {"m3"}};
    const auto c = compat::redis_cluster::build(nodes, {{0, 5460, "m1"}, {5461, 10922, "m2"}, {10923, 16383, "m3"}});
    const auto v = redis_cluster::build(nodes, std::vector<slot_range>{{0, 5460, "m1"}, {5461, 10922, "m2"},
                                                                        {10923, 16383, "m3"}});
    for (std::uint64_t s = 0; s < compat::redis_slot_count; ++s) {
        REQUIRE(c.pick(s) == v.pick(s));
    }
    CHECK(keyplace::locate(c, "somekey").id == "m3");
}
