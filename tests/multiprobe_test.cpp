// Tests of multiprobe.hpp and compat/mpchash.hpp: the native golden table from the independent
// Python generator, SipHash-2-4 on the reference vectors, go-mpchash's compat.out (6000 lines),
// a naive differential reference, balance measured at K = 21, exact movement, bad input.
#include "keyplace_catch.hpp"
#include "multiprobe_reference.hpp"
#include "support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/bounded_load.hpp>
#include <keyplace/compat/mpchash.hpp>
#include <keyplace/detail/siphash.hpp>
#include <keyplace/multiprobe.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/spread.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

using keyplace::multiprobe;
using keyplace::multiprobe_config;
using keyplace::node;
using keyplace::node_index;
using keyplace::probe_sequence;
using keyplace::compat::mpchash;
using namespace keyplace_test;

namespace {

auto id_nodes(const std::string& prefix, std::size_t n) -> std::vector<node> {
    std::vector<node> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back({prefix + std::to_string(i)});
    }
    return out;
}

auto with_probes(std::uint32_t k) -> multiprobe_config {
    multiprobe_config c;
    c.probes = k;
    return c;
}

// The contract written naively: every probe against every node point, O(N * K).
template <class S>
auto naive_ranking(const S& s, probe_sequence q) -> std::vector<node_index> {
    const auto pts = s.points();
    const auto own = s.owners();
    std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>> keyed;
    for (std::size_t e = 0; e < pts.size(); ++e) {
        std::uint64_t best = 0;
        std::uint32_t first = 0;
        for (std::uint32_t i = 0; i < s.probes(); ++i) {
            const std::uint64_t probe = q.start + i * q.step;
            const std::uint64_t gap = pts[e] - probe - 1;  // distance - 1; equal point: 2^64 - 1
            if (i == 0 || gap < best) {
                best = gap;
                first = i;
            }
        }
        keyed.emplace_back(best, first, own[e].value);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<node_index> out;
    for (const auto& [gap, probe, owner] : keyed) {
        if (std::find(out.begin(), out.end(), node_index{owner}) == out.end()) {
            out.push_back(node_index{owner});
        }
    }
    return out;
}

// A configuration whose points collide on purpose: a node's point is its id's first byte.
template <keyplace::shared_point Rule, keyplace::detail::node_order Order>
struct first_byte_traits {
    using key_hash = keyplace::xxh3;
    static constexpr std::string_view name = "first-byte";
    static constexpr keyplace::detail::node_order order = Order;
    static constexpr keyplace::shared_point on_shared = Rule;
    static auto node_point(std::string_view id) -> std::uint64_t {
        return static_cast<std::uint64_t>(static_cast<unsigned char>(id[0])) << 56;
    }
    static auto point_probes(std::uint64_t point) noexcept -> probe_sequence { return {point, 1}; }
};

// max/mean keys per holder over n keys key-0 .. key-(n-1).
template <class S>
auto peak_to_mean(const S& s, std::size_t keys) -> double {
    std::vector<std::size_t> load(s.size());
    for (std::size_t i = 0; i < keys; ++i) {
        ++load[s.pick(keyplace::xxh3{}("key-" + std::to_string(i))).value];
    }
    const auto peak = *std::max_element(load.begin(), load.end());
    return static_cast<double>(peak) * static_cast<double>(s.size()) / static_cast<double>(keys);
}

}  // namespace

