// Tests of compat/envoy.hpp: Envoy's RING_HASH and MAGLEV against every vector of
// envoyproxy/envoy's ring_hash_lb_test.cc and maglev_lb_test.cc (ring positions re-computed
// with XXH64), the ring sizes of its ring_hash configuration,
// MurmurHash2 against libstdc++'s std::hash, and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/envoy.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

using keyplace::node;
using keyplace::node_index;
using keyplace::compat::envoy_hash_function;
using keyplace::compat::envoy_locality_weight;
using keyplace::compat::envoy_maglev;
using keyplace::compat::envoy_maglev_config;
using keyplace::compat::envoy_ring_hash;
using keyplace::compat::envoy_ring_hash_config;
using namespace keyplace_test;

namespace {

constexpr std::uint64_t max_hash = std::numeric_limits<std::uint64_t>::max();

/// Nodes "<prefix><first>" ... "<prefix><last>" (Envoy's test hosts are 127.0.0.1:<port>).
auto ports(int first, int last, const std::string& prefix = "127.0.0.1:") -> std::vector<node> {
    std::vector<node> nodes;
    for (int p = first; p <= last; ++p) {
        nodes.push_back({prefix + std::to_string(p)});
    }
    return nodes;
}

auto ring_config(std::uint64_t min, std::uint64_t max = keyplace::compat::envoy_max_ring_size,
                 envoy_hash_function f = envoy_hash_function::xx_hash) -> envoy_ring_hash_config {
    return envoy_ring_hash_config{min, max, f, {}, {}};
}

auto maglev_config(std::uint64_t m, std::vector<envoy_locality_weight> localities = {}) -> envoy_maglev_config {
    return envoy_maglev_config{m, std::move(localities)};
}

template <class S>
auto id_of(const S& s, node_index i) -> std::string {
    return s.nodes()[i.value].id;
}

/// The ring as (owner id, point) pairs in ring order.
auto ring_of(const envoy_ring_hash& r) -> std::vector<std::pair<std::string, std::uint64_t>> {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t i = 0; i < r.ring_size(); ++i) {
        out.emplace_back(id_of(r, r.owners()[i]), r.points()[i]);
    }
    return out;
}

/// A golden ring: (owner id, point) in ring order (none: not checked), and (request hash,
/// host index) picks.
struct golden_ring {
    std::vector<std::pair<std::string, std::uint64_t>> ring;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> picks;
};

void check_ring(const envoy_ring_hash& r, const golden_ring& g) {
    if (!g.ring.empty()) {
        CHECK(ring_of(r) == g.ring);
    }
    for (const auto& [hash, host] : g.picks) {
        INFO("hash " << hash);
        CHECK(r.pick(hash).value == host);
    }
}

/// The table as node indices.
auto table_of(const envoy_maglev& g) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> t;
    for (std::uint64_t s = 0; s < g.table_size(); ++s) {
        t.push_back(g.entry(s).value);
    }
    return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hash functions

TEST_CASE("envoy: MurmurHash2-64 is libstdc++'s std::hash<std::string>", "[envoy][golden]") {
    // §1.5 BasicWithMurmur2: the ring positions are std::hash("127.0.0.1:85_0") etc.
    STATIC_REQUIRE(keyplace::detail::murmur2_64("127.0.0.1:85_0") == 1358027074129602068ULL);
    const keyplace::compat::murmur2_64 h;
    CHECK(h(std::string_view("127.0.0.1:80_0")) == keyplace::detail::murmur2_64("127.0.0.1:80_0"));
    CHECK(keyplace::hash_key(h, std::string("127.0.0.1:85_0")) == 1358027074129602068ULL);
    // 13,000 random strings of 0 to 64 bytes: libstdc++'s std::hash is the oracle where it computes
    // Envoy's value (64-bit little-endian targets; a big-endian libstdc++ reads its words the
    // other way), and a digest of the values, taken there, holds everywhere.
    std::mt19937_64 gen(20240611);
    std::size_t checked = 0;
    std::uint64_t digest = 0;
    for (int round = 0; round < 200; ++round) {
        for (std::size_t len = 0; len <= 64; ++len) {
            std::string s(len, '\0');
            for (char& c : s) {
                c = static_cast<char>(gen() & 0xffU);
            }
            const std::uint64_t value = keyplace::detail::murmur2_64(s);
#if defined(__GLIBCXX__) && SIZE_MAX == UINT64_MAX
            if constexpr (std::endian::native == std::endian::little) {
                INFO("length " << len);
                REQUIRE(value == std::hash<std::string>{}(s));
            }
#endif
            digest = (digest ^ value) * 0x100000001b3ULL;
            ++checked;
        }
    }
    CHECK(checked == 13000);
    CHECK(digest == 227545512398907193ULL);
}

