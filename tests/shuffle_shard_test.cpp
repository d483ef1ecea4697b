// Shuffle sharding (fleet/shuffle_shard.hpp): zone balance, stability over 10^4 random membership
// histories, pairwise overlaps against the hypergeometric law (a χ² test over 10^5 tenant pairs),
// the allocator's overlap bound, and bad input.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/shuffle_shard.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace shuffle_tests {

using keyplace::snapshot;
using keyplace::snapshot_description;

// Zones z0.. with the given node counts ("<prefix>z<z>-<i>"), rendezvous (a cheap build: the
// shard does not depend on the strategy).
auto zoned(const std::vector<int>& counts, const std::string& prefix = "") -> snapshot_description {
    snapshot_description d;
    d.cluster = "shards";
    d.epoch = 1;
    d.strategy.name = "rendezvous";
    for (std::size_t z = 0; z < counts.size(); ++z) {
        for (int i = 0; i < counts[z]; ++i) {
            keyplace::snapshot_node n{prefix + "z" + std::to_string(z) + "-" + std::to_string(i)};
            n.where.zone = "z" + std::to_string(z);
            d.nodes.push_back(n);
        }
    }
    return d;
}

auto ids(const snapshot& s, const std::vector<std::uint32_t>& shard) -> std::set<std::string> {
    std::set<std::string> out;
    for (const auto i : shard) {
        out.insert(s.nodes()[i].id);
    }
    return out;
}

auto per_zone(const snapshot& s, const std::vector<std::uint32_t>& shard) -> std::map<std::string, int> {
    std::map<std::string, int> out;
    for (const auto i : shard) {
        ++out[s.nodes()[i].where.zone];
    }
    return out;
}

// The regularized upper incomplete gamma function Q(a, x): a series below a + 1, a continued
// fraction (modified Lentz) above; the χ² survival function is Q(df / 2, x / 2).
auto upper_gamma_q(double a, double x) -> double {
    if (x <= 0) {
        return 1.0;
    }
    const double front = std::exp(-x + a * std::log(x) - std::lgamma(a));
    if (x < a + 1) {
        double term = 1.0 / a;
        double sum = term;
        for (int n = 1; n < 1000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * 1e-15) {
                break;
            }
        }
        return 1.0 - sum * front;
    }
    const double tiny = 1e-300;
    double b = x + 1 - a;
    double c = 1 / tiny;
    double d = 1 / b;
    double h = d;
    for (int i = 1; i < 1000; ++i) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        d = std::abs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = std::abs(c) < tiny ? tiny : c;
        d = 1 / d;
        const double delta = d * c;
        h *= delta;
        if (std::abs(delta - 1) < 1e-15) {
            break;
        }
    }
    return front * h;
}

auto choose(int n, int k) -> double {
    if (k < 0 || k > n) {
        return 0;
    }
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0));
}

}  // namespace shuffle_tests

TEST_CASE("shuffle shard: the χ² survival function against known values", "[shuffle_shard]") {
    using namespace shuffle_tests;
    // χ²(1) at 3.841: p = 0.05; χ²(4) at 13.277: p = 0.01; χ²(10) at 2.558: p = 0.99.
    CHECK(std::abs(upper_gamma_q(0.5, 3.841 / 2) - 0.05) < 1e-3);
    CHECK(std::abs(upper_gamma_q(2.0, 13.277 / 2) - 0.01) < 1e-4);
    CHECK(std::abs(upper_gamma_q(5.0, 2.558 / 2) - 0.99) < 1e-3);
    CHECK(std::abs(upper_gamma_q(1.0, 2.0) - std::exp(-2.0)) < 1e-12);  // Q(1, x) = e^-x
}

