// Tests of maglev.hpp: golden vectors from the independent Python generator, the population
// against the paper's worked example and Envoy's test tables, balance, disruption, bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/maglev.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <vector>

using keyplace::maglev;
using keyplace::node;
using keyplace::node_index;
using namespace keyplace_test;

namespace {

auto table_of(const maglev& g) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> t(keyplace::detail::slot_index(g.table_size()));
    for (std::uint64_t s = 0; s < g.table_size(); ++s) {
        t[keyplace::detail::slot_index(s)] = g.entry(s).value;
    }
    return t;
}

auto counts_of(const maglev& g) -> std::vector<std::size_t> {
    std::vector<std::size_t> c(g.size());
    for (std::uint64_t s = 0; s < g.table_size(); ++s) {
        ++c[g.entry(s).value];
    }
    return c;
}

}  // namespace

TEST_CASE("maglev: golden vectors from the independent reference generator", "[maglev][golden]") {
    const auto records = golden_records("maglev_native_v1.txt");
    std::vector<node> nodes;
    std::uint64_t m = 0;
    std::optional<maglev> g;
    auto built = [&]() -> const maglev& {
        if (!g) {
            g = maglev::build(nodes, {.table_size = m});
        }
        return *g;
    };
    std::size_t cases = 0;
    std::size_t checked = 0;
    for (const auto& f : records) {
        const std::string& kind = f[0];
        if (kind == "keyplace-maglev-golden") {
            REQUIRE(f[1] == "1");
        } else if (kind == "case") {
            nodes.clear();
            g.reset();
            m = parse_u64(f[3]);
            ++cases;
        } else if (kind == "node") {
            nodes.push_back({f[1], std::stod(f[2])});
        } else if (kind == "perm") {
            const auto& t = built();
            const auto i = parse_size(f[1]);
            CHECK(t.nodes()[i].id == f[2]);
            keyplace::detail::node_hasher hash(f[2]);
            CHECK(hash(0) % m == parse_u64(f[3]));
            CHECK(hash(1) % (m - 1) + 1 == parse_u64(f[4]));
        } else if (kind == "entries") {
            std::string joined;
            for (const auto e : table_of(built())) {
                joined += (joined.empty() ? "" : ",") + std::to_string(e);
            }
            CHECK(joined == f[1]);
        } else if (kind == "table_xxh3") {
            std::vector<std::byte> bytes;
            for (const auto e : table_of(built())) {
                const auto le = keyplace::key_bytes(e);
                bytes.insert(bytes.end(), le.begin(), le.end());
            }
            CHECK(keyplace::xxh3{}(bytes) == std::stoull(f[1], nullptr, 16));
            ++checked;
        } else if (kind == "slot") {
            CHECK(built().entry(parse_u64(f[1])).value == parse_u64(f[2]));
        } else if (kind == "count") {
            const auto& t = built();
            CHECK(counts_of(t)[t.find(f[1])->value] == parse_u64(f[2]));
        } else if (kind == "key" || kind == "query") {
            check_golden_query(built(), f, 3);
            ++checked;
        } else {
            REQUIRE(kind == "end");
        }
    }
    CHECK(cases == 6);
    CHECK(checked > 1000);
}