TEST_CASE("envoy: ring entries hash \"<key>_<i>\" with XXH64 seed 0", "[envoy][golden]") {
    CHECK(keyplace::xxh64{}(std::string_view("127.0.0.1:94_1")) == 833437586790550860ULL);
    CHECK(keyplace::xxh64{}(std::string_view("127.0.0.1:90_0")) == 16117243373044804889ULL);
    CHECK(keyplace::xxh64{}(std::string_view("127.0.0.1:92_2")) == 4443673547860492590ULL);
}

// ---------------------------------------------------------------------------------------------
// RING_HASH (§1.5)

TEST_CASE("envoy ring hash: Basic (min ring 12)", "[envoy][golden]") {
    const auto r = envoy_ring_hash::build(ports(90, 95), ring_config(12));
    // Host indices are the input order: host i = 127.0.0.1:9i. Past the last entry wraps to
    // the first; an exact hit picks that entry.
    check_ring(r, {{{"127.0.0.1:94", 833437586790550860ULL},   {"127.0.0.1:92", 928266305478181108ULL},
                    {"127.0.0.1:90", 1033482794131418490ULL},  {"127.0.0.1:95", 3551244743356806947ULL},
                    {"127.0.0.1:93", 3851675632748031481ULL},  {"127.0.0.1:91", 5583722120771150861ULL},
                    {"127.0.0.1:91", 6311230543546372928ULL},  {"127.0.0.1:93", 7700377290971790572ULL},
                    {"127.0.0.1:95", 13144177310400110813ULL}, {"127.0.0.1:92", 13444792449719432967ULL},
                    {"127.0.0.1:94", 15516499411664133160ULL}, {"127.0.0.1:90", 16117243373044804889ULL}},
                   {{0, 4}, {max_hash, 4}, {3551244743356806947ULL, 5}, {3551244743356806948ULL, 3},
                    {16117243373044804880ULL, 0}}});
    CHECK(r.ring_size() == 12);
    CHECK(r.points_per_node() == std::vector<std::size_t>(6, 2));
    // BasicWithRetryHostPredicate: the attempt moves that many entries on, modulo the ring.
    CHECK(r.pick_retry(0, 0).value == 4);
    CHECK(r.pick_retry(0, 1).value == 2);
    CHECK(r.pick_retry(0, 2).value == 0);   // two retries, all rejected: the last attempt's host
    CHECK(r.pick_retry(0, 13).value == 2);  // 13 % 12 = 1
    CHECK(keyplace::locate(r, "127.0.0.1:95_0").id == id_of(r, r.pick(keyplace::xxh64{}(std::string_view("127.0.0.1:95_0")))));
}

TEST_CASE("envoy ring hash: BasicWithHostname (hostnames or hash_key metadata 90..95)", "[envoy][golden]") {
    const auto r = envoy_ring_hash::build(ports(90, 95, ""), ring_config(12));
    check_ring(r, {{{"95", 1975508444536362413ULL},  {"95", 2376063919839173711ULL},  {"93", 2386806903309390596ULL},
                    {"94", 6749904478991551885ULL},  {"93", 6803900775736438537ULL},  {"92", 7225015537174310577ULL},
                    {"90", 8787465352164086522ULL},  {"92", 11282020843382717940ULL}, {"91", 13723418369486627818ULL},
                    {"90", 13776502110861797421ULL}, {"91", 14338313586354474791ULL}, {"94", 15364271037087512980ULL}},
                   {{0, 5}, {max_hash, 5}, {7225015537174310577ULL, 2}, {6803900775736438537ULL, 3}}});
}