TEST_CASE("shuffle shard: spread evenly over zones, a short zone's share to the next", "[shuffle_shard]") {
    using namespace shuffle_tests;
    const auto s = snapshot::build(zoned({10, 10, 10}));
    std::map<std::string, int> extra;  // which zone took the seventh node, over tenants
    for (int t = 0; t < 10000; ++t) {
        const std::string tenant = "tenant-" + std::to_string(t);
        const auto six = keyplace::shuffle_shard(s, tenant, 6);
        REQUIRE(six.size() == 6);
        CHECK(per_zone(s, six) == std::map<std::string, int>{{"z0", 2}, {"z1", 2}, {"z2", 2}});
        CHECK(std::is_sorted(six.begin(), six.end()));
        const auto seven = keyplace::shuffle_shard(s, tenant, 7);
        const auto z = per_zone(s, seven);
        for (const auto& [zone, n] : z) {
            CHECK((n == 2 || n == 3));
            extra[zone] += n == 3 ? 1 : 0;
        }
        // The seventh is added, the six kept (a zone's top 3 holds its top 2).
        const auto a = ids(s, six);
        const auto b = ids(s, seven);
        CHECK(std::includes(b.begin(), b.end(), a.begin(), a.end()));
    }
    for (const auto& [zone, n] : extra) {
        CHECK(std::abs(n - 3333) < 5 * 47);  // binomial(10^4, 1/3): σ = 47
    }
    // A zone of one node: it gives one, the rest come from the others.
    const auto short_zone = snapshot::build(zoned({10, 10, 1}));
    for (int t = 0; t < 1000; ++t) {
        const auto shard = keyplace::shuffle_shard(short_zone, "tenant-" + std::to_string(t), 6);
        const auto z = per_zone(short_zone, shard);
        CHECK(z.at("z2") == 1);
        CHECK(z.at("z0") + z.at("z1") == 5);
        CHECK(std::abs(z.at("z0") - z.at("z1")) == 1);
    }
}

// Stability: 10^4 histories, each a snapshot of 3 zones of 3..10 nodes and 8 random joins or
// leaves (a leave never empties a zone), 3 tenants with shards of 3..9 nodes. After every step
// each tenant's shard lost at most one node and gained at most one.
TEST_CASE("shuffle shard: a join or leave changes a shard by at most one member, over 10^4 histories",
          "[shuffle_shard]") {
    using namespace shuffle_tests;
    std::mt19937_64 rng(20261207);
    std::size_t steps = 0;
    std::size_t changed = 0;
    for (int h = 0; h < 10000; ++h) {
        std::vector<int> counts{static_cast<int>(3 + rng() % 8), static_cast<int>(3 + rng() % 8),
                                static_cast<int>(3 + rng() % 8)};
        auto d = zoned(counts, "h" + std::to_string(h) + "-");
        auto& nodes = d.nodes;  // the membership; the shard of a snapshot is the shard of its nodes
        const std::size_t k = 3 + rng() % 7;
        const std::vector<std::string> tenants{"a" + std::to_string(h), "b" + std::to_string(h), "c" + std::to_string(h)};
        const auto shard_ids = [&](const std::string& tenant) {
            keyplace::error_info err;
            const auto shard = keyplace::try_shuffle_shard(nodes, tenant, k, err);
            std::set<std::string> out;
            for (const auto i : *shard) {
                out.insert(nodes[i].id);
            }
            return out;
        };
        std::vector<std::set<std::string>> before;
        for (const auto& t : tenants) {
            before.push_back(shard_ids(t));
        }
        int next = 100;
        for (int step = 0; step < 8; ++step) {
            const auto zone = static_cast<int>(rng() % 3);
            const std::string zname = "z" + std::to_string(zone);
            const auto in_zone = std::count_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.where.zone == zname; });
            if (rng() % 2 == 0 || in_zone <= 1 || nodes.size() <= k) {
                keyplace::snapshot_node n{"h" + std::to_string(h) + "-j" + std::to_string(next++)};
                n.where.zone = zname;
                nodes.push_back(n);
            } else {
                std::vector<std::size_t> candidates;
                for (std::size_t i = 0; i < nodes.size(); ++i) {
                    if (nodes[i].where.zone == zname) {
                        candidates.push_back(i);
                    }
                }
                nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(candidates[rng() % candidates.size()]));
            }
            for (std::size_t t = 0; t < tenants.size(); ++t) {
                const auto after = shard_ids(tenants[t]);
                std::vector<std::string> lost;
                std::vector<std::string> gained;
                std::set_difference(before[t].begin(), before[t].end(), after.begin(), after.end(), std::back_inserter(lost));
                std::set_difference(after.begin(), after.end(), before[t].begin(), before[t].end(), std::back_inserter(gained));
                if (lost.size() > 1 || gained.size() > 1 || after.size() != k) {
                    FAIL_CHECK("history " << h << " step " << step << " tenant " << tenants[t] << ": lost " << lost.size()
                                          << ", gained " << gained.size() << ", size " << after.size());
                }
                changed += gained.empty() ? 0 : 1;
                ++steps;
                before[t] = after;
            }
        }
        if (h < 100) {  // a snapshot's shard is its node list's (checked on some: building costs)
            const auto s = snapshot::build(d);
            keyplace::error_info err;
            CHECK(keyplace::shuffle_shard(s, tenants[0], k) == *keyplace::try_shuffle_shard(nodes, tenants[0], k, err));
        }
    }
    CHECK(steps == 240000);
    CHECK(changed > 10000);  // the property is not vacuous: shards do change
}

