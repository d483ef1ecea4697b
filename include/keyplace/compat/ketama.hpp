// keyplace — which node owns a key. Ketama continuums as memcached clients build them:
// libmemcached (libmemcached-awesome 1.1.x; weighted, unweighted and spymemcached strings) and
// last.fm's libketama (RJ/ketama) and Python hash_ring, as configurations of the sorted-ring
// engine. Facts: libmemcached 1.1.4's sources and tests, libketama's, python_ketama's.
//
// Every dialect hashes point strings "<name>-<i>" and places a key at the first continuum point
// at or after its hash (hash_ring: after it), wrapping to the first point. They differ in the name, the point count
// (computed in single precision, reproduced here operation for operation, including the server
// counts and weights where it gives fewer points than the exact formula) and the points per hash:
//
//   dialect                  name                 points per server          points per hash
//   libmemcached_weighted    host, or host:port   libmemcached_points()      4 (MD5 words)
//     (port 11211 drops ":port")
//   libmemcached_spy         /host:port           libmemcached_points()      4 (MD5 words)
//   libmemcached_unweighted  host, or host:port   100                        1 (the key hash)
//   libketama                the address as given 4 * libketama_digests()    4 (MD5 words)
//   python_hash_ring         the address as given 3 * floor(40nw / total)    3 (MD5 words)
//
// Equal points are ordered by server index (position in the input), libmemcached's rule;
// libketama's qsort leaves that order unspecified, so it agrees with us wherever its points are
// distinct (all published vectors). Python hash_ring keeps its points in a dict, so an equal
// point belongs to the last server that wrote it, and so it does here. Server index = input order: if libmemcached's SORT_HOSTS
// behaviour is on, pass the servers sorted as it sorts them (host by strcmp, then port).
// With one server libmemcached skips hashing and returns it; a one-server continuum here picks
// it for every key too. With HASH_WITH_PREFIX_KEY on, hash the namespace-prefixed key.
// libmemcached 1.1.4 as Debian ships it aborts (an assert in update_continuum) when a ketama
// mode holds more than 100 servers; we build any count.
#ifndef KEYPLACE_COMPAT_KETAMA_HPP_INCLUDED
#define KEYPLACE_COMPAT_KETAMA_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/md5.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

// The point counts are single-precision expressions; fast-math or excess precision would change
// them (and so placement).
#if defined(__FAST_MATH__)
#error "keyplace/compat/ketama.hpp needs IEEE-754 arithmetic: compile without -ffast-math"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "keyplace/compat/ketama.hpp needs FLT_EVAL_METHOD == 0 (no excess precision; use SSE2 on x86)"
#endif

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// Jenkins one-at-a-time as libhashkit computes it. libhashkit converts each `char` to uint32_t,
/// so bytes >= 0x80 are sign-extended where char is signed (x86, x86-64) and not where it is
/// unsigned (AArch64, POWER Linux); ASCII keys hash the same either way.
template <bool SignExtend, class Byte>
[[nodiscard]] constexpr auto one_at_a_time_hash(std::span<const Byte> bytes) noexcept -> std::uint32_t {
    std::uint32_t h = 0;
    for (const Byte b : bytes) {
        const auto u = static_cast<std::uint8_t>(b);
        h += SignExtend ? static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(u)))
                        : std::uint32_t{u};
        h += h << 10U;
        h ^= h >> 6U;
    }
    h += h << 3U;
    h ^= h >> 11U;
    h += h << 15U;
    return h;
}

}  // namespace detail

namespace compat {

/// libmemcached's MD5 key hash (MEMCACHED_HASH_MD5) and libketama's ketama_hashi(): the
/// little-endian 32-bit word of MD5 bytes 0..3. The key hash of every MD5 ketama dialect.
struct md5_ketama {
    [[nodiscard]] constexpr auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::md5_le32(keyplace::detail::md5_digest(bytes), 0);
    }
    [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::md5_le32(keyplace::detail::md5_digest(bytes), 0);
    }
};

