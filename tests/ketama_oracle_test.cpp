// compat/ketama.hpp against the installed libmemcached (libmemcached-awesome 1.1.x): for each
// server list and mode, memcached_generate_hash() must name the server our continuum picks, key
// for key. No memcached server is needed: placement is computed client-side.
#include "keyplace_catch.hpp"

#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/point_ring.hpp>

#include <libmemcached/memcached.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

using keyplace::compat::build_ketama;
using keyplace::compat::ketama_dialect;
using keyplace::compat::ketama_server;
using keyplace::compat::md5_ketama;
using keyplace::compat::one_at_a_time;

namespace {

struct endpoint {
    std::string host;
    in_port_t port = 11211;
    std::uint32_t weight = 1;
};

enum class mode { weighted, spy, unweighted_default_hash, unweighted_md5 };

struct memc_free {
    void operator()(memcached_st* m) const noexcept { memcached_free(m); }
};
using memc_ptr = std::unique_ptr<memcached_st, memc_free>;

// Behaviours first, then servers. one_by_one: memcached_server_add_with_weight per server (each
// add rebuilds the continuum); else one memcached_server_push of the whole list (one rebuild).
auto make_client(const std::vector<endpoint>& servers, mode m, bool one_by_one = false) -> memc_ptr {
    memc_ptr memc(memcached_create(nullptr));
    REQUIRE(memc);
    switch (m) {
        case mode::weighted:
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) == MEMCACHED_SUCCESS);
            break;
        case mode::spy:
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) == MEMCACHED_SUCCESS);
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                           MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY) == MEMCACHED_SUCCESS);
            break;
        case mode::unweighted_default_hash:
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA, 1) == MEMCACHED_SUCCESS);
            break;
        case mode::unweighted_md5:
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA, 1) == MEMCACHED_SUCCESS);
            REQUIRE(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_MD5) == MEMCACHED_SUCCESS);
            break;
    }
    if (one_by_one) {
        for (const auto& s : servers) {
            REQUIRE(memcached_server_add_with_weight(memc.get(), s.host.c_str(), s.port, s.weight) == MEMCACHED_SUCCESS);
        }
        return memc;
    }
    memcached_server_st* list = nullptr;
    for (const auto& s : servers) {
        memcached_return_t rc = MEMCACHED_SUCCESS;
        list = memcached_server_list_append_with_weight(list, s.host.c_str(), s.port, s.weight, &rc);
        REQUIRE(rc == MEMCACHED_SUCCESS);
    }
    const memcached_return_t pushed = memcached_server_push(memc.get(), list);
    memcached_server_list_free(list);
    REQUIRE(pushed == MEMCACHED_SUCCESS);
    return memc;
}

auto to_servers(const std::vector<endpoint>& servers) -> std::vector<ketama_server> {
    std::vector<ketama_server> out;
    for (const auto& s : servers) {
        const bool v6 = s.host.find(':') != std::string::npos;
        out.push_back({(v6 ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port), s.weight});
    }
    return out;
}

// Keys "0" .. "<n-1>" (node-hashring's fixture keys) then random byte strings, high bytes too.
auto oracle_keys(std::size_t decimal, std::size_t random) -> std::vector<std::string> {
    std::vector<std::string> keys;
    keys.reserve(decimal + random);
    for (std::size_t i = 0; i < decimal; ++i) {
        keys.push_back(std::to_string(i));
    }
    std::mt19937_64 gen(20240611);
    for (std::size_t i = 0; i < random; ++i) {
        std::string k(1 + gen() % 40, '\0');
        for (auto& c : k) {
            c = static_cast<char>(1 + gen() % 255);
        }
        keys.push_back(k);
    }
    return keys;
}

// How many keys libmemcached places differently from us (0 expected).
template <class Ring>
auto mismatches(const Ring& ring, memcached_st* memc, const std::vector<std::string>& keys) -> std::size_t {
    using key_hash = typename Ring::key_hash;
    std::size_t bad = 0;
    for (const auto& k : keys) {
        const std::uint32_t theirs = memcached_generate_hash(memc, k.data(), k.size());
        const std::uint32_t ours = ring.pick(key_hash{}(k)).value;
        if (theirs != ours && ++bad <= 3) {
            UNSCOPED_INFO("key of " << k.size() << " bytes: libmemcached " << theirs << ", keyplace " << ours);
        }
    }
    return bad;
}

auto check_all_modes(const std::vector<endpoint>& servers, const std::vector<std::string>& keys,
                     bool one_by_one = false) -> void {
    const auto ours = to_servers(servers);
    const auto w = build_ketama(ketama_dialect::libmemcached_weighted, ours);
    CHECK(mismatches(w, make_client(servers, mode::weighted, one_by_one).get(), keys) == 0);
    const auto spy = build_ketama(ketama_dialect::libmemcached_spy, ours);
    CHECK(mismatches(spy, make_client(servers, mode::spy, one_by_one).get(), keys) == 0);
    bool unweighted = true;
    for (const auto& s : servers) {
        unweighted = unweighted && s.weight == 1;
    }
    if (unweighted) {
        const auto oaat = build_ketama<one_at_a_time>(ketama_dialect::libmemcached_unweighted, ours);
        CHECK(mismatches(oaat, make_client(servers, mode::unweighted_default_hash, one_by_one).get(), keys) == 0);
        const auto md5 = build_ketama<md5_ketama>(ketama_dialect::libmemcached_unweighted, ours);
        CHECK(mismatches(md5, make_client(servers, mode::unweighted_md5, one_by_one).get(), keys) == 0);
    }
}