// Overlaps: with 3 zones of 10 nodes and shards of 6 (2 a zone), two tenants' picks in a zone
// are independent 2-subsets of 10, so their overlap there is hypergeometric (N 10, K 2, n 2) and
// the total is the sum over the 3 zones. 10^5 pairs of tenants against that law, χ² over the
// overlaps 0, 1, 2, 3 and >= 4 (each expected well above 5): p must exceed 0.01.
TEST_CASE("shuffle shard: pairwise overlaps follow the hypergeometric law (χ² over 10^5 tenant pairs)",
          "[shuffle_shard]") {
    using namespace shuffle_tests;
    const auto s = snapshot::build(zoned({10, 10, 10}));
    std::vector<double> zone_law(3);
    for (int o = 0; o <= 2; ++o) {
        zone_law[static_cast<std::size_t>(o)] = choose(2, o) * choose(8, 2 - o) / choose(10, 2);
    }
    std::vector<double> law{1.0};
    for (int z = 0; z < 3; ++z) {
        std::vector<double> next(law.size() + 2, 0.0);
        for (std::size_t a = 0; a < law.size(); ++a) {
            for (std::size_t b = 0; b < zone_law.size(); ++b) {
                next[a + b] += law[a] * zone_law[b];
            }
        }
        law = next;
    }
    constexpr int pairs = 100000;
    std::vector<double> seen(5, 0.0);
    for (int p = 0; p < pairs; ++p) {
        const auto a = keyplace::shuffle_shard(s, "tenant-" + std::to_string(2 * p), 6);
        const auto b = keyplace::shuffle_shard(s, "tenant-" + std::to_string(2 * p + 1), 6);
        seen[std::min<std::size_t>(4, keyplace::shard_allocator::overlap(a, b))] += 1;
    }
    std::vector<double> expected(5, 0.0);
    for (std::size_t o = 0; o < law.size(); ++o) {
        expected[std::min<std::size_t>(4, o)] += law[o] * pairs;
    }
    double chi2 = 0;
    for (std::size_t o = 0; o < 5; ++o) {
        INFO("overlap " << o << ": seen " << seen[o] << ", expected " << expected[o]);
        CHECK(expected[o] > 5);
        chi2 += (seen[o] - expected[o]) * (seen[o] - expected[o]) / expected[o];
    }
    const double p_value = upper_gamma_q((5 - 1) / 2.0, chi2 / 2);
    INFO("χ² " << chi2 << " with 4 degrees of freedom, p " << p_value);
    CHECK(p_value > 0.01);
}

