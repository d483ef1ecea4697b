// Tests of spread.hpp: the index rule and the served node against the independent generator's
// table (tests/golden/spread_native_v1.txt), membership in the first k of pick_n, uniformity
// over salts, k = 1 as pick, clamping above the holders, and bad widths.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/spread.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

using keyplace::node_index;
using keyplace::spread_width;
using namespace keyplace_test;

namespace {

static_assert(noexcept(keyplace::pick_spread(std::declval<const keyplace::ring&>(), std::uint64_t{},
                                             std::declval<spread_width>(), std::uint64_t{})));
static_assert(noexcept(keyplace::locate_spread(std::declval<const keyplace::rendezvous&>(), std::string{},
                                               std::declval<spread_width>(), std::uint64_t{})));
static_assert(noexcept(keyplace::spread_index(0, 0, 1)));

/// Pearson's chi-square of counts against the uniform expectation.
auto chi_square(const std::vector<std::size_t>& counts, std::size_t total) -> double {
    const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
    double x = 0;
    for (const auto c : counts) {
        const double d = static_cast<double>(c) - expected;
        x += d * d / expected;
    }
    return x;
}

template <class S>
void check_served_is_among_first_k(const S& s) {
    const auto points = key_points(20'000);
    std::vector<node_index> first(keyplace::max_spread_width);
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::size_t k = 1 + i % 7;
        const std::uint64_t salt = i * 0x9e3779b97f4a7c15ULL;
        const std::size_t got = s.pick_n(points[i], std::span<node_index>(first.data(), k));
        const node_index served = keyplace::pick_spread(s, points[i], spread_width::make(k), salt);
        CHECK(std::find(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(got), served) !=
              first.begin() + static_cast<std::ptrdiff_t>(got));
        CHECK(served == first[keyplace::spread_index(points[i], salt, got)]);
    }
}

}  // namespace

TEST_CASE("spread: the index rule and the served nodes match the independent generator", "[spread][golden]") {
    std::optional<std::variant<keyplace::ring, keyplace::rendezvous>> strategy;
    std::size_t indices = 0;
    std::size_t picks = 0;
    bool header = false;
    for (const auto& f : golden_records("spread_native_v1.txt")) {
        if (f[0] == "keyplace-spread-golden") {
            REQUIRE(f.at(1) == "1");
            header = true;
        } else if (f[0] == "index") {
            REQUIRE(f.size() == 5);
            CHECK(keyplace::spread_index(parse_u64(f[1]), parse_u64(f[2]), parse_size(f[3])) == parse_size(f[4]));
            ++indices;
        } else if (f[0] == "strategy") {
            REQUIRE(f.size() == 4);
            std::vector<keyplace::node> members;
            std::string_view ids = f[3];
            for (std::size_t at = 0; at <= ids.size();) {
                const std::size_t comma = std::min(ids.find(',', at), ids.size());
                members.push_back({std::string(ids.substr(at, comma - at))});
                at = comma + 1;
            }
            if (f[1] == "ring") {
                strategy = keyplace::ring::build(members, {.vnodes = static_cast<std::uint32_t>(parse_u64(f[2]))});
            } else {
                REQUIRE(f[1] == "rendezvous");
                strategy = keyplace::rendezvous::build(members);
            }
        } else {
            REQUIRE(f[0] == "pick");
            REQUIRE(f.size() == 5);
            REQUIRE(strategy.has_value());
            const std::string key = unhex(f[1]);
            const std::uint64_t salt = parse_u64(f[2]);
            const std::size_t k = parse_size(f[3]);
            INFO("key " << f[1] << " salt " << salt << " k " << k);
            std::visit([&](const auto& s) { CHECK(keyplace::locate_spread(s, key, k, salt).id == f[4]); }, *strategy);
            ++picks;
        }
    }
    CHECK(header);
    CHECK(indices == 125);
    CHECK(picks == 400);
}

