// Tests of bounded_load.hpp, compat/haproxy_bounded.hpp and compat/envoy_bounded.hpp: the cap
// arithmetic on hand-computed cases, HAProxy's slot apportionment (the reference's worked example
// and further hand computations), Envoy's unit-test vectors (bounded_load_hlb_test.cc), the
// properties on 10^5 requests (caps never exceeded, uniform and Zipf 1.1 popularity, after joins
// and leaves; c -> infinity is the plain strategy; c = 1 balances exactly), movement on a join,
// the live tracker under several threads (run under TSan), bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/bounded_load.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/envoy_bounded.hpp>
#include <keyplace/compat/haproxy_bounded.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/ring.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

using keyplace::bounded_load_config;
using keyplace::load_caps;
using keyplace::node;
using keyplace::node_index;
using namespace keyplace_test;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

auto ni(std::uint32_t i) -> node_index { return node_index{i}; }

/// 10^5 requests whose keys follow Zipf(1.1) over 10^4 distinct keys (fixed seed): the hottest
/// key alone is about 1/H = 11% of the requests, far above any cap at 10 or more nodes.
auto zipf_points(std::size_t m) -> std::vector<std::uint64_t> {
    const std::size_t distinct = 10'000;
    std::vector<double> weights(distinct);
    for (std::size_t r = 0; r < distinct; ++r) {
        weights[r] = 1.0 / std::pow(static_cast<double>(r + 1), 1.1);
    }
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
    std::mt19937_64 gen(1101);
    const auto keys = key_points(distinct);
    std::vector<std::uint64_t> out(m);
    for (auto& p : out) {
        p = keys[pick(gen)];
    }
    return out;
}

/// Replays a batch in its canonical order (by point, then index) and checks that no node is
/// ever above its cap at the running total; returns the final loads.
template <class S>
auto check_caps_held(const S& s, const std::vector<std::uint64_t>& points, const std::vector<node_index>& owners,
                     const bounded_load_config& config) -> std::vector<std::uint64_t> {
    const auto caps = load_caps::build(s, config);
    std::vector<std::uint32_t> order(points.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
        order[k] = k;
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return points[a] != points[b] ? points[a] < points[b] : a < b;
    });
    std::vector<std::uint64_t> load(s.size());
    std::uint64_t total = 0;
    std::size_t over = 0;
    for (const std::uint32_t k : order) {
        ++total;
        const node_index i = owners[k];
        if (++load[i.value] > caps.cap(i, total)) {
            ++over;
        }
    }
    CHECK(over == 0);
    return load;
}

template <class S>
void check_property_cases(const S& s, const char* what) {
    INFO(what);
    const std::size_t m = 100'000;
    for (const auto& points : {random_points(m, 77), zipf_points(m)}) {
        for (const double c : {1.0, 1.1, 1.25, 2.0}) {
            INFO("c = " << c);
            const auto owners = keyplace::bounded_assign(s, points, {.load_factor = c});
            const auto load = check_caps_held(s, points, owners, {.load_factor = c});
            const auto caps = load_caps::build(s, {.load_factor = c});
            for (std::uint32_t i = 0; i < s.size(); ++i) {
                CHECK(load[i] <= caps.cap(ni(i), m));
            }
        }
    }
}

}  // namespace