TEST_CASE("envoy ring hash: BasicWithMurmur2", "[envoy][golden]") {
    const auto r = envoy_ring_hash::build(ports(80, 85), ring_config(12, keyplace::compat::envoy_max_ring_size,
                                                                      envoy_hash_function::murmur_hash_2));
    check_ring(r, {{{"127.0.0.1:85", 1358027074129602068ULL},  {"127.0.0.1:83", 4361834613929391114ULL},
                    {"127.0.0.1:84", 7224494972555149682ULL},  {"127.0.0.1:81", 7701421856454313576ULL},
                    {"127.0.0.1:82", 8649315368077433379ULL},  {"127.0.0.1:84", 8739448859063030639ULL},
                    {"127.0.0.1:81", 9887544217113020895ULL},  {"127.0.0.1:82", 10150910876324007731ULL},
                    {"127.0.0.1:83", 15168472011420622455ULL}, {"127.0.0.1:80", 15427156902705414897ULL},
                    {"127.0.0.1:85", 16375050414328759093ULL}, {"127.0.0.1:80", 17613279263364193813ULL}},
                   {{0, 5}, {max_hash, 5}, {1358027074129602068ULL, 5}, {1358027074129602069ULL, 3},
                    {10150910876324007730ULL, 2}}});
    // Only the ring's entries change hash function: request keys stay XXH64.
    STATIC_REQUIRE(std::is_same_v<envoy_ring_hash::key_hash, keyplace::xxh64>);
}

TEST_CASE("envoy ring hash: UnevenHosts (min ring 3, two memberships)", "[envoy][golden]") {
    const auto a = envoy_ring_hash::build(ports(80, 81), ring_config(3));
    check_ring(a, {{{"127.0.0.1:80", 5454692015285649509ULL}, {"127.0.0.1:81", 7859399908942313493ULL},
                    {"127.0.0.1:80", 13838424394637650569ULL}, {"127.0.0.1:81", 16064866803292627174ULL}},
                   {{0, 0}}});
    // §1.3 test fact: 2 hosts, min ring 3 -> ring of 4, 2 entries each.
    CHECK(a.ring_size() == 4);
    CHECK(a.points_per_node() == std::vector<std::size_t>{2, 2});
    const auto b = envoy_ring_hash::build(ports(81, 82), ring_config(3));
    check_ring(b, {{{"127.0.0.1:81", 7859399908942313493ULL}, {"127.0.0.1:82", 8241336090459785962ULL},
                    {"127.0.0.1:82", 12882406409176325258ULL}, {"127.0.0.1:81", 16064866803292627174ULL}},
                   {}});
}

TEST_CASE("envoy ring hash: HostWeightedTinyRing (weights 1, 2, 3, min = max = 6)", "[envoy][golden]") {
    auto nodes = ports(90, 92);
    nodes[0].weight = 1;
    nodes[1].weight = 2;
    nodes[2].weight = 3;
    const auto r = envoy_ring_hash::build(nodes, ring_config(6, 6));
    CHECK(r.ring_size() == 6);
    CHECK(r.points_per_node() == std::vector<std::size_t>{1, 2, 3});
    check_ring(r, {{},
                   {{928266305478181108ULL, 2}, {4443673547860492590ULL, 2}, {5583722120771150861ULL, 1},
                    {6311230543546372928ULL, 1}, {13444792449719432967ULL, 2}, {16117243373044804889ULL, 0}}});
}

TEST_CASE("envoy ring hash: default ring sizes for N equal hosts (§1.3)", "[envoy][golden]") {
    const std::vector<std::pair<std::size_t, std::size_t>> sizes{
        {1, 1024}, {2, 1024}, {3, 1026}, {5, 1025}, {6, 1026}, {7, 1029}, {10, 1030}, {12, 1032}, {100, 1100},
    };
    for (const auto& [n, size] : sizes) {
        INFO(n << " hosts");
        const auto r = envoy_ring_hash::build(make_nodes(n, "10.0.0.1:"));
        CHECK(r.ring_size() == size);
        CHECK(r.points_per_node() == std::vector<std::size_t>(n, size / n));
    }
}

TEST_CASE("envoy ring hash: the running sums carry fractions in host order", "[envoy]") {
    // Four hosts of 0.25 and max ring 6 (Envoy's own comment): 1.5 entries each -> 2, 1, 2, 1.
    const auto r = envoy_ring_hash::build(ports(90, 93), ring_config(6, 6));
    CHECK(r.points_per_node() == std::vector<std::size_t>{2, 1, 2, 1});
    // Host order is Envoy's and it matters: the same hosts the other way round.
    auto reversed = ports(90, 93);
    std::reverse(reversed.begin(), reversed.end());
    const auto s = envoy_ring_hash::build(reversed, ring_config(6, 6));
    CHECK(s.nodes()[0].id == "127.0.0.1:93");
    CHECK(s.points_per_node() == std::vector<std::size_t>{2, 1, 2, 1});
    // max_ring_size caps the scale: 10 hosts in a ring of at most 3 entries.
    const auto t = envoy_ring_hash::build(make_nodes(10, "h"), ring_config(3, 3));
    CHECK(t.ring_size() == 3);
    const auto counts = t.points_per_node();
    CHECK(std::count(counts.begin(), counts.end(), 0U) == 7);
    std::vector<node_index> out(10);
    CHECK(t.pick_n(0, out) == 3);  // nodes without entries are never listed
}