TEST_CASE("shuffle shard: the allocator never exceeds its overlap bound and says when it cannot place",
          "[shuffle_shard]") {
    using namespace shuffle_tests;
    const auto s = snapshot::build(zoned({10, 10, 10}));
    for (const auto& [k, bound] : {std::pair<std::size_t, std::size_t>{6, 1}, {4, 1}, {6, 2}}) {
        keyplace::shard_allocator alloc(s, bound);
        keyplace::error_info err;
        int placed = 0;
        int t = 0;
        for (; t < 300; ++t) {
            const auto got = alloc.try_assign("tenant-" + std::to_string(t), k, err);
            if (!got) {
                break;
            }
            CHECK(per_zone(s, *got).size() == 3);
            ++placed;
        }
        INFO(k << " nodes, overlap at most " << bound << ": " << placed << " tenants placed");
        const auto& shards = alloc.shards();
        std::size_t violations = 0;
        for (std::size_t i = 0; i < shards.size(); ++i) {
            for (std::size_t j = i + 1; j < shards.size(); ++j) {
                violations += keyplace::shard_allocator::overlap(shards[i].second, shards[j].second) > bound ? 1 : 0;
            }
        }
        CHECK(violations == 0);
        CHECK(placed >= 10);
        if (t < 300) {
            CHECK(err.message().rfind("shuffle shard: no shard of " + std::to_string(k) + " nodes for tenant 'tenant-" +
                                          std::to_string(t) + "' overlaps every assigned shard in at most " +
                                          std::to_string(bound) + " after 1000 attempts",
                                      0) == 0);
            CHECK(alloc.shards().size() == static_cast<std::size_t>(placed));  // nothing assigned on failure
        }
    }
    // Any two 3-node shards of 4 nodes share 2: the second tenant cannot be placed at overlap 1.
    const auto four = snapshot::build(zoned({4}));
    keyplace::shard_allocator alloc(four, 1);
    keyplace::error_info err;
    REQUIRE(alloc.try_assign("first", 3, err).has_value());
    CHECK_FALSE(alloc.try_assign("second", 3, err).has_value());
    CHECK(err.message() == "shuffle shard: no shard of 3 nodes for tenant 'second' overlaps every assigned shard in at "
                           "most 1 after 1000 attempts (the closest shares 2 with tenant 'first')");
    CHECK_FALSE(alloc.try_assign("first", 3, err).has_value());
    CHECK(err.message() == "shuffle shard: tenant 'first' has a shard already");
}

TEST_CASE("shuffle shard: only active nodes, and bad input named", "[shuffle_shard][errors]") {
    using namespace shuffle_tests;
    auto d = zoned({3, 3});
    d.nodes[0].state = keyplace::node_state::read_only;
    d.nodes[3].state = keyplace::node_state::leaving;
    keyplace::snapshot_node j{"joiner"};
    j.where.zone = "z0";
    j.state = keyplace::node_state::joining;
    d.nodes.push_back(j);
    const auto s = snapshot::build(d);
    for (int t = 0; t < 100; ++t) {
        const auto shard = keyplace::shuffle_shard(s, "t" + std::to_string(t), 4);
        for (const auto i : shard) {
            CHECK(s.nodes()[i].state == keyplace::node_state::active);
        }
    }
    keyplace::error_info err;
    CHECK_FALSE(keyplace::try_shuffle_shard(s, "t", 5, err).has_value());
    CHECK(err.message() == "shuffle shard: size 5 for tenant 't' is outside 1..4 (the snapshot's active nodes)");
    CHECK_FALSE(keyplace::try_shuffle_shard(s, "t", 0, err).has_value());
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK_FALSE(keyplace::try_shuffle_shard(s, "", 2, err).has_value());
    CHECK(err.message() == "shuffle shard: the tenant is empty");
    CHECK_THROWS_AS(keyplace::shuffle_shard(s, "t", 9), keyplace::error);
}
