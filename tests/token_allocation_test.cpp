// Tests of token_allocation.hpp: the two token arithmetics against values derived by hand from
// Cassandra's Java semantics (Murmur3Partitioner, LongToken; computed with Python integers and
// decimals), Cassandra's own balance bound (test/long/.../AbstractReplicationAwareTokenAllocatorTest,
// NoReplicationTokenAllocatorTest) on exact replicated ownership, movement, determinism, the
// Cassandra entry point with NetworkTopologyStrategy racks, and every refusal.
#include "keyplace_catch.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using keyplace::failure_domain;
using keyplace::native_token_arithmetic;
using keyplace::token_holder;
using keyplace::token_replication;
using keyplace::token_ring;
using keyplace::compat::murmur3_token_arithmetic;

namespace {

constexpr std::int64_t lmin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t lmax = std::numeric_limits<std::int64_t>::max();

auto ring_of(const std::vector<token_holder>& holders) -> token_ring {
    std::vector<keyplace::node> nodes;
    std::vector<keyplace::compat::ring_point<std::uint64_t>> points;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        nodes.push_back(holders[i].member);
        for (const auto t : holders[i].tokens) {
            points.push_back({t, static_cast<std::uint32_t>(i)});
        }
    }
    return token_ring::build(nodes, keyplace::compat::given_points<std::uint64_t>(std::move(points)));
}

// Each node's replicated measure over its ideal (rf / N of the circle per node, every node holding
// the same number of tokens), exactly from the arcs, under the rule the allocator balances.
auto normalised_replicated(const std::shared_ptr<const token_ring>& ring, std::uint32_t rf, failure_domain spread)
    -> std::vector<double> {
    const auto placer = keyplace::replica_placer<token_ring>::build(
        ring, keyplace::replica_policy{rf, spread, keyplace::shortfall::fail});
    const auto measure = keyplace::replicated_measure(placer);
    std::vector<double> out;
    const double ideal = static_cast<double>(rf) / static_cast<double>(ring->size());
    for (const auto& m : measure) {
        out.push_back(keyplace::detail::to_double(m) * 0x1p-64 / ideal);
    }
    return out;
}

auto normalised_replicated(const std::vector<token_holder>& holders, std::uint32_t rf, failure_domain spread)
    -> std::vector<double> {
    return normalised_replicated(std::make_shared<const token_ring>(ring_of(holders)), rf, spread);
}

auto max_of(const std::vector<double>& v) -> double { return *std::max_element(v.begin(), v.end()); }

auto node_on(std::size_t i, std::size_t racks) -> keyplace::node {
    return {"n" + std::to_string(i), 1.0, {"", "", racks == 0 ? "" : "r" + std::to_string(i % racks)}};
}

}  // namespace

TEST_CASE("token_allocation: native arithmetic, hand-computed edges", "[token_allocation]") {
    using A = native_token_arithmetic;
    constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
    CHECK(A::size(5, 5) == 1.0);
    CHECK(A::size(0, std::uint64_t{1} << 63) == 0.5);
    CHECK(A::size(top, 0) == 0x1p-64);
    CHECK(A::midpoint(10, 20) == 15);
    CHECK(A::midpoint(10, 21) == 15);  // floor
    CHECK(A::midpoint(top - 9, 10) == 0);  // wraps: 20 values from 2^64 - 10
    CHECK(A::midpoint(7, 7) == 9223372036854775815ULL);  // the opposite point, 7 + 2^63
    CHECK(A::midpoint(top, top) == 9223372036854775807ULL);
    // The exact binary ratio: 0.3 is 0.29999999999999998889..., so 10 * it floors to 2.
    CHECK(A::split(0, 10, 0.3) == 2);
    CHECK(A::split(top - 3, 4, 0.5) == 0);
    CHECK(A::split(5, 5, 0.25) == 4611686018427387909ULL);
    CHECK(A::split(0, 0, 0.7) == 12912720851596685312ULL);
    CHECK(A::split(top, top, 0.1) == 1844674407370955263ULL);
    CHECK(A::split(3, 9, 0.0) == 3);
}