TEST_CASE("envoy ring hash: locality weights scale hosts by locality share", "[envoy]") {
    // Zone a: one host; zone b: three hosts; zone c: weight 0, skipped. Shares 1/2 and 1/2.
    const std::vector<node> nodes{{"a1", 1, {"r", "a", ""}}, {"b1", 1, {"r", "b", ""}}, {"b2", 1, {"r", "b", ""}},
                                  {"b3", 1, {"r", "b", ""}}, {"c1", 5, {"r", "c", ""}}};
    envoy_ring_hash_config config = ring_config(6);
    config.locality_weights = {{{"r", "b", ""}, 3}, {{"r", "a", ""}, 3}, {{"r", "c", ""}, 0}};
    const auto r = envoy_ring_hash::build(nodes, config);
    // nw: b hosts 1/6 each, a1 1/2; scale = ceil(6/6)/(1/6) = 6: b1..b3 one each, a1 three.
    CHECK(r.points_per_node() == std::vector<std::size_t>{3, 1, 1, 1, 0});
    CHECK(r.size() == 5);
    std::vector<node_index> out(5);
    CHECK(r.pick_n(0, out) == 4);
}

TEST_CASE("envoy ring hash: localities in Envoy's order, the proxy's own first", "[envoy]") {
    // One host per zone, 1.5 entries each (min = max = 6): the 1st and 3rd localities in Envoy's
    // order get 2, whatever the order of the nodes or of the weight list.
    const keyplace::location a{"r", "a", ""};
    const keyplace::location b{"r", "b", ""};
    const keyplace::location c{"r", "c", ""};
    const keyplace::location d{"r", "d", ""};
    const std::vector<node> nodes{{"hd", 1, d}, {"hc", 1, c}, {"hb", 1, b}, {"ha", 1, a}};
    envoy_ring_hash_config config = ring_config(6, 6);
    config.locality_weights = {{c, 1}, {a, 1}, {d, 1}, {b, 1}};
    CHECK(envoy_ring_hash::build(nodes, config).points_per_node() == std::vector<std::size_t>{1, 2, 1, 2});
    config.local_locality = c;  // c, then a, b, d
    CHECK(envoy_ring_hash::build(nodes, config).points_per_node() == std::vector<std::size_t>{1, 2, 2, 1});
    // A listed locality without nodes is not in Envoy's list: its weight is not summed (shares
    // 1/2, ring 1024; counting it would give shares 1/3 and a ring of 1026).
    config = ring_config(1024);
    config.locality_weights = {{a, 1}, {b, 1}, {c, 1}};
    const auto r = envoy_ring_hash::build({node{"x", 1, a}, node{"y", 1, c}}, config);
    CHECK(r.ring_size() == 1024);
}

// ---------------------------------------------------------------------------------------------
// MAGLEV (§2.2)

TEST_CASE("envoy maglev: Basic (M = 7)", "[envoy][golden]") {
    const auto g = envoy_maglev::build(ports(90, 95), maglev_config(7));
    const std::vector<std::uint32_t> table{2, 4, 0, 1, 5, 0, 3};
    CHECK(table_of(g) == table);
    const auto counts = g.entries_per_node();
    CHECK(*std::min_element(counts.begin(), counts.end()) == 1);
    CHECK(*std::max_element(counts.begin(), counts.end()) == 2);
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> permutations{
        {2, 4}, {3, 6}, {0, 2}, {3, 3}, {1, 3}, {1, 5}};
    for (std::size_t i = 0; i < 6; ++i) {
        INFO(g.nodes()[i].id);
        CHECK(envoy_maglev::offset(g.nodes()[i].id, 7) == permutations[i].first);
        CHECK(envoy_maglev::skip(g.nodes()[i].id, 7) == permutations[i].second);
    }
    for (std::uint64_t i = 0; i <= 20; ++i) {
        CHECK(g.pick(i).value == table[static_cast<std::size_t>(i % 7)]);
    }
    // BasicWithRetryHostPredicate.
    CHECK(g.pick_retry(10, 0).value == 1);
    CHECK(g.pick_retry(10, 1).value == 0);
    CHECK(g.pick_retry(10, 2).value == 5);  // two retries, all rejected: the last attempt's host
}

