// Fuzz target: what the compat modes read from their reference systems' configuration — ketama
// server addresses, Redis Cluster slot ranges and keys, Cassandra tokens and replication — and
// what they derive from it.
//
// Input: a byte choosing the mode, then its fields.
// Invariants:
//  - every refusal is a keyplace::error whose message is one short line (doc/contract.md, "Guarantees"),
//    the same from the try_ form and the throwing one;
//  - ketama: a server's id is its address (libketama, Python hash_ring) or libmemcached's
//    normalized host:port, and servers given by their ids build the same continuum;
//  - Redis: build(nodes, ranges) succeeds exactly when the ranges cover each of the 16384 slots
//    once and name members (a reference coverage count), and then every slot's owner is its
//    range's; build_even's ranges differ in size by at most one; redis_slot is CRC-16/XMODEM
//    (a bitwise reference) of the hash tag, which a key with "{tag}" shares with the tag;
//    redis_rebalance's moves take slots their source holds at that point, and applied in order
//    they leave a valid slot map; redis_create_ranges covers every slot once, in order;
//  - Cassandra: SimpleStrategy gives min(rf, nodes) distinct nodes from the primary on;
//    NetworkTopologyStrategy gives, per datacenter, min(rf, its nodes) distinct nodes of that
//    datacenter, on min(replicas, its racks) distinct racks, the first the primary when its
//    datacenter is replicated.
#include "fuzz_support.hpp"

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/compat/redis_planner.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using keyplace_fuzz::input;
namespace compat = keyplace::compat;

/// The throwing form throws what the try_ form reports; the message is a library message.
template <class Try, class Throw>
auto agreed(Try&& try_form, Throw&& throw_form) -> decltype(try_form(std::declval<keyplace::error_info&>())) {
    keyplace::error_info err;
    auto value = try_form(err);
    try {
        (void)throw_form();
        KEYPLACE_FUZZ_CHECK(value.has_value());
    } catch (const keyplace::error& e) {
        KEYPLACE_FUZZ_CHECK(!value.has_value());
        KEYPLACE_FUZZ_CHECK(e.code() == err.code() && std::string(e.what()) == err.message());
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
    }
    return value;
}

/// Runs f, which may throw keyplace::error (a library message) and nothing else; true if it did not.
template <class F>
auto refused_cleanly(F&& f) -> bool {
    try {
        f();
        return true;
    } catch (const keyplace::error& e) {
        const std::string m = e.what();
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(m);
        return false;
    }
}

// ---- ketama --------------------------------------------------------------------------------------

auto address_of(input& in) -> std::string {
    static const char* const hosts[] = {"10.0.0.1", "cache-a", "[::1]", "fe80::1", "[fe80::2]", "h", ""};
    static const char* const ports[] = {"", ":11211", ":11212", ":1", ":65535", ":65536", ":0", ":", ":1x", "]"};
    const std::uint8_t b = in.byte();
    if (b < 64) {
        return std::string(in.take(in.below(12)));  // any bytes
    }
    return std::string(hosts[b % 7]) + ports[(b / 7) % 10];
}

void fuzz_ketama(input& in) {
    static constexpr compat::ketama_dialect dialects[] = {
        compat::ketama_dialect::libmemcached_weighted, compat::ketama_dialect::libmemcached_spy,
        compat::ketama_dialect::libmemcached_unweighted, compat::ketama_dialect::libketama,
        compat::ketama_dialect::python_hash_ring};
    const auto dialect = dialects[in.below(5)];
    std::vector<compat::ketama_server> servers(1 + in.below(8));
    for (auto& s : servers) {
        s.address = address_of(in);
        const std::uint8_t w = in.byte();
        s.weight = w < 200 ? 1U + w % 4U : (w < 250 ? 0U : std::uint64_t{1} << (w - 218));
    }
    const auto ring = agreed([&](keyplace::error_info& e) { return compat::try_build_ketama(dialect, servers, e); },
                             [&] { return compat::build_ketama(dialect, servers); });
    if (!ring) {
        return;
    }
    KEYPLACE_FUZZ_CHECK(ring->size() == servers.size());
    const bool verbatim =
        dialect == compat::ketama_dialect::libketama || dialect == compat::ketama_dialect::python_hash_ring;
    std::set<std::string> ids;
    std::vector<compat::ketama_server> by_id = servers;
    for (std::size_t i = 0; i < servers.size(); ++i) {
        const std::string& id = ring->nodes()[i].id;
        ids.insert(id);
        if (verbatim) {
            KEYPLACE_FUZZ_CHECK(id == servers[i].address);
        } else {
            const auto colon = id.rfind(':');
            KEYPLACE_FUZZ_CHECK_MSG(colon != std::string::npos && colon + 1 < id.size() &&
                                        id.find_first_not_of("0123456789", colon + 1) == std::string::npos,
                                    id);
        }
        by_id[i].address = id;
    }
    KEYPLACE_FUZZ_CHECK(ids.size() == servers.size());
    keyplace::error_info err;
    const auto again = compat::try_build_ketama(dialect, by_id, err);
    KEYPLACE_FUZZ_CHECK_MSG(again.has_value(), err.message());
    KEYPLACE_FUZZ_CHECK(std::equal(ring->points().begin(), ring->points().end(), again->points().begin(),
                                   again->points().end()));
    KEYPLACE_FUZZ_CHECK(std::equal(ring->owners().begin(), ring->owners().end(), again->owners().begin(),
                                   again->owners().end()));
    KEYPLACE_FUZZ_CHECK(std::equal(ring->nodes().begin(), ring->nodes().end(), again->nodes().begin(),
                                   again->nodes().end()));
}

