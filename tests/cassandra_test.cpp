// Tests of compat/cassandra.hpp against the cassandra-dtest token table
// (apache/cassandra-dtest), int/bigint/text/blob/uuid/composite tokens (a port verified against Cassandra
// 5.0), canonical MurmurHash3, and the sign-extended tail where Cassandra differs.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/cassandra.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using keyplace::compat::cassandra_token;
namespace cql = keyplace::compat::cql;

namespace {
auto bytes_of(std::initializer_list<int> v) -> std::vector<std::byte> {
    std::vector<std::byte> out;
    for (const int b : v) {
        out.push_back(static_cast<std::byte>(b));
    }
    return out;
}
auto range_bytes(int first, int last) -> std::vector<std::byte> {
    std::vector<std::byte> out;
    for (int b = first; b <= last; ++b) {
        out.push_back(static_cast<std::byte>(b));
    }
    return out;
}
}  // namespace

TEST_CASE("cassandra: canonical MurmurHash3_x64_128", "[cassandra][golden]") {
    const auto hello = keyplace::compat::murmur3_x64_128(cql::text("hello"));
    CHECK(hello.h1 == 0xcbd8a7b341bd9b02ULL);
    CHECK(hello.h2 == 0x5b1e906a48ae1d19ULL);
    const auto empty = keyplace::compat::murmur3_x64_128(std::span<const std::byte>());
    CHECK(empty.h1 == 0);
    CHECK(empty.h2 == 0);
    // Where Cassandra's signed tail differs from the canonical hash.
    CHECK(static_cast<std::int64_t>(keyplace::compat::murmur3_x64_128(bytes_of({0xff})).h1) == 5177511712917721324LL);
    CHECK(cassandra_token(bytes_of({0xff})) == -4442228696663692417LL);
    CHECK(static_cast<std::int64_t>(keyplace::compat::murmur3_x64_128(cql::text("\xc3\xa9")).h1) == -3956277427552623640LL);
    CHECK(cassandra_token(cql::text("\xc3\xa9")) == 5461403030378599040LL);
}

TEST_CASE("cassandra: the dtest token table, int keys 1..20", "[cassandra][golden]") {
    const std::int64_t expected[] = {
        -4069959284402364209, -3248873570005575792, 9010454139840013625,  -2729420104000364805,
        -7509452495886106294, 2705480034054113608,  1634052884888577606,  -3799847372828181882,
        3728482343045213994,  -6715243485458697746, -4156302194539278891, 8582886034424406875,
        -5034495173465742853, 4279681877540623768,  -1191135763843456182, -5477287129830487822,
        5467144456125416399,  -2695747960476065067, -3974532302236993209, 1388667306199997068};
    for (int k = 1; k <= 20; ++k) {
        INFO("int " << k);
        CHECK(cassandra_token(cql::int32(k)) == expected[k - 1]);
    }
}