TEST_CASE("envoy maglev: BasicWithHostName (M = 7)", "[envoy][golden]") {
    const auto g = envoy_maglev::build(ports(90, 95, ""), maglev_config(7));
    CHECK(table_of(g) == std::vector<std::uint32_t>{2, 5, 0, 3, 4, 1, 0});
}

TEST_CASE("envoy maglev: Weighted (M = 17, weights 1 and 2)", "[envoy][golden]") {
    auto nodes = ports(90, 91);
    nodes[1].weight = 2;
    const auto g = envoy_maglev::build(nodes, maglev_config(17));
    CHECK(table_of(g) == std::vector<std::uint32_t>{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1});
    CHECK(g.entries_per_node() == std::vector<std::size_t>{6, 11});
}

TEST_CASE("envoy maglev: LocalityWeighted (M = 17)", "[envoy][golden]") {
    const keyplace::location a{"", "A", ""};
    const keyplace::location b{"", "B", ""};
    const keyplace::location c{"", "C", ""};
    SECTION("same locality weights: host weights in different localities do not matter") {
        const std::vector<node> nodes{{"127.0.0.1:90", 1, a}, {"127.0.0.1:91", 2, b}};
        const auto g = envoy_maglev::build(nodes, maglev_config(17, {{a, 1}, {b, 1}}));
        CHECK(table_of(g) == std::vector<std::uint32_t>{1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1});
        CHECK(g.entries_per_node() == std::vector<std::size_t>{9, 8});
    }
    SECTION("locality weights 8, 0, 2: the zero-weight locality's host holds no entry") {
        const std::vector<node> nodes{{"127.0.0.1:90", 1, a}, {"127.0.0.1:91", 2, c}, {"127.0.0.1:92", 3, b}};
        const auto g = envoy_maglev::build(nodes, maglev_config(17, {{a, 8}, {b, 0}, {c, 2}}));
        CHECK(table_of(g) == std::vector<std::uint32_t>{1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0});
        CHECK(g.entries_per_node() == std::vector<std::size_t>{13, 4, 0});
        std::vector<node_index> out(3);
        CHECK(g.pick_n(0, out) == 2);
    }
}

TEST_CASE("envoy maglev: LocalityWeightedLopsided (M = 65537)", "[envoy][golden]") {
    const keyplace::location heavy{"", "heavy", ""};
    const keyplace::location light{"", "light", ""};
    std::vector<node> nodes;
    for (int port = 0; port < 1024; ++port) {
        nodes.push_back({"127.0.0.1:" + std::to_string(port), 1, port == 0 ? heavy : light});
    }
    const auto g = envoy_maglev::build(nodes, maglev_config(65537, {{heavy, 127}, {light, 1}}));
    const auto counts = g.entries_per_node();
    for (std::size_t i = 0; i < g.size(); ++i) {
        INFO(g.nodes()[i].id);
        CHECK(counts[i] == (g.nodes()[i].id == "127.0.0.1:0" ? 65537U - 1023U : 1U));
    }
}

TEST_CASE("envoy maglev: one host takes every hash (Envoy's degenerate table)", "[envoy][golden]") {
    const auto g = envoy_maglev::build({node{"127.0.0.1:90"}}, maglev_config(7));
    CHECK(g.degenerate());
    CHECK(g.memory_bytes() == 0);
    for (const std::uint64_t h : {std::uint64_t{0}, std::uint64_t{6}, max_hash}) {
        CHECK(g.pick(h).value == 0);
        CHECK(g.pick_retry(h, 3).value == 0);
    }
    CHECK(g.entries_per_node() == std::vector<std::size_t>{7});
    std::vector<node_index> out(2);
    CHECK(g.pick_n(5, out) == 1);
    // Also when the other hosts are in zero-weight localities.
    const keyplace::location a{"", "a", ""};
    const keyplace::location b{"", "b", ""};
    const auto h = envoy_maglev::build({node{"x", 1, a}, node{"y", 1, b}}, maglev_config(7, {{a, 0}, {b, 1}}));
    CHECK(h.degenerate());
    CHECK(h.pick(3).value == 1);
}