TEST_CASE("token_allocation: Murmur3 arithmetic, hand-computed from the Java source", "[token_allocation]") {
    using A = murmur3_token_arithmetic;
    // midpoint: BigInteger floor; the wrapping case adds MAX - MIN = 2^64 - 1 and folds by it.
    CHECK(A::midpoint(lmin, lmin) == -1);
    CHECK(A::midpoint(0, 0) == lmax);
    CHECK(A::midpoint(1, 1) == lmin + 1);
    CHECK(A::midpoint(-3, 4) == 0);
    CHECK(A::midpoint(-4, 1) == -2);  // floor(-3 / 2), not truncation
    CHECK(A::midpoint(lmax - 1, lmin + 1) == lmax);
    CHECK(A::midpoint(lmax, lmin + 2) == lmin + 1);
    CHECK(A::midpoint(5, -5) == lmax);
    CHECK(A::midpoint(lmin, lmax) == -1);
    CHECK(A::midpoint(lmax, lmax) == -1);
    // split: BigDecimal.valueOf(ratio) is the decimal 0.3, and toBigInteger truncates toward zero.
    CHECK(A::split(0, 10, 0.3) == 3);
    CHECK(A::split(-10, 0, 0.25) == -7);  // -7.5 -> -7
    CHECK(A::split(-10, 0, 0.3) == -7);   // exact
    CHECK(A::split(-10, 1, 0.1) == -8);   // -8.9 -> -8
    CHECK(A::split(-1000, -999, 0.9) == -999);
    CHECK(A::split(lmax - 9, lmin + 10, 0.5) == lmax);      // MAX + 0.5 -> MAX
    CHECK(A::split(lmax - 9, lmin + 10, 0.6) == lmin + 2);  // MAX + 2 folds to MIN + 2
    CHECK(A::split(0, 0, 0.5) == lmax);
    CHECK(A::split(lmin, lmax, 0.5) == 0);  // -0.5 -> 0
    CHECK(A::split(lmax, lmin + 1000, 0.123) == -9223372036854775685LL);
    CHECK(A::split(lmax - 100, lmin + 100, 0.9) == -9223372036854775728LL);
    // size: a wrapping long difference scaled by 2^-64, plus 1 when not positive.
    CHECK(A::size(0, 0) == 1.0);
    CHECK(A::size(lmax, lmin) == 0x1p-64);
    CHECK(A::size(lmin, lmax) == 1.0);  // 1 - 2^-64 rounds to 1
    CHECK(A::size(0, lmin) == 0.5);
    CHECK(A::size(-1, lmax) == 0.5);
    CHECK(A::size(0, std::int64_t{1} << 62) == 0.25);
    CHECK(A::from_random(static_cast<std::uint64_t>(lmin)) == lmax);
    CHECK(A::next(lmax) == lmin);
}

TEST_CASE("token_allocation: generateSplits ratio and the seeded generator", "[token_allocation]") {
    // Cassandra's MIN_INITIAL_SPLITS_RATIO is 1 - 1/sqrt(5) in double arithmetic.
    CHECK(0x1.1b06d1d200914p-1 == 1.0 - 1.0 / std::sqrt(5.0));
    // Values from an independent Python model of the documented generator: state = seed XOR
    // fmix64(tokens + 1), SplitMix64, u = top 53 bits / 2^53, split at MIN + (MAX - MIN) u with
    // MAX = MIN + 0.075 in double (MAX - MIN is 0.07499999999999996, not 0.075).
    const keyplace::node a{"a"};
    const keyplace::node b{"b"};
    CHECK(keyplace::allocate_tokens(std::vector<token_holder>{}, a, 1, {}, 42) ==
          std::vector<std::uint64_t>{9714898635643772085ULL});
    CHECK(keyplace::allocate_tokens(std::vector<token_holder>{}, a, 1, {}, 7) ==
          std::vector<std::uint64_t>{13983713489716710930ULL});
    // Fewer units than RF 3: both tokens split the largest range.
    const std::vector<token_holder> one{{a, {0}}};
    CHECK(keyplace::allocate_tokens(one, b, 2, {3, failure_domain::node}, 0) ==
          std::vector<std::uint64_t>{7135333258107556930ULL, 11515310356638707712ULL});
}