TEST_CASE("cassandra: tokens of every key type", "[cassandra][golden]") {
    const std::vector<std::pair<std::int32_t, std::int64_t>> ints{
        {0, -3485513579396041028}, {-1, 7297452126230313552}, {42, -7160136740246525330},
        {127, 4443639997907684431}, {128, -9081975895656599623}, {255, -8423851636648339959},
        {256, 180151580513994396}, {1000, 7935772098093053663}, {-1000, 5905661066942090405},
        {2147483647, -765994672030311617}, {std::numeric_limits<std::int32_t>::min(), -420533958509279465}};
    for (const auto& [k, t] : ints) {
        INFO("int " << k);
        CHECK(cassandra_token(cql::int32(k)) == t);
    }
    const std::vector<std::pair<std::int64_t, std::int64_t>> bigints{
        {0, 2945182322382062539}, {1, 6292367497774912474}, {-1, 7071048584287372947},
        {std::numeric_limits<std::int64_t>::max(), -1722304415079482439},
        {std::numeric_limits<std::int64_t>::min(), 9204767954415360687}};
    for (const auto& [k, t] : bigints) {
        INFO("bigint " << k);
        CHECK(cassandra_token(cql::bigint(k)) == t);
    }
    const std::vector<std::pair<std::string, std::int64_t>> texts{
        {"a", -8839064797231613815}, {"ab", -7815133031266706642}, {"abc", -5434086359492102041},
        {"abcd", -5153323217664422577}, {"abcde", 2321271983248423864}, {"abcdef", -1982280103179862187},
        {"abcdefg", -6427428730009885543}, {"abcdefgh", -3708139591217214462}, {"hello", -3758069500696749310},
        {"cassandra", 356242581507269238}, {"murmur3", 5322121941860471994},
        {"test_key_12345", -3182120811138177122}, {"0123456789abcde", -6472281833689111727},
        {"0123456789abcdef", 5467490433528156583},
        {"this is a longer test key for murmur3 hashing", -7889617755374116647}};
    for (const auto& [k, t] : texts) {
        INFO("text " << k);
        CHECK(cassandra_token(cql::text(k)) == t);
    }
    CHECK(cassandra_token(bytes_of({0x00})) == 5048724184180415669);
    CHECK(cassandra_token(bytes_of({0x80})) == -5284281814142962636);
    CHECK(cassandra_token(bytes_of({0xff, 0xfe})) == -2002833339314343643);
    CHECK(cassandra_token(range_bytes(0x80, 0x89)) == -7623170703309721106);
    CHECK(cassandra_token(range_bytes(0x01, 0x0f)) == 597835946752277653);
    CHECK(cassandra_token(range_bytes(0x01, 0x10)) == -5563837382979743776);
    const std::vector<std::pair<std::string, std::int64_t>> uuids{
        {"00000000-0000-0000-0000-000000000000", 5457549051747178710},
        {"ffffffff-ffff-ffff-ffff-ffffffffffff", -2824192546314762522},
        {"550e8400-e29b-41d4-a716-446655440000", 4277286421682315655},
        {"12345678-1234-1234-1234-123456789abc", -8497799532739775204}};
    for (const auto& [u, t] : uuids) {
        INFO("uuid " << u);
        const auto b = cql::uuid(u);
        REQUIRE(b.has_value());
        CHECK(cassandra_token(*b) == t);
    }
    const std::vector<std::byte> hello42[] = {cql::text("hello"), cql::int32(42)};
    CHECK(cassandra_token(cql::composite(hello42)) == 7666157718303755816);
    const std::vector<std::byte> world99[] = {cql::text("world"), cql::int32(99)};
    CHECK(cassandra_token(cql::composite(world99)) == -4641306270390207264);
}

TEST_CASE("cassandra: the empty key and the reserved minimum", "[cassandra][errors]") {
    CHECK(cassandra_token(std::span<const std::byte>()) == std::numeric_limits<std::int64_t>::min());
    CHECK_FALSE(cql::uuid("not-a-uuid").has_value());
    CHECK_FALSE(cql::uuid("550e8400-e29b-41d4-a716-44665544000g").has_value());
    CHECK_FALSE(cql::uuid("550e8400e29b-41d4-a716-4466554400000").has_value());
}

// ---- The token ring and its replica walks (Cassandra's SimpleStrategy and NetworkTopologyStrategy). The expected lists
// below are worked by hand from Cassandra's rules, step by step in the comments.

namespace {
using keyplace::compat::cassandra_endpoint;
using keyplace::compat::cassandra_ring;
using keyplace::compat::dc_replication;
using keyplace::node_index;

auto ids_of(const cassandra_ring& r, std::span<const node_index> idx) -> std::string {
    return keyplace_test::joined_ids(r, idx);
}
auto simple(const cassandra_ring& r, std::int64_t token, std::uint32_t rf) -> std::string {
    std::vector<node_index> out(8);
    return ids_of(r, std::span<const node_index>(out).first(r.simple_strategy(token, rf, out)));
}
auto nts(const cassandra_ring& r, std::int64_t token, std::initializer_list<dc_replication> rf) -> std::string {
    const auto plan = r.network_topology(rf);
    std::vector<node_index> out(plan.replica_count());
    const auto got = r.network_topology_replicas(token, plan, out);
    CHECK(got == plan.replica_count());
    return ids_of(r, std::span<const node_index>(out).first(got));
}
constexpr auto min64 = std::numeric_limits<std::int64_t>::min();
constexpr auto max64 = std::numeric_limits<std::int64_t>::max();
}  // namespace

