// Tests of anchor.hpp: golden vectors from the independent Python generator, the paper's worked
// example as a state vector, the fast and compact forms agreeing over random histories, minimal
// movement on arbitrary removal and exact restoration on re-adding, balance, and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/anchor.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

using keyplace::anchor;
using keyplace::anchor_compact;
using keyplace::anchor_config;
using keyplace::errc;
using keyplace::node;
using namespace keyplace_test;

namespace {

auto as_u32(const std::vector<std::string>& f) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 1; i < f.size(); ++i) {
        out.push_back(static_cast<std::uint32_t>(parse_u64(f[i])));
    }
    return out;
}

template <class S>
void check_golden() {
    const auto records = golden_records("anchor_native_v1.txt");
    std::optional<S> s;
    std::size_t cases = 0;
    std::size_t points = 0;
    for (const auto& f : records) {
        const std::string& kind = f[0];
        if (kind == "keyplace-anchor-golden") {
            REQUIRE(f[1] == "1");
        } else if (kind == "case") {
            std::vector<node> nodes;
            for (std::size_t i = 2; i < f.size(); ++i) {
                nodes.push_back({f[i]});
            }
            s = S::build(nodes, anchor_config{static_cast<std::uint32_t>(parse_u64(f[1])), {}});
            ++cases;
        } else if (kind == "without") {
            s = s->without(f[1]);
        } else if (kind == "with") {
            s = s->with(node{f[1]});
        } else if (kind == "removed") {
            CHECK(to_vector(s->removed()) == as_u32(f));
        } else if (kind == "A") {
            CHECK(to_vector(s->anchors()) == as_u32(f));
        } else if (kind == "K") {
            CHECK(to_vector(s->replacements()) == as_u32(f));
        } else if (kind == "owner") {
            const auto b = static_cast<std::uint32_t>(parse_u64(f[1]));
            const auto i = s->find(f[2]);
            REQUIRE(i);
            CHECK(s->bucket_of(*i) == b);
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

}  // namespace

TEST_CASE("anchor: golden vectors from the independent reference generator", "[anchor][golden]") {
    check_golden<anchor>();
    check_golden<anchor_compact>();
}

// Mendelson et al., Fig. 2(d) and Examples 13-15, as wdamron/go-anchorhash's anchor_test.go
// encodes them: a = w = 7; remove 6, 5, 1; then 0; four adds return 0, 1, 5, 6 (LIFO).
TEST_CASE("anchor: the paper's worked example as a state vector", "[anchor]") {
    using v = std::vector<std::uint32_t>;
    auto s = anchor::build(make_nodes(7, "n"), anchor_config{7, {}});
    s = s.without("n6").without("n5").without("n1");
    CHECK(to_vector(s.working()) == v{0, 4, 2, 3, 4, 5, 6});
    CHECK(to_vector(s.last_positions()) == v{0, 1, 2, 3, 1, 5, 6});
    CHECK(to_vector(s.anchors()) == v{0, 4, 0, 0, 0, 5, 6});
    s = s.without("n0");
    // A after all four removals (the reference notes' "after the removals"): bucket 0 left at N = 3.
    CHECK(to_vector(s.anchors()) == v{3, 4, 0, 0, 0, 5, 6});
    CHECK(to_vector(s.replacements()) == v{3, 4, 2, 3, 4, 5, 6});
    CHECK(to_vector(s.removed()) == v{6, 5, 1, 0});
    std::vector<std::uint32_t> handed;
    for (const char* id : {"a", "b", "c", "d"}) {
        s = s.with(node{id});
        handed.push_back(s.bucket_of(*s.find(id)));
    }
    CHECK(handed == v{0, 1, 5, 6});
    const v identity{0, 1, 2, 3, 4, 5, 6};
    CHECK(to_vector(s.working()) == identity);
    CHECK(to_vector(s.last_positions()) == identity);
    CHECK(to_vector(s.replacements()) == identity);
    CHECK(to_vector(s.anchors()) == v(7, 0));
    // The compact form keeps the same A and K through the same history.
    auto c = anchor_compact::build(make_nodes(7, "n"), anchor_config{7, {}});
    c = c.without("n6").without("n5").without("n1");
    CHECK(to_vector(c.anchors()) == v{0, 4, 0, 0, 0, 5, 6});
    c = c.without("n0");
    CHECK(to_vector(c.anchors()) == v{3, 4, 0, 0, 0, 5, 6});
    CHECK(to_vector(c.replacements()) == v{3, 4, 2, 3, 4, 5, 6});
}

TEST_CASE("anchor: the fast and compact forms decide identically over random histories", "[anchor]") {
    std::mt19937_64 rng(1401);
    for (int history = 0; history < 20; ++history) {
        const auto cap = static_cast<std::uint32_t>(8 + rng() % 120);
        const auto w = static_cast<std::size_t>(1 + rng() % cap);
        auto f = anchor::build(make_nodes(w, "n"), anchor_config{cap, {}});
        auto c = anchor_compact::build(make_nodes(w, "n"), anchor_config{cap, {}});
        int fresh = 0;
        for (int step = 0; step < 60; ++step) {
            const bool add = f.size() == 1 || (f.removed().size() > 0 && rng() % 2 == 0);
            if (add) {
                const node n{"x" + std::to_string(fresh++)};
                f = f.with(n);
                c = c.with(n);
            } else {
                const std::string id = f.nodes()[static_cast<std::size_t>(rng() % f.size())].id;
                f = f.without(id);
                c = c.without(id);
            }
            REQUIRE(to_vector(f.anchors()) == to_vector(c.anchors()));
            REQUIRE(to_vector(f.replacements()) == to_vector(c.replacements()));
            for (int k = 0; k < 200; ++k) {
                const std::uint64_t p = rng();
                REQUIRE(f.bucket(p) == c.bucket(p));
                REQUIRE(f.node(f.pick(p)).id == c.node(c.pick(p)).id);
            }
        }
        // A value rebuilt from its own config() (capacity and stack) and nodes is the same state.
        const auto again = anchor::build(f.nodes(), f.config());
        CHECK(to_vector(again.anchors()) == to_vector(f.anchors()));
        CHECK(to_vector(again.replacements()) == to_vector(f.replacements()));
        CHECK(to_vector(again.working()) == to_vector(f.working()));
    }
}

// Removing any node moves exactly that node's keys (the others keep every key: the assertion
// is exact, no noise), and adding it back (LIFO) restores every key's owner. 10^5 keys.
TEST_CASE("anchor: arbitrary removal moves only that node's keys, re-adding restores", "[anchor]") {
    std::mt19937_64 rng(1402);
    std::vector<std::uint64_t> keys(100000);
    for (auto& k : keys) {
        k = rng();
    }
    auto owners = [&](const anchor& s) {
        std::vector<std::string> out;
        out.reserve(keys.size());
        for (const auto k : keys) {
            out.push_back(s.node(s.pick(k)).id);
        }
        return out;
    };
    auto s = anchor::build(make_nodes(50, "n"), anchor_config{80, {}});
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
}

// 10^6 keys over 100 nodes (capacity 200, 50 further nodes removed in a random order): each
// count is binomial, mean 10^4, sigma ~ 100; the largest of 100 is within 5 sigma (1.05) of the mean
// with overwhelming probability, and a biased rehash would exceed it by far.
TEST_CASE("anchor: balance after removals, max/mean below 1.05 with 10^6 keys", "[anchor]") {
    std::mt19937_64 rng(1403);
    auto s = anchor::build(make_nodes(150, "n"), anchor_config{200, {}});
    for (int i = 0; i < 50; ++i) {
        s = s.without(s.nodes()[static_cast<std::size_t>(rng() % s.size())].id);
    }
    REQUIRE(s.size() == 100);
    std::vector<std::size_t> counts(s.size());
    for (int k = 0; k < 1000000; ++k) {
        ++counts[s.pick(rng()).value];
    }
    const auto max = *std::max_element(counts.begin(), counts.end());
    const auto min = *std::min_element(counts.begin(), counts.end());
    CHECK(static_cast<double>(max) / 10000.0 < 1.05);
    CHECK(static_cast<double>(min) / 10000.0 > 0.95);
}

TEST_CASE("anchor: bad input is refused, naming the value, and nothing changes", "[anchor]") {
    // Capacity 0 is the default: the node count.
    CHECK(anchor::build(make_nodes(3, "n"), anchor_config{0, {}}).capacity() == 3);
    CHECK(anchor::build(make_nodes(3, "n")).config().capacity == 3);
    expect_error([] { return anchor::build(make_nodes(3, "n"), anchor_config{2, {}}); }, errc::invalid_table_size,
                 "anchor capacity 2 for 3 nodes");
    expect_error([] { return anchor::build(make_nodes(3, "n"), anchor_config{keyplace::anchor_max_capacity + 1, {}}); },
                 errc::invalid_table_size, "at most 67108864");
    expect_error([] { return anchor::build(make_nodes(3, "n"), anchor_config{5, {4}}); }, errc::invalid_argument,
                 "lists 1 buckets; capacity 5 with 3 nodes needs 2");
    expect_error([] { return anchor::build(make_nodes(3, "n"), anchor_config{5, {4, 5}}); }, errc::invalid_argument,
                 "removed bucket 5 is outside capacity 5");
    expect_error([] { return anchor::build(make_nodes(3, "n"), anchor_config{5, {4, 4}}); }, errc::invalid_argument,
                 "removed bucket 4 is listed twice");
    expect_error([] { return anchor::build({}, anchor_config{5, {}}); }, errc::empty_membership, "empty");
    expect_error([] { return anchor::build({node{"a"}, node{"a"}}, anchor_config{5, {}}); }, errc::duplicate_id,
                 "\'a\'");
    expect_error([] { return anchor::build({node{"a", 2.0}}, anchor_config{5, {}}); }, errc::invalid_weight,
                 "weight 2");

    const auto s = anchor::build(make_nodes(3, "n"), anchor_config{4, {}});
    const auto removed = to_vector(s.removed());
    expect_error([&] { return s.without("zz"); }, errc::unknown_id, "\'zz\'");
    expect_error([&] { return s.with(node{"n1"}); }, errc::duplicate_id, "\'n1\'");
    expect_error([&] { return s.with(node{"w", 3.0}); }, errc::invalid_weight, "weight 3");
    const auto full = s.with(node{"n3"});
    expect_error([&] { return full.with(node{"n4"}); }, errc::too_many_nodes, "all 4 anchor buckets are working");
    const auto one = anchor::build(make_nodes(1, "n"), anchor_config{4, {}});
    expect_error([&] { return one.without("n0"); }, errc::empty_membership, "\'n0\'");
    keyplace::error_info err;
    CHECK_FALSE(anchor::try_build(make_nodes(3, "n"), anchor_config{1, {}}, err));
    CHECK(err.code() == errc::invalid_table_size);
    // The values the failures were asked of are untouched.
    CHECK(s.size() == 3);
    CHECK(to_vector(s.removed()) == removed);
    CHECK(full.size() == 4);
    CHECK(full.removed().empty());
    CHECK(one.size() == 1);
}