TEST_CASE("token_allocation: NoReplication halves a lone token's range", "[token_allocation]") {
    // One unit owning everything: the target average is 1/2, so the slice is 0.5 of (0, 0].
    const std::vector<token_holder> one{{{"a"}, {0}}};
    CHECK(keyplace::allocate_tokens(one, {"b"}, 1, {}) == std::vector<std::uint64_t>{std::uint64_t{1} << 63});
    // The same in Cassandra's arithmetic: split(0, 0, 0.5) = (2^64 - 1) * 0.5 truncated = MAX.
    const auto ring = keyplace::compat::cassandra_ring::build({{"a", {0}}});
    CHECK(keyplace::compat::allocate_tokens(ring, {"b", {}}, 1, keyplace::compat::simple_strategy_replication{1}) ==
          std::vector<std::int64_t>{lmax});
}

TEST_CASE("token_allocation: replicated_measure of a three-token ring, by hand", "[token_allocation]") {
    // Arcs (300, 100], (100, 200], (200, 300] with RF 2 go to {a, b}, {b, c}, {c, a}.
    const auto ring = std::make_shared<const token_ring>(ring_of({{{"a"}, {100}}, {{"b"}, {200}}, {{"c"}, {300}}}));
    const auto placer = keyplace::replica_placer<token_ring>::build(ring, keyplace::replica_policy{2});
    const auto m = keyplace::replicated_measure(placer);
    using keyplace::detail::u128;
    const std::uint64_t most = std::numeric_limits<std::uint64_t>::max() - 99;  // 2^64 - 100
    CHECK(m == std::vector<u128>{u128{0, most}, u128{0, most}, u128{0, 200}});
}

namespace {

// As Cassandra's testNewCluster: grow to 2/5 of 250 units unchecked, then to 250 checking after
// every unit; the largest normalised unit ownership seen over those steps must stay within
// 1 + 4 * s / (vnodes * RF) (4: fixed token count; s = 1 for SimpleStrategy, 1.5 for rack groups,
// FixedGroupCountReplicationStrategy with 2 * RF groups given round robin). The lower side is not
// asserted (Cassandra: "small loads can't always be fixed"). RF 1 is NoReplicationTokenAllocatorTest's
// case, with the same bound.
void check_cassandra_bound(std::size_t vnodes) {
    for (std::uint32_t rf = 1; rf <= 5; ++rf) {
        for (const std::size_t racks : {std::size_t{0}, std::size_t{2} * rf}) {
            if (rf == 1 && racks != 0) {
                continue;  // with one copy groups do not matter
            }
            const auto groups = racks == 0 ? failure_domain::node : failure_domain::rack;
            const double spread = racks == 0 ? 1.0 : 1.5;
            std::vector<token_holder> holders;
            std::shared_ptr<const token_ring> ring;  // of the holders so far
            double worst = 1.0;
            for (std::size_t i = 0; i < 250; ++i) {
                const auto n = node_on(i, racks);
                const token_replication r{rf, groups};
                holders.push_back({n, ring ? keyplace::allocate_tokens(*ring, n, vnodes, r, 1)
                                           : keyplace::allocate_tokens(holders, n, vnodes, r, 1)});
                ring = std::make_shared<const token_ring>(ring_of(holders));
                if (holders.size() > 100) {
                    const auto spread_level = rf == 1 ? failure_domain::node : groups;
                    worst = std::max(worst, max_of(normalised_replicated(ring, rf, spread_level)));
                }
            }
            INFO("vnodes " << vnodes << ", RF " << rf << ", racks " << racks << ": worst max/mean " << worst);
            CHECK(worst <= 1.0 + 4.0 * spread / (static_cast<double>(vnodes) * rf));
        }
    }
}

}  // namespace

// One case per token count, so that ctest can run them side by side.
TEST_CASE("token_allocation: Cassandra's bound, 1 token per node, 250 nodes", "[token_allocation]") {
    check_cassandra_bound(1);
}
TEST_CASE("token_allocation: Cassandra's bound, 4 tokens per node, 250 nodes", "[token_allocation]") {
    check_cassandra_bound(4);
}
TEST_CASE("token_allocation: Cassandra's bound, 16 tokens per node, 250 nodes", "[token_allocation]") {
    check_cassandra_bound(16);
}
TEST_CASE("token_allocation: Cassandra's bound, 64 tokens per node, 250 nodes", "[token_allocation]") {
    check_cassandra_bound(64);
}