TEST_CASE("cassandra: a token owns the range after the previous token, and SimpleStrategy walks clockwise", "[cassandra][ring]") {
    // Sorted ring: -100 A, 0 B, 200 C, 300 A.
    const auto r = cassandra_ring::build({{"A", {300, -100}}, {"B", {0}}, {"C", {200}}});
    CHECK(r.tokens().size() == 4);
    CHECK(r.tokens()[0] == -100);
    CHECK(r.nodes()[r.primary(-500).value].id == "A");   // first token >= -500 is -100
    CHECK(r.nodes()[r.primary(-100).value].id == "A");   // a token owns itself
    CHECK(r.nodes()[r.primary(-99).value].id == "B");
    CHECK(r.nodes()[r.primary(300).value].id == "A");
    CHECK(r.nodes()[r.primary(301).value].id == "A");    // past the last token: wraps to -100
    CHECK(r.nodes()[r.primary(min64).value].id == "A");
    CHECK(r.nodes()[r.primary(max64).value].id == "A");
    CHECK(simple(r, -500, 3) == "A,B,C");
    CHECK(simple(r, -99, 3) == "B,C,A");
    CHECK(simple(r, 250, 2) == "A,B");                  // 300 A, wrap: -100 A (repeat), 0 B
    CHECK(simple(r, 150, 1) == "C");
    CHECK(simple(r, 150, 5) == "C,A,B");                // rf above the node count: every node once
    CHECK(simple(r, 150, 0).empty());
}

TEST_CASE("cassandra: keys locate by their Murmur3 token", "[cassandra][ring]") {
    // "hello" has token -3758069500696749310 (§7.1); int 1 has -4069959284402364209.
    const auto r = cassandra_ring::build({{"low", {-4000000000000000000}}, {"high", {0}}});
    CHECK(keyplace::locate(r, "hello").id == "high");   // -3.758e18 > -4e18: next token is 0
    CHECK(keyplace::locate(r, cql::int32(1)).id == "low");
    CHECK(keyplace::locate(r, std::span<const std::byte>()).id == "low");  // empty key: the minimum token
}

TEST_CASE("cassandra: NetworkTopologyStrategy walks once, new racks first, repeats while rf exceeds racks", "[cassandra][ring]") {
    // dc1: n1, n2 on rack r1, n3 on r2. dc2: n4, n5 on r1.
    // Sorted ring: 0 n1, 5 n4, 10 n2, 15 n5, 20 n3, 30 n1.
    const auto r = cassandra_ring::build({{"n1", {0, 30}, "dc1", "r1"},
                                          {"n2", {10}, "dc1", "r1"},
                                          {"n3", {20}, "dc1", "r2"},
                                          {"n4", {5}, "dc2", "r1"},
                                          {"n5", {15}, "dc2", "r1"}});
    CHECK(r.nodes()[0].where.region == "dc1");
    CHECK(r.nodes()[0].where.rack == "r1");
    // dc1 rf 3: 3 nodes, 2 racks, 1 repeat. dc2 rf 2: 2 nodes, 1 rack, 1 repeat.
    // From -1: n1 (dc1 r1, new), n4 (dc2 r1, new), n2 (dc1 r1 seen, repeat 1 -> 0), n5 (dc2 r1
    // seen, repeat; dc2 done), n3 (dc1 r2 new; dc1 done).
    CHECK(nts(r, -1, {{"dc1", 3}, {"dc2", 2}}) == "n1,n4,n2,n5,n3");
    // From 12: n5 (dc2 new), n3 (dc1 r2 new), n1 at 30 (dc1 r1 new), n1 at 0 (chosen), n4 (dc2
    // repeat; done), n2 (dc1 repeat; done).
    CHECK(nts(r, 12, {{"dc1", 3}, {"dc2", 2}}) == "n5,n3,n1,n4,n2");
    // dc1 rf 2 = its rack count: no repeats. From -1: n1 (r1), n4 (dc2 rf 1, done), n2 (r1 seen,
    // no repeat left: skipped), n5 (dc2 done), n3 (r2; done). SimpleStrategy would take n1,n4,n2.
    CHECK(nts(r, -1, {{"dc1", 2}, {"dc2", 1}}) == "n1,n4,n3");
    CHECK(simple(r, -1, 3) == "n1,n4,n2");
    // A datacenter left out, or at rf 0, gets nothing.
    CHECK(nts(r, -1, {{"dc2", 2}}) == "n4,n5");
    CHECK(nts(r, -1, {{"dc1", 0}, {"dc2", 1}}) == "n4");
    // rf above the node count: every node of the datacenter (min(rf, nodes) = 3).
    CHECK(nts(r, 21, {{"dc1", 7}}) == "n1,n2,n3");     // from 21: 30 n1, 0 n1, 10 n2, 20 n3
}

