// Tests of ring.hpp: the native placement contract (golden vectors from an independent
// generator and a hand-checked case), derivation, the tie order, properties and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/point_ring.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/ring.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using keyplace::node;
using keyplace::node_index;
using keyplace::ring;
using namespace keyplace_test;

namespace {

constexpr std::uint64_t max_point = std::numeric_limits<std::uint64_t>::max();

auto pick3(const ring& r, std::uint64_t point) -> std::string { return first_n(r, point, 3); }

auto same_arrays(const ring& a, const ring& b) -> bool {
    return std::ranges::equal(a.points(), b.points()) && std::ranges::equal(a.owners(), b.owners()) &&
           std::ranges::equal(a.nodes(), b.nodes());
}

}  // namespace

TEST_CASE("ring: golden vectors from the independent reference generator", "[ring][golden]") {
    // Records: the header, then per case "case NAME vnodes V", its nodes, every point in ring
    // order with its owner, and key/query lines (check_golden_query, three ranked).
    std::vector<node> nodes;
    std::uint32_t vnodes = 0;
    std::optional<ring> r;
    std::vector<std::uint64_t> points;
    std::vector<std::string> owners;
    std::size_t cases = 0;
    std::size_t queries = 0;
    std::size_t all_points = 0;
    bool header = false;
    const auto built = [&]() -> const ring& {
        if (!r) {
            r = ring::build(nodes, {.vnodes = vnodes});
        }
        return *r;
    };
    const auto finish_case = [&] {
        if (cases == 0) {
            return;
        }
        INFO("case " << cases);
        const auto& x = built();
        REQUIRE(x.points().size() == points.size());
        CHECK(std::ranges::equal(x.points(), points));
        for (std::size_t i = 0; i < owners.size(); ++i) {
            CHECK(x.node(x.owners()[i]).id == owners[i]);
        }
        // Deriving the same membership incrementally gives the same ring, entry for entry.
        if (nodes.size() > 1) {
            const std::vector<node> all_but_first(nodes.begin() + 1, nodes.end());
            CHECK(same_arrays(ring::build(all_but_first, {.vnodes = vnodes}).with(nodes.front()), x));
        }
    };
    for (const auto& f : golden_records("ring_native_v1.txt")) {
        const std::string& kind = f[0];
        if (kind == "keyplace-ring-golden") {
            REQUIRE(f[1] == std::to_string(KEYPLACE_CONTRACT_VERSION));
            header = true;
        } else if (kind == "case") {
            finish_case();
            REQUIRE(f[2] == "vnodes");
            nodes.clear();
            points.clear();
            owners.clear();
            r.reset();
            vnodes = static_cast<std::uint32_t>(parse_u64(f[3]));
            ++cases;
        } else if (kind == "node") {
            nodes.push_back({f[1], std::stod(f[2])});
        } else if (kind == "point") {
            REQUIRE(parse_u64(f[1]) == points.size());
            points.push_back(parse_u64(f[2]));
            owners.push_back(f[3]);
            ++all_points;
        } else if (kind == "key" || kind == "query") {
            check_golden_query(built(), f, 3);
            ++queries;
        } else {
            REQUIRE(kind == "end");
        }
    }
    finish_case();
    CHECK(header);
    CHECK(cases == 5);
    CHECK(queries == 1362);  // every key and query line of the table
    CHECK(all_points == 1709);
}