TEST_CASE("token_allocation: a join moves keys only to the joiner", "[token_allocation]") {
    for (const std::uint32_t rf : {1U, 3U}) {
        std::vector<token_holder> holders;
        for (std::size_t i = 0; i < 40; ++i) {
            const auto n = node_on(i, 0);
            auto tokens = keyplace::allocate_tokens(holders, n, 8, {rf}, 5);
            REQUIRE(tokens.size() == 8);
            REQUIRE(std::adjacent_find(tokens.begin(), tokens.end()) == tokens.end());
            if (!holders.empty()) {
                const auto before = ring_of(holders);
                auto after_holders = holders;
                after_holders.push_back({n, tokens});
                const auto after = ring_of(after_holders);
                const auto r = keyplace::movement(before, after);
                REQUIRE(r.exact);
                for (const auto& f : r.flows) {
                    CHECK((f.id == n.id ? f.outflow : f.inflow) == 0.0);
                }
                CHECK(r.moved == Approx(keyplace::ownership(after).share[after.size() - 1]).epsilon(1e-12));
            }
            holders.push_back({n, std::move(tokens)});
        }
    }
}

TEST_CASE("token_allocation: replicated ownership spread does not jump (Cassandra's warning)", "[token_allocation]") {
    // TokenAllocation warns when the standard deviation of replicated ownership per token (a
    // fraction of the ring, sample deviation over the ring's nodes) grows by more than 0.05.
    std::vector<token_holder> holders;
    double previous = 0;
    for (std::size_t i = 0; i < 60; ++i) {
        const auto n = node_on(i, 6);
        holders.push_back({n, keyplace::allocate_tokens(holders, n, 4, {3, failure_domain::rack}, 9)});
        if (holders.size() < 3) {
            continue;
        }
        const auto share = normalised_replicated(holders, 3, failure_domain::rack);
        double mean = 0;
        std::vector<double> per_token;
        for (const double s : share) {
            per_token.push_back(s * 3.0 / static_cast<double>(holders.size()) / 4.0);
            mean += per_token.back();
        }
        mean /= static_cast<double>(per_token.size());
        double var = 0;
        for (const double x : per_token) {
            var += (x - mean) * (x - mean);
        }
        const double sd = std::sqrt(var / static_cast<double>(per_token.size() - 1));
        INFO("nodes " << holders.size() << ": stdev " << sd << " after " << previous);
        CHECK(sd - previous <= 0.05);
        previous = sd;
    }
}

TEST_CASE("token_allocation: same seed same tokens, and the first token follows the seed", "[token_allocation]") {
    std::vector<token_holder> holders;
    for (std::size_t i = 0; i < 12; ++i) {
        const auto n = node_on(i, 4);
        const auto first = keyplace::allocate_tokens(holders, n, 16, {2, failure_domain::rack}, 77);
        CHECK(first == keyplace::allocate_tokens(holders, n, 16, {2, failure_domain::rack}, 77));
        CHECK(std::is_sorted(first.begin(), first.end()));
        holders.push_back({n, first});
    }
    // Input order does not matter: units are taken in id order.
    auto reversed = holders;
    std::reverse(reversed.begin(), reversed.end());
    const keyplace::node fresh{"fresh", 1.0, {"", "", "r1"}};
    CHECK(keyplace::allocate_tokens(reversed, fresh, 16, {2, failure_domain::rack}) ==
          keyplace::allocate_tokens(holders, fresh, 16, {2, failure_domain::rack}));
    // The ring form agrees with the list form.
    CHECK(keyplace::allocate_tokens(ring_of(holders), fresh, 16, {2, failure_domain::rack}) ==
          keyplace::allocate_tokens(holders, fresh, 16, {2, failure_domain::rack}));
    std::set<std::uint64_t> firsts;
    for (std::uint64_t seed = 0; seed < 32; ++seed) {
        firsts.insert(keyplace::allocate_tokens(std::vector<token_holder>{}, {"a"}, 1, {3}, seed)[0]);
    }
    CHECK(firsts.size() == 32);
}

