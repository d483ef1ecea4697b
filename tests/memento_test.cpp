// Tests of memento.hpp: golden vectors from the independent Python generator, the memento's
// bookkeeping (shrink, LIFO restore), minimal movement on arbitrary removal and exact restoration
// on re-adding, equality with jump while nothing is removed, balance, and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/jump.hpp>
#include <keyplace/memento.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

using keyplace::errc;
using keyplace::memento;
using keyplace::memento_config;
using keyplace::node;
using namespace keyplace_test;

TEST_CASE("memento: golden vectors from the independent reference generator", "[memento][golden]") {
    const auto records = golden_records("memento_native_v1.txt");
    std::optional<memento> s;
    std::size_t cases = 0;
    std::size_t points = 0;
    for (const auto& f : records) {
        const std::string& kind = f[0];
        if (kind == "keyplace-memento-golden") {
            REQUIRE(f[1] == "1");
        } else if (kind == "case") {
            std::vector<node> nodes;
            for (std::size_t i = 1; i < f.size(); ++i) {
                nodes.push_back({f[i]});
            }
            s = memento::build(nodes);
            ++cases;
        } else if (kind == "without") {
            s = s->without(f[1]);
        } else if (kind == "with") {
            s = s->with(node{f[1]});
        } else if (kind == "table") {
            CHECK(s->table_size() == parse_u64(f[1]));
        } else if (kind == "removed") {
            std::vector<std::uint32_t> want;
            for (std::size_t i = 1; i < f.size(); ++i) {
                want.push_back(static_cast<std::uint32_t>(parse_u64(f[i])));
            }
            CHECK(to_vector(s->removed()) == want);
        } else if (kind == "owner") {
            const auto i = s->find(f[2]);
            REQUIRE(i);
            CHECK(s->bucket_of(*i) == parse_u64(f[1]));
        } else if (kind == "point") {
            const auto p = parse_u64(f[1]);
            CHECK(s->bucket(p) == parse_u64(f[2]));
            CHECK(s->node(s->pick(p)).id == f[3]);
            ++points;
        } else if (kind == "key") {
            CHECK(keyplace::xxh3{}(unhex(f[1])) == parse_u64(f[2]));
            CHECK(keyplace::locate(*s, unhex(f[1])).id == f[3]);
        } else {
            REQUIRE(kind == "end");
        }
    }
    CHECK(cases == 4);
    CHECK(points >= 100);
}

TEST_CASE("memento: removing the last bucket shrinks, others enter the memento, restores are LIFO",
          "[memento]") {
    using v = std::vector<std::uint32_t>;
    auto s = memento::build(make_nodes(5, "n"));
    s = s.without("n4");  // plain jump shrink
    CHECK(s.table_size() == 4);
    CHECK(s.removed().empty());
    s = s.without("n1").without("n3");  // n3 is last, but the memento is not empty
    CHECK(s.table_size() == 4);
    CHECK(to_vector(s.removed()) == v{1, 3});
    CHECK(s.replacer(1) == 3);
    CHECK(s.replacer(3) == 2);
    CHECK(s.replacer(0) == -1);
    s = s.with(node{"a"});
    CHECK(s.bucket_of(*s.find("a")) == 3);
    s = s.with(node{"b"});
    CHECK(s.bucket_of(*s.find("b")) == 1);
    s = s.with(node{"c"});
    CHECK(s.bucket_of(*s.find("c")) == 4);
    CHECK(s.table_size() == 5);
    // nodes() lists ascending buckets
    CHECK(s.nodes()[1].id == "b");
    CHECK(s.nodes()[3].id == "a");
}

TEST_CASE("memento: with nothing removed it is jump", "[memento]") {
    const auto m = memento::build(make_nodes(37, "n"));
    const auto j = keyplace::jump::build(make_nodes(37, "n"));
    std::mt19937_64 rng(1501);
    for (int k = 0; k < 100000; ++k) {
        const std::uint64_t p = rng();
        REQUIRE(m.pick(p) == j.pick(p));
    }
}