TEST_CASE("maglev: the division-free remainder equals %", "[maglev]") {
    const auto xs = random_points(200'000, 12);
    for (const std::uint64_t d : {1ULL, 2ULL, 3ULL, 7ULL, 101ULL, 65537ULL, 655373ULL, 4294967291ULL, 4294967295ULL}) {
        const keyplace::detail::fast_mod mod(d);
        std::size_t bad = 0;
        for (const auto x : xs) {
            bad += mod(x) != x % d ? 1 : 0;
        }
        const std::uint64_t top = ~std::uint64_t{0};
        for (const std::uint64_t x : std::initializer_list<std::uint64_t>{0, 1, d - 1, d, d + 1, top, top - 1, (top / d) * d, (top / d) * d - 1}) {
            bad += mod(x) != x % d ? 1 : 0;
        }
        INFO("divisor " << d);
        CHECK(bad == 0);
    }
}

namespace {
// The native fill: the slot-table engine's population loop with Maglev's integer credits.
auto maglev_populate(const std::vector<std::uint64_t>& offsets, const std::vector<std::uint64_t>& skips,
                     const std::vector<std::uint64_t>& weights, std::uint64_t m) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> slots(keyplace::detail::slot_index(m));
    keyplace::detail::populate_slots(offsets, skips, std::span<std::uint32_t>(slots),
                                     keyplace::detail::maglev_credits(weights));
    return slots;
}

// The naive reference: every round asks every node in order, each gains its weight in credit
// and, at credit >= 0, pays the largest weight and takes its next free preferred slot.
// Not inlined: inlined into its test case, g++ 12 -O2 reports a -Wfree-nonheap-object false
// positive on a local vector's destructor (seen when the test sources compile as one unit).
[[gnu::noinline]] auto naive_populate(const std::vector<std::uint64_t>& offsets, const std::vector<std::uint64_t>& skips,
                    const std::vector<std::uint64_t>& weights, std::uint64_t m) -> std::vector<std::uint32_t> {
    constexpr auto vacant = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> slot(keyplace::detail::slot_index(m), vacant);
    std::vector<std::uint64_t> next(offsets);
    std::vector<std::int64_t> credit(offsets.size(), 0);
    const auto top = static_cast<std::int64_t>(*std::max_element(weights.begin(), weights.end()));
    std::uint64_t filled = 0;
    while (filled < m) {
        for (std::size_t h = 0; h < offsets.size() && filled < m; ++h) {
            credit[h] += static_cast<std::int64_t>(weights[h]);
            if (credit[h] < 0) {
                continue;
            }
            credit[h] -= top;
            while (slot[keyplace::detail::slot_index(next[h])] != vacant) {
                next[h] = (next[h] + skips[h]) % m;
            }
            slot[keyplace::detail::slot_index(next[h])] = static_cast<std::uint32_t>(h);
            ++filled;
        }
    }
    return slot;
}
}  // namespace

TEST_CASE("maglev: the queued fill equals the naive round-by-round fill, skewed weights too", "[maglev][property]") {
    std::uint64_t state = 7;
    const auto next = [&state] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
    for (const std::uint64_t m : {7ULL, 101ULL, 4099ULL, 65537ULL}) {
        for (const std::size_t n : {1UL, 2UL, 5UL, 60UL}) {
            if (n > m) {
                continue;
            }
            for (int kind = 0; kind < 4; ++kind) {
                std::vector<std::uint64_t> offsets(n);
                std::vector<std::uint64_t> skips(n);
                std::vector<std::uint64_t> weights(n);
                for (std::size_t h = 0; h < n; ++h) {
                    offsets[h] = next() % m;
                    skips[h] = next() % (m - 1) + 1;
                    // equal; random in 1..1000; one node at 2^53 among weight-1 nodes; random powers of two
                    weights[h] = kind == 0   ? 65536
                                 : kind == 1 ? next() % 1000 + 1
                                 : kind == 2 ? (h == n / 2 ? std::uint64_t{1} << 53 : 1)
                                             : std::uint64_t{1} << (next() % 54);
                }
                INFO("m " << m << ", n " << n << ", kind " << kind);
                CHECK(maglev_populate(offsets, skips, weights, m) == naive_populate(offsets, skips, weights, m));
            }
        }
    }
}

TEST_CASE("maglev: population reproduces the paper's worked example", "[maglev]") {
    // Eisenbud et al. (NSDI 2016): M = 7, B0 (offset 3, skip 4), B1 (0, 2), B2 (3, 1).
    const std::vector<std::uint64_t> equal{1, 1, 1};
    CHECK(maglev_populate(std::vector<std::uint64_t>{3, 0, 3}, std::vector<std::uint64_t>{4, 2, 1},
                                            equal, 7) == std::vector<std::uint32_t>{1, 0, 1, 0, 2, 2, 0});
    // B1 removed: B0 B0 B0 B0 B2 B2 B2; slot 6 moves from B0 to B2 although B0 stayed.
    CHECK(maglev_populate(std::vector<std::uint64_t>{3, 3}, std::vector<std::uint64_t>{4, 1},
                                            std::vector<std::uint64_t>{1, 1}, 7) ==
          std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1, 1});
}