TEST_CASE("token_allocation: refusals name the input and change nothing", "[token_allocation]") {
    std::vector<token_holder> holders{{{"a", 1.0, {"", "", "r1"}}, {10, 20}}, {{"b", 1.0, {"", "", "r2"}}, {30}}};
    const auto refuses = [&](const keyplace::node& n, std::size_t count, token_replication r, keyplace::errc code,
                             const std::string& text) {
        const auto copy = holders;
        keyplace::error_info err;
        CHECK_FALSE(keyplace::try_allocate_tokens(holders, n, count, r, 0, err).has_value());
        CHECK(err.code() == code);
        CHECK(err.message() == text);
        try {
            (void)keyplace::allocate_tokens(holders, n, count, r);
            FAIL("no exception");
        } catch (const keyplace::error& e) {
            CHECK(e.code() == code);
            CHECK(std::string(e.what()) == text);
        }
        CHECK(holders.size() == copy.size());
        for (std::size_t i = 0; i < holders.size(); ++i) {
            CHECK(holders[i].member == copy[i].member);
            CHECK(holders[i].tokens == copy[i].tokens);
        }
    };
    const keyplace::node c{"c", 1.0, {"", "", "r1"}};
    refuses(c, 0, {}, keyplace::errc::invalid_vnodes, "token count 0 is outside 1..65536");
    refuses(c, 65537, {}, keyplace::errc::invalid_vnodes, "token count 65537 is outside 1..65536");
    refuses(c, 4, {0}, keyplace::errc::invalid_replica_count, "replication factor 0; at least 1 copy is needed");
    refuses(c, 4, {2, static_cast<failure_domain>(9)}, keyplace::errc::invalid_argument, "unknown failure-domain level 9");
    refuses({"a"}, 4, {}, keyplace::errc::duplicate_id, "node id 'a' appears more than once");
    refuses({""}, 4, {}, keyplace::errc::empty_id, "node id is empty");
    refuses({"c"}, 4, {2, failure_domain::rack}, keyplace::errc::missing_location,
            "node 'c' has no rack; allocating over racks needs every node's");
    // Two racks known, the new node on one of them, three copies: Cassandra refuses too.
    refuses(c, 4, {3, failure_domain::rack}, keyplace::errc::unsupported_replication,
            "token allocation failed: the number of racks 2 is lower than the replication factor 3; allocation "
            "needs 1 rack or at least 3 (start the first 3 nodes on different racks)");
    holders[1].tokens.push_back(20);
    refuses(c, 4, {}, keyplace::errc::duplicate_token, "token 20 is owned by both 'a' and 'b'");
    holders[1].tokens.pop_back();
    // A node on a rack no other node is on counts as one rack, as in Cassandra: allowed.
    CHECK(keyplace::allocate_tokens(holders, {"d", 1.0, {"", "", "r9"}}, 4, {3, failure_domain::rack}).size() == 4);
}

namespace {

auto endpoint(std::size_t i, const std::string& dc, std::size_t racks) -> keyplace::compat::cassandra_endpoint {
    return {dc + "-" + std::to_string(i), {}, dc, "rack" + std::to_string(i % racks)};
}

}  // namespace

TEST_CASE("token_allocation: Cassandra NetworkTopologyStrategy datacenters", "[token_allocation]") {
    using namespace keyplace::compat;
    // dc1: RF 3 over 6 racks (groups are racks); dc2: RF 2 over 2 racks (a ring per rack, RF 1).
    const network_topology_replication nts{{{"dc1", 3}, {"dc2", 2}}};
    // The first node of dc1 has 16 evenly spaced tokens (a ring cannot be empty); dc2 starts
    // empty, so its first tokens come from the seed and generateSplits.
    std::vector<cassandra_endpoint> eps{endpoint(0, "dc1", 6)};
    for (std::uint64_t k = 0; k < 16; ++k) {
        eps[0].tokens.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(lmin) + 1 + (k << 60)));
    }
    for (std::size_t i = 0; i < 60; ++i) {
        for (const auto& [dc, racks] : {std::pair<std::string, std::size_t>{"dc1", 6}, {"dc2", 2}}) {
            if (i == 0 && dc == "dc1") {
                continue;
            }
            auto e = endpoint(i, dc, racks);
            const auto ring = cassandra_ring::build(eps);
            e.tokens = allocate_tokens(ring, e, 16, nts, 3);
            REQUIRE(e.tokens.size() == 16);
            eps.push_back(e);
        }
    }
    const auto ring = std::make_shared<const cassandra_ring>(cassandra_ring::build(eps));
    const auto plan = ring->network_topology(nts.dcs);
    // The distinct-rack walk of dc1 is NTS's dc1 replicas when racks >= RF: check it arc by arc.
    const auto dc1 = keyplace::replica_placer<cassandra_ring>::build(
        ring, keyplace::replica_policy{3, failure_domain::rack, keyplace::shortfall::fail, {{"dc1", 3}}});
    std::vector<keyplace::node_index> a(5);
    std::vector<keyplace::node_index> b(5);
    for (const auto t : ring->tokens()) {
        const std::size_t na = ring->network_topology_replicas(t, plan, a);
        std::vector<std::uint32_t> from_nts;
        for (std::size_t k = 0; k < na; ++k) {
            if (ring->nodes()[a[k].value].where.region == "dc1") {
                from_nts.push_back(a[k].value);
            }
        }
        const std::size_t nb = dc1.place(static_cast<std::uint64_t>(t), b).placed;
        std::vector<std::uint32_t> from_placer;
        for (std::size_t k = 0; k < nb; ++k) {
            from_placer.push_back(b[k].value);
        }
        REQUIRE(from_nts == from_placer);
    }
    // Balance as Cassandra's test bounds it: dc1 rack groups (s = 1.5), 16 tokens, RF 3.
    const auto m1 = keyplace::replicated_measure(dc1);
    double top = 0;
    for (std::size_t i = 0; i < eps.size(); ++i) {
        if (eps[i].dc == "dc1") {
            top = std::max(top, keyplace::detail::to_double(m1[i]) * 0x1p-64 / (3.0 / 60.0));
        }
    }
    CHECK(top <= 1.0 + 4.0 * 1.5 / (16.0 * 3.0));
    // dc2 per rack: each rack's 30 nodes split the circle alone, RF 1 (NoReplication: 1 + 4 / 16).
    for (const std::string rack : {"rack0", "rack1"}) {
        std::vector<cassandra_endpoint> in_rack;
        for (const auto& e : eps) {
            if (e.dc == "dc2" && e.rack == rack) {
                in_rack.push_back(e);
            }
        }
        const auto shares = keyplace::ownership(cassandra_ring::build(in_rack)).share;
        CHECK(*std::max_element(shares.begin(), shares.end()) * 30.0 <= 1.0 + 4.0 / 16.0);
    }
}