/// libmemcached's default key hash (MEMCACHED_HASH_DEFAULT = one-at-a-time) on platforms where
/// char is signed (x86, x86-64): bytes >= 0x80 are sign-extended, as libhashkit does there.
struct one_at_a_time {
    [[nodiscard]] constexpr auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::one_at_a_time_hash<true>(bytes);
    }
    [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::one_at_a_time_hash<true>(std::span<const char>(bytes.data(), bytes.size()));
    }
};

/// Jenkins' one-at-a-time over unsigned bytes: libmemcached's default key hash where char is
/// unsigned (AArch64, POWER Linux). Equal to one_at_a_time on ASCII keys.
struct one_at_a_time_unsigned {
    [[nodiscard]] constexpr auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::one_at_a_time_hash<false>(bytes);
    }
    [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
        return keyplace::detail::one_at_a_time_hash<false>(std::span<const char>(bytes.data(), bytes.size()));
    }
};

/// memcached's default port; libmemcached leaves it out of point strings.
inline constexpr std::uint16_t memcached_default_port = 11211;

/// One server as the client is configured with it. address: for libketama, the servers-file
/// address, hashed verbatim ("10.0.1.1:11211", "cache-a"); for libmemcached, "host",
/// "host:port", "[v6]:port" or a bare IPv6 literal, the port defaulting to 11211. weight: the
/// libmemcached server weight or the libketama memory figure, at least 1.
struct ketama_server {
    std::string address;
    std::uint64_t weight = 1;
    /// Where the server runs, for copies spread over failure domains (not hashed: the continuum
    /// is the client's).
    location where{};

    friend auto operator==(const ketama_server&, const ketama_server&) -> bool = default;
};

/// Which client's continuum to build.
enum class ketama_dialect {
    /// libmemcached 1.1.x MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (also what it switches to when a
    /// server weight > 1 is added under a consistent distribution); pylibmc "ketama_weighted".
    libmemcached_weighted,
    /// libmemcached 1.1.x DISTRIBUTION_CONSISTENT_KETAMA_SPY with KETAMA_WEIGHTED: spymemcached's
    /// KetamaNodeLocator strings "/host:port-i" (port always written), weighted point counts.
    libmemcached_spy,
    /// libmemcached 1.1.x MEMCACHED_BEHAVIOR_KETAMA without weights: 100 points per server, each
    /// the *key* hash of one string. libmemcached's default key hash here is one-at-a-time:
    /// build_ketama<one_at_a_time>(...); with MEMCACHED_BEHAVIOR_HASH = MD5, <md5_ketama>.
    libmemcached_unweighted,
    /// last.fm libketama (RJ/ketama ketama.c, also its python/PHP/Java bindings).
    libketama,
    /// Python hash_ring (Amir Salihefendic; also npm hashring's 'hash_ring' compatibility):
    /// the node name as given, floor(40 * n * w / total) MD5 digests of "<name>-<j>", 3
    /// little-endian points each, and bisect_right's lookup (lookup_rule::after).
    python_hash_ring,
};

/// Points libmemcached 1.1.x gives a server in its weighted and spy modes (hosts.cc
/// update_continuum), in its own single-precision steps:
///   pct = (float)weight / (float)total_weight;
///   floor((float)(pct * 160 / 4 * (float)live_servers + 1e-10f)) * 4
/// For some server counts this is 4 below floor(weight * 40 * live / total) * 4: 25 equal
/// servers get 156 points each, not 160 (also 47, 50, 55, 61, 71, 94, 100 servers).
/// Preconditions: 0 < weight <= total_weight, live_servers <= 2^26.
[[nodiscard]] inline auto libmemcached_points(std::uint32_t weight, std::uint64_t total_weight,
                                              std::uint32_t live_servers) noexcept -> std::uint32_t {
    KEYPLACE_ASSERT(weight > 0 && weight <= total_weight && live_servers <= (1U << 26U));
    // volatile: every step rounds to float as in libmemcached's build, never fused into an FMA.
    const volatile float pct = static_cast<float>(weight) / static_cast<float>(total_weight);
    const volatile float scaled = pct * 160.0F;
    const volatile float quarter = scaled / 4.0F;
    const volatile float shares = quarter * static_cast<float>(live_servers);
    const volatile float nudged = shares + 0.0000000001F;
    return static_cast<std::uint32_t>(nudged) * 4U;  // truncation: floor of a non-negative float
}