TEST_CASE("spread: the served node is one of the first k of pick_n", "[spread]") {
    const auto nodes = make_nodes(12);
    check_served_is_among_first_k(keyplace::ring::build(nodes));
    check_served_is_among_first_k(keyplace::rendezvous::build(nodes));
    check_served_is_among_first_k(keyplace::maglev::build(nodes, {.table_size = 251}));
}

TEST_CASE("spread: over 10^5 salts a key's reads are uniform over its k copies", "[spread]") {
    // For a fixed key the salt -> index map is a bijection followed by multiply-shift, so the k
    // counts are multinomial(10^5, 1/k) if the mix is good. Pearson's statistic then follows
    // chi-square with k - 1 degrees of freedom: for k = 5 (4 dof), P(X > 32) = e^-16 (1 + 16)
    // = 1.9e-6, and for k = 3 (2 dof) P(X > 28) = e^-14 = 8.3e-7; over the 16 checks below a
    // false failure has probability < 3e-5. An index that ignored the salt puts every read on
    // one copy (X = 4 * 10^5 for k = 5).
    const auto ring = keyplace::ring::build(make_nodes(10));
    constexpr std::size_t salts = 100'000;
    for (const std::size_t k : {std::size_t{3}, std::size_t{5}}) {
        for (std::size_t key = 0; key < 8; ++key) {
            const std::string name = "hot:" + std::to_string(key);
            const std::uint64_t point = keyplace::xxh3{}(name);
            std::vector<node_index> first(k);
            REQUIRE(ring.pick_n(point, first) == k);
            std::vector<std::size_t> per_copy(k);
            for (std::uint64_t salt = 0; salt < salts; ++salt) {
                const node_index served = keyplace::pick_spread(ring, point, spread_width::make(k), salt);
                const auto at = std::find(first.begin(), first.end(), served);
                REQUIRE(at != first.end());
                ++per_copy[static_cast<std::size_t>(at - first.begin())];
            }
            INFO("key " << name << " k " << k);
            CHECK(chi_square(per_copy, salts) < (k == 5 ? 32.0 : 28.0));
        }
    }
}