// ---- Redis ---------------------------------------------------------------------------------------

auto reference_crc16(std::string_view bytes) -> std::uint16_t {
    std::uint32_t crc = 0;
    for (const char c : bytes) {
        for (int bit = 7; bit >= 0; --bit) {
            const std::uint32_t in_bit = (static_cast<unsigned char>(c) >> bit) & 1U;
            const std::uint32_t top = (crc >> 15) & 1U;
            crc = (crc << 1) & 0xffffU;
            if ((top ^ in_bit) != 0) {
                crc ^= 0x1021U;
            }
        }
    }
    return static_cast<std::uint16_t>(crc);
}

void check_slots(std::string_view key) {
    std::string_view tag = key;
    const auto open = key.find('{');
    if (open != std::string_view::npos) {
        const auto close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1) {
            tag = key.substr(open + 1, close - open - 1);
        }
    }
    KEYPLACE_FUZZ_CHECK(compat::redis_hash_tag(key) == tag);
    KEYPLACE_FUZZ_CHECK(compat::redis_slot(key) == (reference_crc16(tag) & 0x3fffU));
    if (!tag.empty() && tag.find('}') == std::string_view::npos) {  // "{tag}"'s tag is then the tag
        KEYPLACE_FUZZ_CHECK(compat::redis_slot(key) == compat::redis_slot("{" + std::string(tag) + "}"));
    }
}

/// A slot map that is valid (every slot once, named members) or, as the fuzzer decides, not.
auto ranges_of(input& in, const std::vector<keyplace::node>& nodes) -> std::vector<compat::slot_range> {
    std::vector<compat::slot_range> out;
    const std::uint8_t shape = in.byte();
    const std::size_t count = 1 + in.below(12);
    if (shape < 128) {
        // Contiguous cuts of 0..16383, then perhaps spoiled once.
        std::vector<std::uint16_t> cuts;
        for (std::size_t i = 1; i < count; ++i) {
            cuts.push_back(static_cast<std::uint16_t>(in.bits<std::uint16_t>() % 16384));
        }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        std::uint16_t first = 0;
        for (std::size_t i = 0; i <= cuts.size(); ++i) {
            const std::uint16_t end = i < cuts.size() ? cuts[i] : std::uint16_t{16384};
            if (end == 0) {
                continue;
            }
            out.push_back({first, static_cast<std::uint16_t>(end - 1), nodes[in.below(nodes.size())].id});
            first = end;
        }
        switch (shape % 8) {
            case 0: out.back().last = static_cast<std::uint16_t>(out.back().last - 1); break;       // a gap
            case 1: out.front().first = static_cast<std::uint16_t>(1); break;                          // a gap or reversed
            case 2: out.push_back({16383, 16384, nodes[0].id}); break;                                 // past the end
            case 3: out.push_back(out.front()); break;                                                 // an overlap
            case 4: out.back().node_id = "ghost-id"; break;                                            // not a member
            default: break;
        }
        std::reverse(out.begin(), out.end());  // the order given does not matter
    } else {
        for (std::size_t i = 0; i < count; ++i) {
            const auto a = static_cast<std::uint16_t>(in.bits<std::uint16_t>() % 16400);
            const auto b = static_cast<std::uint16_t>(in.bits<std::uint16_t>() % 16400);
            out.push_back({a, b, nodes[in.below(nodes.size())].id});
        }
    }
    return out;
}