TEST_CASE("ring: 3 nodes x 4 vnodes, checked point by point", "[ring][golden]") {
    // Points computed with `xxhsum -H3` over the contract's byte encoding
    // le32(len(id)) ++ id ++ le32(j), e.g. printf '\x01\x00\x00\x00a\x01\x00\x00\x00' for a/1.
    const std::map<std::string, std::array<std::uint64_t, 4>> expected{
        {"a", {0x98123f6cec13a4c3, 0x332d8fde124825df, 0xfdd1e9112dca61a0, 0xc3259df69d64fb9d}},
        {"b", {0x525a59eece60e112, 0xca03b52ef339b2b6, 0x74ba415c79cba71b, 0xdfac513067478924}},
        {"c", {0xeea57a95b364a585, 0x710bfb5824e7e469, 0x35d05ca8503c5d20, 0xefc24b367bdf15ad}},
    };
    for (const auto& [id, pts] : expected) {
        std::array<std::uint64_t, 4> got{};
        keyplace::native_ring_traits::derive_points(node{id}, got);
        CHECK(got == pts);
    }
    // Sorted by value, the owners read a c b c b a a b b c c a.
    const std::vector<node> nodes{{"c"}, {"a"}, {"b"}};
    const auto r = ring::build(nodes, {.vnodes = 4});
    REQUIRE(r.points().size() == 12);
    const std::string order = "acbcbaabbcca";
    for (std::size_t i = 0; i < 12; ++i) {
        CHECK(r.nodes()[r.owners()[i].value].id == std::string(1, order[i]));
    }
    CHECK(r.points().front() == 0x332d8fde124825df);
    CHECK(r.points().back() == 0xfdd1e9112dca61a0);

    auto owner = [&](std::uint64_t p) { return r.nodes()[r.pick(p).value].id; };
    CHECK(owner(0) == "a");                   // before the first point: the first point's owner
    CHECK(owner(0x332d8fde124825df) == "a");  // exactly the first point
    CHECK(owner(0x332d8fde124825e0) == "c");  // just past it: the second point (c/2)
    CHECK(owner(0x35d05ca8503c5d20) == "c");  // exactly the second point
    CHECK(owner(0xfdd1e9112dca61a0) == "a");  // exactly the last point (a/2)
    CHECK(owner(0xfdd1e9112dca61a1) == "a");  // past the last point: wraps to the first (a/1)
    CHECK(owner(max_point) == "a");           // 2^64-1 wraps too
    CHECK(owner(0xeea57a95b364a585) == "c");  // c/0
    CHECK(owner(0xeea57a95b364a586) == "c");  // then c/3
    CHECK(owner(0xefc24b367bdf15ae) == "a");  // then a/2
    CHECK(pick3(r, 0) == "a,c,b");
    CHECK(pick3(r, 0xdfac513067478925) == "c,a,b");  // after b/3: c/0, c/3, a/2, (wrap) a/1, c/2, b/0
}

TEST_CASE("ring: the contract's edge points on a large ring", "[ring]") {
    const auto r = ring::build(make_nodes(50));
    const auto pts = r.points();
    const auto own = r.owners();
    REQUIRE(pts.back() != max_point);
    CHECK(r.pick(0) == own.front());
    CHECK(r.pick(pts.front()) == own.front());
    CHECK(r.pick(pts.back()) == own.back());
    CHECK(r.pick(pts.back() + 1) == own.front());
    CHECK(r.pick(max_point) == own.front());
    for (std::size_t i = 1; i < pts.size(); i += 97) {
        CHECK(r.pick(pts[i]) == own[i]);
        CHECK(r.pick(pts[i - 1] + 1) == own[i]);
    }
}

TEST_CASE("ring: integer and string keys hash as the contract says", "[ring]") {
    const auto r = ring::build(make_nodes(7));
    // XXH3-64 values from `xxhsum -H3` of the key's bytes.
    CHECK(&keyplace::locate(r, "user:42") == &r.nodes()[r.pick(0x9fc1e605fa7174aa).value]);
    CHECK(&keyplace::locate(r, std::uint32_t{1}) == &r.nodes()[r.pick(0xdb02334e96d65708).value]);
    CHECK(&keyplace::locate(r, std::int64_t{42}) == &r.nodes()[r.pick(0xd5a6f8c838df27c8).value]);
    CHECK(&keyplace::locate(r, std::int64_t{-1}) == &r.nodes()[r.pick(0x5111c7e47d784413).value]);
    std::array<node_index, 3> by_key{};
    std::array<node_index, 3> by_point{};
    CHECK(keyplace::locate_n(r, "user:42", by_key) == 3);
    CHECK(r.pick_n(0x9fc1e605fa7174aa, by_point) == 3);
    CHECK(by_key == by_point);
}

TEST_CASE("ring: vnode count is llround(vnodes * weight)", "[ring]") {
    const std::vector<node> nodes{{"a", 1.0}, {"b", 0.25}, {"c", 2.5}, {"d", 0.05}};
    const auto r = ring::build(nodes, {.vnodes = 10});
    std::map<std::string, std::size_t> count;
    for (const auto o : r.owners()) {
        ++count[r.nodes()[o.value].id];
    }
    CHECK(count["a"] == 10);
    CHECK(count["b"] == 3);  // 2.5 rounds away from zero
    CHECK(count["c"] == 25);
    CHECK(count["d"] == 1);  // 0.5 rounds up
}