TEST_CASE("token_allocation: Cassandra refusals and clashes", "[token_allocation]") {
    using namespace keyplace::compat;
    const std::vector<cassandra_endpoint> eps{{"a", {-100, 500}, "dc1", "r1"},
                                              {"b", {100}, "dc1", "r2"},
                                              {"x", {900}, "dc2", "r1"}};
    const auto ring = cassandra_ring::build(eps);
    const auto tokens_before = std::vector<std::int64_t>(ring.tokens().begin(), ring.tokens().end());
    const auto refuses = [&](const cassandra_endpoint& e, std::size_t count, const auto& r, keyplace::errc code,
                             const std::string& text) {
        keyplace::error_info err;
        CHECK_FALSE(try_allocate_tokens(ring, e, count, r, 0, err).has_value());
        CHECK(err.code() == code);
        CHECK(err.message() == text);
        try {
            (void)allocate_tokens(ring, e, count, r);
            FAIL("no exception");
        } catch (const keyplace::error& ex) {
            CHECK(ex.code() == code);
            CHECK(std::string(ex.what()) == text);
        }
        CHECK(std::vector<std::int64_t>(ring.tokens().begin(), ring.tokens().end()) == tokens_before);
    };
    const network_topology_replication three{{{"dc1", 3}}};
    refuses({"c", {}, "dc1", "r1"}, 4, three, keyplace::errc::unsupported_replication,
            "token allocation failed: the number of racks 2 in datacenter 'dc1' is lower than the replication "
            "factor 3; allocation needs 1 rack or at least 3 (start the first 3 nodes on different racks)");
    refuses({"c", {}, "dc1", "r1"}, 0, three, keyplace::errc::invalid_vnodes, "token count 0 is outside 1..65536");
    refuses({"a", {}, "dc1", "r1"}, 4, three, keyplace::errc::duplicate_id, "node 'a' is already in the ring");
    refuses({"", {}, "dc1", "r1"}, 4, three, keyplace::errc::empty_id, "node id is empty");
    refuses({"c", {}, "dc1", ""}, 4, three, keyplace::errc::missing_location, "node 'c' has an empty rack name");
    refuses({"c", {}, "dc1", "r1"}, 4, network_topology_replication{{{"dc9", 3}}}, keyplace::errc::unknown_domain,
            "datacenter 'dc9' has no node in the ring");
    refuses({"c", {}, "dc1", "r1"}, 4, network_topology_replication{{{"dc1", 1}, {"dc1", 2}}},
            keyplace::errc::duplicate_domain, "datacenter 'dc1' is named twice");
    refuses({"c", {}, "dc1", "r1"}, 4, simple_strategy_replication{0}, keyplace::errc::invalid_replica_count,
            "replication factor 0; at least 1 copy is needed");
    // A new rack counts as one rack: allowed, groups are nodes. A new datacenter may be named.
    CHECK(allocate_tokens(ring, {"c", {}, "dc1", "r3"}, 4, three).size() == 4);
    CHECK(allocate_tokens(ring, {"c", {}, "dc3", "r1"}, 4, network_topology_replication{{{"dc3", 3}}}).size() == 4);
    // RF 2 over the two racks: a ring per rack. A token another datacenter holds moves by one.
    const network_topology_replication two{{{"dc1", 2}}};
    const auto chosen = allocate_tokens(ring, {"c", {}, "dc1", "r1"}, 2, two);
    std::vector<cassandra_endpoint> clash = eps;
    clash[2].tokens.push_back(chosen[0]);
    const auto moved = allocate_tokens(cassandra_ring::build(clash), {"c", {}, "dc1", "r1"}, 2, two);
    CHECK(moved[0] == chosen[0] + 1);
    CHECK(moved[1] == chosen[1]);
    // b (rack r2) is outside r1's allocation ring, so its token is a clash too, not an error.
    clash = eps;
    clash[1].tokens.push_back(chosen[1]);
    const auto moved2 = allocate_tokens(cassandra_ring::build(clash), {"c", {}, "dc1", "r1"}, 2, two);
    CHECK(moved2[1] == chosen[1] + 1);
}