void check_cluster(const compat::redis_cluster& c, const std::vector<compat::slot_range>& ranges) {
    for (const auto& r : ranges) {
        const auto owner = c.find(r.node_id);
        KEYPLACE_FUZZ_CHECK(owner.has_value());
        for (std::uint32_t s = r.first; s <= r.last; ++s) {
            KEYPLACE_FUZZ_CHECK(c.pick(s) == *owner);
            KEYPLACE_FUZZ_CHECK(c.pick(s + 16384ULL * (s + 1)) == *owner);  // only the low 14 bits count
        }
    }
}

void fuzz_redis(input& in) {
    std::vector<keyplace::node> nodes(1 + in.below(6));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].id = "m" + std::to_string(i);
    }
    const auto ranges = ranges_of(in, nodes);
    // The reference: each slot covered exactly once by a well-formed range of a member.
    std::vector<int> cover(16384, 0);
    bool valid = true;
    for (const auto& r : ranges) {
        if (r.first > r.last || r.last > 16383 ||
            std::none_of(nodes.begin(), nodes.end(), [&](const keyplace::node& n) { return n.id == r.node_id; })) {
            valid = false;
            continue;
        }
        for (std::uint32_t s = r.first; s <= r.last; ++s) {
            ++cover[s];
        }
    }
    valid = valid && std::all_of(cover.begin(), cover.end(), [](int c) { return c == 1; });
    const auto c = agreed([&](keyplace::error_info& e) { return compat::redis_cluster::try_build(nodes, ranges, e); },
                          [&] { return compat::redis_cluster::build(nodes, ranges); });
    KEYPLACE_FUZZ_CHECK(c.has_value() == valid);
    if (c) {
        check_cluster(*c, ranges);
        // A rebalance plan: each move's slots are its source's when it is made; the end state is a
        // valid map.
        compat::redis_rebalance_options o;
        o.threshold = static_cast<double>(in.byte() % 8);
        o.use_empty_masters = in.flag();
        for (const auto& n : nodes) {
            if (in.byte() < 64) {
                o.weights.push_back({n.id, static_cast<double>(in.byte() % 5) * 0.5});
            }
        }
        std::vector<std::string> order;
        for (const auto& n : nodes) {
            order.push_back(n.id);
        }
        std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(in.below(order.size())), order.end());
        std::optional<compat::redis_rebalance_plan> plan;
        if (refused_cleanly([&] { plan = compat::redis_rebalance(*c, order, o); }) && plan) {
            std::vector<std::string> owner(16384);
            for (std::uint32_t s = 0; s < 16384; ++s) {
                owner[s] = c->node(c->pick(s)).id;
            }
            for (const auto& m : plan->moves) {
                KEYPLACE_FUZZ_CHECK(m.from != m.to && !m.slots.empty());
                KEYPLACE_FUZZ_CHECK(std::is_sorted(m.slots.begin(), m.slots.end()));
                for (const auto s : m.slots) {
                    KEYPLACE_FUZZ_CHECK(s < 16384 && owner[s] == m.from);
                    owner[s] = m.to;
                }
            }
            KEYPLACE_FUZZ_CHECK(plan->needed || plan->moves.empty());
            std::vector<compat::slot_range> after;  // the owners as runs
            for (std::uint16_t s = 0; s < 16384; ++s) {
                if (s > 0 && owner[s] == after.back().node_id) {
                    after.back().last = s;
                } else {
                    after.push_back({s, s, owner[s]});
                }
            }
            keyplace::error_info err;
            KEYPLACE_FUZZ_CHECK_MSG(compat::redis_cluster::try_build(nodes, after, err).has_value(), err.message());
        }
    }
    // The even split.
    const auto even = compat::redis_cluster::build_even(nodes);
    std::vector<std::size_t> sizes(nodes.size(), 0);
    for (std::uint32_t s = 0; s < 16384; ++s) {
        ++sizes[even.pick(s).value];
        KEYPLACE_FUZZ_CHECK(s == 0 || even.pick(s).value >= even.pick(s - 1).value);  // contiguous, in id order
    }
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    KEYPLACE_FUZZ_CHECK(*hi - *lo <= 1);
    // redis create: contiguous ranges over every slot, one per address.
    std::vector<std::string> addresses;
    const std::size_t masters = 2 + in.below(8);
    for (std::size_t i = 0; i < masters; ++i) {
        addresses.push_back(in.flag() ? "10.0.0." + std::to_string(in.byte() % 4) + ":" + std::to_string(7000 + in.byte() % 3)
                                      : std::string(in.take(in.below(6))));
    }
    std::vector<compat::slot_range> created;
    if (refused_cleanly([&] { created = compat::redis_create_ranges(addresses); })) {
        KEYPLACE_FUZZ_CHECK(created.size() == addresses.size());
        std::uint32_t next = 0;
        for (const auto& r : created) {
            KEYPLACE_FUZZ_CHECK(r.first == next && r.first <= r.last);
            next = r.last + 1U;
        }
        KEYPLACE_FUZZ_CHECK(next == 16384);
    }
    // Keys: the rest of the input, one per line.
    check_slots("");
    while (!in.empty()) {
        check_slots(in.until('\n'));
    }
}