TEST_CASE("ring: all points of a large ring are distinct and shares are near expected", "[ring]") {
    // Ids that made points collide when the vnode index was the hash seed (XXH3 folds a short
    // input's seed in with XOR, so seeded short inputs shared points): every point must differ.
    std::vector<node> small;
    for (int i = 0; i <= 10; ++i) {
        small.push_back({(i < 10 ? "n0" : "n") + std::to_string(i)});
    }
    for (const auto& nodes : {small, make_nodes(1000)}) {
        const auto r = ring::build(nodes);
        std::vector<std::uint64_t> sorted(r.points().begin(), r.points().end());
        CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
        CHECK(sorted.size() == 160 * nodes.size());
        // A node's share over the mean is about Gamma(160, 1/160): sd 1/sqrt(160) = 0.079.
        // Bound at 5.5 sd: the largest of 1000 nodes is near 3.2 sd.
        const auto shares = keyplace::ownership(r).share;
        const double mean = 1.0 / static_cast<double>(nodes.size());
        const auto [lo, hi] = std::minmax_element(shares.begin(), shares.end());
        const double sd = 1.0 / std::sqrt(160.0);
        CHECK(*hi / mean <= 1 + 5.5 * sd);
        CHECK(*lo / mean >= 1 - 5.5 * sd);
    }
}

TEST_CASE("ring: with() and without() equal a full rebuild", "[ring]") {
    auto nodes = make_nodes(20);
    nodes[3].weight = 2.5;
    nodes[7].weight = 0.5;
    const auto r = ring::build(nodes, {.vnodes = 64});
    for (const node& extra : {node{"node-10x"}, node{"a-first"}, node{"zz-last", 3.0}, node{"node-5"}}) {
        INFO(extra.id);
        auto all = nodes;
        const bool is_member = r.find(extra.id).has_value();
        if (is_member) {
            continue;
        }
        all.push_back(extra);
        CHECK(same_arrays(r.with(extra), ring::build(all, {.vnodes = 64})));
    }
    for (const char* gone : {"node-0", "node-19", "node-3", "node-13"}) {
        INFO(gone);
        std::vector<node> rest;
        std::copy_if(nodes.begin(), nodes.end(), std::back_inserter(rest),
                     [&](const node& n) { return n.id != gone; });
        CHECK(same_arrays(r.without(gone), ring::build(rest, {.vnodes = 64})));
    }
    // Round trip.
    CHECK(same_arrays(r.with({"new"}).without("new"), r));
}

namespace {

// Keys two rings over the same nodes place differently: the random keys, and every point of
// either ring with its neighbours (where the direct owner table's records and ties decide),
// 0 and the largest key (the wrap).
auto pick_mismatches(const ring& a, const ring& b, const std::vector<std::uint64_t>& random) -> std::size_t {
    std::size_t bad = 0;
    const auto check = [&](std::uint64_t p) { bad += a.pick(p) != b.pick(p) ? 1 : 0; };
    for (const auto p : random) {
        check(p);
    }
    for (const ring* r : {&a, &b}) {
        for (const auto p : r->points()) {
            check(p - 1);
            check(p);
            check(p + 1);
        }
    }
    check(0);
    check(max_point);
    return bad;
}

}  // namespace