TEST_CASE("envoy maglev: derived regression values, M = 65537 (reference author's emulator, not upstream)",
          "[envoy][golden]") {
    const auto g = envoy_maglev::build(ports(90, 95));
    CHECK(g.table_size() == 65537);
    const auto t = table_of(g);
    CHECK(std::vector<std::uint32_t>(t.begin(), t.begin() + 16) ==
          std::vector<std::uint32_t>{5, 4, 4, 0, 5, 5, 3, 1, 5, 5, 2, 4, 4, 3, 1, 0});
    CHECK(t[12345] == 3);
    CHECK(t[65536] == 1);
    CHECK(g.entries_per_node() == std::vector<std::size_t>{10923, 10923, 10923, 10923, 10923, 10922});
    CHECK(envoy_maglev::offset("127.0.0.1:90", 65537) == 58304);
    CHECK(envoy_maglev::skip("127.0.0.1:90", 65537) == 65526);
    // Removing :95 moves only 62 slots that were not :95's.
    const auto smaller = envoy_maglev::build(ports(90, 94));
    std::size_t moved = 0;
    for (std::uint64_t s = 0; s < 65537; ++s) {
        const auto before = id_of(g, g.entry(s));
        if (before != "127.0.0.1:95" && before != id_of(smaller, smaller.entry(s))) {
            ++moved;
        }
    }
    CHECK(moved == 62);
}

TEST_CASE("envoy maglev: the table does not depend on input order (BasicStability)", "[envoy]") {
    auto nodes = ports(90, 99);
    nodes[3].weight = 4;
    const auto g = envoy_maglev::build(nodes, maglev_config(101));
    std::mt19937 gen(7);
    std::shuffle(nodes.begin(), nodes.end(), gen);
    const auto h = envoy_maglev::build(nodes, maglev_config(101));
    CHECK(table_of(g) == table_of(h));
    CHECK(h.nodes()[0].id == "127.0.0.1:90");
}

TEST_CASE("envoy maglev: a table smaller than the host count leaves hosts out, as Envoy does", "[envoy]") {
    const auto g = envoy_maglev::build(ports(90, 94), maglev_config(3));
    const auto counts = g.entries_per_node();
    CHECK(std::count(counts.begin(), counts.end(), 1U) == 3);
    CHECK(std::count(counts.begin(), counts.end(), 0U) == 2);
    std::vector<node_index> out(5);
    CHECK(g.pick_n(0, out) == 3);
}

TEST_CASE("envoy: both model ordered_placement_strategy, and locate hashes keys with XXH64", "[envoy]") {
    STATIC_REQUIRE(keyplace::ordered_placement_strategy<envoy_ring_hash>);
    STATIC_REQUIRE(keyplace::ordered_placement_strategy<envoy_maglev>);
    const auto r = envoy_ring_hash::build(ports(90, 95));
    const auto g = envoy_maglev::build(ports(90, 95));
    for (int k = 0; k < 200; ++k) {
        const std::string key = "session-" + std::to_string(k);
        const std::uint64_t h = keyplace::xxh64{}(std::string_view(key));
        CHECK(&keyplace::locate(r, key) == &r.nodes()[r.pick(h).value]);
        CHECK(&keyplace::locate(g, key) == &g.nodes()[g.pick(h).value]);
        std::vector<node_index> out(6);
        REQUIRE(r.pick_n(h, out) == 6);
        CHECK(out[0] == r.pick(h));
        REQUIRE(g.pick_n(h, out) == 6);
        CHECK(out[0] == g.pick(h));
        std::sort(out.begin(), out.end());
        CHECK(std::adjacent_find(out.begin(), out.end()) == out.end());
    }
    // Copies are independent values.
    const auto copy = g;
    CHECK(table_of(copy) == table_of(g));
}

// ---------------------------------------------------------------------------------------------
// Bad input

