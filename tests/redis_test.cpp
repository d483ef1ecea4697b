// Tests of compat/redis.hpp: CRC16/XMODEM, the hash-tag rule and slots against the vectors of
// reference/algorithms.md §8 (starred there: published by redis.io and Dragonfly), the slot map
// and its bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/redis.hpp>

#include <string>
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
        // reference/algorithms.md, computed by the reference author's implementation
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