TEST_CASE("ring: derived rings answer as rebuilds through chains of joins and leaves, in every entry width",
          "[ring][property]") {
    // with() and without() patch the parent's direct owner table around the changed points
    // rather than building it again: owners renumbered, the buckets from each changed point's
    // predecessor to its successor refilled, the records those held left unused until a
    // quarter of the records are (then the table is built whole). After every step of a chain
    // the derived ring must answer every key as a fresh build of the same membership, in the
    // three entry widths: 16-bit (300 nodes x 160 points, 2^18 entries), 32-bit (1,100 nodes,
    // more than 16-bit owners hold) and 64-bit (40,000 nodes, more than 32-bit entries hold).
    // The unused records stay bounded: memory within a quarter of the fresh build's, plus the
    // slack of without()'s reserve (a node's points).
    const auto random = random_points(200'000, 2026);
    struct shape {
        std::size_t nodes;
        std::uint32_t vnodes;
        std::size_t steps;
    };
    for (const auto& [n, v, steps] : {shape{300, 160, 30}, shape{1100, 16, 6}, shape{40'000, 2, 2}}) {
        INFO(n << " nodes x " << v << " vnodes");
        auto members = make_nodes(n);
        auto r = ring::build(members, {.vnodes = v});
        std::mt19937_64 gen(n);
        std::size_t bad = 0;
        std::size_t unequal = 0;
        std::size_t oversized = 0;
        for (std::size_t step = 0; step < steps; ++step) {
            if (step % 2 == 0) {
                const node joiner{"joiner-" + std::to_string(step), step % 4 == 0 ? 1.0 : 2.5};
                r = r.with(joiner);
                members.push_back(joiner);
            } else {
                const auto at = static_cast<std::ptrdiff_t>(gen() % members.size());
                r = r.without(members[static_cast<std::size_t>(at)].id);
                members.erase(members.begin() + at);
            }
            const auto fresh = ring::build(members, {.vnodes = v});
            unequal += same_arrays(r, fresh) ? 0 : 1;
            bad += pick_mismatches(r, fresh, random);
            oversized += r.memory_bytes() > fresh.memory_bytes() * 5 / 4 + std::size_t{12} * 2 * v ? 1 : 0;
        }
        CHECK(unequal == 0);
        CHECK(bad == 0);
        CHECK(oversized == 0);
    }
}

TEST_CASE("ring: derivations move only the keys they must (10^5 keys)", "[ring][property]") {
    const auto points = key_points(200'000);
    const auto r10 = ring::build(make_nodes(10));
    const auto before = owner_ids(r10, points);

    SECTION("with(): keys move only to the joiner, as many as its share") {
        const auto r11 = r10.with({"node-10"});
        const auto after = owner_ids(r11, points);
        std::size_t moved = 0;
        std::size_t elsewhere = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (after[i] != before[i]) {
                ++moved;
                elsewhere += after[i] != "node-10" ? 1 : 0;
            }
        }
        CHECK(elsewhere == 0);
        const double share = keyplace::ownership(r11).share[r11.find("node-10")->value];
        const double fraction = static_cast<double>(moved) / static_cast<double>(points.size());
        CHECK(std::abs(fraction - share) <= 5 * sigma(share, points.size()));
        // Its share is near the fair 1/11 (160 vnodes: sd about 0.079 of it).
        CHECK(std::abs(share * 11 - 1) <= 5 / std::sqrt(160.0));
    }
    SECTION("without(): exactly the leaver's keys move") {
        const auto r9 = r10.without("node-6");
        const auto after = owner_ids(r9, points);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            bad += (before[i] == "node-6") != (after[i] != before[i]) ? 1 : 0;
        }
        CHECK(bad == 0);
    }
    SECTION("changing one weight moves keys only to or from that node") {
        auto heavier = make_nodes(10);
        heavier[4].weight = 2.0;
        const auto up = owner_ids(ring::build(heavier), points);
        auto lighter = make_nodes(10);
        lighter[4].weight = 0.5;
        const auto down = owner_ids(ring::build(lighter), points);
        std::size_t bad_up = 0;
        std::size_t bad_down = 0;
        std::size_t moved_up = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (up[i] != before[i]) {
                ++moved_up;
                bad_up += up[i] != "node-4" ? 1 : 0;
            }
            if (down[i] != before[i]) {
                bad_down += before[i] != "node-4" ? 1 : 0;
            }
        }
        CHECK(bad_up == 0);
        CHECK(bad_down == 0);
        CHECK(moved_up > 0);
    }
}

namespace {

// An 8-bit ring: 200 points in 256 values collide often, which exercises the tie order
// (point, node index) that 64-bit points almost never reach.
struct tiny_hash {
    [[nodiscard]] auto operator()(std::span<const std::byte> b) const noexcept -> std::uint8_t {
        return static_cast<std::uint8_t>(keyplace::xxh3{}(b) & 0xffU);
    }
};
struct tiny_traits {
    using point_type = std::uint8_t;
    using key_hash = tiny_hash;
    static auto point_count(const node& n, const keyplace::ring_config& c, std::size_t& count)
        -> keyplace::detail::failure {
        return keyplace::native_ring_traits::point_count(n, c, count);
    }
    static void derive_points(const node& n, std::span<point_type> out) {
        std::vector<std::uint64_t> wide(out.size());
        keyplace::native_ring_traits::derive_points(n, wide);
        std::transform(wide.begin(), wide.end(), out.begin(),
                       [](std::uint64_t p) { return static_cast<point_type>(p & 0xffU); });
    }
};
using tiny_ring = keyplace::basic_ring<tiny_traits>;

// A configuration that gives nodes named "z..." no points (and does not call that an error).
struct pointless_z_traits : keyplace::native_ring_traits {
    static auto point_count(const node& n, const keyplace::ring_config& c, std::size_t& count)
        -> keyplace::detail::failure {
        auto f = keyplace::native_ring_traits::point_count(n, c, count);
        count = n.id.front() == 'z' ? 0 : count;
        return f;
    }
};

}  // namespace

TEST_CASE("ring: a derivation that would leave no point fails, and a node without points holds nothing",
          "[ring][errors]") {
    using pointless = keyplace::basic_ring<pointless_z_traits>;
    using keyplace::errc;
    const auto r = pointless::build({{"a"}, {"z"}});
    CHECK(r.holders() == 1);
    CHECK_FALSE(r.holds(*r.find("z")));
    expect_error([&] { return r.without("a"); }, errc::no_points, "no points");
    keyplace::error_info err;
    CHECK_FALSE(r.try_without("a", err).has_value());
    CHECK(err == errc::no_points);
    CHECK(r.without("z").holders() == 1);
    expect_error([] { return pointless::build({{"z"}}); }, errc::no_points, "no points");
}

TEST_CASE("ring: equal points are ordered by node index, in build and in derivations", "[ring]") {
    const auto nodes = make_nodes(5);
    const auto r = tiny_ring::build(nodes, {.vnodes = 40});
    const auto pts = r.points();
    const auto own = r.owners();
    std::size_t ties = 0;
    for (std::size_t i = 1; i < pts.size(); ++i) {
        REQUIRE(pts[i - 1] <= pts[i]);
        if (pts[i - 1] == pts[i]) {
            ++ties;
            CHECK(own[i - 1] <= own[i]);
        }
    }
    CHECK(ties > 20);
    // A key exactly on a shared point belongs to the lowest node index there.
    for (std::size_t i = 1; i < pts.size(); ++i) {
        if (pts[i - 1] == pts[i]) {
            auto first = i - 1;
            while (first > 0 && pts[first - 1] == pts[i]) {
                --first;
            }
            CHECK(r.pick(pts[i]) == own[first]);
        }
    }
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        std::vector<node> rest = nodes;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(k));
        const auto derived = tiny_ring::build(rest, {.vnodes = 40}).with(nodes[k]);
        CHECK(std::ranges::equal(derived.points(), pts));
        CHECK(std::ranges::equal(derived.owners(), own));
        const auto removed = r.without(nodes[k].id);
        const auto rebuilt = tiny_ring::build(rest, {.vnodes = 40});
        CHECK(std::ranges::equal(removed.points(), rebuilt.points()));
        CHECK(std::ranges::equal(removed.owners(), rebuilt.owners()));
    }
}