// Removing any node moves exactly that node's keys (exact: no noise), and adding it back (LIFO)
// restores every key's owner. 10^5 keys, several random removal sequences.
TEST_CASE("memento: arbitrary removal moves only that node's keys, re-adding restores", "[memento]") {
    std::mt19937_64 rng(1502);
    std::vector<std::uint64_t> keys(100000);
    for (auto& k : keys) {
        k = rng();
    }
    auto owners = [&](const memento& s) {
        std::vector<std::string> out;
        out.reserve(keys.size());
        for (const auto k : keys) {
            out.push_back(s.node(s.pick(k)).id);
        }
        return out;
    };
    for (int sequence = 0; sequence < 3; ++sequence) {
        auto s = memento::build(make_nodes(60, "n"));
        auto before = owners(s);
        for (int step = 0; step < 8; ++step) {
            const node gone = s.nodes()[static_cast<std::size_t>(rng() % s.size())];
            const auto next = s.without(gone.id);
            const auto after = owners(next);
            std::size_t moved = 0;
            std::size_t owned = 0;
            for (std::size_t i = 0; i < keys.size(); ++i) {
                owned += before[i] == gone.id ? 1U : 0U;
                moved += before[i] != after[i] ? 1U : 0U;
                if (before[i] != gone.id) {
                    REQUIRE(after[i] == before[i]);
                }
            }
            CHECK(moved == owned);
            CHECK(owned > 0);
            CHECK(owners(next.with(gone)) == before);
            s = next;
            before = after;
        }
        // Rebuilt from its own memento and nodes, the value places identically.
        const auto again = memento::build(s.nodes(), s.config());
        CHECK(owners(again) == before);
    }
}

// 10^6 keys over 100 nodes left after removing 50 of 150 in a random order: binomial counts,
// mean 10^4, sigma ~ 100; max and min within 5 sigma (0.95 .. 1.05).
TEST_CASE("memento: balance after removals, max/mean below 1.05 with 10^6 keys", "[memento]") {
    std::mt19937_64 rng(1503);
    auto s = memento::build(make_nodes(150, "n"));
    for (int i = 0; i < 50; ++i) {
        s = s.without(s.nodes()[static_cast<std::size_t>(rng() % s.size())].id);
    }
    REQUIRE(s.size() == 100);
    std::vector<std::size_t> counts(s.size());
    for (int k = 0; k < 1000000; ++k) {
        ++counts[s.pick(rng()).value];
    }
    CHECK(static_cast<double>(*std::max_element(counts.begin(), counts.end())) / 10000.0 < 1.05);
    CHECK(static_cast<double>(*std::min_element(counts.begin(), counts.end())) / 10000.0 > 0.95);
}

TEST_CASE("memento: bad input is refused, naming the value, and nothing changes", "[memento]") {
    expect_error([] { return memento::build(make_nodes(3, "n"), memento_config{{7}}); }, errc::invalid_argument,
                 "removed bucket 7 is outside the table of 4");
    expect_error([] { return memento::build(make_nodes(3, "n"), memento_config{{1, 1}}); }, errc::invalid_argument,
                 "removed bucket 1 is listed twice");
    expect_error([] { return memento::build(make_nodes(3, "n"), memento_config{{3}}); }, errc::invalid_argument,
                 "removed bucket 3 is the last of an unshrunk table");
    expect_error([] { return memento::build({}); }, errc::empty_membership, "empty");
    expect_error([] { return memento::build({node{"a"}, node{"a"}}); }, errc::duplicate_id, "\'a\'");
    expect_error([] { return memento::build({node{"a", 0.5}}); }, errc::invalid_weight, "weight 0.5");
    const auto s = memento::build(make_nodes(3, "n")).without("n0");
    expect_error([&] { return s.without("zz"); }, errc::unknown_id, "\'zz\'");
    expect_error([&] { return s.with(node{"n1"}); }, errc::duplicate_id, "\'n1\'");
    expect_error([&] { return s.with(node{"w", 2.0}); }, errc::invalid_weight, "weight 2");
    const auto one = memento::build(make_nodes(1, "n"));
    expect_error([&] { return one.without("n0"); }, errc::empty_membership, "\'n0\'");
    keyplace::error_info err;
    CHECK_FALSE(memento::try_build(make_nodes(3, "n"), memento_config{{9}}, err));
    CHECK(err.code() == errc::invalid_argument);
    CHECK(s.size() == 2);
    CHECK(to_vector(s.removed()) == std::vector<std::uint32_t>{0});
    CHECK(s.table_size() == 3);
    CHECK(one.size() == 1);
}