auto equal_servers(std::size_t n, std::uint32_t weight = 1) -> std::vector<endpoint> {
    std::vector<endpoint> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back({"10.2." + std::to_string(i / 200) + "." + std::to_string(i % 200),
                       static_cast<in_port_t>(i % 3 == 2 ? 11212 : 11211), weight});
    }
    return out;
}

}  // namespace

TEST_CASE("ketama oracle: libmemcached's fixture servers and pylibmc.txt's, 10^5 keys", "[ketama][oracle]") {
    const auto keys = oracle_keys(100000, 0);
    std::vector<endpoint> fixture;
    const std::uint32_t weights[] = {600, 300, 200, 350, 1000, 800, 950, 100};
    for (std::uint32_t i = 0; i < 8; ++i) {
        fixture.push_back({"10.0.1." + std::to_string(i + 1), 11211, weights[i]});
    }
    check_all_modes(fixture, keys);
    check_all_modes(fixture, keys, true);
    // node-hashring's pylibmc.txt: keys "0".."99999" under these servers (weight 1 each).
    check_all_modes({{"0.0.0.1", 11211}, {"0.0.0.2", 11211}, {"0.0.0.3", 11211}, {"0.0.0.4", 11213}, {"0.0.0.5", 11212}},
                    keys);
}

TEST_CASE("ketama oracle: mixed ports, host names, IPv6, high-byte keys", "[ketama][oracle]") {
    const auto keys = oracle_keys(20000, 80000);
    check_all_modes({{"cache-a.example", 11211}, {"cache-b.example", 11300}, {"::1", 11213}, {"10.9.9.9", 1}}, keys);
    check_all_modes({{"cache-a.example", 11211, 3}, {"cache-b.example", 11300, 1}, {"::1", 11213, 70000}}, keys);
}

TEST_CASE("ketama oracle: every server count 1..100, equal weights", "[ketama][oracle]") {
    const auto keys = oracle_keys(2000, 3000);
    for (std::size_t n = 1; n <= 100; ++n) {
        INFO(n << " servers");
        check_all_modes(equal_servers(n), keys, n == 25);
        if (n % 10 == 5) {
            check_all_modes(equal_servers(n, 7), keys);  // all weight 7: libmemcached goes weighted
        }
    }
}

TEST_CASE("ketama oracle: where single precision gives fewer points than the exact share", "[ketama][oracle]") {
    const auto keys = oracle_keys(50000, 50000);
    // Equal weights at 25, 47, 50, 55, 61, 71, 94 and 100 servers: 156 points each, not 160.
    for (const std::size_t n : {25U, 47U, 50U, 55U, 61U, 71U, 94U, 100U}) {
        INFO(n << " servers");
        CHECK(keyplace::compat::libmemcached_points(1, n, static_cast<std::uint32_t>(n)) == 156);
        check_all_modes(equal_servers(n), keys);
    }
    // Weights 1..n with n = 19, 23, 25, 31: some servers get 4 points fewer than floor(40nw/total)*4.
    for (const std::uint32_t n : {19U, 23U, 25U, 31U}) {
        INFO("weights 1.." << n);
        auto servers = equal_servers(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            servers[i].weight = i + 1;
        }
        check_all_modes(servers, keys);
    }
    // The shortfall matters: the exact counts place keys differently from libmemcached.
    const auto servers = equal_servers(25);
    std::vector<keyplace::node> nodes;
    std::vector<keyplace::ring_point<std::uint32_t>> points;
    for (std::uint32_t i = 0; i < 25; ++i) {
        const auto& s = servers[i];
        nodes.push_back({s.host + ":" + std::to_string(s.port)});
        const std::string name = s.port == 11211 ? s.host : s.host + ":" + std::to_string(s.port);
        for (int d = 0; d < 40; ++d) {
            const auto digest = keyplace::detail::md5_digest(name + "-" + std::to_string(d));
            for (std::size_t word = 0; word < 4; ++word) {
                points.push_back({keyplace::detail::md5_le32(digest, word), i});
            }
        }
    }
    const auto exact =
        keyplace::compat::point_ring<std::uint32_t, keyplace::compat::md5_ketama>::build(nodes, std::move(points));
    CHECK(mismatches(exact, make_client(servers, mode::weighted).get(), keys) > 0);
}

TEST_CASE("ketama oracle: libmemcached stores weight 0 as 1", "[ketama][oracle]") {
    // Why build_ketama rejects weight 0: libmemcached would silently place as weight 1.
    const auto keys = oracle_keys(20000, 0);
    auto servers = equal_servers(5);
    servers[1].weight = 0;
    servers[3].weight = 9;
    auto as_one = servers;
    as_one[1].weight = 1;
    const auto ring = build_ketama(ketama_dialect::libmemcached_weighted, to_servers(as_one));
    CHECK(mismatches(ring, make_client(servers, mode::weighted, true).get(), keys) == 0);
}