namespace {

// The plain search the prefix index must reproduce exactly.
template <class R>
auto plain_entry(const R& r, typename R::point_type p) -> std::size_t {
    const auto pts = r.points();
    const auto it = std::lower_bound(pts.begin(), pts.end(), p);
    return it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
}

template <class R>
auto index_mismatches(const R& r, const std::vector<std::uint64_t>& random) -> std::size_t {
    using P = typename R::point_type;
    std::size_t bad = 0;
    auto check = [&](P p) { bad += r.entry_of(p) != plain_entry(r, p) ? 1 : 0; };
    for (const auto p : random) {
        check(static_cast<P>(p));
    }
    for (const auto p : r.points()) {  // every exact point, its neighbours
        check(p);
        check(static_cast<P>(p - 1));
        check(static_cast<P>(p + 1));
    }
    check(0);  // and the wrap
    check(std::numeric_limits<P>::max());
    return bad;
}

}  // namespace

TEST_CASE("ring: the prefix index returns exactly what the plain search returns", "[ring][property]") {
    const auto random = random_points(1'000'000, 77);
    for (const auto& r : {ring::build(make_nodes(10)), ring::build(make_nodes(100)), ring::build(make_nodes(1000), {.vnodes = 16}),
                          ring::build({{"solo"}}, {.vnodes = 1}), ring::build(make_nodes(3), {.vnodes = 1})}) {
        INFO(r.size() << " nodes, " << r.points().size() << " points");
        CHECK(index_mismatches(r, random) == 0);
    }
    // Derived rings keep the index right too.
    const auto grown = ring::build(make_nodes(50)).with({"joiner", 2.0}).without("node-7");
    CHECK(index_mismatches(grown, random) == 0);
}