TEST_CASE("bounded: caps are ceil(C*T*q_i / (65536*Q)) in exact integers", "[bounded]") {
    // Hand-computed: weights 1, 1, 2 (q = 65536, 65536, 131072; Q = 262144).
    const auto r = keyplace::ring::build({{"a", 1.0}, {"b", 1.0}, {"c", 2.0}});
    const auto c15 = load_caps::build(r, {.load_factor = 1.5});
    // T = 10: 1.5 * 10 / 4 = 3.75 -> 4; 1.5 * 10 * 2 / 4 = 7.5 -> 8.
    CHECK(c15.cap(ni(0), 10) == 4);
    CHECK(c15.cap(ni(1), 10) == 4);
    CHECK(c15.cap(ni(2), 10) == 8);
    // T = 8: 3 exactly (no rounding up of an exact quotient), and 6.
    CHECK(c15.cap(ni(0), 8) == 3);
    CHECK(c15.cap(ni(2), 8) == 6);
    // T = 1: the one request fits anywhere: ceil(0.375) = 1, ceil(0.75) = 1.
    CHECK(c15.cap(ni(0), 1) == 1);
    CHECK(c15.cap(ni(2), 1) == 1);
    // c = 1, 3 equal nodes: T = 9 -> 3, T = 10 -> 4 (10/3 rounded up).
    const auto eq = keyplace::ring::build(make_nodes(3));
    const auto c1 = load_caps::build(eq, {.load_factor = 1.0});
    CHECK(c1.cap(ni(0), 9) == 3);
    CHECK(c1.cap(ni(0), 10) == 4);
    // c counts in units of 2^-16: 1.3 is C = llround(1.3 * 65536) = llround(85196.8) = 85197,
    // so 10 equal nodes at T = 100 give ceil(85197 * 100 / 655360) = ceil(13.00003) = 14, not
    // the 13 that 1.3 * 100 / 10 would give in real numbers. 1.25 is exact: 12.5 -> 13.
    const auto ten = keyplace::ring::build(make_nodes(10));
    CHECK(load_caps::build(ten, {.load_factor = 1.3}).cap(ni(0), 100) == 14);
    CHECK(load_caps::build(ten, {.load_factor = 1.25}).cap(ni(0), 100) == 13);
    CHECK(load_caps::build(ten, {.load_factor = 1.25}).cap(ni(0), 80) == 10);
    // Infinity: no bound.
    const auto unbounded = load_caps::build(ten, {.load_factor = inf});
    CHECK(unbounded.unbounded());
    CHECK(unbounded.cap(ni(3), 5) == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("bounded: caps at the extremes need all 128 bits, on every target", "[bounded]") {
    // q = 2^53 (weight 2^37), 196608 (weight 3), 1 (weight 2^-16): C * T * q reaches 2^121 and
    // 65536 * Q passes 2^64. Expected values from Python's exact integers. Once computed with
    // unsigned __int128, which 32-bit targets lack (the cross-i386 stage builds this).
    const auto r = keyplace::rendezvous::build({{"a", 137438953472.0}, {"b", 3.0}, {"c", 1.0 / 65536}});
    const auto top = load_caps::build(r, {.load_factor = 1048576.0});  // C = 2^36
    CHECK(top.cap(ni(0), std::uint64_t{1} << 32) == 4503599627272192U);
    CHECK(top.cap(ni(1), std::uint64_t{1} << 32) == 98304U);
    CHECK(top.cap(ni(2), std::uint64_t{1} << 32) == 1U);
    CHECK(top.cap(ni(0), std::uint64_t{1} << 40) == 4503599627272192U);  // T is clamped to 2^32
    CHECK(top.cap(ni(0), 3755744309U) == 3938183344468022U);
    CHECK(top.cap(ni(1), 3755744309U) == 85963U);
    const auto low = load_caps::build(r, {.load_factor = 1.3});  // C = 85197
    CHECK(low.cap(ni(0), 4294967295U) == 5583470591U);
    CHECK(low.cap(ni(1), 4294967295U) == 1U);
}

TEST_CASE("bounded: HAProxy slots on the reference's worked example and hand-computed cases", "[bounded][haproxy]") {
    using keyplace::compat::haproxy_slots;
    // Weights 1, 1, 2 -> eweights 16, 16, 32 (tot 64), served 9, factor 150: tot_slots =
    // (10 * 150 + 99) / 100 = 15, 0 per weight, remainder 15 -> 3, 4, 8.
    CHECK(haproxy_slots(16, 0, 64, 9, 150) == 3);
    CHECK(haproxy_slots(16, 16, 64, 9, 150) == 4);
    CHECK(haproxy_slots(32, 32, 64, 9, 150) == 8);
    // Weights 1, 2, 3 -> 16, 32, 48 (tot 96), served 99, factor 125: tot = 125, 1 per weight,
    // remainder 29: 16 + 464/96 = 16 + 4 = 20; 32 + 1392/96 - 4 = 32 + 14 - 4 = 42;
    // 48 + 2784/96 - 14 = 48 + 29 - 14 = 63; 20 + 42 + 63 = 125.
    CHECK(haproxy_slots(16, 0, 96, 99, 125) == 20);
    CHECK(haproxy_slots(32, 16, 96, 99, 125) == 42);
    CHECK(haproxy_slots(48, 48, 96, 99, 125) == 63);
    // Three weight-1 servers, nothing served, factor 101: tot = 200/100 = 2, remainder 2 of 48:
    // 32/48 = 0 -> lifted to 1; 64/48 - 0 = 1; 96/48 - 1 = 1.
    CHECK(haproxy_slots(16, 0, 48, 0, 101) == 1);
    CHECK(haproxy_slots(16, 16, 48, 0, 101) == 1);
    CHECK(haproxy_slots(16, 32, 48, 0, 101) == 1);
    // The factor check, with HAProxy's message.
    CHECK_FALSE(keyplace::compat::check_haproxy_balance_factor(0));
    CHECK_FALSE(keyplace::compat::check_haproxy_balance_factor(101));
    for (const std::uint32_t bad : {1U, 50U, 100U}) {
        const auto e = keyplace::compat::check_haproxy_balance_factor(bad);
        CHECK(e == keyplace::errc::invalid_argument);
        CHECK_THAT(e.message(), Catch::Matchers::Contains("must be 0 or greater than 100"));
        CHECK_THAT(e.message(), Catch::Matchers::Contains(std::to_string(bad)));
    }
}

TEST_CASE("bounded: HAProxy's walk starts at the closer point and stops after the second wrap", "[bounded][haproxy]") {
    using ring64 = keyplace::compat::point_ring<std::uint64_t, keyplace::xxh3>;
    const std::vector<node> nodes{{"a"}, {"b"}, {"c"}};
    const auto r = ring64::build(nodes, {{100U, 0}, {200U, 1}, {300U, 2}});
    const auto servers = keyplace::compat::haproxy_servers_of(r);
    CHECK(servers.eweight == std::vector<std::uint32_t>{16, 16, 16});
    CHECK(servers.cumulative == std::vector<std::uint32_t>{0, 16, 32});
    const std::vector<std::uint32_t> idle{0, 0, 0};
    // Factor 0: the closer point alone; a tie goes to the point before.
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 190, servers, idle, 0, 0) == ni(1));
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 140, servers, idle, 0, 0) == ni(0));
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 150, servers, idle, 0, 0) == ni(0));
    // Past the last point: 310 is 10 after c and (2^64 - 210) before a.
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 310, servers, idle, 0, 0) == ni(2));
    // served 2 on a, total 2, factor 150: tot = (3 * 150 + 99) / 100 = 5 over 48: a gets
    // 80/48 = 1 slot, b 160/48 - 1 = 2, c 240/48 - 3 = 2. a is full (2 >= 1): on to b.
    const std::vector<std::uint32_t> a_busy{2, 0, 0};
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 140, servers, a_busy, 2, 150) == ni(1));
    // Everyone full (served 50 each against a total of 0: tot = (150 + 99) / 100 = 2 slots, 1
    // each): 250 starts at b (a tie between 200 and 300 goes to the point before), the walk
    // passes c, wraps, passes a, b, c, wraps again and returns the first point's server, a.
    const std::vector<std::uint32_t> all_busy{50, 50, 50};
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 250, servers, all_busy, 0, 150) == ni(0));
    CHECK(keyplace::compat::haproxy_bounded_pick(r, 250, servers, idle, 0, 150) == ni(1));
    // Weights HAProxy does not have.
    const std::vector<node> half{{"a", 1.5}};
    const auto bad = ring64::build(half, {{1U, 0}});
    expect_error([&] { return keyplace::compat::haproxy_servers_of(bad); }, keyplace::errc::invalid_weight,
                 "node 'a': weight 1.5 is not a whole number from 1 to 256");
    const std::vector<std::uint64_t> pts{1, 2};
    expect_error([&] { return keyplace::compat::haproxy_bounded_assign(r, pts, 100); },
                 keyplace::errc::invalid_argument, "hash-balance-factor 100");
}

