// keyplace — which node owns a key. What a snapshot is built from: the snapshot description
// (format, cluster, epochs, the strategy by name with its parameters, the nodes with their states
// and per-node data, replication, metadata, overrides, stated digests) and its small vocabulary.
// It includes no strategy: a document can be read, checked and written against it alone.
#ifndef KEYPLACE_FLEET_SNAPSHOT_DESCRIPTION_HPP_INCLUDED
#define KEYPLACE_FLEET_SNAPSHOT_DESCRIPTION_HPP_INCLUDED

#include <keyplace/failure_domain.hpp>
#include <keyplace/error.hpp>
#include <keyplace/fleet/errors.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The format a snapshot document declares: "keyplace.snapshot/<major>" (or "/<major>.<minor>");
/// this library reads major 1 and writes exactly this string.
inline constexpr std::string_view snapshot_format = "keyplace.snapshot/1";

/// A 128-bit digest (XXH3-128). hex() is the 32 hex digits xxhsum -H2 prints: the high half
/// first, each half big-endian.
struct digest128 {
    std::uint64_t high = 0;
    std::uint64_t low = 0;

    [[nodiscard]] auto hex() const -> std::string {
        constexpr char digits[] = "0123456789abcdef";
        std::string out(32, '0');
        for (int i = 0; i < 16; ++i) {
            out[static_cast<std::size_t>(15 - i)] = digits[(high >> (4 * i)) & 0xfU];
            out[static_cast<std::size_t>(31 - i)] = digits[(low >> (4 * i)) & 0xfU];
        }
        return out;
    }
    /// Parses exactly 32 hex digits (either case).
    [[nodiscard]] static auto from_hex(std::string_view s) noexcept -> std::optional<digest128> {
        if (s.size() != 32) {
            return std::nullopt;
        }
        digest128 d;
        for (std::size_t i = 0; i < 32; ++i) {
            const char c = s[i];
            std::uint64_t v = 0;
            if (c >= '0' && c <= '9') {
                v = static_cast<std::uint64_t>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v = static_cast<std::uint64_t>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                v = static_cast<std::uint64_t>(c - 'A' + 10);
            } else {
                return std::nullopt;
            }
            std::uint64_t& half = i < 16 ? d.high : d.low;
            half = (half << 4) | v;
        }
        return d;
    }

    friend auto operator==(const digest128&, const digest128&) -> bool = default;
};

/// Where a node is in its life. Placement now uses active, leaving and read-only nodes;
/// placement after the transition uses active and joining nodes; a left node is a tombstone
/// that owns nothing.
enum class node_state : std::uint8_t {
    joining,    ///< owns nothing yet: the destination of the ranges it will own
    active,     ///< owns keys now and after
    leaving,    ///< still owns keys; its ranges are being handed off
    left,       ///< a tombstone: owns nothing, and its id may not return as another node
    read_only,  ///< serves reads of the keys it holds; takes no new value, only invalidations (draining)
};

[[nodiscard]] constexpr auto to_string(node_state s) noexcept -> std::string_view {
    switch (s) {
        case node_state::joining: return "joining";
        case node_state::active: return "active";
        case node_state::leaving: return "leaving";
        case node_state::left: return "left";
        case node_state::read_only: return "read_only";
    }
    return "?";
}

/// Every state, in the order documents and messages list them.
inline constexpr node_state node_states[] = {node_state::joining, node_state::active, node_state::leaving,
                                             node_state::read_only, node_state::left};
/// The states as a message lists them: "joining, active, leaving, read_only or left".
inline constexpr std::string_view node_state_names = "joining, active, leaving, read_only or left";

/// Parses a state's name (to_string).
[[nodiscard]] constexpr auto parse_node_state(std::string_view s) noexcept -> std::optional<node_state> {
    for (const auto state : node_states) {
        if (to_string(state) == s) {
            return state;
        }
    }
    return std::nullopt;
}

/// Whether a value is one of the states (a description built in code may hold any byte).
[[nodiscard]] constexpr auto is_node_state(node_state s) noexcept -> bool {
    return static_cast<unsigned>(s) <= static_cast<unsigned>(node_state::read_only);
}

/// Whether a node in this state owns keys now, and after the transition. A read-only node owns
/// keys now (reads find what it holds) and none after, as a leaving one does; unlike a leaving
/// one it takes no new values (takes_values).
[[nodiscard]] constexpr auto owns_now(node_state s) noexcept -> bool {
    return s == node_state::active || s == node_state::leaving || s == node_state::read_only;
}
/// Whether a node in this state stores the values written to it (a read-only one only drops them).
[[nodiscard]] constexpr auto takes_values(node_state s) noexcept -> bool {
    return s == node_state::active || s == node_state::leaving || s == node_state::joining;
}
[[nodiscard]] constexpr auto owns_after(node_state s) noexcept -> bool {
    return s == node_state::active || s == node_state::joining;
}

/// An inclusive range of Redis Cluster slots.
struct slot_span {
    std::uint16_t first = 0;
    std::uint16_t last = 0;

    friend auto operator==(const slot_span&, const slot_span&) -> bool = default;
};