TEST_CASE("ring: memory is 12 bytes per point, the index and the direct owner table", "[ring]") {
    const auto per_point = [](const ring& r) {
        return static_cast<double>(r.memory_bytes()) / static_cast<double>(r.points().size());
    };
    // Every ring: 12 bytes a point (point and owner), the prefix index (4 bytes a bucket at a
    // bucket per 2 to 4 points: 1 to 2 bytes a point) and the direct table of 2^b + 1
    // entries, b = round(log2 T) + 2, plus the records of its buckets of several points
    // (about 3.5% of the buckets at 2.8 to 5.7 buckets a point, some 23 bytes each: up to
    // about 5 bytes a point).
    // 100 x 160 = 16000 points: 2^16 buckets, 32-bit entries (a table of at most 2^16).
    const double small = per_point(ring::build(make_nodes(100)));
    CHECK(small >= 12.0 + 1.0 + 4.0 * 65537 / 16000);
    CHECK(small <= 12.0 + 2.0 + 4.0 * 65537 / 16000 + 5.0);
    // 300 x 160 = 48000 points: 2^18 buckets; 300 nodes, so 16-bit entries.
    const double narrow = per_point(ring::build(make_nodes(300)));
    CHECK(narrow >= 12.0 + 1.0 + 2.0 * 262145 / 48000);
    CHECK(narrow <= 12.0 + 2.0 + 2.0 * 262145 / 48000 + 5.0);
    // 1100 x 48 = 52800 points: 2^18 buckets; more than 1024 nodes, so 32-bit entries.
    const double wide = per_point(ring::build(make_nodes(1100), {.vnodes = 48}));
    CHECK(wide >= 12.0 + 1.0 + 4.0 * 262145 / 52800);
    CHECK(wide <= 12.0 + 2.0 + 4.0 * 262145 / 52800 + 5.0);
    // 1000 x 256 = 256000 points: 2^20 buckets; 16-bit entries would need more than 2^15
    // records, so 32-bit ones, and nothing of the 16-bit attempt is kept.
    const double retried = per_point(ring::build(make_nodes(1000), {.vnodes = 256}));
    CHECK(retried >= 12.0 + 1.0 + 4.0 * 1048577 / 256000);
    CHECK(retried <= 12.0 + 2.0 + 4.0 * 1048577 / 256000 + 5.0);
    const auto g = keyplace::maglev::build(make_nodes(100));
    CHECK(g.memory_bytes() == 65537);
}