TEST_CASE("spread: k = 1 is pick, equal (key, salt) give equal nodes, copies of a strategy agree", "[spread]") {
    const auto nodes = make_nodes(9);
    const auto ring = keyplace::ring::build(nodes);
    const auto copy = keyplace::ring::build(std::vector<keyplace::node>(nodes.rbegin(), nodes.rend()));
    const auto one = spread_width::make(1);
    const auto four = spread_width::make(4);
    for (const auto p : key_points(10'000)) {
        for (const std::uint64_t salt : {std::uint64_t{0}, std::uint64_t{7}, ~std::uint64_t{0}}) {
            CHECK(keyplace::pick_spread(ring, p, one, salt) == ring.pick(p));
            CHECK(keyplace::pick_spread(ring, p, four, salt) == keyplace::pick_spread(ring, p, four, salt));
            CHECK(keyplace::pick_spread(copy, p, four, salt) == keyplace::pick_spread(ring, p, four, salt));
        }
    }
    CHECK(keyplace::locate_spread(ring, "user:42", 1, 99).id == keyplace::locate(ring, "user:42").id);
    CHECK(keyplace::locate_spread(ring, std::uint64_t{42}, one, 3).id == keyplace::locate(ring, std::uint64_t{42}).id);
}

TEST_CASE("spread: k above the holders spreads over every holder", "[spread]") {
    // 3 nodes, k = 64: every salt serves one of the 3, each about a third of 3 * 10^4 salts
    // (multinomial: 2 dof, P(X > 28) = 8.3e-7 as above).
    const auto r = keyplace::rendezvous::build(make_nodes(3));
    const std::uint64_t point = keyplace::xxh3{}("hot:all");
    std::vector<std::size_t> per_node(3);
    constexpr std::size_t salts = 30'000;
    for (std::uint64_t salt = 0; salt < salts; ++salt) {
        const node_index i = keyplace::pick_spread(r, point, spread_width::make(64), salt);
        REQUIRE(i.value < 3);
        ++per_node[i.value];
        CHECK(i == keyplace::pick_spread(r, point, spread_width::make(3), salt));  // the clamped count
    }
    CHECK(chi_square(per_node, salts) < 28.0);
}

TEST_CASE("spread: a width of 0 or above 64 is refused, naming it", "[spread]") {
    const auto ring = keyplace::ring::build(make_nodes(4));
    expect_error([] { return spread_width::make(0); }, keyplace::errc::invalid_argument,
                 "spread width 0 is outside 1..64");
    expect_error([] { return spread_width::make(65); }, keyplace::errc::invalid_argument,
                 "spread width 65 is outside 1..64");
    expect_error([&] { return keyplace::locate_spread(ring, "k", 0, 1).id; }, keyplace::errc::invalid_argument,
                 "spread width 0");
    expect_error([&] { return keyplace::pick_spread(ring, 5, 100, 1); }, keyplace::errc::invalid_argument,
                 "spread width 100");
    keyplace::error_info err;
    CHECK_FALSE(spread_width::try_make(0, err).has_value());
    CHECK(err == keyplace::errc::invalid_argument);
    CHECK(err.message() == "spread width 0 is outside 1..64");
    const auto w = spread_width::try_make(64, err);
    REQUIRE(w.has_value());
    CHECK_FALSE(err);
    CHECK(w->value() == 64);
    CHECK(ring.size() == 4);  // the strategy is a value: nothing to change
}

TEST_CASE("spread: a join moves the reads of keys whose first k change, only to the joiner or an old copy",
          "[spread]") {
    // Rendezvous 100 -> 101 nodes, k = 3, 10^5 keys with one salt each. The joiner enters a key's
    // first 3 with probability 3/101, at a position j uniform in 0..2; the reads whose index is
    // >= j change (the joiner takes index j, the nodes after it shift), so the moved fraction is
    // (3/101) * (3 + 2 + 1)/9 = 2/101 = (k + 1) / (2 (n + 1)), and the joiner's share is 1/101 (the
    // minimum any placement must move). Bounds: four binomial standard deviations over 10^5.
    std::vector<keyplace::node> nodes = make_nodes(100);
    const auto before = keyplace::rendezvous::build(nodes);
    nodes.push_back({"joiner"});
    const auto after = keyplace::rendezvous::build(nodes);
    const auto k = spread_width::make(3);
    constexpr std::size_t keys = 100'000;
    std::size_t moved = 0;
    std::size_t to_joiner = 0;
    std::size_t elsewhere = 0;
    std::vector<node_index> first(3);
    for (std::size_t i = 0; i < keys; ++i) {
        const std::string key = "key-" + std::to_string(i);
        const std::uint64_t salt = i * 7919;
        const auto& was = keyplace::locate_spread(before, key, k, salt);
        const auto& now = keyplace::locate_spread(after, key, k, salt);
        if (was.id == now.id) {
            continue;
        }
        ++moved;
        if (now.id == "joiner") {
            ++to_joiner;
            continue;
        }
        REQUIRE(keyplace::locate_n(before, key, first) == 3);
        const bool held = std::any_of(first.begin(), first.end(), [&](node_index c) { return before.node(c).id == now.id; });
        elsewhere += held ? 0 : 1;
    }
    const double p_moved = 2.0 / 101.0;
    const double p_joiner = 1.0 / 101.0;
    CHECK(std::abs(static_cast<double>(moved) / keys - p_moved) < 4 * sigma(p_moved, keys));
    CHECK(std::abs(static_cast<double>(to_joiner) / keys - p_joiner) < 4 * sigma(p_joiner, keys));
    CHECK(elsewhere == 0);  // every other moved read goes to a node that already held a copy
}