TEST_CASE("cassandra: NetworkTopologyStrategy order is Cassandra 4.0+'s single pass", "[cassandra][ring]") {
    // One datacenter: a, b on r1, c on r2; ring 0 a, 10 b, 20 c. rf 3 > 2 racks: 1 repeat,
    // taken where the walk meets it: a, b (repeat), c. (Cassandra 2.x's two passes gave a, c, b:
    // the same set in another order.)
    const auto r = cassandra_ring::build({{"a", {0}, "dc", "r1"}, {"b", {10}, "dc", "r1"}, {"c", {20}, "dc", "r2"}});
    CHECK(nts(r, -1, {{"dc", 3}}) == "a,b,c");
    CHECK(nts(r, -1, {{"dc", 2}}) == "a,c");
}

namespace {
// Cassandra 2.x's NetworkTopologyStrategy, two passes per datacenter over that datacenter's
// nodes in ring order: first the first node met on each rack, then the rest in walk order.
// Written independently of the library; its replica sets must equal the single pass's.
auto two_pass_sets(const cassandra_ring& r, std::int64_t token, const std::vector<dc_replication>& rf)
    -> std::vector<std::string> {
    std::vector<std::string> ring_order;  // owners clockwise from token, once around
    const auto tokens = r.tokens();
    std::size_t start = static_cast<std::size_t>(std::lower_bound(tokens.begin(), tokens.end(), token) - tokens.begin());
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        ring_order.push_back(r.nodes()[r.owners()[(start + k) % tokens.size()].value].id);
    }
    std::vector<std::string> result;
    for (const auto& [dc, factor] : rf) {
        std::vector<std::string> chosen;
        std::vector<std::string> racks;
        auto where = [&](const std::string& id) -> const keyplace::node& {
            for (const auto& n : r.nodes()) {
                if (n.id == id) {
                    return n;
                }
            }
            throw std::logic_error("no node " + id);
        };
        for (const auto& id : ring_order) {
            const auto& n = where(id);
            if (n.where.region == dc && chosen.size() < factor &&
                std::find(racks.begin(), racks.end(), n.where.rack) == racks.end()) {
                chosen.push_back(id);
                racks.push_back(n.where.rack);
            }
        }
        for (const auto& id : ring_order) {
            if (where(id).where.region == dc && chosen.size() < factor &&
                std::find(chosen.begin(), chosen.end(), id) == chosen.end()) {
                chosen.push_back(id);
            }
        }
        result.insert(result.end(), chosen.begin(), chosen.end());
    }
    std::sort(result.begin(), result.end());
    return result;
}
}  // namespace