TEST_CASE("multiprobe: golden vectors from the independent reference generator", "[multiprobe][golden]") {
    const auto records = golden_records("multiprobe_native_v1.txt");
    std::vector<node> nodes;
    std::optional<multiprobe> m;
    std::uint32_t probes = 0;
    std::size_t ranked = 0;
    std::size_t cases = 0;
    std::size_t checked = 0;
    const auto built = [&]() -> const multiprobe& {
        if (!m) {
            m = multiprobe::build(nodes, with_probes(probes));
        }
        return *m;
    };
    for (const auto& f : records) {
        const std::string& kind = f[0];
        if (kind == "keyplace-multiprobe-golden") {
            REQUIRE(f[1] == "1");
        } else if (kind == "case") {
            nodes.clear();
            m.reset();
            probes = static_cast<std::uint32_t>(parse_u64(f[2]));
            ranked = static_cast<std::size_t>(parse_u64(f[3]));
            ++cases;
        } else if (kind == "node") {
            nodes.push_back({f[1]});
        } else if (kind == "point") {
            const auto& s = built();
            const auto i = static_cast<std::uint32_t>(parse_u64(f[1]));
            CHECK(s.nodes()[i].id == f[2]);
            const auto at = std::find(s.points().begin(), s.points().end(), parse_u64(f[3]));
            REQUIRE(at != s.points().end());
            CHECK(s.owners()[static_cast<std::size_t>(at - s.points().begin())] == node_index{i});
        } else if (kind == "probes") {
            const auto q = keyplace::native_multiprobe_traits::point_probes(parse_u64(f[1]));
            CHECK(q.start == parse_u64(f[2]));
            CHECK(q.step == parse_u64(f[3]));
        } else if (kind == "key" || kind == "query") {
            check_golden_query(built(), f, ranked);
            ++checked;
        } else {
            REQUIRE(kind == "end");
        }
    }
    CHECK(cases == 8);
    CHECK(checked > 900);
}

TEST_CASE("multiprobe: SipHash-2-4 reproduces the 64 reference vectors", "[multiprobe][siphash]") {
    const auto records = golden_records("siphash24_vectors.txt");
    REQUIRE(records.size() == 64);
    std::array<std::byte, 64> message{};
    for (std::size_t i = 0; i < message.size(); ++i) {
        message[i] = static_cast<std::byte>(i);
    }
    const std::uint64_t k0 = 0x0706050403020100ULL;
    const std::uint64_t k1 = 0x0f0e0d0c0b0a0908ULL;
    for (const auto& f : records) {
        const auto n = static_cast<std::size_t>(parse_u64(f[0]));
        CHECK(keyplace::detail::siphash24(k0, k1, std::span<const std::byte>(message).first(n)) ==
              std::stoull(f[1], nullptr, 16));
    }
    // The paper's appendix example (message 00 .. 0e).
    constexpr auto fifteen = [] {
        std::array<std::byte, 15> m{};
        for (std::size_t i = 0; i < m.size(); ++i) {
            m[i] = static_cast<std::byte>(i);
        }
        return m;
    }();
    static_assert(keyplace::detail::siphash24(0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, fifteen) ==
                  0xa129ca6149be45e5ULL);
}

TEST_CASE("multiprobe: go-mpchash compat.out, 6000 of 6000", "[multiprobe][mpchash]") {
    const auto want = golden_lines("mpchash/compat.out");
    REQUIRE(want.size() == 6000);
    std::vector<node> buckets;
    for (int i = 1; i <= 6000; ++i) {
        buckets.push_back({"shard-" + std::to_string(i)});
    }
    const auto m = mpchash::build(buckets);
    REQUIRE(m.probes() == 21);
    std::size_t same = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        same += keyplace::locate(m, buckets[i].id).id == want[i] ? 1U : 0U;
    }
    CHECK(same == 6000);
    // Buckets stay in the order given (go's list); the points are H(b, 0).
    CHECK(m.nodes()[0].id == "shard-1");
    CHECK(m.holders() == 6000);
}

namespace mpchash_refusals {
// A key's point does not decide go-mpchash's owner: what walks a point's order for a key does not
// compile for it (it did, and gave another owner for most keys), and does for native multiprobe.
template <class S>
constexpr bool spreads_keys = requires(const S& s, keyplace::spread_width w) {
    keyplace::locate_spread(s, std::string_view("k"), w, std::uint64_t{0});
};
template <class S>
constexpr bool bounds_keys = requires(keyplace::load_tracker<S>& t) { t.acquire(std::string_view("k")); };
static_assert(spreads_keys<multiprobe> && !spreads_keys<mpchash>);
static_assert(bounds_keys<multiprobe> && !bounds_keys<mpchash>);
static_assert(!keyplace::detail::needs_key_bytes<multiprobe> && keyplace::detail::needs_key_bytes<mpchash>);
}  // namespace mpchash_refusals