/// Partitions first..last held at one rank (0: the owner) of a partition table (strategy
/// "partitions").
struct partition_span {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    std::uint32_t rank = 0;

    friend auto operator==(const partition_span&, const partition_span&) -> bool = default;
};

/// A node of a snapshot. id is what placement hashes; address is where to connect, never
/// hashed (it may change without moving a key). tokens are a Cassandra node's tokens, slots a
/// Redis node's slot ranges; the other strategies take neither.
struct snapshot_node {
    std::string id;
    std::string address{};
    double weight = 1.0;
    location where{};
    node_state state = node_state::active;
    std::vector<std::int64_t> tokens{};
    std::vector<slot_span> slots{};
    std::vector<partition_span> partitions{};
    /// The chosen 64-bit tokens of strategy "tokens" (the native ring of chosen points).
    std::vector<std::uint64_t> points{};

    friend auto operator==(const snapshot_node&, const snapshot_node&) -> bool = default;
};

/// A strategy parameter: a whole number, a name, or a list of whole numbers (a history, such as
/// AnchorHash's removed stack, in order).
using strategy_param = std::variant<std::uint64_t, std::string, std::vector<std::uint64_t>>;

/// The placement function: a strategy name (as keyplace-cli names it), the contract version it
/// implements, and every parameter that changes placement. A snapshot lists every parameter;
/// a description may omit one to take its default.
struct strategy_spec {
    std::string name = "ring";
    std::uint32_t contract = KEYPLACE_CONTRACT_VERSION;
    std::map<std::string, strategy_param, std::less<>> params{};

    friend auto operator==(const strategy_spec&, const strategy_spec&) -> bool = default;
};

/// Copies per key (replica_placer over the strategy's preference order); count 0 = one owner.
struct replication_spec {
    std::size_t count = 0;
    failure_domain spread = failure_domain::node;
    /// Fewer domains than copies: refuse the snapshot, or place each key's copies best effort.
    /// Not in the fingerprint itself: where fail builds, relax places every copy the same way
    /// (the finer domain levels a relaxed placement reads are: doc/contract.md, "Fingerprint").
    shortfall on_shortfall = shortfall::fail;

    friend auto operator==(const replication_spec&, const replication_spec&) -> bool = default;
};

/// Operational fields: never part of placement or of a digest.
struct snapshot_metadata {
    std::uint64_t created_ms = 0;
    std::string author{};
    std::string reason{};

    friend auto operator==(const snapshot_metadata&, const snapshot_metadata&) -> bool = default;
};

/// An explicit owner for one key (the "shard map" entry of a celebrity key), consulted before the
/// strategy by every lookup that takes the key itself. node is the id of an active node.
struct key_override {
    std::string key;
    std::string node;

    friend auto operator==(const key_override&, const key_override&) -> bool = default;
};

/// Everything a snapshot is built from (what a document holds).
struct snapshot_description {
    std::string format{snapshot_format};
    std::string cluster;
    std::uint64_t epoch = 1;
    std::uint64_t parent_epoch = 0;
    strategy_spec strategy{};
    std::vector<snapshot_node> nodes{};
    replication_spec replication{};
    snapshot_metadata metadata{};
    /// The digests the document states: a build refuses a snapshot whose computed digest differs.
    std::optional<digest128> fingerprint{};
    std::optional<digest128> probe{};
    /// Keys placed on a named node whatever the strategy says (doc/snapshots.md, "Overrides"); a built
    /// snapshot lists them in bytewise order of key.
    std::vector<key_override> overrides{};

    friend auto operator==(const snapshot_description&, const snapshot_description&) -> bool = default;
};

/// The most copies per key a snapshot's replication may ask for.
inline constexpr std::size_t max_snapshot_copies = 64;
/// How many probe keys the probe digest looks up (doc/snapshots.md, "Snapshots").
inline constexpr std::size_t probe_key_count = 4096;
/// The most overrides a snapshot holds, and the longest key one may name, in bytes.
inline constexpr std::size_t max_overrides = 4096;
inline constexpr std::size_t max_override_key_length = 1024;

/// Probe key i: "keyplace.probe." followed by i in decimal.
[[nodiscard]] inline auto probe_key(std::size_t i) -> std::string { return "keyplace.probe." + std::to_string(i); }
/// Sample key i: what shadow compares and transfer plans count over when two snapshots' strategies
/// hash keys differently or one places a key by its bytes (i < analysis_sample_size; each
/// placement places it as it places keys).
[[nodiscard]] inline auto sample_key(std::size_t i) -> std::string { return "keyplace.sample." + std::to_string(i); }