namespace {
// Cassandra 4.0+'s calculateNaturalReplicas as structured there, independently of the library:
// per datacenter a count left (min(rf, nodes)) and rack repeats left (rf - racks), one set of
// seen (dc, rack) pairs, one walk over the sorted tokens from the key's.
auto cassandra4_order(const std::vector<cassandra_endpoint>& eps, std::int64_t token,
                      const std::vector<dc_replication>& rf) -> std::vector<std::string> {
    std::vector<std::pair<std::int64_t, std::size_t>> ring;
    std::map<std::string, std::int64_t> nodes;
    std::map<std::string, std::set<std::string>> racks;
    for (std::size_t i = 0; i < eps.size(); ++i) {
        for (const auto t : eps[i].tokens) {
            ring.emplace_back(t, i);
        }
        ++nodes[eps[i].dc];
        racks[eps[i].dc].insert(eps[i].rack);
    }
    std::sort(ring.begin(), ring.end());
    struct dc_state {
        std::int64_t left;
        std::int64_t repeats;
    };
    std::map<std::string, dc_state> dcs;
    std::size_t to_fill = 0;
    for (const auto& [dc, factor] : rf) {
        if (factor > 0 && nodes[dc] > 0) {
            dcs[dc] = {std::min<std::int64_t>(factor, nodes[dc]),
                       static_cast<std::int64_t>(factor) - static_cast<std::int64_t>(racks[dc].size())};
            ++to_fill;
        }
    }
    std::vector<std::string> out;
    std::set<std::pair<std::string, std::string>> seen;
    const auto start = static_cast<std::size_t>(
        std::lower_bound(ring.begin(), ring.end(), std::pair<std::int64_t, std::size_t>(token, 0)) - ring.begin());
    for (std::size_t k = 0; k < ring.size() && to_fill > 0; ++k) {
        const auto& e = eps[ring[(start + k) % ring.size()].second];
        const auto it = dcs.find(e.dc);
        if (it == dcs.end() || it->second.left == 0 || std::find(out.begin(), out.end(), e.id) != out.end()) {
            continue;
        }
        if (!seen.insert({e.dc, e.rack}).second) {
            if (it->second.repeats <= 0) {
                continue;
            }
            --it->second.repeats;
        }
        out.push_back(e.id);
        if (--it->second.left == 0) {
            --to_fill;
        }
    }
    return out;
}
}  // namespace

TEST_CASE("cassandra: NetworkTopologyStrategy order equals a Cassandra 4.0-structured walk", "[cassandra][ring]") {
    // Small token ranges, so every token is probed: hits, gaps and wraps.
    std::mt19937_64 gen(4);
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<cassandra_endpoint> eps;
        std::set<std::int64_t> used;
        const auto count = 1 + gen() % 12;
        const auto dcs = 1 + gen() % 3;
        for (std::size_t i = 0; i < count; ++i) {
            cassandra_endpoint e{"n" + std::to_string(i), {}, "dc" + std::to_string(gen() % dcs), "r" + std::to_string(gen() % 3)};
            for (auto t = 1 + gen() % 4; t > 0; --t) {
                std::int64_t x = 0;
                do {
                    x = static_cast<std::int64_t>(gen() % 200) - 100;
                } while (!used.insert(x).second);
                e.tokens.push_back(x);
            }
            eps.push_back(std::move(e));
        }
        const auto r = cassandra_ring::build(eps);
        std::vector<dc_replication> rf;
        for (const auto& e : eps) {
            if (std::none_of(rf.begin(), rf.end(), [&](const auto& d) { return d.dc == e.dc; })) {
                rf.push_back({e.dc, static_cast<std::uint32_t>(gen() % 6)});
            }
        }
        const auto plan = r.network_topology(rf);
        std::vector<node_index> out(plan.replica_count());
        for (std::int64_t token = -102; token <= 102; ++token) {
            const auto got = r.network_topology_replicas(token, plan, out);
            std::vector<std::string> ids;
            for (std::size_t i = 0; i < got; ++i) {
                ids.push_back(r.nodes()[out[i].value].id);
            }
            INFO("trial " << trial << " token " << token);
            REQUIRE(ids == cassandra4_order(eps, token, rf));
        }
    }
}