TEST_CASE("bounded: HAProxy's rule over a ring never lets served reach the slots", "[bounded][haproxy]") {
    const auto r = keyplace::ring::build({{"a", 1.0}, {"b", 2.0}, {"c", 1.0}, {"d", 3.0}, {"e", 1.0}});
    const auto points = random_points(100'000, 5);
    const std::uint32_t factor = 125;
    const auto owners = keyplace::compat::haproxy_bounded_assign(r, points, factor);
    // Replay: before each admission served < slots at the then total (the strict rule).
    const auto servers = keyplace::compat::haproxy_servers_of(r);
    std::vector<std::uint32_t> order(points.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
        order[k] = k;
    }
    std::sort(order.begin(), order.end(), [&](auto a, auto b) {
        return points[a] != points[b] ? points[a] < points[b] : a < b;
    });
    std::vector<std::uint32_t> served(r.size());
    std::uint32_t total = 0;
    std::size_t bad = 0;
    for (const auto k : order) {
        const auto i = owners[k].value;
        if (served[i] >= keyplace::compat::haproxy_slots(servers.eweight[i], servers.cumulative[i],
                                                         servers.tot_weight, total, factor)) {
            ++bad;
        }
        ++served[i];
        ++total;
    }
    CHECK(bad == 0);
    // Factor 0 is the plain closer-point pick: every request stays where factor 0 puts it alone.
    const auto off = keyplace::compat::haproxy_bounded_assign(r, points, 0);
    const std::vector<std::uint32_t> none(r.size());
    for (std::size_t k = 0; k < 1000; ++k) {
        CHECK(off[k] == keyplace::compat::haproxy_bounded_pick(r, points[k], servers, none, 0, 0));
    }
}

TEST_CASE("bounded: Envoy's shuffle sequences for seeds 2, 6 and 7", "[bounded][envoy]") {
    const auto sequence = [](std::uint64_t seed) {
        keyplace::compat::envoy_shuffle s(seed, 5);
        std::string out;
        while (!s.done()) {
            out += std::to_string(s.next());
        }
        return out;
    };
    // bounded_load_hlb_test.cc: "with seed 2 is 2 1 0 4 3", seed 6 "4 0 2 3 1", 7 "0 1 4 3 2".
    CHECK(sequence(2) == "21043");
    CHECK(sequence(6) == "40231");
    CHECK(sequence(7) == "01432");
    // The seed is taken modulo 2^32.
    CHECK(sequence(2 + (std::uint64_t{1} << 32)) == "21043");
}

TEST_CASE("bounded: Envoy's BoundedLoadHashingLoadBalancer unit-test vectors", "[bounded][envoy]") {
    using keyplace::compat::envoy_bounded_choose;
    // The test's predicate: the p-th listed host (0-based) has overload (100 + p + 2) / 100,
    // any other host 0.5. Hosts are 127.0.0.1{i}:90, i = 0 .. n-1; the fake inner LB maps
    // hash h to ring[h].
    const auto predicate = [](std::vector<std::uint32_t> listed) {
        return [listed](std::uint32_t host) {
            for (std::size_t p = 0; p < listed.size(); ++p) {
                if (listed[p] == host) {
                    return (100.0 + static_cast<double>(p) + 2.0) / 100.0;
                }
            }
            return 0.5;
        };
    };
    // NoHostEverOverloaded: hash i -> host i.
    for (std::uint32_t i = 0; i < 5; ++i) {
        CHECK(envoy_bounded_choose(i, i, 5, predicate({})) == i);
    }
    // OneHostOverloaded: host 2 overloaded, hash 2 -> 127.0.0.11.
    CHECK(envoy_bounded_choose(2, 2, 5, predicate({2})) == 1);
    // MultipleHostOverloaded: 0, 1, 2 overloaded, hash 2 -> 127.0.0.14.
    CHECK(envoy_bounded_choose(2, 2, 5, predicate({0, 1, 2})) == 4);
    // MultipleHashSameHostOverloaded: ring 0 0 1 1 2 2 3 3 4 4, host 3 overloaded; hashes 6 and
    // 7 both pick host 3 and go to 127.0.0.14 and 127.0.0.10.
    const std::uint32_t ring[] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4};
    CHECK(envoy_bounded_choose(6, ring[6], 5, predicate({3})) == 4);
    CHECK(envoy_bounded_choose(7, ring[7], 5, predicate({3})) == 0);
    // AllHostsOverloaded: 3 hosts, factors 1.02 (host 1), 1.03 (host 0), 1.04 (host 2); hash
    // 0 -> the least overloaded, 127.0.0.11.
    CHECK(envoy_bounded_choose(0, 0, 3, predicate({1, 0, 2})) == 1);
    // ActualHostOverloaded: the real hostOverloadFactor with factor 1, 5 hosts of weight 0.2,
    // cluster rq_active 0: total_slots = (1 * 1 + 99) / 100 = 1, slots = max(ceil(0.2), 1) = 1.
    std::vector<std::uint32_t> active(5, 0);
    const auto actual = [&](std::uint32_t h) {
        return keyplace::compat::envoy_overload_factor(active[h], 0, 0.2, 1);
    };
    CHECK(envoy_bounded_choose(2, 2, 5, actual) == 2);
    active[2] = 2;  // host 2 now has 2 active requests: 2 / 1 > 1
    CHECK(envoy_bounded_choose(2, 2, 5, actual) == 1);
}