namespace detail {

/// A JSON path step: ".key" (or "key" at the top), or "['odd key']" when the key is not a plain
/// name of at most 64 bytes (quote() cuts the others).
inline void append_key(std::string& path, std::string_view key) {
    const bool plain = !key.empty() && key.size() <= 64 && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
                                           std::string_view::npos;
    if (plain) {
        path += path.empty() ? "" : ".";
        path += key;
    } else {
        path += "[" + quote(key) + "]";
    }
}

/// The minor version of a format this library reads ("keyplace.snapshot/1": "0";
/// "keyplace.snapshot/1.<minor>", minor 1 to 9 decimal digits: minor), or nullopt.
inline auto snapshot_format_minor(std::string_view format) -> std::optional<std::string_view> {
    constexpr std::string_view prefix = "keyplace.snapshot/";
    if (format.substr(0, prefix.size()) != prefix) {
        return std::nullopt;
    }
    const std::string_view v = format.substr(prefix.size());
    const auto dot = v.find('.');
    const std::string_view minor = dot == std::string_view::npos ? std::string_view("0") : v.substr(dot + 1);
    const bool digits = !minor.empty() && minor.size() <= 9 &&
                        minor.find_first_not_of("0123456789") == std::string_view::npos;
    if (v.substr(0, dot) != "1" || !digits) {
        return std::nullopt;
    }
    return minor;
}

/// prefix followed by one key step, as a document path.
inline auto path_key(std::string prefix, std::string_view key) -> std::string {
    append_key(prefix, key);
    return prefix;
}

/// The first item of a list, in its order, whose key an earlier item has, and that earlier one:
/// {later, first}, or nothing. order becomes the indices sorted by key (equal keys by index).
template <class Key>
[[nodiscard]] auto first_repeat(std::size_t count, Key&& key, std::vector<std::uint32_t>& order)
    -> std::optional<std::pair<std::size_t, std::size_t>> {
    order.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return key(a) != key(b) ? key(a) < key(b) : a < b; });
    std::optional<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t k = 1; k < count; ++k) {
        const std::uint32_t b = order[k];
        // b is the second of its key's run: the run's first is order[k - 1].
        if (key(order[k - 1]) == key(b) && (k < 2 || key(order[k - 2]) != key(b)) && (!out || b < out->first)) {
            out.emplace(b, order[k - 1]);
        }
    }
    return out;
}

/// The one check that a description's node ids are unique (whatever the state: a tombstone keeps
/// its id), for the document reader and the snapshot builder: order becomes the node indices in
/// id order. The first node, in the description's order, whose id an earlier node has is where
/// the error is (duplicate_id, "nodes[i].id").
[[nodiscard]] inline auto check_unique_ids(std::span<const snapshot_node> nodes, std::vector<std::uint32_t>& order)
    -> failure {
    const auto repeat = first_repeat(nodes.size(), [&](std::size_t i) -> const std::string& { return nodes[i].id; }, order);
    if (!repeat) {
        return {};
    }
    return fail(errc::duplicate_id, "node id " + quote(nodes[repeat->first].id) + " is also the id of nodes[" +
                                        std::to_string(repeat->second) + "]")
        .at_node(repeat->first, "id");
}

/// The one check that override keys are unique, for the reader and the builder: the first
/// override, in order, whose key an earlier one has (invalid_override, "overrides[i].key").
[[nodiscard]] inline auto check_unique_override_keys(std::span<const key_override> list) -> failure {
    std::vector<std::uint32_t> order;
    const auto repeat = first_repeat(list.size(), [&](std::size_t i) -> const std::string& { return list[i].key; }, order);
    if (!repeat) {
        return {};
    }
    return fail(fleet_errc::invalid_override, "override key " + quote(list[repeat->first].key) +
                                            " is also the key of overrides[" + std::to_string(repeat->second) + "]")
        .at("overrides[" + std::to_string(repeat->first) + "].key");
}

/// The one check of a description's header, for the document reader and the snapshot builder:
/// a format this library reads, a cluster name in the grammar, epoch 1 and up, parent_epoch
/// below epoch (invalid_document; where() names the field).
[[nodiscard]] inline auto check_header(const snapshot_description& d) -> failure {
    if (!snapshot_format_minor(d.format)) {
        return fail(fleet_errc::invalid_document,
                    "format " + quote(d.format) + " is not one this library reads (" + std::string(snapshot_format) + ")")
            .at("format");
    }
    if (auto bad = check_name(name_kind::cluster, d.cluster)) {
        return fail(fleet_errc::invalid_document, bad.message()).at("cluster");
    }
    if (d.epoch == 0) {
        // successor() of the last epoch: epoch + 1 wrapped to 0.
        return fail(fleet_errc::invalid_document, d.parent_epoch == std::numeric_limits<std::uint64_t>::max()
                                                ? "epoch 0 after parent_epoch " + std::to_string(d.parent_epoch) +
                                                      ": the epoch would overflow (2^64-1 is the last)"
                                                : std::string("epoch 0: epochs start at 1"))
            .at("epoch");
    }
    if (d.parent_epoch >= d.epoch) {
        return fail(fleet_errc::invalid_document,
                    "parent_epoch " + std::to_string(d.parent_epoch) + " is not below epoch " + std::to_string(d.epoch))
            .at("parent_epoch");
    }
    return {};
}

/// The strategy member a snapshot node becomes.
inline auto as_node(const snapshot_node& n) -> node { return node{n.id, n.weight, n.where}; }

}  // namespace detail

KEYPLACE_NAMESPACE_END

#endif