/// MD5 digests (4 points each) libketama gives a server (ketama.c ketama_create_continuum):
///   pct = (float)memory / (float)total_memory;  floorf(pct * 40.0 * (float)numservers)
/// where 40.0 is a double, so the product is double, rounded to float for floorf. 61 equal
/// servers get 39 digests each, not 40. Preconditions: 0 < weight <= total_weight, servers <= 2^26.
[[nodiscard]] inline auto libketama_digests(std::uint64_t weight, std::uint64_t total_weight,
                                            std::uint32_t servers) noexcept -> std::uint32_t {
    KEYPLACE_ASSERT(weight > 0 && weight <= total_weight && servers <= (1U << 26U));
    const volatile float pct = static_cast<float>(weight) / static_cast<float>(total_weight);
    const volatile double scaled = static_cast<double>(pct) * 40.0;
    const volatile double shares = scaled * static_cast<double>(static_cast<float>(servers));
    const volatile float rounded = static_cast<float>(shares);
    return static_cast<std::uint32_t>(rounded);  // truncation: floorf of a non-negative float
}

}  // namespace compat

namespace detail {

/// A libmemcached server address split into host and port.
struct ketama_host_port {
    std::string_view host;
    std::uint16_t port = compat::memcached_default_port;
};

[[nodiscard]] inline auto ketama_parse_port(std::string_view text, std::uint16_t& port) noexcept -> bool {
    if (text.empty() || text.size() > 5) {
        return false;
    }
    std::uint32_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10U + static_cast<std::uint32_t>(c - '0');
    }
    if (v == 0 || v > 65535U) {
        return false;
    }
    port = static_cast<std::uint16_t>(v);
    return true;
}

/// "host", "host:port", "[v6]", "[v6]:port"; more than one ':' without brackets is an IPv6 host.
template <class = void>  // instantiated only where used
[[nodiscard]] auto ketama_split_address(std::string_view address, ketama_host_port& out) -> failure {
    std::string_view host = address;
    std::string_view port;
    bool has_port = false;
    if (!address.empty() && address.front() == '[') {
        const auto close = address.find(']');
        if (close == std::string_view::npos ||
            (close + 1 < address.size() && address[close + 1] != ':')) {
            return fail(errc::invalid_address, "server address " + quote(address) + " is not [host] or [host]:port");
        }
        host = address.substr(1, close - 1);
        has_port = close + 1 < address.size();
        port = has_port ? address.substr(close + 2) : std::string_view{};
    } else if (const auto colon = address.find(':');
               colon != std::string_view::npos && address.find(':', colon + 1) == std::string_view::npos) {
        host = address.substr(0, colon);
        port = address.substr(colon + 1);
        has_port = true;
    }
    if (host.empty()) {
        return fail(errc::empty_id, "server address " + quote(address) + " has an empty host");
    }
    // A bracket belongs only around an IPv6 host: a host holding one ("fe80::1]") would be
    // named "[fe80::1]]:11211", an id this parser refuses.
    if (host.find_first_of("[]") != std::string_view::npos) {
        return fail(errc::invalid_address, "server address " + quote(address) + " is not [host] or [host]:port");
    }
    out.host = host;
    out.port = compat::memcached_default_port;
    if (has_port && !ketama_parse_port(port, out.port)) {
        return fail(errc::invalid_address,
                    "server address " + quote(address) + ": port " + quote(port) + " is not 1 to 65535");
    }
    return {};
}

/// How a dialect names a server in its point strings "<name>-<i>".
enum class ketama_name : std::uint8_t {
    verbatim,        ///< the address as given (libketama, Python hash_ring)
    host_or_port,    ///< "host", or "host:port" when the port is not 11211 (libmemcached)
    slash_host_port  ///< "/host:port", the port always written (spymemcached)
};
/// How many strings a server gets.
enum class ketama_count : std::uint8_t { libmemcached, hundred, libketama, python };