TEST_CASE("multiprobe: go-mpchash copies, load and movement follow the key's bytes, not its point", "[multiprobe][mpchash]") {
    // go-mpchash's compat.out: line i is the owner of "shard-(i+1)" over shard-1 .. shard-6000.
    const auto want = golden_lines("mpchash/compat.out");
    REQUIRE(want.size() == 6000);
    std::vector<node> buckets;
    std::vector<std::string> keys;
    for (int i = 1; i <= 6000; ++i) {
        buckets.push_back({"shard-" + std::to_string(i)});
        buckets.back().where.zone = "z" + std::to_string(i % 3);
        keys.push_back("shard-" + std::to_string(i));
    }
    const auto m = std::make_shared<const mpchash>(mpchash::build(buckets));

    SECTION("a replica placer's first copy is go-mpchash's owner, over the order of the key's bytes") {
        // Before, locate() placed copies by the key's point, H(key, 1), whose order is keyplace's
        // point rule: the first copy differed from go-mpchash's owner for most keys.
        for (const auto level : {keyplace::failure_domain::node, keyplace::failure_domain::zone}) {
            keyplace::replica_policy policy;
            policy.count = 3;
            policy.spread = level;
            const auto placer = keyplace::replica_placer<mpchash>::build(m, policy);
            std::size_t first_is_owner = 0;
            std::size_t distinct_zones = 0;
            std::size_t as_locate_n = 0;
            for (std::size_t i = 0; i < keys.size(); ++i) {
                std::array<node_index, 3> copies{};
                REQUIRE(placer.locate(keys[i], copies).placed == 3);
                first_is_owner += m->nodes()[copies[0].value].id == want[i] ? 1U : 0U;
                std::set<std::string> zones;
                for (const auto c : copies) {
                    zones.insert(m->nodes()[c.value].where.zone);
                }
                distinct_zones += zones.size() == 3 ? 1U : 0U;
                std::array<node_index, 3> order{};
                REQUIRE(keyplace::locate_n(*m, keys[i], std::span<node_index>(order)) == 3);
                as_locate_n += order == copies ? 1U : 0U;
            }
            CHECK(first_is_owner == 6000);
            if (level == keyplace::failure_domain::zone) {
                CHECK(distinct_zones == 6000);
            } else {
                // Spread over nodes only: the copies are the key's first three in its order.
                CHECK(as_locate_n == 6000);
            }
        }
    }

    SECTION("load_of_keys counts what compat.out says, movement_of_keys moves only a removed bucket's keys") {
        std::map<std::string, std::size_t> per_bucket;
        for (const auto& w : want) {
            ++per_bucket[w];
        }
        const auto load = keyplace::load_of_keys(*m, std::span<const std::string>(keys));
        std::size_t same = 0;
        for (std::size_t b = 0; b < buckets.size(); ++b) {
            const auto it = per_bucket.find(buckets[b].id);
            same += load.keys[b] == (it == per_bucket.end() ? 0U : it->second) ? 1U : 0U;
        }
        CHECK(same == 6000);
        // The busiest bucket leaves: exactly its keys move (multi-probe's minimal movement).
        const auto busiest = std::max_element(per_bucket.begin(), per_bucket.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
        REQUIRE(busiest->second >= 2);
        const auto after = m->without(busiest->first);
        const auto r = keyplace::movement_of_keys(*m, after, std::span<const std::string>(keys));
        CHECK(r.keys == 6000);
        CHECK(r.moved == static_cast<double>(busiest->second) / 6000.0);
        CHECK(r.violations == 0.0);
    }
}

TEST_CASE("multiprobe: pick and walk agree with the naive O(N K) reference", "[multiprobe]") {
    for (const std::uint32_t k : {1U, 2U, 5U, 21U, 64U}) {
        const auto m = multiprobe::build(id_nodes("node-", 37), with_probes(k));
        const auto c = mpchash::build(id_nodes("b", 23), with_probes(k));
        for (const auto point : random_points(3000, k)) {
            const auto q = keyplace::native_multiprobe_traits::point_probes(point);
            const auto want = naive_ranking(m, q);
            REQUIRE(m.pick(point) == want[0]);
            std::vector<node_index> got(want.size());
            REQUIRE(m.pick_n(point, got) == want.size());
            CHECK(got == want);
            const auto qc = keyplace::compat::mpchash_traits::point_probes(point);
            CHECK(c.pick(point) == naive_ranking(c, qc)[0]);
        }
    }
}

TEST_CASE("multiprobe: pick equals each probe's successor by std::upper_bound, 2 x 10^5 keys, built and derived",
          "[multiprobe][property]") {
    // pick searches each probe's strict successor with a fixed number of steps in a fine prefix
    // index and keeps the nearest by selects; here the same owner comes from std::upper_bound
    // over the points and a plain comparison, for every key, at 100 and 1,000 nodes and after a
    // join and a leave (derived rings keep the fine index).
    const auto plain = [](const multiprobe& m, probe_sequence q) {
        return keyplace_reference::plain_multiprobe_pick(m, q);
    };
    const auto keys = random_points(200'000, 21);
    for (const std::size_t n : {100U, 1000U}) {
        const auto m = multiprobe::build(id_nodes("node-", n));
        for (const auto& s : {m, m.with({"joiner"}), m.without("node-7")}) {
            INFO(n << " nodes, " << s.size() << " after");
            std::size_t bad = 0;
            for (const auto p : keys) {
                bad += s.pick(p) != plain(s, keyplace::native_multiprobe_traits::point_probes(p)) ? 1 : 0;
            }
            for (const auto p : s.points()) {  // probes on and beside the points, in steps of a point
                for (const auto start : {p - 1, p, p + 1}) {
                    const probe_sequence q{start, s.points()[0] | 1U};
                    bad += s.pick_probes(q) != plain(s, q) ? 1 : 0;
                }
            }
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("multiprobe: derivations equal rebuilds", "[multiprobe]") {
    const auto nodes = id_nodes("s", 50);
    const auto m = multiprobe::build(nodes, with_probes(9));
    const auto joined = m.with({"joiner"});
    std::vector<node> plus = nodes;
    plus.push_back({"joiner"});
    const auto rebuilt = multiprobe::build(plus, with_probes(9));
    CHECK(std::ranges::equal(joined.points(), rebuilt.points()));
    CHECK(std::ranges::equal(joined.owners(), rebuilt.owners()));
    CHECK(joined.probes() == 9);
    const auto left = joined.without("s7");
    std::vector<node> minus = plus;
    minus.erase(minus.begin() + 7);
    const auto rebuilt2 = multiprobe::build(minus, with_probes(9));
    CHECK(std::ranges::equal(left.points(), rebuilt2.points()));
    CHECK(std::ranges::equal(left.owners(), rebuilt2.owners()));
    for (const auto p : random_points(2000, 3)) {
        CHECK(joined.nodes()[joined.pick(p).value].id == rebuilt.nodes()[rebuilt.pick(p).value].id);
    }
}

// Balance at K = 21, measured, not assumed. The abstract's 1 + 1/(K - 1) = 1.05 is not what the
// scheme delivers at these sizes: a measurement before the engine was written gave max/mean
// 1.09 (layouts 1.07..1.11) at 100 nodes and 1.08 (1.08..1.08) at 1000, with splitmix hashes.
// Here the layout is fixed (ids shard-i), so the figure is deterministic; measured with these ids
// and 10^6 keys: 100 nodes 1.086, 1000 nodes 1.151 (1000 keys a node: sampling alone puts the
// largest of 1000 loads about 3 sd = 9.5% above the mean, so that figure is mostly noise).
// Bounds: below 1.04 would mean the probes are not independent of the key (or a bug that balances
// by accident), above 1.20 (100 nodes) or 1.25 (1000 nodes, with its sampling noise) that they do
// not spread; K = 1 at 100 nodes measures 4.65 (one point per node), K = 5 1.34 (2 * 10^5 keys).
TEST_CASE("multiprobe: balance at K = 21 is about 1.09, not 1.05", "[multiprobe][balance]") {
    constexpr std::size_t keys = 1'000'000;
    const auto m100 = multiprobe::build(id_nodes("shard-", 100));
    const double r100 = peak_to_mean(m100, keys);
    CHECK(r100 > 1.04);
    CHECK(r100 < 1.20);
    const auto m1000 = multiprobe::build(id_nodes("shard-", 1000));
    const double r1000 = peak_to_mean(m1000, keys);
    CHECK(r1000 > 1.04);
    CHECK(r1000 < 1.25);
    // More probes balance better; one probe is a ring of one point per node.
    const double r1 = peak_to_mean(multiprobe::build(id_nodes("shard-", 100), with_probes(1)), 200'000);
    const double r5 = peak_to_mean(multiprobe::build(id_nodes("shard-", 100), with_probes(5)), 200'000);
    CHECK(r1 > 2.0);
    CHECK(r5 > r100);
    CHECK(r1 > r5);
    WARN("max/mean at K = 21: " << r100 << " (100 nodes), " << r1000 << " (1000 nodes); K = 5: " << r5
                                << ", K = 1: " << r1);
}

TEST_CASE("multiprobe: a join moves keys only to the joiner, a leave only the leaver's", "[multiprobe][movement]") {
    constexpr std::size_t keys = 100'000;
    const auto before = multiprobe::build(id_nodes("node-", 40));
    const auto after = before.with({"joiner"});
    const auto left = before.without("node-13");
    std::size_t to_joiner = 0;
    std::size_t from_leaver = 0;
    for (std::size_t i = 0; i < keys; ++i) {
        const auto p = keyplace::xxh3{}("key-" + std::to_string(i));
        const auto& was = before.node(before.pick(p)).id;
        const auto& now = after.node(after.pick(p)).id;
        if (now != was) {
            CHECK(now == "joiner");  // exactly: no key moves between two old nodes
            ++to_joiner;
        }
        const auto& stays = left.node(left.pick(p)).id;
        if (was == "node-13") {
            CHECK(stays != "node-13");
            ++from_leaver;
        } else {
            CHECK(stays == was);  // exactly: only the leaver's keys move
        }
    }
    // The joiner takes about 1/41 of the keys (2439); with max/mean near 1.1 a node's share is
    // within a few tens of percent of fair: any share in (1/4, 4) times fair shows it took keys.
    CHECK(to_joiner > keys / 41 / 4);
    CHECK(to_joiner < keys / 41 * 4);
    CHECK(from_leaver > 0);
}

TEST_CASE("multiprobe: bad input is refused, naming the value, and nothing changes", "[multiprobe][errors]") {
    const auto nodes = id_nodes("n", 4);
    expect_error([&] { return multiprobe::build(nodes, with_probes(0)); }, keyplace::errc::invalid_argument,
                 "probes 0 is outside 1..1024");
    expect_error([&] { return multiprobe::build(nodes, with_probes(1025)); }, keyplace::errc::invalid_argument,
                 "probes 1025 is outside 1..1024");
    expect_error([&] { return mpchash::build(nodes, with_probes(0)); }, keyplace::errc::invalid_argument,
                 "probes 0");
    expect_error([&] { return multiprobe::build(std::vector<node>{}); }, keyplace::errc::empty_membership, "empty");
    expect_error([&] { return multiprobe::build({{"a"}, {"a"}}); }, keyplace::errc::duplicate_id, "'a'");
    expect_error([&] { return multiprobe::build({{"a"}, {""}}); }, keyplace::errc::empty_id, "empty");
    expect_error([&] { return multiprobe::build({{"a"}, {"b", 2.0}}); }, keyplace::errc::invalid_weight,
                 "node 'b': weight 2; multiprobe places every node with weight 1");
    expect_error([&] { return mpchash::build({{"a", 0.5}}); }, keyplace::errc::invalid_weight,
                 "mpchash places every node with weight 1");
    expect_error([&] { return multiprobe::build({{"a", -1.0}}); }, keyplace::errc::invalid_weight, "'a'");

    const auto m = multiprobe::build(nodes);
    const auto points = std::vector<std::uint64_t>(m.points().begin(), m.points().end());
    expect_error([&] { return m.with({"w", 3.0}); }, keyplace::errc::invalid_weight, "weight 3");
    expect_error([&] { return m.with({"n1"}); }, keyplace::errc::duplicate_id, "'n1'");
    expect_error([&] { return m.without("zz"); }, keyplace::errc::unknown_id, "'zz'");
    expect_error([&] { return multiprobe::build({{"x"}}).without("x"); }, keyplace::errc::empty_membership, "'x'");
    keyplace::error_info err;
    CHECK_FALSE(multiprobe::try_build(nodes, with_probes(2000), err));
    CHECK(err == keyplace::errc::invalid_argument);
    CHECK(err.message() == "probes 2000 is outside 1..1024");
    CHECK(m.size() == 4);
    CHECK(m.probes() == 21);
    CHECK(std::ranges::equal(m.points(), points));
}

TEST_CASE("multiprobe: shared points are refused natively, the last one given wins in go's rule",
          "[multiprobe][errors]") {
    using keyplace::detail::node_order;
    using refusing = keyplace::basic_multiprobe<first_byte_traits<keyplace::shared_point::refuse, node_order::by_id>>;
    using last_wins =
        keyplace::basic_multiprobe<first_byte_traits<keyplace::shared_point::last_wins, node_order::as_given>>;
    expect_error([] { return refusing::build({{"a1"}, {"b"}, {"a2"}}); }, keyplace::errc::duplicate_token,
                 "nodes 'a1' and 'a2' share the point 6989586621679009792; first-byte needs one point per node");
    const auto ok = refusing::build({{"a1"}, {"b"}});
    expect_error([&] { return ok.with({"b2"}); }, keyplace::errc::duplicate_token, "'b' and 'b2' share the point");
    CHECK(ok.size() == 2);

    // go-mpchash's map: the later bucket in the list owns a shared point; the earlier holds nothing.
    const auto m = last_wins::build({{"a1"}, {"b"}, {"a2"}, {"c"}});
    CHECK(m.nodes()[0].id == "a1");
    CHECK(m.holders() == 3);
    CHECK_FALSE(m.holds(node_index{0}));
    CHECK(m.holds(node_index{2}));
    for (const auto p : random_points(2000, 9)) {
        CHECK(m.pick(p) != node_index{0});
        std::array<node_index, 4> out{};
        CHECK(m.pick_n(p, out) == 3);
    }
    const auto swapped = last_wins::build({{"a2"}, {"b"}, {"a1"}, {"c"}});
    CHECK_FALSE(swapped.holds(node_index{0}));
    CHECK(swapped.nodes()[2].id == "a1");
    CHECK(swapped.holds(node_index{2}));
}

TEST_CASE("multiprobe: locate hashes go-mpchash keys twice, the native once", "[multiprobe][mpchash]") {
    const auto c = mpchash::build(id_nodes("shard-", 10));
    const std::string key = "user:42";
    const auto bytes = keyplace::key_bytes(key);
    const probe_sequence q{keyplace::compat::mpchash_hash(bytes, 1), keyplace::compat::mpchash_hash(bytes, 2)};
    CHECK(&keyplace::locate(c, key) == &c.node(c.pick_probes(q)));
    std::array<node_index, 3> out{};
    CHECK(keyplace::locate_n(c, key, out) == 3);
    CHECK(out[0] == c.pick_probes(q));
    const auto m = multiprobe::build(id_nodes("shard-", 10));
    CHECK(keyplace::locate(m, key).id == m.node(m.pick(keyplace::xxh3{}(key))).id);
    CHECK(keyplace::locate(m, std::uint32_t{7}).id == m.node(m.pick(keyplace::hash_key(keyplace::xxh3{}, std::uint32_t{7}))).id);
}