TEST_CASE("token_allocation: vectors of the independent Python port", "[token_allocation][golden]") {
    // tests/golden/generate_token_allocation.py ports Cassandra's allocators from the Java source
    // (with keyplace's documented seed and tie rules); its output is committed and checked by
    // ctest to be what the generator prints. Each case grows a cluster; every node's tokens must
    // be the port's.
    std::ifstream in(std::string(KEYPLACE_GOLDEN_DIR) + "/token_allocation_v1.txt");
    REQUIRE(in.good());
    std::string line;
    std::size_t cases = 0;
    std::getline(in, line);
    while (in && line.rfind("case ", 0) == 0) {
        std::istringstream head(line.substr(5));
        std::string arith;
        std::size_t nodes = 0;
        std::size_t vnodes = 0;
        std::uint32_t rf = 0;
        std::size_t racks = 0;
        std::uint64_t seed = 0;
        head >> arith >> nodes >> vnodes >> rf >> racks >> seed;
        INFO(line);
        ++cases;
        std::vector<token_holder> holders;
        std::vector<keyplace::compat::cassandra_endpoint> eps{{"s", {0}, "dc1", "r0"}};
        for (std::size_t i = 0; i < nodes; ++i) {
            REQUIRE(std::getline(in, line));
            std::istringstream row(line);
            std::string id;
            row >> id;
            const auto n = node_on(i, racks);
            REQUIRE(id == n.id);
            if (arith == "native") {
                std::vector<std::uint64_t> expected;
                for (std::uint64_t t = 0; row >> t;) {
                    expected.push_back(t);
                }
                const token_replication r{rf, racks == 0 ? failure_domain::node : failure_domain::rack};
                const auto got = keyplace::allocate_tokens(holders, n, vnodes, r, seed);
                REQUIRE(got == expected);
                holders.push_back({n, got});
            } else {
                std::vector<std::int64_t> expected;
                for (std::int64_t t = 0; row >> t;) {
                    expected.push_back(t);
                }
                const keyplace::compat::cassandra_endpoint e{n.id, {}, "dc1", racks == 0 ? "r0" : n.where.rack};
                const auto ring = keyplace::compat::cassandra_ring::build(eps);
                using keyplace::compat::network_topology_replication;
                using keyplace::compat::simple_strategy_replication;
                const auto got =
                    racks == 0 ? keyplace::compat::allocate_tokens(ring, e, vnodes, simple_strategy_replication{rf}, seed)
                               : keyplace::compat::allocate_tokens(ring, e, vnodes,
                                                                   network_topology_replication{{{"dc1", rf}}}, seed);
                REQUIRE(got == expected);
                eps.push_back(e);
                eps.back().tokens = got;
            }
        }
        std::getline(in, line);
    }
    CHECK(cases == 10);
}
