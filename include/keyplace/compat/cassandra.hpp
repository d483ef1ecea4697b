// keyplace — which node owns a key. Cassandra's Murmur3Partitioner token: MurmurHash3_x64_128
// (Appleby) as Cassandra's Java port computes it, including its sign-extended tail bytes, and
// the serialization of partition keys (int, bigint, text, blob, uuid, composite).
#ifndef KEYPLACE_COMPAT_CASSANDRA_HPP_INCLUDED
#define KEYPLACE_COMPAT_CASSANDRA_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {
[[nodiscard]] constexpr auto rotl64(std::uint64_t x, int r) noexcept -> std::uint64_t {
    return (x << r) | (x >> (64 - r));
}
[[nodiscard]] constexpr auto fmix64(std::uint64_t k) noexcept -> std::uint64_t {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}
/// The value of a hex digit, or -1.
[[nodiscard]] constexpr auto hex_digit(char c) noexcept -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}
}  // namespace detail

namespace compat {

/// The two 64-bit halves of MurmurHash3_x64_128.
struct murmur3_128_result {
    std::uint64_t h1;
    std::uint64_t h2;
};

/// Which tail rule to use. MurmurHash3 reads the last len % 16 bytes unsigned; Cassandra's Java
/// port reads them as signed Java bytes and sign-extends each before shifting it into place,
/// so keys whose tail has a byte >= 0x80 hash differently.
enum class murmur3_tail { canonical, cassandra };


/// MurmurHash3_x64_128 of bytes with a seed, with the chosen tail rule.
[[nodiscard]] constexpr auto murmur3_x64_128(std::span<const std::byte> bytes, std::uint64_t seed = 0,
                                             murmur3_tail tail = murmur3_tail::canonical) noexcept
    -> murmur3_128_result {
    constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;
    constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;
    const std::size_t len = bytes.size();
    std::uint64_t h1 = seed;
    std::uint64_t h2 = seed;
    auto byte_at = [&](std::size_t i) { return static_cast<std::uint64_t>(bytes[i]); };
    auto block = [&](std::size_t at) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < 8; ++b) {
            v |= byte_at(at + b) << (8 * b);
        }
        return v;
    };
    const std::size_t blocks = len / 16;
    for (std::size_t i = 0; i < blocks; ++i) {
        std::uint64_t k1 = block(16 * i);
        std::uint64_t k2 = block(16 * i + 8);
        k1 *= c1;
        k1 = keyplace::detail::rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = keyplace::detail::rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = keyplace::detail::rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = keyplace::detail::rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    // Tail byte i of the last (len % 16): unsigned, or sign-extended as a Java byte.
    auto tail_byte = [&](std::size_t i) -> std::uint64_t {
        const std::uint64_t b = byte_at(16 * blocks + i);
        if (tail == murmur3_tail::cassandra && b >= 0x80) {
            return b | 0xffffffffffffff00ULL;
        }
        return b;
    };
    const std::size_t rest = len & 15;
    std::uint64_t k1 = 0;
    std::uint64_t k2 = 0;
    for (std::size_t i = rest; i > 8; --i) {
        k2 ^= tail_byte(i - 1) << (8 * (i - 9));
    }
    if (rest > 8) {
        k2 *= c2;
        k2 = keyplace::detail::rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (std::size_t i = rest < 8 ? rest : 8; i > 0; --i) {
        k1 ^= tail_byte(i - 1) << (8 * (i - 1));
    }
    if (rest > 0) {
        k1 *= c1;
        k1 = keyplace::detail::rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= len;
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = keyplace::detail::fmix64(h1);
    h2 = keyplace::detail::fmix64(h2);
    h1 += h2;
    h2 += h1;
    return {h1, h2};
}

/// Cassandra's Murmur3Partitioner token of serialized partition-key bytes: h1 of Cassandra's
/// MurmurHash3 as a signed 64-bit value; Long.MIN_VALUE becomes Long.MAX_VALUE (MIN is
/// reserved), and the empty key is the minimum token, Long.MIN_VALUE (the server's rule).
[[nodiscard]] constexpr auto cassandra_token(std::span<const std::byte> key) noexcept -> std::int64_t {
    if (key.empty()) {
        return std::numeric_limits<std::int64_t>::min();
    }
    const auto h1 = static_cast<std::int64_t>(murmur3_x64_128(key, 0, murmur3_tail::cassandra).h1);
    return h1 == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max() : h1;
}

/// Partition-key serialization, as Cassandra hashes it. Byte is always std::byte: a parameter
/// only so that the vectors' constexpr members are instantiated where a key is serialized, not
/// in every translation unit that includes this header.
namespace cql {

/// int: 4 bytes big-endian.
template <class Byte = std::byte>
[[nodiscard]] auto int32(std::int32_t v) -> std::vector<Byte> {
    std::vector<Byte> out(4);
    const auto u = static_cast<std::uint32_t>(v);
    for (std::size_t i = 0; i < 4; ++i) {
        out[i] = static_cast<Byte>((u >> (24 - 8 * i)) & 0xffU);
    }
    return out;
}
/// bigint: 8 bytes big-endian.
template <class Byte = std::byte>
[[nodiscard]] auto bigint(std::int64_t v) -> std::vector<Byte> {
    std::vector<Byte> out(8);
    const auto u = static_cast<std::uint64_t>(v);
    for (std::size_t i = 0; i < 8; ++i) {
        out[i] = static_cast<Byte>((u >> (56 - 8 * i)) & 0xffU);
    }
    return out;
}
/// text: the UTF-8 bytes as given.
template <class Byte = std::byte>
[[nodiscard]] auto text(std::string_view s) -> std::vector<Byte> {
    std::vector<Byte> out(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        out[i] = static_cast<Byte>(s[i]);
    }
    return out;
}
/// uuid: the 16 bytes in big-endian (text) order, from "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
/// nothing if the text is not a UUID.
template <class Byte = std::byte>
[[nodiscard]] auto uuid(std::string_view s) -> std::optional<std::vector<Byte>> {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') {
        return std::nullopt;
    }
    std::vector<Byte> out;
    int high = -1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            continue;
        }
        const char c = s[i];
        const int v = keyplace::detail::hex_digit(c);
        if (v < 0) {
            return std::nullopt;
        }
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<Byte>(high * 16 + v));
            high = -1;
        }
    }
    return out;
}
/// blob: the bytes as given.
template <class Byte = std::byte>
[[nodiscard]] auto blob(std::span<const std::type_identity_t<Byte>> bytes) -> std::vector<Byte> {
    return {bytes.begin(), bytes.end()};
}
/// blob from CQL's literal form "0x..." (hex digits, either case, even count); nothing if the
/// text is not one.
template <class Byte = std::byte>
[[nodiscard]] auto blob(std::string_view literal) -> std::optional<std::vector<Byte>> {
    if (literal.size() < 2 || literal[0] != '0' || (literal[1] != 'x' && literal[1] != 'X') || literal.size() % 2 != 0) {
        return std::nullopt;
    }
    std::vector<Byte> out;
    for (std::size_t i = 2; i < literal.size(); i += 2) {
        const int hi = keyplace::detail::hex_digit(literal[i]);
        const int lo = keyplace::detail::hex_digit(literal[i + 1]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        out.push_back(static_cast<Byte>(hi * 16 + lo));
    }
    return out;
}
/// The longest component of a composite key, in bytes (its length is a uint16).
inline constexpr std::size_t composite_component_limit = 65535;
/// A composite partition key: each component as [uint16 big-endian length][bytes][0x00].
/// Throws keyplace::error (invalid_argument) naming a component longer than 65535 bytes.
template <class Byte = std::byte>
[[nodiscard]] auto composite(std::span<const std::vector<std::type_identity_t<Byte>>> components) -> std::vector<Byte> {
    for (std::size_t i = 0; i < components.size(); ++i) {
        if (components[i].size() > composite_component_limit) {
            keyplace::detail::raise(keyplace::detail::fail(
                errc::invalid_argument, "composite key component " + std::to_string(i) + " is " +
                                            std::to_string(components[i].size()) + " bytes; the limit is 65535"));
        }
    }
    std::vector<Byte> out;
    for (const auto& c : components) {
        out.push_back(static_cast<Byte>((c.size() >> 8) & 0xffU));
        out.push_back(static_cast<Byte>(c.size() & 0xffU));
        out.insert(out.end(), c.begin(), c.end());
        out.push_back(Byte{0});
    }
    return out;
}

}  // namespace cql