/// One dialect's rules: the table below replaces a function of flags.
struct ketama_rule {
    ketama_name name;
    ketama_count count;
    std::uint8_t points_per_string;  ///< 4 or 3 MD5 words, or 1: the key hash of the string
    lookup_rule lookup;
    bool md5_keys;   ///< the client always hashes keys with MD5 (KeyHash must be md5_ketama)
    bool unit_weights;  ///< every weight must be 1
    /// Equal points belong to the last server that wrote one (Python's dict, ring[key] = node),
    /// not to the first in server order (libmemcached's sort).
    bool last_writer_wins;
};

/// By compat::ketama_dialect, in its order.
inline constexpr ketama_rule ketama_rules[] = {
    {ketama_name::host_or_port, ketama_count::libmemcached, 4, lookup_rule::at_or_after, false, false, false},
    {ketama_name::slash_host_port, ketama_count::libmemcached, 4, lookup_rule::at_or_after, false, false, false},
    {ketama_name::host_or_port, ketama_count::hundred, 1, lookup_rule::at_or_after, false, true, false},
    {ketama_name::verbatim, ketama_count::libketama, 4, lookup_rule::at_or_after, true, false, false},
    {ketama_name::verbatim, ketama_count::python, 3, lookup_rule::after, true, false, true},
};

[[nodiscard]] inline auto ketama_rule_of(compat::ketama_dialect d) noexcept -> const ketama_rule& {
    return ketama_rules[static_cast<std::size_t>(d)];
}

/// Strings a server of weight w out of total gets among n servers.
[[nodiscard]] inline auto ketama_strings(ketama_count c, std::uint64_t w, std::uint64_t total, std::uint32_t n)
    -> std::uint32_t {
    switch (c) {
        case ketama_count::libmemcached: return compat::libmemcached_points(static_cast<std::uint32_t>(w), total, n) / 4U;
        case ketama_count::hundred: return 100;
        case ketama_count::libketama: return compat::libketama_digests(w, total, n);
        case ketama_count::python:  // Python 2's exact integer division: floor(40 * n * w / total)
            return static_cast<std::uint32_t>(div_floor(mul_wide(40U * std::uint64_t{n}, w), total));
    }
    return 0;
}

}  // namespace detail