TEST_CASE("envoy: bad input is rejected with an error naming the value", "[envoy][errors]") {
    using keyplace::errc;
    const auto ring = [](std::vector<node> nodes, envoy_ring_hash_config c = {}) {
        return [nodes, c] { return envoy_ring_hash::build(nodes, c); };
    };
    const auto table = [](std::vector<node> nodes, envoy_maglev_config c = {}) {
        return [nodes, c] { return envoy_maglev::build(nodes, c); };
    };
    SECTION("nodes") {
        expect_error(ring({}), errc::empty_membership, "empty");
        expect_error(table({}), errc::empty_membership, "empty");
        expect_error(ring({{"a"}, {""}}), errc::empty_id, "empty");
        expect_error(table({{""}}), errc::empty_id, "empty");
        expect_error(ring({{"a"}, {"b"}, {"a"}}), errc::duplicate_id, "'a' appears more than once");
        expect_error(table({{"a"}, {"a"}}), errc::duplicate_id, "'a' appears more than once");
        expect_error(ring({{"a", 0}}), errc::invalid_weight, "'a': weight 0");
        expect_error(table({{"a", -1}}), errc::invalid_weight, "'a': weight -1");
        expect_error(ring({{"a", 1.5}}), errc::invalid_weight, "'a': weight 1.5 is not a whole number");
        expect_error(table({{"a", 4294967296.0}}), errc::invalid_weight, "weight 4294967296 is not a whole number");
        expect_error(ring({{"a", 4294967295.0}, {"b", 1}}), errc::invalid_weight,
                     "the weights of the nodes sum to 4294967296");
    }
    SECTION("ring sizes") {
        expect_error(ring({{"a"}}, ring_config(20, 10)), errc::invalid_ring_size,
                     "ring hash: minimum_ring_size (20) > maximum_ring_size (10)");
        expect_error(ring({{"a"}}, ring_config(0)), errc::invalid_ring_size, "minimum_ring_size (0)");
        expect_error(ring({{"a"}}, ring_config(1, 0)), errc::invalid_ring_size, "maximum_ring_size (0)");
        expect_error(ring({{"a"}}, ring_config(8388609)), errc::invalid_ring_size, "minimum_ring_size (8388609)");
        expect_error(ring({{"a"}}, ring_config(1, 8388609)), errc::invalid_ring_size,
                     "maximum_ring_size (8388609) is not from 1 to 8388608");
    }
    SECTION("table sizes") {
        for (const std::uint64_t m : {0U, 1U, 8U, 65536U}) {
            expect_error(table({{"a"}}, maglev_config(m)), errc::table_size_not_prime,
                         "The table size of maglev must be prime number: " + std::to_string(m));
        }
        expect_error(table({{"a"}}, maglev_config(5000077)), errc::invalid_table_size,
                     "maglev table size 5000077 is above Envoy's limit 5000011");
        expect_error(table({{"a"}}, maglev_config(18446744073709551557ULL)), errc::invalid_table_size,
                     "18446744073709551557 is above Envoy's limit");
        CHECK(envoy_maglev::build({node{"a"}}, maglev_config(5000011)).table_size() == 5000011);
    }
    SECTION("localities") {
        const keyplace::location a{"r", "a", ""};
        const keyplace::location b{"r", "b", "s"};
        envoy_maglev_config c = maglev_config(7, {{a, 1}});
        expect_error(table({{"x", 1, a}, {"y", 1, b}}, c), errc::unknown_domain,
                     "node 'y' is in locality 'r'/'b'/'s', which has no weight");
        c.locality_weights = {{a, 1}, {b, 2}, {a, 3}};
        expect_error(table({{"x", 1, a}}, c), errc::duplicate_domain, "locality 'r'/'a'/'' has more than one weight");
        c.locality_weights = {{a, 0}, {b, 0}};
        expect_error(table({{"x", 1, a}, {"y", 1, b}}, c), errc::no_points,
                     "no node is in a locality of weight > 0");
        c.locality_weights = {{a, 0}, {b, 4}};
        expect_error(table({{"x", 1, a}}, c), errc::no_points, "no node is in a locality of weight > 0");
        c.locality_weights = {{a, 4294967295U}, {b, 1}};
        expect_error(table({{"x", 1, a}, {"y", 1, b}}, c), errc::invalid_weight,
                     "the locality weights sum to 4294967296");
        envoy_ring_hash_config rc;
        rc.locality_weights = {{a, 1}};
        expect_error(ring({{"x", 4294967295.0, a}, {"y", 1, a}}, rc), errc::invalid_weight,
                     "the weights of locality 'r'/'a'/'' sum to 4294967296");
    }
}