/// The Murmur3Partitioner as a key hash: the token of the key's serialized bytes, carried as its
/// two's-complement bits (cassandra_ring converts them back). Keys must be serialized as
/// Cassandra serializes them (namespace cql); a string is hashed as text.
struct murmur3_partitioner {
    [[nodiscard]] auto operator()(std::span<const std::byte> key) const noexcept -> std::uint64_t {
        return static_cast<std::uint64_t>(cassandra_token(key));
    }
    [[nodiscard]] auto operator()(std::string_view key) const noexcept -> std::uint64_t {
        return (*this)(std::as_bytes(std::span<const char>(key.data(), key.size())));
    }
};

/// A Cassandra node: its tokens and where the snitch puts it. The defaults are the names
/// Cassandra's SimpleSnitch reports.
struct cassandra_endpoint {
    std::string id;
    std::vector<std::int64_t> tokens;
    std::string dc = "datacenter1";
    std::string rack = "rack1";
    /// Not Cassandra's (it knows datacenters and racks): a zone for copies spread over zones.
    std::string zone{};
};

/// A datacenter's replication factor under NetworkTopologyStrategy.
struct dc_replication {
    std::string dc;
    std::uint32_t rf = 0;
};

template <class Unused = void>
class basic_cassandra_ring;

/// NetworkTopologyStrategy options validated against one cassandra_ring (see
/// cassandra_ring::network_topology). Holds, by datacenter, the replicas to place and the rack
/// repeats allowed.
class nts_replication {
public:
    /// How many replicas a key gets: the sum over datacenters of min(rf, nodes in it).
    [[nodiscard]] auto replica_count() const noexcept -> std::size_t { return total_; }

private:
    template <class>
    friend class basic_cassandra_ring;
    std::vector<std::uint32_t> wanted_;   // min(rf, nodes) per datacenter; 0 = not replicated
    std::vector<std::int64_t> repeats_;   // rf - racks per datacenter (may be negative)
    std::size_t total_ = 0;
};