// ---- Cassandra -------------------------------------------------------------------------------

void fuzz_cassandra(input& in) {
    static const char* const dcs[] = {"dc1", "dc2", "dc3"};
    static const char* const racks[] = {"r1", "r2", "r3"};
    std::vector<compat::cassandra_endpoint> endpoints(1 + in.below(10));
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        auto& e = endpoints[i];
        e.id = "n" + std::to_string(i);
        const std::uint8_t b = in.byte();
        e.dc = dcs[b % 3];
        e.rack = racks[(b / 3) % 3];
        const std::size_t tokens = 1 + in.below(4);
        for (std::size_t t = 0; t < tokens; ++t) {
            e.tokens.push_back(in.flag() ? static_cast<std::int64_t>(in.bits<std::uint64_t>())
                                         : static_cast<std::int64_t>(in.byte()) * 1000 - 128000);
        }
    }
    const auto ring = agreed([&](keyplace::error_info& e) { return compat::cassandra_ring::try_build(endpoints, e); },
                             [&] { return compat::cassandra_ring::build(endpoints); });
    if (!ring) {
        return;
    }
    const std::uint32_t rf = 1U + in.byte() % 6U;
    std::vector<compat::dc_replication> options;
    for (const char* dc : dcs) {
        if (in.byte() < 200) {
            options.push_back({dc, in.byte() % 5U});
        }
    }
    std::optional<compat::nts_replication> plan;
    const bool planned = refused_cleanly([&] { plan = ring->network_topology(options); });
    std::map<std::string, std::set<std::string>> dc_nodes;
    std::map<std::string, std::set<std::string>> dc_racks;
    for (const auto& e : endpoints) {
        dc_nodes[e.dc].insert(e.id);
        dc_racks[e.dc].insert(e.rack);
    }
    std::vector<keyplace::node_index> out(ring->size() + 2);
    for (int k = 0; k < 24 && !in.empty(); ++k) {
        const auto token = static_cast<std::int64_t>(in.bits<std::uint64_t>());
        const auto primary = ring->primary(token);
        const std::size_t n = ring->simple_strategy(token, rf, out);
        KEYPLACE_FUZZ_CHECK(n == std::min<std::size_t>(rf, ring->size()));
        KEYPLACE_FUZZ_CHECK(out[0] == primary);
        KEYPLACE_FUZZ_CHECK(std::set<keyplace::node_index>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)).size() == n);
        if (!planned) {
            continue;
        }
        const std::size_t m = ring->network_topology_replicas(token, *plan, out);
        KEYPLACE_FUZZ_CHECK(m == plan->replica_count());
        std::map<std::string, std::vector<const compat::cassandra_endpoint*>> by_dc;
        std::set<std::uint32_t> seen;
        for (std::size_t i = 0; i < m; ++i) {
            KEYPLACE_FUZZ_CHECK(out[i].value < endpoints.size() && seen.insert(out[i].value).second);
            const auto& e = endpoints[out[i].value];  // nodes keep the order given
            by_dc[e.dc].push_back(&e);
        }
        for (const auto& o : options) {
            const auto& got = by_dc[o.dc];
            const std::size_t want = std::min<std::size_t>(o.rf, dc_nodes[o.dc].size());
            KEYPLACE_FUZZ_CHECK(got.size() == want);
            std::set<std::string> used;
            for (const auto* e : got) {
                used.insert(e->rack);
            }
            KEYPLACE_FUZZ_CHECK(used.size() == std::min(want, dc_racks[o.dc].size()));
        }
        const std::string& primary_dc = endpoints[primary.value].dc;
        if (std::any_of(options.begin(), options.end(),
                        [&](const compat::dc_replication& o) { return o.dc == primary_dc && o.rf > 0; })) {
            KEYPLACE_FUZZ_CHECK(m > 0 && out[0] == primary);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    switch (in.byte() % 3) {
        case 0: fuzz_ketama(in); break;
        case 1: fuzz_redis(in); break;
        default: fuzz_cassandra(in); break;
    }
    return 0;
}