TEST_CASE("envoy: try_build reports the same error and leaves existing values alone", "[envoy][errors]") {
    const auto r = envoy_ring_hash::build(ports(90, 95), ring_config(12));
    const auto g = envoy_maglev::build(ports(90, 95), maglev_config(7));
    const auto ring_before = ring_of(r);
    const auto table_before = table_of(g);
    keyplace::error_info ec;
    CHECK_FALSE(envoy_ring_hash::try_build(std::vector<node>{{"a", 0.5}}, {}, ec));
    CHECK(ec == keyplace::errc::invalid_weight);
    CHECK_FALSE(envoy_maglev::try_build(std::vector<node>{{"a"}}, maglev_config(9), ec));
    CHECK(ec == keyplace::errc::table_size_not_prime);
    CHECK(ec.message() == "The table size of maglev must be prime number: 9");
    CHECK_FALSE(envoy_ring_hash::try_build(ports(90, 91), ring_config(5, 4), ec));
    CHECK(ec == keyplace::errc::invalid_ring_size);
    CHECK(ec.message() == "ring hash: minimum_ring_size (5) > maximum_ring_size (4)");
    const auto ok = envoy_maglev::try_build(ports(90, 95), maglev_config(7), ec);
    CHECK(!ec);
    REQUIRE(ok);
    CHECK(table_of(*ok) == table_before);
    const auto ok_ring = envoy_ring_hash::try_build(ports(90, 95), ring_config(12), ec);
    CHECK(!ec);
    REQUIRE(ok_ring);
    CHECK(ring_of(*ok_ring) == ring_before);
    CHECK(ring_of(r) == ring_before);
    CHECK(table_of(g) == table_before);
}

namespace {
// Envoy's maglev_lb.cc fill as written there: every round asks every host (in key order) whether
// round * nw < target, else it takes its next free preferred slot and target += max nw.
auto naive_envoy_table(const std::vector<node>& sorted, std::uint64_t m) -> std::vector<std::uint32_t> {
    double sum = 0;
    for (const auto& n : sorted) {
        sum += n.weight;
    }
    std::vector<double> nw;
    double max = 0;
    for (const auto& n : sorted) {
        nw.push_back(n.weight / sum);
        max = std::max(max, nw.back());
    }
    std::vector<std::uint64_t> next;
    std::vector<std::uint64_t> skip;
    for (const auto& n : sorted) {
        next.push_back(envoy_maglev::offset(n.id, m));
        skip.push_back(envoy_maglev::skip(n.id, m));
    }
    constexpr auto vacant = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> table(static_cast<std::size_t>(m), vacant);
    std::vector<double> target(sorted.size(), 0.0);
    std::uint64_t filled = 0;
    for (std::uint64_t round = 1; filled < m; ++round) {
        for (std::size_t h = 0; h < sorted.size() && filled < m; ++h) {
            if (static_cast<double>(round) * nw[h] < target[h]) {
                continue;
            }
            target[h] += max;
            while (table[static_cast<std::size_t>(next[h])] != vacant) {
                next[h] = (next[h] + skip[h]) % m;
            }
            table[static_cast<std::size_t>(next[h])] = static_cast<std::uint32_t>(h);
            ++filled;
        }
    }
    return table;
}
}  // namespace

TEST_CASE("envoy maglev: the queued fill equals Envoy's round-by-round fill, skewed weights too", "[envoy][maglev]") {
    std::mt19937_64 rng(18);
    for (const std::uint64_t m : {7ULL, 101ULL, 4099ULL, 65537ULL}) {
        for (const std::size_t n : {2UL, 5UL, 60UL}) {
            if (n > m) {
                continue;
            }
            for (int kind = 0; kind < 3; ++kind) {
                std::vector<node> nodes;
                for (std::size_t i = 0; i < n; ++i) {
                    // equal; random 1..1000; one host at 2^32 - n among weight-1 hosts
                    const double w = kind == 0   ? 1.0
                                     : kind == 1 ? static_cast<double>(rng() % 1000 + 1)
                                                 : (i == n / 2 ? 4294967296.0 - static_cast<double>(n) : 1.0);
                    nodes.push_back({"host-" + std::to_string(i), w});
                }
                std::sort(nodes.begin(), nodes.end(), [](const node& a, const node& b) { return a.id < b.id; });
                const auto table = envoy_maglev::build(nodes, {.table_size = m});
                const auto expected = naive_envoy_table(nodes, m);
                std::vector<std::uint32_t> got(static_cast<std::size_t>(m));
                for (std::uint64_t s = 0; s < m; ++s) {
                    got[static_cast<std::size_t>(s)] = table.entry(s).value;
                }
                INFO("m " << m << ", n " << n << ", kind " << kind);
                CHECK(got == expected);
            }
        }
    }
}