/// A Cassandra token ring over explicit signed 64-bit tokens: a token owns (previous token,
/// token]; a key's primary replica is the node of the first token >= the key's token, wrapping
/// to the smallest token (TokenMetadata.firstTokenIndex). Nodes keep the order given; tokens
/// must be distinct across the ring, as Cassandra requires. SimpleStrategy and
/// NetworkTopologyStrategy list replicas as Cassandra 4.0-5.0 walk the ring (single pass;
/// transient replicas are not modelled). A configuration of the sorted-ring engine; where.region
/// of a node is its datacenter and where.rack its rack.
///
/// build() throws keyplace::error: no endpoints, an empty or duplicate id, an endpoint without
/// tokens (no_points), a token owned twice (duplicate_token, naming it and both owners), an
/// empty datacenter or rack name (missing_location). with(endpoint) adds a node with its tokens
/// and without(id) removes one (the other nodes keep their tokens, as in Cassandra).
template <class Unused>
class basic_cassandra_ring
    : public detail::ring_strategy<basic_cassandra_ring<Unused>, std::int64_t, murmur3_partitioner, cassandra_endpoint, no_config,
                                   detail::derivation::any, detail::node_order::as_given> {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

    friend detail::lifecycle<basic_cassandra_ring, cassandra_endpoint, no_config, detail::derivation::any,
                             detail::node_order::as_given>;

public:
    /// The sorted tokens (points()).
    [[nodiscard]] auto tokens() const noexcept -> std::span<const std::int64_t> { return this->points(); }
    /// Node i as an endpoint: its id, its tokens in ring order, its datacenter and rack.
    [[nodiscard]] auto member_of(std::size_t i) const -> cassandra_endpoint {
        cassandra_endpoint e{this->nodes_[i].id, {}, this->nodes_[i].where.region, this->nodes_[i].where.rack};
        for (std::size_t k = 0; k < this->owners().size(); ++k) {
            if (this->owners()[k].value == i) {
                e.tokens.push_back(this->points()[k]);
            }
        }
        return e;
    }

    /// The primary replica of a token: the owner of the first token >= it, wrapping.
    [[nodiscard]] auto primary(std::int64_t token) const noexcept -> node_index {
        return this->pick(static_cast<std::uint64_t>(token));
    }

    /// SimpleStrategy with replication factor rf: writes min(rf, out.size(), size()) replicas.
    [[nodiscard]] auto simple_strategy(std::int64_t token, std::uint32_t rf, std::span<node_index> out) const noexcept
        -> std::size_t {
        return this->pick_n(static_cast<std::uint64_t>(token), out.first(std::min<std::size_t>(out.size(), rf)));
    }

    /// Validates NetworkTopologyStrategy options for this ring. Throws keyplace::error on an
    /// empty or unknown datacenter name or one named twice (Cassandra 4.0+ rejects unknown
    /// names too). A datacenter with rf 0 gets no replicas.
    [[nodiscard]] auto network_topology(std::span<const dc_replication> options) const -> nts_replication {
        nts_replication plan;
        plan.wanted_.assign(dc_names_.size(), 0);
        plan.repeats_.assign(dc_names_.size(), 0);
        lazy_vector<bool> named(dc_names_.size(), false);
        for (const dc_replication& o : options) {
            const auto it = std::find(dc_names_.begin(), dc_names_.end(), o.dc);
            if (it == dc_names_.end()) {
                detail::raise(detail::fail(errc::unknown_domain, "datacenter " + detail::quote(o.dc) +
                                                                       " has no node in the ring"));
            }
            const auto d = static_cast<std::size_t>(it - dc_names_.begin());
            if (named[d]) {
                detail::raise(detail::fail(errc::duplicate_domain, "datacenter " + detail::quote(o.dc) +
                                                                             " is named twice"));
            }
            named[d] = true;
            plan.wanted_[d] = std::min(o.rf, dc_nodes_[d]);
            plan.repeats_[d] = static_cast<std::int64_t>(o.rf) - static_cast<std::int64_t>(dc_racks_[d]);
            plan.total_ += plan.wanted_[d];
        }
        return plan;
    }
    [[nodiscard]] auto network_topology(std::initializer_list<dc_replication> options) const -> nts_replication {
        return network_topology(std::span<const dc_replication>(options.begin(), options.size()));
    }

    /// NetworkTopologyStrategy replicas of a token, in Cassandra's order (the first is the
    /// primary): one walk clockwise from the token; in each datacenter a node on a rack not yet
    /// used is taken, a node on a used rack only while rf - racks repeats remain; a datacenter
    /// is done at min(rf, nodes) replicas. Writes at most out.size() and returns the count;
    /// plan must come from this ring (or a copy of it).
    [[nodiscard]] auto network_topology_replicas(std::int64_t token, const nts_replication& plan,
                                                 std::span<node_index> out) const noexcept -> std::size_t {
        const std::size_t want = std::min(out.size(), plan.total_);
        std::size_t got = 0;
        if (want == 0 || plan.wanted_.size() != dc_names_.size()) {
            return 0;
        }
        this->walk(static_cast<std::uint64_t>(token), [&](node_index n) noexcept {
            const std::uint32_t d = node_dc_[n.value];
            const auto taken = out.first(got);
            std::uint32_t in_dc = 0;
            std::uint32_t racks_used = 0;
            bool rack_seen = false;
            for (std::size_t i = 0; i < got; ++i) {
                const node_index t = taken[i];
                if (t == n) {
                    return true;  // a node is never repeated
                }
                if (node_dc_[t.value] != d) {
                    continue;
                }
                ++in_dc;
                bool first_of_rack = true;
                for (std::size_t j = 0; j < i; ++j) {
                    first_of_rack = first_of_rack && node_rack_[taken[j].value] != node_rack_[t.value];
                }
                racks_used += first_of_rack ? 1U : 0U;
                rack_seen = rack_seen || node_rack_[t.value] == node_rack_[n.value];
            }
            if (in_dc >= plan.wanted_[d]) {
                return true;  // datacenter done, or not replicated
            }
            // Rack repeats taken so far are the replicas beyond the first of each rack.
            const auto repeats_left = plan.repeats_[d] - static_cast<std::int64_t>(in_dc - racks_used);
            if (!rack_seen || repeats_left > 0) {
                out[got++] = n;
            }
            return got < want;
        });
        return got;
    }

private:
    basic_cassandra_ring() = default;

    auto assign(std::span<const cassandra_endpoint> endpoints, const no_config&) -> detail::failure {
        lazy_vector<keyplace::node> nodes;
        std::size_t total = 0;
        for (std::size_t i = 0; i < endpoints.size(); ++i) {
            const cassandra_endpoint& e = endpoints[i];
            if (e.tokens.empty()) {
                return detail::fail(errc::no_points, "node " + detail::quote(e.id) + " has no tokens").at_node(i);
            }
            if (e.dc.empty() || e.rack.empty()) {
                return detail::fail(errc::missing_location, "node " + detail::quote(e.id) + " has an empty " +
                                                                (e.dc.empty() ? "datacenter" : "rack") + " name")
                    .at_node(i);
            }
            nodes.push_back(keyplace::node{e.id, 1.0, location{e.dc, e.zone, e.rack}});
            total += e.tokens.size();
        }
        lazy_vector<keyplace::node> sorted;  // validates only: the ring keeps the given order
        if (auto f = detail::sorted_membership(nodes, sorted)) {
            return f;
        }
        const auto generate = [endpoints](std::span<std::int64_t> tokens, std::span<node_index> owners) {
            std::size_t at = 0;
            for (std::size_t i = 0; i < endpoints.size(); ++i) {
                for (const std::int64_t t : endpoints[i].tokens) {
                    tokens[at] = t;
                    owners[at++] = node_index{static_cast<std::uint32_t>(i)};
                }
            }
        };
        if (auto f = this->engine_.assign_generated(total, nodes.size(), lookup_rule::at_or_after, generate)) {
            return f;
        }
        this->nodes_ = std::move(nodes);
        if (auto f = detail::distinct_points(this->points(), this->owners(), this->nodes(), "token")) {
            return f;
        }
        index_topology();
        return {};
    }

    // Datacenter and rack ids of the nodes (where.region, where.rack), in first-seen order; found
    // through ordered maps, O(n log n) (a linear search per node was quadratic in the racks).
    void index_topology() {
        std::map<std::string, std::uint32_t> dcs;
        std::map<std::pair<std::string, std::string>, std::uint32_t> racks;
        for (const keyplace::node& n : this->nodes_) {
            const auto& e = n.where;
            const auto [d, new_dc] = dcs.try_emplace(e.region, static_cast<std::uint32_t>(dc_names_.size()));
            if (new_dc) {
                dc_names_.push_back(e.region);
                dc_nodes_.push_back(0);
                dc_racks_.push_back(0);
            }
            const std::uint32_t di = d->second;
            ++dc_nodes_[di];
            const auto [r, new_rack] = racks.try_emplace({e.region, e.rack}, static_cast<std::uint32_t>(racks.size()));
            dc_racks_[di] += new_rack ? 1U : 0U;
            node_dc_.push_back(di);
            node_rack_.push_back(r->second);
        }
    }

    lazy_vector<std::string> dc_names_;
    lazy_vector<std::uint32_t> dc_nodes_;
    lazy_vector<std::uint32_t> dc_racks_;
    lazy_vector<std::uint32_t> node_dc_;
    lazy_vector<std::uint32_t> node_rack_;
};
/// The Cassandra token ring (see basic_cassandra_ring; a template only so that translation units
/// that do not use it do not compile it).
using cassandra_ring = basic_cassandra_ring<>;

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