namespace compat {

/// A ketama continuum's configuration: the client dialect.
struct ketama_config {
    ketama_dialect dialect = ketama_dialect::libmemcached_weighted;
};

/// A ketama continuum as a client builds it: the sorted-ring engine over 32-bit points, servers
/// kept in the order given (the server index). Node ids are the servers as the client names
/// them: libmemcached "host:port" ("[v6]:port"), libketama and hash_ring the address as given.
/// A server whose share rounds to no points is kept but never picked (so do the clients).
/// KeyHash hashes keys in locate() and, in libmemcached_unweighted only, the point strings too.
/// with(server) appends a server and without(id) removes one, recomputing every point count
/// (the clients' weights are shares of the total).
///
/// build() throws keyplace::error naming the value: no servers (empty_membership), an empty
/// address or host (empty_id), a bad address or port (invalid_address), weight 0, a weight other
/// than 1 in libmemcached_unweighted, above 2^32 - 1 for libmemcached, or a total above 2^64 - 1
/// (invalid_weight), two servers with one id (duplicate_id), a KeyHash other than md5_ketama for
/// libketama or Python hash_ring (invalid_argument). O(points log points).
template <hasher KeyHash>
class ketama_ring : public keyplace::detail::ring_strategy<ketama_ring<KeyHash>, std::uint32_t, KeyHash, ketama_server,
                                                           ketama_config, keyplace::detail::derivation::any,
                                                           keyplace::detail::node_order::as_given> {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, KeyHash>;  // detail/lazy.hpp

    friend keyplace::detail::lifecycle<ketama_ring, ketama_server, ketama_config, keyplace::detail::derivation::any,
                                       keyplace::detail::node_order::as_given>;

public:
    [[nodiscard]] auto dialect() const noexcept -> ketama_dialect { return this->config_.dialect; }
    /// Server i as given (its weight exactly, which the node's double may round).
    [[nodiscard]] auto member_of(std::size_t i) const -> ketama_server { return {this->nodes_[i].id, weights_[i]}; }

private:
    ketama_ring() = default;

    auto assign(std::span<const ketama_server> servers, const ketama_config& config) -> keyplace::detail::failure {
        using namespace keyplace::detail;
        if (static_cast<std::size_t>(config.dialect) >= std::size(ketama_rules)) {
            return fail(errc::invalid_argument,
                        "unknown ketama dialect " + std::to_string(static_cast<int>(config.dialect)));
        }
        const ketama_rule& rule = ketama_rule_of(config.dialect);
        if (rule.md5_keys && !std::is_same_v<KeyHash, md5_ketama>) {
            return fail(errc::invalid_argument, "this ketama dialect hashes keys with MD5: build ketama_ring<md5_ketama>");
        }
        if (servers.empty()) {
            return fail(errc::empty_membership, "the server list is empty");
        }
        if (servers.size() > std::numeric_limits<std::uint32_t>::max() / 160U) {
            return fail(errc::too_many_nodes, std::to_string(servers.size()) + " servers are too many for a continuum");
        }
        const bool memcached = rule.name != ketama_name::verbatim;
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < servers.size(); ++i) {
            const auto& s = servers[i];
            if (s.address.empty()) {
                return fail(errc::empty_id, "a server address is empty").at_node(i);
            }
            if (s.weight == 0) {
                return fail(errc::invalid_weight, "server " + quote(s.address) +
                                                      ": weight 0 (libmemcached stores 0 as 1: pass 1 to match it)")
                    .at_node(i);
            }
            if (memcached && s.weight > std::numeric_limits<std::uint32_t>::max()) {
                return fail(errc::invalid_weight, "server " + quote(s.address) + ": weight " + std::to_string(s.weight) +
                                                      " exceeds libmemcached's 32-bit weights")
                    .at_node(i);
            }
            if (rule.unit_weights && s.weight != 1) {
                return fail(errc::invalid_weight,
                            "server " + quote(s.address) + ": weight " + std::to_string(s.weight) +
                                " in the unweighted dialect (libmemcached switches to weighted for weights > 1)")
                    .at_node(i);
            }
            if (s.weight > std::numeric_limits<std::uint64_t>::max() - total) {
                return fail(errc::invalid_weight, "server " + quote(s.address) + ": the total weight overflows 64 bits")
                    .at_node(i);
            }
            total += s.weight;
        }
        const auto count = static_cast<std::uint32_t>(servers.size());
        lazy_vector<std::uint32_t> strings(servers.size());
        std::size_t total_points = 0;
        for (std::size_t i = 0; i < servers.size(); ++i) {
            strings[i] = ketama_strings(rule.count, servers[i].weight, total, count);
            total_points += std::size_t{strings[i]} * rule.points_per_string;
        }
        if (total_points > ring_max_points) {
            return too_many_points(total_points);  // before allocating them
        }
        lazy_vector<keyplace::node> nodes;
        lazy_vector<std::string> names;  // the string each server's points hash, before "-i"
        for (std::uint32_t index = 0; index < count; ++index) {
            const auto& s = servers[index];
            if (memcached) {
                ketama_host_port hp;
                if (auto f = ketama_split_address(s.address, hp)) {
                    return std::move(f).at_node(index);
                }
                const std::string host(hp.host);
                const std::string port = std::to_string(hp.port);
                const bool v6 = host.find(':') != std::string::npos;
                nodes.push_back(keyplace::node{(v6 ? "[" + host + "]" : host) + ":" + port, static_cast<double>(s.weight), s.where});
                names.push_back(rule.name == ketama_name::slash_host_port     ? "/" + host + ":" + port
                                : hp.port == compat::memcached_default_port ? host
                                                                              : host + ":" + port);
            } else {
                nodes.push_back(keyplace::node{s.address, static_cast<double>(s.weight), s.where});
                names.push_back(s.address);
            }
        }
        lazy_vector<keyplace::node> sorted;  // validates ids only: the ring keeps server order
        if (auto f = sorted_membership(nodes, sorted)) {
            return f;  // its node is the server's index: nodes lists the servers in order
        }
        const auto generate = [&](std::span<std::uint32_t> points, std::span<node_index> owners) {
            std::size_t at = 0;
            std::string name;
            for (std::uint32_t index = 0; index < count; ++index) {
                name = names[index];
                const std::size_t stem = name.size();
                for (std::uint32_t i = 0; i < strings[index]; ++i) {
                    name.resize(stem);
                    name += '-';
                    name += std::to_string(i);
                    if (rule.points_per_string == 1) {
                        points[at] = static_cast<std::uint32_t>(KeyHash{}(std::string_view(name)));
                        owners[at++] = node_index{index};
                    } else {
                        const auto digest = md5_digest(std::string_view(name));
                        for (std::size_t w = 0; w < rule.points_per_string; ++w) {
                            points[at] = md5_le32(digest, w);
                            owners[at++] = node_index{index};
                        }
                    }
                }
            }
        };
        // Python hash_ring's dict: every point of a run of equal points goes to the run's last
        // server (the points are sorted by (point, server) here).
        const auto settle = [&rule](std::span<const std::uint32_t> points, std::span<node_index> owners) {
            if (!rule.last_writer_wins) {
                return;
            }
            for (std::size_t end = points.size(); end > 0;) {
                std::size_t start = end - 1;
                while (start > 0 && points[start - 1] == points[end - 1]) {
                    --start;
                }
                for (std::size_t i = start; i + 1 < end; ++i) {
                    owners[i] = owners[end - 1];
                }
                end = start;
            }
        };
        if (auto f = this->engine_.assign_generated(total_points, nodes.size(), rule.lookup, generate, settle)) {
            return f;
        }
        this->nodes_ = std::move(nodes);
        this->config_ = config;
        weights_.resize(servers.size());
        for (std::size_t i = 0; i < servers.size(); ++i) {
            weights_[i] = servers[i].weight;
        }
        return {};
    }