TEST_CASE("maglev: population reproduces Envoy's maglev tests", "[maglev]") {
    // Envoy's maglev_lb_test.cc (envoyproxy/envoy): hosts 127.0.0.1:90..95 sorted by
    // key, offset = XXH64(key, 0) % M, skip = XXH64(key, 1) % (M - 1) + 1.
    auto perms = [](std::uint64_t m, int first, int last) {
        std::vector<std::uint64_t> offsets;
        std::vector<std::uint64_t> skips;
        for (int port = first; port <= last; ++port) {
            const std::string key = "127.0.0.1:" + std::to_string(port);
            offsets.push_back(keyplace::xxh64{0}(key) % m);
            skips.push_back(keyplace::xxh64{1}(key) % (m - 1) + 1);
        }
        return std::pair(offsets, skips);
    };
    const auto [offsets7, skips7] = perms(7, 90, 95);
    CHECK(offsets7 == std::vector<std::uint64_t>{2, 3, 0, 3, 1, 1});
    CHECK(skips7 == std::vector<std::uint64_t>{4, 6, 2, 3, 3, 5});
    CHECK(maglev_populate(offsets7, skips7, std::vector<std::uint64_t>(6, 1), 7) ==
          std::vector<std::uint32_t>{2, 4, 0, 1, 5, 0, 3});
    // Weighted: :90 weight 1, :91 weight 2, M = 17.
    const auto [offsets17, skips17] = perms(17, 90, 91);
    CHECK(maglev_populate(offsets17, skips17, std::vector<std::uint64_t>{1, 2}, 17) ==
          std::vector<std::uint32_t>{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1});
}

TEST_CASE("maglev: balance at M = 65537 with 100 nodes, and weights 1:2", "[maglev][property]") {
    const auto g = maglev::build(make_nodes(100));
    const auto counts = counts_of(g);
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    CHECK(*lo == 655);
    CHECK(*hi == 656);
    CHECK(static_cast<double>(*hi) / static_cast<double>(*lo) <= 1.01);

    const auto w = maglev::build({{"one", 1.0}, {"two", 2.0}});
    const auto wc = counts_of(w);
    const double ratio = static_cast<double>(wc[1]) / static_cast<double>(wc[0]);
    CHECK(std::abs(ratio - 2.0) <= 0.02);
}

TEST_CASE("maglev: removing one of 100 nodes moves at most twice the optimum", "[maglev][property]") {
    const auto before = maglev::build(make_nodes(100));
    const auto after = before.without("node-42");
    const auto gone = before.find("node-42")->value;
    std::size_t moved = 0;
    std::size_t optimum = 0;
    std::size_t between_stayers = 0;
    for (std::uint64_t s = 0; s < before.table_size(); ++s) {
        const auto& was = before.nodes()[before.entry(s).value].id;
        const auto& now = after.nodes()[after.entry(s).value].id;
        optimum += before.entry(s).value == gone ? 1 : 0;
        if (was != now) {
            ++moved;
            between_stayers += before.entry(s).value != gone ? 1 : 0;
        }
    }
    // Slots are keys' destinations: the fraction of slots that change is the fraction of
    // uniformly hashed keys that move.
    INFO("moved " << moved << " slots, optimum " << optimum << ", between stayers " << between_stayers);
    CHECK(moved >= optimum);
    CHECK(moved <= 2 * optimum);
    CHECK(between_stayers > 0);  // Maglev's trade: a little extra disruption for balance
}