TEST_CASE("cassandra: NetworkTopologyStrategy sets equal Cassandra 2.x's two-pass sets", "[cassandra][ring]") {
    std::mt19937_64 gen(20261130);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<cassandra_endpoint> eps;
        const auto nodes = 1 + gen() % 12;
        for (std::size_t i = 0; i < nodes; ++i) {
            cassandra_endpoint e{"n" + std::to_string(i), {}, "dc" + std::to_string(gen() % 3),
                                 "r" + std::to_string(gen() % 3)};
            const auto count = 1 + gen() % 4;
            for (std::size_t t = 0; t < count; ++t) {
                e.tokens.push_back(static_cast<std::int64_t>(gen()));
            }
            eps.push_back(std::move(e));
        }
        const auto r = cassandra_ring::build(eps);
        std::vector<dc_replication> rf;
        for (const auto& n : r.nodes()) {
            if (std::none_of(rf.begin(), rf.end(), [&](const auto& d) { return d.dc == n.where.region; })) {
                rf.push_back({n.where.region, static_cast<std::uint32_t>(gen() % 5)});
            }
        }
        const auto plan = r.network_topology(rf);
        for (int q = 0; q < 20; ++q) {
            const auto token = static_cast<std::int64_t>(gen());
            std::vector<node_index> out(plan.replica_count());
            const auto got = r.network_topology_replicas(token, plan, out);
            std::vector<std::string> ids;
            for (std::size_t i = 0; i < got; ++i) {
                ids.push_back(r.nodes()[out[i].value].id);
            }
            std::sort(ids.begin(), ids.end());
            INFO("trial " << trial << " token " << token);
            REQUIRE(got == plan.replica_count());
            CHECK(ids == two_pass_sets(r, token, rf));
            CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
        }
    }
}

TEST_CASE("cassandra: bad rings and replication options are refused, naming the value", "[cassandra][errors]") {
    using keyplace::errc;
    using keyplace_test::expect_error;
    expect_error([] { return cassandra_ring::build(std::span<const cassandra_endpoint>()); }, errc::empty_membership, "empty");
    expect_error([] { return cassandra_ring::build({{"a", {1}}, {"b", {2, 1}}}); }, errc::duplicate_token,
                 "token 1 is owned by both 'a' and 'b'");
    expect_error([] { return cassandra_ring::build({{"a", {}}}); }, errc::no_points, "node 'a' has no tokens");
    expect_error([] { return cassandra_ring::build({{"a", {5, 5}}}); }, errc::duplicate_token, "node 'a' lists token 5 twice");
    expect_error([] { return cassandra_ring::build({{"a", {1}, ""}}); }, errc::missing_location, "empty datacenter");
    expect_error([] { return cassandra_ring::build({{"a", {1}, "dc", ""}}); }, errc::missing_location, "empty rack");
    expect_error([] { return cassandra_ring::build({{"a", {1}}, {"a", {2}}}); }, errc::duplicate_id, "'a'");
    expect_error([] { return cassandra_ring::build({{"", {1}}}); }, errc::empty_id, "empty");
    const auto r = cassandra_ring::build({{"a", {1}, "dc1"}});
    expect_error([&] { return r.network_topology({{"dc9", 3}}); }, errc::unknown_domain, "datacenter 'dc9'");
    expect_error([&] { return r.network_topology({{"dc1", 3}, {"dc1", 1}}); }, errc::duplicate_domain, "named twice");
    keyplace::error_info ec;
    const std::vector<cassandra_endpoint> bad{{"a", {1}}, {"b", {1}}};
    CHECK_FALSE(cassandra_ring::try_build(bad, ec).has_value());
    CHECK(ec == errc::duplicate_token);
    CHECK(ec.message() == "token 1 is owned by both 'a' and 'b'");
    const std::vector<cassandra_endpoint> good{{"a", {1}}};
    CHECK(cassandra_ring::try_build(good, ec).has_value());
    CHECK_FALSE(ec);
    const std::vector<std::byte> huge(65536);
    const std::vector<std::byte> parts[] = {cql::text("k"), huge};
    expect_error([&] { return cql::composite(parts); }, errc::invalid_argument, "component 1 is 65536 bytes");
}

TEST_CASE("cassandra: blob literals", "[cassandra]") {
    const auto b = cql::blob(std::string_view("0x80818283848586878889"));
    REQUIRE(b.has_value());
    CHECK(cassandra_token(*b) == -7623170703309721106);  // §7.1: bytes 80..89
    CHECK(cql::blob(std::string_view("0xFFfe")) == std::optional(bytes_of({0xff, 0xfe})));
    CHECK(cql::blob(std::string_view("0x")) == std::optional(std::vector<std::byte>{}));
    CHECK_FALSE(cql::blob(std::string_view("ff")).has_value());
    CHECK_FALSE(cql::blob(std::string_view("0xf")).has_value());
    CHECK_FALSE(cql::blob(std::string_view("0xgg")).has_value());
}