    lazy_vector<std::uint64_t> weights_;
};

/// The MD5-keyed continuum: libmemcached weighted and spy, libketama, Python hash_ring, and
/// unweighted with HASH=MD5.
using ketama = ketama_ring<md5_ketama>;
/// libmemcached's unweighted continuum with its default key hash (on signed-char platforms).
using ketama_one_at_a_time = ketama_ring<one_at_a_time>;

/// The continuum of servers (in order: the server index) under a dialect:
/// ketama_ring<KeyHash>::build(servers, {dialect}).
template <hasher KeyHash = md5_ketama>
[[nodiscard]] auto build_ketama(ketama_dialect dialect, std::span<const ketama_server> servers)
    -> ketama_ring<KeyHash> {
    return ketama_ring<KeyHash>::build(servers, ketama_config{dialect});
}

/// build_ketama(dialect, {{"10.0.1.1:11211", 600}, ...}).
template <hasher KeyHash = md5_ketama>
[[nodiscard]] auto build_ketama(ketama_dialect dialect, std::initializer_list<ketama_server> servers)
    -> ketama_ring<KeyHash> {
    return build_ketama<KeyHash>(dialect, std::span<const ketama_server>(servers.begin(), servers.size()));
}

/// As build_ketama(), reporting failure through err (and an empty optional) instead of throwing.
template <hasher KeyHash = md5_ketama>
[[nodiscard]] auto try_build_ketama(ketama_dialect dialect, std::span<const ketama_server> servers,
                                    error_info& err) -> std::optional<ketama_ring<KeyHash>> {
    return ketama_ring<KeyHash>::try_build(servers, ketama_config{dialect}, err);
}
template <hasher KeyHash = md5_ketama>
[[nodiscard]] auto try_build_ketama(ketama_dialect dialect, std::initializer_list<ketama_server> servers,
                                    error_info& err) -> std::optional<ketama_ring<KeyHash>> {
    return try_build_ketama<KeyHash>(dialect, std::span<const ketama_server>(servers.begin(), servers.size()), err);
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