TEST_CASE("maglev: narrow entries and pick_n order", "[maglev]") {
    CHECK(maglev::build(make_nodes(256)).entry_width() == 1);
    CHECK(maglev::build(make_nodes(257)).entry_width() == 2);
    const auto wide = maglev::build(make_nodes(65537), {.table_size = 131071});
    CHECK(wide.entry_width() == 4);
    CHECK(wide.pick(1).value < wide.size());
    const auto counts = counts_of(wide);
    CHECK(*std::min_element(counts.begin(), counts.end()) >= 1);

    const auto g = maglev::build(make_nodes(8), {.table_size = 101});
    for (const auto p : random_points(500, 5)) {
        std::vector<node_index> out(8);
        REQUIRE(g.pick_n(p, out) == 8);
        CHECK(out[0] == g.pick(p));
        // Naive reference: owners of slots p mod M, p mod M + 1, ... with repeats removed.
        std::vector<node_index> naive;
        for (std::uint64_t s = 0; naive.size() < 8; ++s) {
            const auto o = g.entry((p % 101 + s) % 101);
            if (std::find(naive.begin(), naive.end(), o) == naive.end()) {
                naive.push_back(o);
            }
        }
        CHECK(naive == out);
        std::vector<node_index> more(11, node_index{77});
        CHECK(g.pick_n(p, more) == 8);
        CHECK(more[8].value == 77);
    }
}

TEST_CASE("maglev: bad input is rejected with an error naming it, nothing changes", "[maglev][errors]") {
    using keyplace::errc;
    const auto g = maglev::build(make_nodes(5), {.table_size = 11});
    const auto table_before = table_of(g);
    const auto five = make_nodes(5);
    expect_error([&] { return maglev::build(five, {.table_size = 65536}); }, errc::table_size_not_prime, "table size 65536 is not a prime");
    expect_error([&] { return maglev::build(five, {.table_size = 1}); }, errc::table_size_not_prime, "table size 1 is not a prime");
    expect_error([&] { return maglev::build(five, {.table_size = 0}); }, errc::table_size_not_prime, "table size 0 ");
    expect_error([&] { return maglev::build(five, {.table_size = 3}); }, errc::invalid_table_size, "table size 3 is smaller than the 5 nodes");
    expect_error([&] { return maglev::build(five, {.table_size = 4294967311ULL}); }, errc::invalid_table_size, "4294967311");
    // The limit is checked before primality: the largest 64-bit prime is refused at once, not
    // after 2^31 trial divisions (nor forever: d * d once wrapped past 2^64).
    expect_error([&] { return maglev::build(five, {.table_size = 18446744073709551557ULL}); }, errc::invalid_table_size,
                 "18446744073709551557 is above the largest");
    CHECK(keyplace::detail::is_prime(4294967311ULL));
    CHECK_FALSE(keyplace::detail::is_prime(4294967297ULL));  // 641 x 6700417
    expect_error([] { return maglev::build(std::vector<node>{}); }, errc::empty_membership, "empty");
    expect_error([] { return maglev::build({{"a"}, {"a"}}); }, errc::duplicate_id, "'a'");
    expect_error([] { return maglev::build({{"a", 0.0}}); }, errc::invalid_weight, "'a': weight 0 ");
    expect_error([] { return maglev::build({{"a", std::nan("")}}); }, errc::invalid_weight, "nan");
    expect_error([] { return maglev::build({{"a", 1e-9}}); }, errc::invalid_weight, "below the weight resolution");
    expect_error([&] { return g.with({"node-3"}); }, errc::duplicate_id, "'node-3' is already a member");
    expect_error([&] { return g.with({"node-5"}).with({"node-6"}).with({"x"}).with({"y"}).with({"z"}).with({"w"}).with({"v"}); },
           errc::invalid_table_size, "table size 11 is smaller than the 12 nodes");
    expect_error([&] { return g.without("ghost"); }, errc::unknown_id, "'ghost' is not a member");
    expect_error([] { return maglev::build({{"solo"}}).without("solo"); }, errc::empty_membership, "'solo'");
    keyplace::error_info ec;
    CHECK_FALSE(maglev::try_build(five, {.table_size = 10}, ec));
    CHECK(ec == errc::table_size_not_prime);
    CHECK(ec.message() == "table size 10 is not a prime");
    CHECK(maglev::try_build(five, ec));
    CHECK_FALSE(ec);
    CHECK(table_of(g) == table_before);
}