TEST_CASE("bounded: Envoy's rule over envoy_ring_hash and envoy_maglev", "[bounded][envoy]") {
    std::vector<node> nodes;
    for (int i = 0; i < 8; ++i) {
        nodes.push_back({"10.0.0." + std::to_string(i) + ":80", static_cast<double>(1 + i % 3)});
    }
    const auto rh = keyplace::compat::envoy_ring_hash::build(nodes);
    const auto mg = keyplace::compat::envoy_maglev::build(nodes);
    const auto points = random_points(100'000, 9);
    double weight_sum = 0;
    for (const auto& n : nodes) {
        weight_sum += n.weight;
    }
    const auto check = [&](const auto& s) {
        // Factor 0: the plain strategy.
        const auto plain = keyplace::compat::envoy_bounded_assign(s, points, 0);
        for (std::size_t k = 0; k < points.size(); ++k) {
            REQUIRE(plain[k] == s.pick(points[k]));
        }
        // Factor 125: Envoy admits while active <= slots, so a host ends within its slots at
        // the last total plus one (a host with active < slots always exists: the slots sum to at
        // least overall + 1).
        const std::uint32_t factor = 125;
        const auto owners = keyplace::compat::envoy_bounded_assign(s, points, factor);
        std::vector<std::uint32_t> load(s.size());
        for (const auto o : owners) {
            ++load[o.value];
        }
        const auto m = static_cast<std::uint32_t>(points.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            const std::uint32_t total_slots = (m * factor + 99) / 100;  // overall m - 1, plus 1
            const double w = s.nodes()[i].weight / weight_sum;
            const auto slots = static_cast<std::uint32_t>(std::ceil(total_slots * w));
            CHECK(load[i] <= slots + 1);
        }
    };
    check(rh);
    check(mg);
    expect_error([&] { return keyplace::compat::envoy_bounded_assign(rh, points, 99); },
                 keyplace::errc::invalid_argument, "hash_balance_factor 99 is below 100");
}

TEST_CASE("bounded: the cap is never exceeded, uniform and Zipf 1.1, ring, maglev, rendezvous", "[bounded]") {
    check_property_cases(keyplace::ring::build(make_nodes(10)), "ring, 10 nodes");
    check_property_cases(keyplace::maglev::build(make_nodes(10)), "maglev, 10 nodes");
    check_property_cases(keyplace::rendezvous::build({{"a", 1.0}, {"b", 2.0}, {"c", 0.5}, {"d", 1.0}, {"e", 3.0}}),
                         "rendezvous, weighted");
}

TEST_CASE("bounded: the cap holds after arbitrary joins and leaves", "[bounded]") {
    std::mt19937_64 gen(4242);
    auto r = keyplace::ring::build(make_nodes(12));
    auto g = keyplace::maglev::build(make_nodes(12));
    const auto points = zipf_points(100'000);
    int next_id = 100;
    for (int step = 0; step < 6; ++step) {
        if (gen() % 2 == 0 && r.size() > 3) {
            const std::string gone = r.nodes()[static_cast<std::size_t>(gen() % r.size())].id;
            r = r.without(gone);
            g = g.without(gone);
        } else {
            const node n{"joiner-" + std::to_string(next_id++), 1.0 + static_cast<double>(gen() % 3)};
            r = r.with(n);
            g = g.with(n);
        }
        (void)check_caps_held(r, points, keyplace::bounded_assign(r, points), {});
        (void)check_caps_held(g, points, keyplace::bounded_assign(g, points), {});
    }
}

TEST_CASE("bounded: c = infinity or a huge c is the plain strategy", "[bounded]") {
    const auto r = keyplace::ring::build(make_nodes(10));
    const auto g = keyplace::rendezvous::build(make_nodes(7));
    const auto points = zipf_points(100'000);
    for (const double c : {inf, keyplace::bounded_load_max_factor}) {
        const auto a = keyplace::bounded_assign(r, points, {.load_factor = c});
        const auto b = keyplace::bounded_assign(g, points, {.load_factor = c});
        std::size_t differ = 0;
        for (std::size_t k = 0; k < points.size(); ++k) {
            differ += (a[k] != r.pick(points[k])) + (b[k] != g.pick(points[k]));
        }
        CHECK(differ == 0);
    }
}

TEST_CASE("bounded: c = 1 with m divisible by the total weight balances exactly", "[bounded]") {
    // Caps at the end sum to exactly m, loads are within them and sum to m: every node is at its
    // cap, m * w_i / W.
    const auto r = keyplace::ring::build(make_nodes(10));
    const auto points = random_points(100'000, 3);
    const auto owners = keyplace::bounded_assign(r, points, {.load_factor = 1.0});
    std::vector<std::size_t> load(r.size());
    for (const auto o : owners) {
        ++load[o.value];
    }
    CHECK(load == std::vector<std::size_t>(10, 10'000));
    const auto w = keyplace::maglev::build({{"a", 1.0}, {"b", 1.0}, {"c", 2.0}});
    const auto wo = keyplace::bounded_assign(w, points, {.load_factor = 1.0});
    std::vector<std::size_t> wl(3);
    for (const auto o : wo) {
        ++wl[o.value];
    }
    CHECK(wl == std::vector<std::size_t>{25'000, 25'000, 50'000});
}

TEST_CASE("bounded: movement on a join, against the minimum", "[bounded]") {
    // Ring of 10 -> 11 nodes, 10^5 keys, c = 1.25. The minimum any placement must move is the
    // joiner's load (about m/11 = 9,091). The paper bounds the expected movement per bin insertion
    // by O(C/eps^2) (C the capacity), a constant-factor bound too loose to test (16 C > m); so
    // the bound asserted is measured: 12,716 moved for 8,928 to the joiner here, 1.42x (the
    // plain ring moves exactly its joiner's share, 1.0x); 2.5x leaves room for seed noise while
    // catching a layer that re-deals keys between old nodes wholesale (about 0.8 m moved, 9x).
    const auto before = keyplace::ring::build(make_nodes(10));
    const auto after = before.with(node{"joiner"});
    const auto points = random_points(100'000, 11);
    const auto a = keyplace::bounded_assign(before, points);
    const auto b = keyplace::bounded_assign(after, points);
    std::size_t moved = 0;
    std::size_t to_joiner = 0;
    const auto joiner = after.find("joiner");
    REQUIRE(joiner);
    for (std::size_t k = 0; k < points.size(); ++k) {
        const std::string& was = before.nodes()[a[k].value].id;
        const std::string& now = after.nodes()[b[k].value].id;
        moved += was != now;
        to_joiner += b[k] == *joiner;
    }
    const double ratio = static_cast<double>(moved) / static_cast<double>(to_joiner);
    INFO("moved " << moved << ", to the joiner " << to_joiner << ", ratio " << ratio);
    CHECK(to_joiner > 0);
    CHECK(ratio >= 1.0);
    CHECK(ratio <= 2.5);
}

TEST_CASE("bounded: the tracker alone is the batch, and tokens release", "[bounded]") {
    const auto r = keyplace::ring::build(make_nodes(6));
    const auto points = zipf_points(20'000);
    auto tracker = keyplace::load_tracker<keyplace::ring>::build(r, {.load_factor = 1.1});
    std::vector<std::uint32_t> order(points.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
        order[k] = k;
    }
    std::sort(order.begin(), order.end(), [&](auto x, auto y) {
        return points[x] != points[y] ? points[x] < points[y] : x < y;
    });
    const auto batch = keyplace::bounded_assign(r, points, {.load_factor = 1.1});
    std::vector<keyplace::load_tracker<keyplace::ring>::token> held;
    std::size_t differ = 0;
    std::uint64_t not_first = 0;  // admitted elsewhere than the ring's owner: its first choice was full
    for (const auto k : order) {
        held.push_back(tracker.acquire_point(points[k]));
        differ += held.back().node() != batch[k];
        not_first += held.back().node() != r.pick(points[k]) ? 1U : 0U;
    }
    CHECK(differ == 0);
    CHECK(tracker.in_flight() == points.size());
    CHECK(not_first > 0);
    CHECK(tracker.overflows() == not_first);
    // Move, explicit release, release by destruction.
    auto moved = std::move(held[0]);
    CHECK_FALSE(held[0]);
    CHECK(moved);
    const auto at = moved.node();
    const auto before = tracker.load(at);
    moved.release();
    moved.release();
    CHECK(tracker.load(at) == before - 1);
    held.clear();
    CHECK(tracker.in_flight() == 0);
    for (std::uint32_t i = 0; i < r.size(); ++i) {
        CHECK(tracker.load(ni(i)) == 0);
    }
    // The key form hashes as locate does; a token outlives its tracker.
    keyplace::load_tracker<keyplace::ring>::token survivor;
    {
        auto t2 = keyplace::load_tracker<keyplace::ring>::build(r);
        survivor = t2.acquire("user:42");
        CHECK(survivor.node() == keyplace::ring::build(make_nodes(6)).pick(keyplace::xxh3{}("user:42")));
    }
    survivor.release();
    CHECK_FALSE(survivor);
}

TEST_CASE("bounded: concurrent acquires never exceed the caps (run under TSan)", "[bounded][concurrency]") {
    // 4 threads acquire 5,000 requests each, holding all: every admission is within the cap at
    // the total it read, and the total only grows, so at the end every node is within its cap
    // at the final total. A non-atomic admission (read the load, compare, then add) lets two
    // threads both take a node's last slot and fails this. Then the threads churn (acquire,
    // release at random) and finally release everything: the counters return to 0.
    const auto r = keyplace::ring::build(make_nodes(8));
    auto tracker = keyplace::load_tracker<keyplace::ring>::build(r, {.load_factor = 1.05});
    const auto points = zipf_points(20'000);
    constexpr unsigned threads = 4;
    using token = keyplace::load_tracker<keyplace::ring>::token;
    std::vector<std::vector<token>> held(threads);
    std::vector<std::thread> pool;
    std::atomic<bool> go{false};
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            while (!go.load()) {
            }
            for (std::size_t k = t; k < points.size(); k += threads) {
                held[t].push_back(tracker.acquire_point(points[k]));
            }
        });
    }
    go = true;
    for (auto& th : pool) {
        th.join();
    }
    REQUIRE(tracker.in_flight() == points.size());
    // Every token not on its key's first choice passed over a full node; a retried pass may count
    // one that ends on its first choice too.
    std::uint64_t not_first = 0;
    for (unsigned t = 0; t < threads; ++t) {
        for (std::size_t j = 0; j < held[t].size(); ++j) {
            not_first += held[t][j].node() != r.pick(points[t + j * threads]) ? 1U : 0U;
        }
    }
    CHECK(not_first > 0);
    CHECK(tracker.overflows() >= not_first);
    CHECK(tracker.overflows() <= points.size());
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < r.size(); ++i) {
        CHECK(tracker.load(ni(i)) <= tracker.caps().cap(ni(i), points.size()));
        sum += tracker.load(ni(i));
    }
    CHECK(sum == points.size());
    pool.clear();
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            std::mt19937 gen(t);
            for (int round = 0; round < 20'000; ++round) {
                auto& mine = held[t];
                if (!mine.empty() && gen() % 2 == 0) {
                    std::swap(mine[gen() % mine.size()], mine.back());
                    mine.pop_back();
                } else {
                    mine.push_back(tracker.acquire_point(points[gen() % points.size()]));
                }
            }
            held[t].clear();
        });
    }
    for (auto& th : pool) {
        th.join();
    }
    CHECK(tracker.in_flight() == 0);
    for (std::uint32_t i = 0; i < r.size(); ++i) {
        CHECK(tracker.load(ni(i)) == 0);
    }
}

TEST_CASE("bounded: bad input is refused with the value named, and nothing changes", "[bounded][errors]") {
    const auto r = keyplace::ring::build(make_nodes(4));
    const std::vector<std::uint64_t> points{1, 2, 3};
    const auto kept = r.nodes().size();
    const auto refused = [&](double c, const std::string& fragment) {
        keyplace::error_info err;
        CHECK_FALSE(load_caps::try_build(r, {.load_factor = c}, err));
        CHECK(err == keyplace::errc::invalid_argument);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
        expect_error([&] { return keyplace::bounded_assign(r, points, {.load_factor = c}); },
                     keyplace::errc::invalid_argument, fragment);
        expect_error([&] { return keyplace::load_tracker<keyplace::ring>::build(r, {.load_factor = c}); },
                     keyplace::errc::invalid_argument, fragment);
    };
    refused(std::nan(""), "load factor nan is not a number");
    refused(0.99, "load factor 0.99 is below 1");
    refused(0.0, "load factor 0 is below 1");
    refused(-inf, "load factor -inf is below 1");
    refused(2e6, "load factor 2e+06 is above 1048576");
    CHECK(load_caps::try_build(r, {.load_factor = 1.0}, *std::make_unique<keyplace::error_info>()));
    // Request weights.
    const std::vector<std::uint32_t> two{1, 1};
    expect_error([&] { return keyplace::bounded_assign(r, points, two); }, keyplace::errc::invalid_argument,
                 "2 request weights for 3 requests");
    const std::vector<std::uint32_t> zero{1, 0, 1};
    expect_error([&] { return keyplace::bounded_assign(r, points, zero); }, keyplace::errc::invalid_argument,
                 "request 1 has weight 0");
    const std::vector<std::uint32_t> huge{4'000'000'000U, 300'000'000U, 1};
    expect_error([&] { return keyplace::bounded_assign(r, points, huge); }, keyplace::errc::invalid_argument,
                 "request weights sum to 4300000001");
    // A node weight below the caps' resolution, 2^-16 (the ring accepts it at 2^20 vnodes).
    const auto fine = keyplace::ring::build({{"a", 1.0}, {"tiny", 1.0 / 262144.0}}, {.vnodes = 1U << 20});
    expect_error([&] { return load_caps::build(fine); }, keyplace::errc::invalid_weight,
                 "node 'tiny': weight 3.814697265625e-06 is below the weight resolution");
    CHECK(r.nodes().size() == kept);
}

TEST_CASE("bounded: weighted requests fit their caps or go where they overshoot least", "[bounded]") {
    const auto r = keyplace::ring::build(make_nodes(5));
    const auto points = random_points(100'000, 21);
    std::vector<std::uint32_t> weights(points.size());
    std::mt19937 gen(8);
    for (auto& w : weights) {
        w = 1 + gen() % 4;
    }
    const auto owners = keyplace::bounded_assign(r, points, weights, {.load_factor = 1.25});
    std::uint64_t total = 0;
    for (const auto w : weights) {
        total += w;
    }
    std::vector<std::uint64_t> load(r.size());
    for (std::size_t k = 0; k < points.size(); ++k) {
        load[owners[k].value] += weights[k];
    }
    // With requests of at most 4 units, a request that fits nowhere overshoots by at most 3.
    const auto caps = load_caps::build(r, {.load_factor = 1.25});
    for (std::uint32_t i = 0; i < r.size(); ++i) {
        CHECK(load[i] <= caps.cap(ni(i), total) + 3);
    }
}

TEST_CASE("bounded: golden table from the independent Python generator", "[bounded][golden]") {
    // tests/golden/bounded_native_v1.txt, printed by tests/golden/generate_bounded_native.py
    // from the README's text (ctest golden.bounded_generator_reproduces_table re-runs it).
    const auto records = golden_records("bounded_native_v1.txt");
    std::vector<node> nodes;
    std::vector<std::uint64_t> points;
    std::vector<std::uint32_t> weights;
    std::vector<std::string> owners;
    std::uint32_t vnodes = 0;
    double c = 0;
    std::size_t cases = 0;
    std::size_t checked = 0;
    for (const auto& f : records) {
        if (f[0] == "keyplace-bounded-golden") {
            REQUIRE(f[1] == "1");
        } else if (f[0] == "case") {
            nodes.clear();
            points.clear();
            weights.clear();
            owners.clear();
            vnodes = static_cast<std::uint32_t>(parse_u64(f[3]));
            c = std::stod(f[5]);
        } else if (f[0] == "node") {
            nodes.push_back({f[1], std::stod(f[2])});
        } else if (f[0] == "request") {
            CHECK(keyplace::xxh3{}(f[1]) == parse_u64(f[2]));
            points.push_back(parse_u64(f[2]));
            weights.push_back(static_cast<std::uint32_t>(parse_u64(f[3])));
            owners.push_back(f[4]);
        } else if (f[0] == "end") {
            const auto r = keyplace::ring::build(nodes, {.vnodes = vnodes});
            const auto got = keyplace::bounded_assign(r, points, weights, {.load_factor = c});
            for (std::size_t k = 0; k < got.size(); ++k) {
                CHECK(r.nodes()[got[k].value].id == owners[k]);
                ++checked;
            }
            ++cases;
        }
    }
    CHECK(cases == 3);
    CHECK(checked == 470);
}
