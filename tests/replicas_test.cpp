// Tests of replicas.hpp: zone spreading on every ordered strategy, nested spreading, per-domain
// counts, join/leave stability on 10^5 keys, and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/ring.hpp>

#include <array>
#include <set>
#include <string>
#include <vector>

using keyplace::failure_domain;
using keyplace::node;
using keyplace::node_index;
using keyplace::replica_placer;
using keyplace::replica_policy;
using keyplace::shortfall;
using namespace keyplace_test;

namespace {

// regions x zones x racks x nodes_per_rack nodes named r<R>z<Z>k<K>n<N>, zone names "z<Z>"
// (reused across regions: a zone is identified by its region too).
auto layout(int regions, int zones, int racks, int per_rack) -> std::vector<node> {
    std::vector<node> nodes;
    for (int r = 0; r < regions; ++r) {
        for (int z = 0; z < zones; ++z) {
            for (int k = 0; k < racks; ++k) {
                for (int n = 0; n < per_rack; ++n) {
                    const std::string id = "r" + std::to_string(r) + "z" + std::to_string(z) + "k" +
                                           std::to_string(k) + "n" + std::to_string(n);
                    nodes.push_back({id, 1.0, {"region-" + std::to_string(r), "z" + std::to_string(z), "k" + std::to_string(k)}});
                }
            }
        }
    }
    return nodes;
}

auto zone_of(const node& n) { return n.where.region + "/" + n.where.zone; }
auto rack_of(const node& n) { return zone_of(n) + "/" + n.where.rack; }

// 3 copies over zones for 10^5 keys: 3 distinct zones, first copy the owner.
template <class S>
void check_zone_spread(const S& s) {
    const auto placer = replica_placer<S>::build(s, {.count = 3, .spread = failure_domain::zone});
    CHECK_FALSE(placer.degraded());
    CHECK(placer.achieved() == failure_domain::zone);
    std::size_t bad = 0;
    for (const auto p : key_points(100'000)) {
        std::array<node_index, 3> out{};
        const auto r = placer.place(p, out);
        std::set<std::string> zones;
        std::set<std::uint32_t> ids;
        for (const auto i : out) {
            zones.insert(zone_of(s.nodes()[i.value]));
            ids.insert(i.value);
        }
        bad += (r.placed != 3 || zones.size() != 3 || ids.size() != 3 || out[0] != s.pick(p) || r.degraded) ? 1 : 0;
    }
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("replicas: 3 copies over 3 zones, on rings of 1 to 256 vnodes, rendezvous and Maglev", "[replicas]") {
    const auto nodes = layout(1, 3, 2, 2);  // 12 nodes, 3 zones x 2 racks
    for (const std::uint32_t v : {1U, 4U, 16U, 256U}) {
        INFO("vnodes " << v);
        check_zone_spread(keyplace::ring::build(nodes, {.vnodes = v}));
    }
    check_zone_spread(keyplace::rendezvous::build(nodes));
    check_zone_spread(keyplace::maglev::build(nodes));
}

TEST_CASE("replicas: the naive next-3-points walk repeats a node, the placer never does", "[replicas]") {
    const auto nodes = layout(1, 3, 2, 2);
    const auto r = keyplace::ring::build(nodes, {.vnodes = 4});
    const auto placer = replica_placer<keyplace::ring>::build(r, {.count = 3, .spread = failure_domain::zone});
    std::size_t naive_repeats = 0;
    std::size_t naive_same_zone = 0;
    std::size_t ours_bad = 0;
    const auto pts = r.points();
    for (const auto p : key_points(100'000)) {
        const auto first = static_cast<std::size_t>(std::lower_bound(pts.begin(), pts.end(), p) - pts.begin());
        std::set<std::uint32_t> naive;
        std::set<std::string> naive_zones;
        for (std::size_t k = 0; k < 3; ++k) {
            const auto o = r.owners()[(first + k) % pts.size()];
            naive.insert(o.value);
            naive_zones.insert(zone_of(r.nodes()[o.value]));
        }
        naive_repeats += naive.size() < 3 ? 1 : 0;
        naive_same_zone += naive_zones.size() < 3 ? 1 : 0;
        std::array<node_index, 3> out{};
        (void)placer.place(p, out);
        const std::set<std::uint32_t> ours{out[0].value, out[1].value, out[2].value};
        const std::set<std::string> zones{zone_of(r.nodes()[out[0].value]), zone_of(r.nodes()[out[1].value]),
                                          zone_of(r.nodes()[out[2].value])};
        ours_bad += (ours.size() < 3 || zones.size() < 3) ? 1 : 0;
    }
    // 48 points: a node's next point is another of its own with probability about 3/47.
    CHECK(naive_repeats > 1000);
    CHECK(naive_same_zone > naive_repeats);
    CHECK(ours_bad == 0);
}

namespace {

template <class S>
void check_relax_and_fail(const S& r) {
    const auto relaxed = replica_placer<S>::build(
        r, {.count = 3, .spread = failure_domain::zone, .on_shortfall = shortfall::relax});
    CHECK(relaxed.degraded());
    CHECK(relaxed.achieved() == failure_domain::rack);
    std::size_t bad = 0;
    for (const auto p : key_points(100'000)) {
        std::array<node_index, 3> out{};
        const auto res = relaxed.place(p, out);
        std::set<std::string> zones;
        std::set<std::string> racks;
        std::set<std::uint32_t> ids;
        for (const auto i : out) {
            zones.insert(zone_of(r.nodes()[i.value]));
            racks.insert(rack_of(r.nodes()[i.value]));
            ids.insert(i.value);
        }
        bad += (res.placed != 3 || !res.degraded || ids.size() != 3 || zones.size() != 2 || racks.size() != 3 ||
                out[0] != r.pick(p))
                   ? 1
                   : 0;
    }
    CHECK(bad == 0);
    expect_error([&] { return replica_placer<S>::build(r, {.count = 3, .spread = failure_domain::zone}); },
                 keyplace::errc::replica_shortfall,
                 "spreading 3 copies over zones needs 3 zones; there are 2 ('z0', 'z1')");
}

}  // namespace

TEST_CASE("replicas: too few zones: relax degrades to distinct racks, fail refuses", "[replicas]") {
    const auto nodes = layout(1, 2, 2, 3);  // 12 nodes, 2 zones x 2 racks
    check_relax_and_fail(keyplace::ring::build(nodes));
    check_relax_and_fail(keyplace::rendezvous::build(nodes));
    check_relax_and_fail(keyplace::maglev::build(nodes));
}

TEST_CASE("replicas: nested spreading uses distinct zones, then racks, before reusing a rack", "[replicas]") {
    const auto nodes = layout(2, 2, 2, 2);  // 16 nodes: 2 regions, 4 zones, 8 racks
    for (const auto& s : {keyplace::ring::build(nodes)}) {
        const auto three = replica_placer<keyplace::ring>::build(
            s, {.count = 3, .spread = failure_domain::region, .on_shortfall = shortfall::relax});
        CHECK(three.achieved() == failure_domain::zone);
        const auto six = replica_placer<keyplace::ring>::build(
            s, {.count = 6, .spread = failure_domain::region, .on_shortfall = shortfall::relax});
        CHECK(six.achieved() == failure_domain::rack);
        const auto ten = replica_placer<keyplace::ring>::build(
            s, {.count = 10, .spread = failure_domain::region, .on_shortfall = shortfall::relax});
        CHECK(ten.achieved() == failure_domain::node);
        for (const auto p : key_points(20'000)) {
            std::array<node_index, 10> out{};
            (void)three.place(p, out);
            std::set<std::string> regions;
            std::set<std::string> zones;
            for (std::size_t k = 0; k < 3; ++k) {
                regions.insert(s.nodes()[out[k].value].where.region);
                zones.insert(zone_of(s.nodes()[out[k].value]));
            }
            CHECK((regions.size() == 2 && zones.size() == 3));
            (void)six.place(p, out);
            std::set<std::string> racks;
            zones.clear();
            regions.clear();
            for (std::size_t k = 0; k < 6; ++k) {
                regions.insert(s.nodes()[out[k].value].where.region);
                zones.insert(zone_of(s.nodes()[out[k].value]));
                racks.insert(rack_of(s.nodes()[out[k].value]));
            }
            CHECK((regions.size() == 2 && zones.size() == 4 && racks.size() == 6));
            (void)ten.place(p, out);
            std::set<std::uint32_t> ids;
            racks.clear();
            for (const auto i : out) {
                ids.insert(i.value);
                racks.insert(rack_of(s.nodes()[i.value]));
            }
            CHECK((ids.size() == 10 && racks.size() == 8));
        }
    }
}

TEST_CASE("replicas: per-domain counts, 3 copies in one region and 2 in another", "[replicas]") {
    auto nodes = layout(2, 2, 2, 2);  // region-0, region-1: 8 nodes each, 4 racks each
    nodes.push_back({"spare", 1.0, {"region-2", "z0", "k0"}});  // an uncounted region
    const auto r = keyplace::rendezvous::build(nodes);
    const auto placer = replica_placer<keyplace::rendezvous>::build(
        r, {.spread = failure_domain::rack, .per_domain = {{"region-0", 3}, {"region-1", 2}}});
    CHECK(placer.count() == 5);
    CHECK_FALSE(placer.degraded());
    for (const auto p : key_points(20'000)) {
        std::array<node_index, 5> out{};
        REQUIRE(placer.place(p, out).placed == 5);
        std::array<std::set<std::string>, 2> racks;
        std::array<int, 2> per{};
        for (const auto i : out) {
            const auto& n = r.nodes()[i.value];
            REQUIRE(n.where.region != "region-2");
            const auto g = n.where.region == "region-0" ? 0U : 1U;
            ++per[g];
            racks[g].insert(rack_of(n));
        }
        CHECK((per[0] == 3 && per[1] == 2 && racks[0].size() == 3 && racks[1].size() == 2));
    }
    // Within a counted domain, too few racks: fail names the domain, relax degrades.
    const auto narrow = layout(1, 1, 2, 3);  // region-0: one zone, two racks
    const auto nr = keyplace::ring::build(narrow);
    expect_error([&] {
        return replica_placer<keyplace::ring>::build(nr, {.spread = failure_domain::rack, .per_domain = {{"region-0", 3}}});
    }, keyplace::errc::replica_shortfall, "spreading 3 copies in 'region-0' over racks needs 3 racks; there are 2");
    const auto relaxed = replica_placer<keyplace::ring>::build(
        nr, {.spread = failure_domain::rack, .on_shortfall = shortfall::relax, .per_domain = {{"region-0", 3}}});
    CHECK(relaxed.degraded());
    CHECK(relaxed.achieved() == failure_domain::node);
}

namespace {

// Join: only sets that now include the joiner change. Leave: only sets that held the leaver
// change, each losing it and gaining one node.
template <class S>
void check_stability(const S& before, const S& joined, const S& left, const std::string& joiner,
                     const std::string& leaver) {
    const replica_policy policy{.count = 3, .spread = failure_domain::zone};
    const auto pb = replica_placer<S>::build(before, policy);
    const auto pj = replica_placer<S>::build(joined, policy);
    const auto pl = replica_placer<S>::build(left, policy);
    auto ids = [](const S& s, const replica_placer<S>& p, std::uint64_t point) {
        std::array<node_index, 3> out{};
        (void)p.place(point, out);
        std::set<std::string> set;
        for (const auto i : out) {
            set.insert(s.nodes()[i.value].id);
        }
        return set;
    };
    std::size_t join_bad = 0;
    std::size_t leave_bad = 0;
    std::size_t join_changed = 0;
    for (const auto p : key_points(100'000)) {
        const auto b = ids(before, pb, p);
        const auto j = ids(joined, pj, p);
        const auto l = ids(left, pl, p);
        if (j != b) {
            ++join_changed;
            join_bad += j.count(joiner) == 0 ? 1 : 0;
        }
        if (b.count(leaver) == 0) {
            leave_bad += l != b ? 1 : 0;
        } else {
            std::set<std::string> common;
            std::set_intersection(b.begin(), b.end(), l.begin(), l.end(), std::inserter(common, common.end()));
            leave_bad += (common.size() != 2 || l.count(leaver) != 0) ? 1 : 0;
        }
    }
    CHECK(join_bad == 0);
    CHECK(join_changed > 0);
    CHECK(leave_bad == 0);
}

}  // namespace

TEST_CASE("replicas: join and leave change only the sets they must (10^5 keys)", "[replicas][property]") {
    auto nodes = layout(1, 3, 2, 2);
    const node joiner{"r0z1k1n2", 1.0, {"region-0", "z1", "k1"}};
    const std::string leaver = "r0z2k0n1";
    const auto native = keyplace::ring::build(nodes);
    check_stability(native, native.with(joiner), native.without(leaver), joiner.id, leaver);
    const auto rdv = keyplace::rendezvous::build(nodes);
    check_stability(rdv, rdv.with(joiner), rdv.without(leaver), joiner.id, leaver);
}

TEST_CASE("replicas: nodes that hold no keys take no copies: refused, or degraded", "[replicas][errors]") {
    // Envoy's ring hash, 3 hosts, host c in a locality of weight 0: c is a member that holds no
    // ring entry, so only a and b can be replicas. Before holders() the placer trusted the
    // walk to reach every node: build succeeded and place() wrote 2 copies, not degraded.
    using keyplace::compat::envoy_ring_hash;
    const keyplace::location one{"r", "one", ""};
    const keyplace::location idle{"r", "idle", ""};
    keyplace::compat::envoy_ring_hash_config config;
    config.locality_weights = {{one, 1}, {idle, 0}};
    const auto envoy = envoy_ring_hash::build({{"a", 1, one}, {"b", 1, one}, {"c", 1, idle}}, config);
    REQUIRE(envoy.size() == 3);
    CHECK(envoy.holders() == 2);
    CHECK_FALSE(envoy.holds(*envoy.find("c")));
    expect_error([&] { return replica_placer<envoy_ring_hash>::build(envoy, {.count = 3}); },
                 keyplace::errc::replica_shortfall,
                 "spreading 3 copies over nodes needs 3 nodes; there are 2 ('a', 'b') among the nodes that hold "
                 "keys (1 hold none)");
    const auto relaxed = replica_placer<envoy_ring_hash>::build(envoy, {.count = 3, .on_shortfall = shortfall::relax});
    CHECK(relaxed.degraded());
    CHECK(relaxed.requested() == 3);
    CHECK(relaxed.count() == 2);
    std::array<node_index, 3> out{};
    for (const auto p : key_points(1000)) {
        const auto placed = relaxed.place(p, out);
        REQUIRE(placed.placed == 2);
        CHECK(placed.degraded);
        CHECK(out[0] != out[1]);
        CHECK(envoy.holds(out[0]));
        CHECK(envoy.holds(out[1]));
    }
    // The level achieved counts the copies placed: a and b on distinct racks are rack-spread.
    const keyplace::location l1{"r", "z1", "k1"};
    const keyplace::location l2{"r", "z2", "k2"};
    const keyplace::location l3{"r", "z3", "k3"};
    keyplace::compat::envoy_ring_hash_config racks;
    racks.locality_weights = {{l1, 1}, {l2, 1}, {l3, 0}};
    const auto spread = envoy_ring_hash::build({{"a", 1, l1}, {"b", 1, l2}, {"c", 1, l3}}, racks);
    const auto rack_relaxed = replica_placer<envoy_ring_hash>::build(
        spread, {.count = 3, .spread = failure_domain::rack, .on_shortfall = shortfall::relax});
    CHECK(rack_relaxed.count() == 2);
    CHECK(rack_relaxed.achieved() == failure_domain::rack);
    CHECK(rack_relaxed.degraded());
    // Two copies fit the holders: not degraded.
    CHECK_FALSE(replica_placer<envoy_ring_hash>::build(envoy, {.count = 2}).degraded());
    // A ketama server whose share rounds to no point is the same case (libketama: 61 servers
    // of equal weight get 39 digests each, and a light one can get none).
    std::vector<keyplace::compat::ketama_server> servers{{"heavy", 1000000}, {"light", 1}};
    const auto k = keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libketama, servers);
    REQUIRE(k.holders() == 1);
    expect_error([&] { return replica_placer<keyplace::compat::ketama>::build(k, {.count = 2}); },
                 keyplace::errc::replica_shortfall, "1 hold none");
}

TEST_CASE("replicas: bad policies are rejected with an error naming them", "[replicas][errors]") {
    using keyplace::errc;
    const auto nodes = layout(1, 3, 2, 2);
    const auto r = keyplace::ring::build(nodes);
    using placer = replica_placer<keyplace::ring>;
    expect_error([&] { return placer::build(r, {.count = 0}); }, errc::invalid_replica_count, "replica count 0");
    expect_error([&] { return placer::build(r, {.count = 13}); }, errc::invalid_replica_count,
                 "replica count 13 is more than the 12 nodes");
    expect_error([&] { return placer::build(r, {.count = 13, .on_shortfall = shortfall::relax}); },
                 errc::invalid_replica_count, "replica count 13 is more than the 12 nodes");
    expect_error([&] { return placer::build(r, {.count = 2, .spread = static_cast<failure_domain>(9)}); },
                 errc::invalid_argument, "unknown failure-domain level 9");
    auto zoneless = nodes;
    zoneless[5].where.zone.clear();
    const auto zr = keyplace::ring::build(zoneless);
    expect_error([&] { return placer::build(zr, {.count = 2, .spread = failure_domain::zone}); }, errc::missing_location,
                 "node 'r0z1k0n1' has no zone; spreading over zones needs every node's");
    // Below the spread level an empty part is one shared domain: spreading over nodes works.
    CHECK(placer::build(zr, {.count = 2, .spread = failure_domain::node}).count() == 2);
    expect_error([&] { return placer::build(r, {.per_domain = {{"region-9", 1}}}); }, errc::unknown_domain,
                 "region 'region-9' has no nodes");
    expect_error([&] { return placer::build(r, {.per_domain = {{"region-0", 1}, {"region-0", 2}}}); },
                 errc::duplicate_domain, "'region-0' is counted twice");
    expect_error([&] { return placer::build(r, {.per_domain = {{"region-0", 13}}}); }, errc::invalid_replica_count,
                 "13 copies in 'region-0' but it has only 12 nodes");
    expect_error([&] { return placer::build(r, {.spread = failure_domain::region, .per_domain = {{"region-0", 1}}}); },
                 errc::invalid_argument, "cannot spread over regions");
    keyplace::error_info ec;
    CHECK_FALSE(placer::try_build(std::make_shared<const keyplace::ring>(r), {.count = 0}, ec));
    CHECK(ec == errc::invalid_replica_count);
    CHECK(ec.message() == "replica count 0; at least 1 copy is needed");
    // A shorter output span gets that many copies.
    const auto p = placer::build(r, {.count = 3, .spread = failure_domain::zone});
    std::array<node_index, 2> two{};
    CHECK(p.place(7, two).placed == 2);
    CHECK(keyplace::parse_failure_domain("rack") == failure_domain::rack);
    CHECK_FALSE(keyplace::parse_failure_domain("planet").has_value());
}