TEST_CASE("ring: the prefix index with 8-bit points, ties and crowded buckets", "[ring]") {
    const auto random = random_points(100'000, 78);
    CHECK(index_mismatches(tiny_ring::build(make_nodes(5), {.vnodes = 40}), random) == 0);
    // 5000 points in 256 values: about 20 a bucket, past the linear scan, with many ties.
    CHECK(index_mismatches(tiny_ring::build(make_nodes(5), {.vnodes = 1000}), random) == 0);
}

TEST_CASE("ring: pick_n walks clockwise over distinct nodes", "[ring]") {
    const auto r = ring::build(make_nodes(6), {.vnodes = 8});
    const auto points = random_points(2000, 7);
    for (const auto p : points) {
        std::array<node_index, 6> out{};
        REQUIRE(r.pick_n(p, out) == 6);
        CHECK(out[0] == r.pick(p));
        std::set<std::uint32_t> distinct;
        for (const auto i : out) {
            distinct.insert(i.value);
        }
        CHECK(distinct.size() == 6);
        // Naive reference: the sequence of owners clockwise with repeats removed.
        std::vector<node_index> naive;
        const auto pts = r.points();
        std::size_t i = static_cast<std::size_t>(std::lower_bound(pts.begin(), pts.end(), p) - pts.begin());
        for (std::size_t step = 0; step < pts.size(); ++step) {
            const auto o = r.owners()[(i + step) % pts.size()];
            if (std::find(naive.begin(), naive.end(), o) == naive.end()) {
                naive.push_back(o);
            }
        }
        CHECK(std::ranges::equal(naive, out));
    }
}

TEST_CASE("ring: bad input is rejected with an error naming it, nothing changes", "[ring][errors]") {
    using keyplace::errc;
    const auto good = make_nodes(3);
    const auto r = ring::build(good, {.vnodes = 16});
    const std::vector<std::uint64_t> points_before(r.points().begin(), r.points().end());
    const std::vector<node> nodes_before(r.nodes().begin(), r.nodes().end());

    auto build = [](std::vector<node> nodes, std::uint32_t vnodes = 160) {
        return [nodes = std::move(nodes), vnodes] { return ring::build(nodes, {.vnodes = vnodes}); };
    };

    expect_error(build({}), errc::empty_membership, "empty");
    expect_error(build({{"a"}, {"b"}, {"a"}}), errc::duplicate_id, "'a'");
    expect_error(build({{"a"}, {""}}), errc::empty_id, "empty");
    expect_error(build({{"a"}, {"w0", 0.0}}), errc::invalid_weight, "'w0': weight 0 ");
    expect_error(build({{"wneg", -1.0}}), errc::invalid_weight, "'wneg': weight -1 ");
    expect_error(build({{"wnan", std::nan("")}}), errc::invalid_weight, "weight nan");
    expect_error(build({{"winf", std::numeric_limits<double>::infinity()}}), errc::invalid_weight, "weight inf");
    expect_error(build({{"tiny", 0.001}}), errc::invalid_weight, "'tiny': weight 0.001 at 160 vnodes rounds to 0");
    expect_error(build({{"a"}}, 0), errc::invalid_vnodes, "vnodes 0");
    expect_error(build({{"a"}, {"b"}}, 1U << 28), errc::too_many_points, "536870912 points; the limit is 268435456");
    expect_error(build({{"huge", 1e300}}), errc::too_many_points, "'huge'");
    expect_error([&] { return r.with({"node-1"}); }, errc::duplicate_id, "'node-1' is already a member");
    expect_error([&] { return r.with({"x", -2.0}); }, errc::invalid_weight, "'x': weight -2");
    expect_error([&] { return r.with({""}); }, errc::empty_id, "empty");
    expect_error([&] { return r.with({"big", double(1U << 28) / 16.0}); }, errc::too_many_points, "limit");
    expect_error([&] { return r.without("nope"); }, errc::unknown_id, "'nope' is not a member");
    expect_error([&] { return ring::build({{"solo"}}).without("solo"); }, errc::empty_membership, "'solo'");
    // Control bytes in ids are escaped in messages.
    expect_error(build({{"a\nb"}, {"a\nb"}}), errc::duplicate_id, "'a\\x0ab'");

    keyplace::error_info ec;
    CHECK_FALSE(ring::try_build(std::vector<node>{}, ec).has_value());
    CHECK(ec == errc::empty_membership);
    CHECK_FALSE(ring::try_build(good, {.vnodes = 0}, ec).has_value());
    CHECK(ec == errc::invalid_vnodes);
    CHECK_FALSE(r.try_with({"node-2"}, ec).has_value());
    CHECK(ec == errc::duplicate_id);
    CHECK_FALSE(r.try_without("ghost", ec).has_value());
    CHECK(ec == errc::unknown_id);
    CHECK(ec.message() == "node id 'ghost' is not a member");  // the throwing form's message
    CHECK(ec.error_code() == errc::unknown_id);
    CHECK(ec.error_code().message() == "unknown node id");
    const auto ok = ring::try_build(good, {.vnodes = 16}, ec);
    CHECK(ok.has_value());
    CHECK_FALSE(ec);
    CHECK(r.try_with({"node-9"}, ec).has_value());
    CHECK(r.try_without("node-0", ec).has_value());

    // The existing ring is untouched by every failed derivation.
    CHECK(std::ranges::equal(r.points(), points_before));
    CHECK(std::ranges::equal(r.nodes(), nodes_before));
    CHECK(same_arrays(r, *ok));
}

TEST_CASE("ring: pick_n with more slots than nodes writes size() and no more", "[ring][errors]") {
    const auto r = ring::build(make_nodes(3), {.vnodes = 4});
    std::array<node_index, 6> out{};
    out.fill(node_index{99});
    CHECK(r.pick_n(12345, out) == 3);
    CHECK(out[3].value == 99);
    CHECK(out[4].value == 99);
    CHECK(out[5].value == 99);
    std::set<std::uint32_t> distinct{out[0].value, out[1].value, out[2].value};
    CHECK(distinct == std::set<std::uint32_t>{0, 1, 2});
    CHECK(r.pick_n(12345, std::span<node_index>()) == 0);
}

TEST_CASE("compat::point_ring: lookup is lower_bound with wrap, the first of equal points", "[ring]") {
    // Against std::lower_bound on the sorted points, for every size 1..200, with duplicates
    // (small point ranges) and probes on, between and beyond the points.
    using ring32 = keyplace::compat::point_ring<std::uint32_t, keyplace::xxh3>;
    const std::vector<keyplace::node> nodes{{"a"}, {"b"}, {"c"}};
    std::mt19937_64 gen(7);
    for (std::size_t size = 1; size <= 200; ++size) {
        std::vector<keyplace::compat::ring_point<std::uint32_t>> pts;
        const std::uint32_t range = size % 2 == 0 ? 64U : 0xffffffffU;
        for (std::size_t i = 0; i < size; ++i) {
            pts.push_back({static_cast<std::uint32_t>(gen() % range), static_cast<std::uint32_t>(gen() % 3)});
        }
        const auto r = ring32::build(nodes, pts);
        const auto points = r.points();
        REQUIRE(std::is_sorted(points.begin(), points.end()));
        for (int q = 0; q < 200; ++q) {
            const std::uint32_t probe = q % 3 == 0 ? points[static_cast<std::size_t>(gen() % size)] : static_cast<std::uint32_t>(gen() % range);
            const auto it = std::lower_bound(points.begin(), points.end(), probe);
            const auto expected = it == points.end() ? 0 : static_cast<std::size_t>(it - points.begin());
            INFO("size " << size << " probe " << probe);
            REQUIRE(r.entry_of(probe) == expected);
            REQUIRE(r.pick(probe) == r.owners()[expected]);
        }
        if (points.back() != 0xffffffffU) {
            REQUIRE(r.entry_of(0xffffffffU) == 0);  // past the last point: wraps to the first
        }
    }
}

TEST_CASE("ring engine: the in-place sort orders by (point, owner) for spread, clustered and equal points",
          "[ring][memory]") {
    std::mt19937_64 rng(7);
    const std::vector<node> nodes = make_nodes(40);
    for (int kind = 0; kind < 3; ++kind) {
        std::vector<keyplace::ring_point<std::uint64_t>> given;
        for (std::uint32_t i = 0; i < 20000; ++i) {
            // spread over the circle; 5,000 consecutive values (one bucket: the heap sort path);
            // 50 distinct values shared by every owner (runs of equal points)
            const std::uint64_t p = kind == 0 ? rng() : kind == 1 ? (1ULL << 40) + rng() % 5000 : rng() % 50;
            given.push_back({p, static_cast<std::uint32_t>(rng() % nodes.size())});
        }
        const auto r = keyplace::compat::point_ring<std::uint64_t, keyplace::xxh3>::build(nodes, given);
        auto expected = given;
        std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
            return a.point != b.point ? a.point < b.point : a.owner < b.owner;
        });
        REQUIRE(r.points().size() == expected.size());
        bool same = true;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            same = same && r.points()[i] == expected[i].point && r.owners()[i].value == expected[i].owner;
        }
        INFO("kind " << kind);
        CHECK(same);
    }
}

TEST_CASE("ring and maglev: steady memory_bytes per point and per slot as the README states", "[ring][maglev][memory]") {
    // doc/benchmarks.md, "Memory of a build": 12 bytes a point of points and owners, the prefix index and the direct table
    // on top: 31.4 bytes a point at 100 x 160, 23.4 at 1000 x 160.
    const auto small = keyplace::ring::build(make_nodes(100), {.vnodes = 160});
    const auto large = keyplace::ring::build(make_nodes(1000), {.vnodes = 160});
    const auto per_point = [](const auto& r) {
        return static_cast<double>(r.memory_bytes()) / static_cast<double>(r.points().size());
    };
    CHECK(per_point(small) >= 12.0);
    CHECK(per_point(small) <= 32.0);
    CHECK(per_point(large) <= 24.0);
    // Maglev: one entry of 1, 2 or 4 bytes a slot, nothing for one node.
    CHECK(keyplace::maglev::build(make_nodes(100)).memory_bytes() == 65537);
    CHECK(keyplace::maglev::build(make_nodes(300)).memory_bytes() == 2 * 65537);
    CHECK(keyplace::maglev::build(make_nodes(1), {.table_size = 4294967291ULL}).memory_bytes() == 0);
}
