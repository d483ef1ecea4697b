// keyplace — which node owns a key. The strategy table: one row per strategy a snapshot can
// hold, with its name, its parameters (kind, default, range, meaning), the per-node data it
// takes, whether node order is part of the function, how it derives, how its built state enters
// the fingerprint, and whether it has a preference order. It includes no strategy: the document
// reader, the snapshot builder and the tools read the same rows, and check_strategy() is the one
// place a strategy's name and parameters are validated.
#ifndef KEYPLACE_FLEET_STRATEGY_TABLE_HPP_INCLUDED
#define KEYPLACE_FLEET_STRATEGY_TABLE_HPP_INCLUDED

#include <keyplace/detail/engine/strategy_kinds.hpp>
#include <keyplace/error.hpp>
#include <keyplace/fleet/snapshot_description.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Which derivations a strategy offers (none: rebuild from new input; append_only: jump's
/// numbered buckets; any: with and without any node), and whether its nodes are sorted by id or
/// taken as given (node order is then part of the placement function).
using detail::derivation;
using detail::node_order;

/// A parameter is a whole number, one of some names, or a list of whole numbers (a history in
/// order; it defaults to the empty list).
enum class param_kind : std::uint8_t { number, name, numbers };

/// One parameter of a strategy.
struct strategy_parameter {
    std::string_view name;
    param_kind kind = param_kind::number;
    std::uint64_t number_default = 0;     ///< kind number
    std::string_view name_default{};      ///< kind name
    std::uint64_t min = 0;                ///< kind number: the range, inclusive (numbers: of each item)
    std::uint64_t max = 0;
    std::span<const std::string_view> names{};  ///< kind name: the names it takes
    /// Whether check_strategy() refuses a number outside min..max (as "<noun> <v> is outside
    /// <min>..<max>", code range_error). Otherwise the strategy checks it in its own words (the
    /// compatibility modes keep their reference system's messages) and min..max documents it.
    bool range_checked = false;
    errc range_error = errc::invalid_argument;
    std::string_view noun{};
    std::string_view meaning{};
    /// The letter the papers and doc/contract.md write it as (K probes, Q partitions, M a table's
    /// size): keyplace-cli's placeholder for its value.
    std::string_view symbol{};
    /// Whether the built state encodes it (fingerprint item 5: a bucket table's size and removed
    /// buckets), so that item 2 leaves it out and a table has one fingerprint however it is
    /// stated (capacity 0 or the count it stands for; a successor's removed stack).
    bool in_state = false;
    /// Whether the parameter is left out of a description at its default (fill_defaults neither
    /// adds it nor keeps it there, so the fingerprint does not see it): a parameter added after
    /// documents without it were written, whose default is what they meant.
    bool implicit_default = false;
    /// kind number with implicit_default: the value a new description states (keyplace-cli's
    /// default and what it writes), where number_default is what a description without it meant.
    std::uint64_t number_stated = 0;
    /// Whether the description's copies set it (its replication count, or spread): tools take it
    /// from their copies options (keyplace-cli's --replicas or --copies, and --spread), not as a
    /// strategy option of its own.
    bool from_copies = false;
};

/// The per-node data a strategy takes from a snapshot node, besides id, weight and location.
enum class node_data : std::uint8_t {
    none,
    tokens,      ///< Cassandra's signed 64-bit tokens
    slots,       ///< Redis Cluster slot ranges (none given: the even split)
    points,      ///< chosen unsigned 64-bit ring points
    partition_spans,  ///< "partitions": the spans of a partition table (none given: a fresh claim)
};

[[nodiscard]] constexpr auto to_string(node_data d) noexcept -> std::string_view {
    switch (d) {
        case node_data::none: return "none";
        case node_data::tokens: return "tokens";
        case node_data::slots: return "slots";
        case node_data::points: return "points";
        case node_data::partition_spans: return "partitions";
    }
    return "?";
}

/// How a built state enters the fingerprint (doc/contract.md, "Fingerprint"); the values are the
/// encoding's tag bytes.
enum class state_encoding : std::uint8_t {
    arcs = 1,             ///< points and their owners
    residues = 2,         ///< the owner of every residue of a table or modulus
    members = 3,          ///< the node list, with weights
    partition_table = 4,  ///< every rank of every partition
    // 5 tags the location block that follows a state (doc/contract.md, "Fingerprint").
    buckets = 6,          ///< numbered buckets: the table size, the removed ones in order, each working one's node
};

/// How a ramp (fleet/ramp.hpp) moves one node's share in steps.
enum class ramp_method : std::uint8_t {
    none,     ///< it cannot: no weights (or whole ones), nothing to reveal in steps
    weights,  ///< the node's weight, in steps
    points,   ///< a prefix of the node's given points (tokens), growing or shrinking
};

[[nodiscard]] constexpr auto to_string(ramp_method m) noexcept -> std::string_view {
    switch (m) {
        case ramp_method::none: return "none";
        case ramp_method::weights: return "weights";
        case ramp_method::points: return "points";
    }
    return "?";
}

/// One strategy a snapshot can hold.
struct strategy_row {
    std::string_view name;
    std::string_view summary;
    std::span<const strategy_parameter> params{};
    node_data per_node = node_data::none;
    node_order order = node_order::by_id;
    derivation derives = derivation::any;
    state_encoding encoding = state_encoding::arcs;
    /// Whether copies can be more than the owner (the strategy has a preference order).
    bool preference_order = true;
    /// Whether weights must be whole numbers (the ketama dialects: their point counts).
    bool whole_weights = false;
    /// Whether its placement contract promises minimal change: a join moves keys only to the
    /// joiner, a leave only the leaver's keys (strategy_table_test checks it for every row).
    bool minimal_change = false;
    /// Whether a key is placed by its bytes rather than by one 64-bit point (go-mpchash hashes
    /// them twice, with two seeds): a snapshot's owner, copies, probe digest, movement and plans
    /// then place keys, sample keys included, by their bytes (placement::by_key_bytes).
    bool by_key_bytes = false;
    /// How a ramp changes one node's share; with minimal_change, keys move only toward the
    /// ramped node or away from it, each at most once (an exact ramp), else the excess is measured.
    ramp_method ramps = ramp_method::none;

    /// The parameter of this name, or nullptr.
    [[nodiscard]] constexpr auto param(std::string_view n) const noexcept -> const strategy_parameter* {
        for (const auto& p : params) {
            if (p.name == n) {
                return &p;
            }
        }
        return nullptr;
    }
};

namespace detail::table {

inline constexpr std::string_view envoy_ring_hashes[] = {"xxh64", "murmur2-envoy"};
inline constexpr std::string_view ketama_unweighted_hashes[] = {"one-at-a-time", "md5-ketama"};
inline constexpr std::string_view spread_levels[] = {"node", "rack", "zone", "region"};

// The defaults equal the strategies' configuration defaults (snapshot.hpp asserts it).
inline constexpr strategy_parameter ring_params[] = {
    {.name = "vnodes", .number_default = 160, .min = 1, .max = std::uint64_t{1} << 28, .range_checked = true,
     .range_error = errc::invalid_vnodes, .noun = "vnodes", .meaning = "ring points per unit of weight", .symbol = "V"},
};
inline constexpr strategy_parameter maglev_params[] = {
    {.name = "table-size", .number_default = 65537, .min = 1, .max = 4294967291ULL, .noun = "table size",
     .meaning = "table entries: a prime, at least the node count", .symbol = "M"},
};
inline constexpr strategy_parameter envoy_ring_params[] = {
    {.name = "hash", .kind = param_kind::name, .name_default = "xxh64", .names = envoy_ring_hashes,
     .meaning = "the hash of the ring entries", .symbol = "H"},
    {.name = "max-ring-size", .number_default = 8388608, .min = 1, .max = 8388608, .noun = "maximum_ring_size",
     .meaning = "the most ring entries", .symbol = "N"},
    {.name = "min-ring-size", .number_default = 1024, .min = 1, .max = 8388608, .noun = "minimum_ring_size",
     .meaning = "the least ring entries", .symbol = "N"},
};
inline constexpr strategy_parameter envoy_maglev_params[] = {
    {.name = "table-size", .number_default = 65537, .min = 1, .max = 5000011, .noun = "maglev table size",
     .meaning = "table entries, a prime up to Envoy's limit", .symbol = "M"},
};
inline constexpr strategy_parameter ketama_unweighted_params[] = {
    {.name = "hash", .kind = param_kind::name, .name_default = "one-at-a-time", .names = ketama_unweighted_hashes,
     .meaning = "the key and point hash (libmemcached's MEMCACHED_BEHAVIOR_KETAMA_HASH)", .symbol = "H"},
};
inline constexpr strategy_parameter multiprobe_params[] = {
    {.name = "probes", .number_default = 21, .min = 1, .max = 1024, .range_checked = true, .noun = "probes",
     .meaning = "K, the probes per key", .symbol = "K"},
};
inline constexpr strategy_parameter anchor_params[] = {
    {.name = "capacity", .number_default = 0, .min = 0, .max = std::uint64_t{1} << 26, .range_checked = true,
     .range_error = errc::invalid_table_size, .noun = "anchor capacity",
     .meaning = "a, the buckets (0: the nodes that own keys now or after the transition)", .symbol = "A",
     .in_state = true},
    {.name = "removed", .kind = param_kind::numbers, .min = 0, .max = (std::uint64_t{1} << 26) - 1,
     .range_checked = true, .noun = "anchor removed bucket",
     .meaning = "the removed stack, bottom first (empty: the paper's initial a-1 down to N)", .in_state = true},
};
inline constexpr strategy_parameter memento_params[] = {
    {.name = "removed", .kind = param_kind::numbers, .min = 0, .max = 0x7ffffffeU, .range_checked = true,
     .noun = "memento removed bucket", .meaning = "the removed buckets in removal order", .in_state = true},
};
inline constexpr strategy_parameter partitions_params[] = {
    {.name = "partitions", .number_default = 1024, .min = 1, .max = std::uint64_t{1} << 20, .range_checked = true,
     .range_error = errc::invalid_partition_count, .noun = "partition count",
     .meaning = "Q, the partitions of the hash space: a power of two", .symbol = "Q"},
    {.name = "replicas", .number_default = 1, .min = 1, .max = 64, .range_checked = true,
     .range_error = errc::invalid_replica_count, .noun = "replica count",
     .meaning = "n, the replicas of every partition, at most the node count", .symbol = "N",
     .from_copies = true},
    {.name = "spread", .kind = param_kind::name, .name_default = "node", .names = spread_levels,
     .meaning = "the level a partition's replicas are kept apart at", .symbol = "LEVEL",
     .from_copies = true},
    // A document that states no contract was written by contract 1 (keyplace-cli writes 2).
    {.name = "contract", .number_default = 1, .min = 1, .max = 2, .range_checked = true, .noun = "contract",
     .meaning = "the claim rules: 1, the first release's; 2, domain limits as Swift's ring builder", .symbol = "C",
     .implicit_default = true, .number_stated = 2},
};

}  // namespace detail::table

/// Every strategy a snapshot can hold, in the order keyplace-cli lists them.
inline constexpr strategy_row strategy_table[] = {
    {.name = "ring", .summary = "a consistent hash ring (Karger et al.)", .params = detail::table::ring_params,
     .minimal_change = true, .ramps = ramp_method::weights},
    {.name = "rendezvous", .summary = "weighted rendezvous (highest random weight) hashing",
     .encoding = state_encoding::members, .minimal_change = true, .ramps = ramp_method::weights},
    {.name = "jump", .summary = "jump consistent hash (Lamping and Veach): buckets in the order given",
     .order = node_order::as_given, .derives = derivation::append_only, .encoding = state_encoding::members,
     .preference_order = false, .minimal_change = true},
    {.name = "jump-guava", .summary = "jump hash in Guava 31.1's arithmetic (Hashing.consistentHash)",
     .order = node_order::as_given, .derives = derivation::append_only, .encoding = state_encoding::members,
     .preference_order = false, .minimal_change = true},
    {.name = "jumpback", .summary = "JumpBackHash (Ertl) as hash4j 0.30.0 computes it: buckets in the order given",
     .order = node_order::as_given, .derives = derivation::append_only, .encoding = state_encoding::members,
     .preference_order = false, .minimal_change = true},
    {.name = "maglev", .summary = "a Maglev lookup table (Eisenbud et al.)", .params = detail::table::maglev_params,
     .encoding = state_encoding::residues, .ramps = ramp_method::weights},
    {.name = "modulo", .summary = "hash mod N, the baseline", .encoding = state_encoding::residues,
     .preference_order = false},
    {.name = "envoy-ring", .summary = "Envoy's RING_HASH load balancer", .params = detail::table::envoy_ring_params,
     .order = node_order::as_given},
    {.name = "envoy-maglev", .summary = "Envoy's MAGLEV load balancer", .params = detail::table::envoy_maglev_params,
     .encoding = state_encoding::residues},
    {.name = "ketama", .summary = "libmemcached KETAMA_WEIGHTED (pylibmc ketama_weighted, PHP memcached)",
     .order = node_order::as_given, .whole_weights = true},
    {.name = "ketama-spy", .summary = "libmemcached KETAMA_SPY: spymemcached's point strings",
     .order = node_order::as_given, .whole_weights = true},
    {.name = "ketama-unweighted", .summary = "libmemcached's unweighted ketama (MEMCACHED_BEHAVIOR_KETAMA)",
     .params = detail::table::ketama_unweighted_params, .order = node_order::as_given, .whole_weights = true},
    {.name = "libketama", .summary = "last.fm's libketama", .order = node_order::as_given, .whole_weights = true},
    {.name = "hash-ring", .summary = "Python's hash_ring package", .order = node_order::as_given,
     .whole_weights = true},
    {.name = "cassandra", .summary = "Cassandra's token ring (Murmur3Partitioner), each node's tokens given",
     .per_node = node_data::tokens, .order = node_order::as_given, .minimal_change = true,
     .ramps = ramp_method::points},
    {.name = "redis", .summary = "Redis Cluster's 16384 slots, each node's slot ranges given (or split evenly)",
     .per_node = node_data::slots, .derives = derivation::none, .encoding = state_encoding::residues,
     .preference_order = false},
    {.name = "tokens", .summary = "the native ring of chosen points (allocated tokens), each node's given",
     .per_node = node_data::points, .order = node_order::as_given, .derives = derivation::none, .minimal_change = true,
     .ramps = ramp_method::points},
    {.name = "multiprobe", .summary = "multi-probe consistent hashing (Appleton and O'Reilly), weight 1",
     .params = detail::table::multiprobe_params, .encoding = state_encoding::members, .minimal_change = true},
    {.name = "mpchash", .summary = "go-mpchash (SipHash-2-4): buckets in the order given, weight 1",
     .params = detail::table::multiprobe_params, .order = node_order::as_given, .encoding = state_encoding::members,
     .minimal_change = true, .by_key_bytes = true},
    {.name = "partitions", .summary = "fixed partitions with minimal moves (Dynamo's strategy 3)",
     .params = detail::table::partitions_params, .per_node = node_data::partition_spans,
     .encoding = state_encoding::partition_table, .minimal_change = true},
    {.name = "anchor", .summary = "AnchorHash (Mendelson et al.) over a fixed capacity of buckets, weight 1",
     .params = detail::table::anchor_params, .order = node_order::as_given, .encoding = state_encoding::buckets,
     .preference_order = false, .minimal_change = true},
    {.name = "memento", .summary = "MementoHash (Coluzzi et al.): jump plus a memento of removed buckets, weight 1",
     .params = detail::table::memento_params, .order = node_order::as_given, .encoding = state_encoding::buckets,
     .preference_order = false, .minimal_change = true},
};

/// The row of a strategy name, or nullptr.
[[nodiscard]] constexpr auto find_strategy(std::string_view name) noexcept -> const strategy_row* {
    for (const auto& row : strategy_table) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

/// The names of the strategies a snapshot can hold, comma-separated.
[[nodiscard]] inline auto strategy_table_names() -> std::string {
    std::string out;
    for (const auto& row : strategy_table) {
        out += (out.empty() ? "" : ", ") + std::string(row.name);
    }
    return out;
}

/// Checks a strategy's name, contract and parameters against the table: the one check of a
/// strategy, for documents and for descriptions built in C++. Parameters left out take their
/// defaults (fill_defaults). Fails with unknown_strategy (an unknown name, contract or
/// parameter, a parameter of the wrong kind or not among its names) or a parameter's
/// range_error; where() names the field ("strategy.name", "strategy.params.vnodes").
[[nodiscard]] inline auto check_strategy(const strategy_spec& spec) -> error_info {
    const auto* row = find_strategy(spec.name);
    if (row == nullptr) {
        return error_info(fleet_errc::unknown_strategy,
                          "strategy " + detail::quote(spec.name) + " is not one of " + strategy_table_names())
            .at("strategy.name");
    }
    if (spec.contract != KEYPLACE_CONTRACT_VERSION) {
        return error_info(fleet_errc::unknown_strategy, "strategy " + detail::quote(spec.name) + " at contract " +
                                                      std::to_string(spec.contract) + ": this library implements " +
                                                      std::to_string(KEYPLACE_CONTRACT_VERSION))
            .at("strategy.contract");
    }
    for (const auto& [name, value] : spec.params) {
        const auto* p = row->param(name);
        const std::string where = detail::path_key("strategy.params", name);
        if (p == nullptr) {
            std::string takes;
            for (const auto& q : row->params) {
                takes += (takes.empty() ? "" : ", ") + std::string(q.name);
            }
            return error_info(fleet_errc::unknown_strategy,
                              "strategy " + detail::quote(spec.name) + " has no parameter " + detail::quote(name) +
                                  " (" + (takes.empty() ? std::string("it takes none") : "it takes " + takes) + ")")
                .at(where);
        }
        const auto given = static_cast<param_kind>(value.index());  // the variant's order is the kinds'
        static constexpr std::string_view kind_names[] = {"a number", "a name", "a list of numbers"};
        const std::string of = "parameter " + detail::quote(name) + " of " + detail::quote(spec.name) + ": ";
        if (given != p->kind) {
            const std::string shown = given == param_kind::number ? std::to_string(std::get<std::uint64_t>(value))
                                      : given == param_kind::name ? detail::quote(std::get<std::string>(value))
                                                                  : std::string("a list");
            return error_info(fleet_errc::unknown_strategy,
                              of + shown + " is not " + std::string(kind_names[static_cast<std::size_t>(p->kind)]))
                .at(where);
        }
        const auto in_range = [&](std::uint64_t v, const std::string& at) -> error_info {
            if (p->range_checked && (v < p->min || v > p->max)) {
                if (p->name == "contract") {  // a strategy's own contract: say which it implements
                    return error_info(p->range_error, std::string(spec.name) + " implements contract " +
                                                          std::to_string(p->min) + " to " + std::to_string(p->max) +
                                                          ", not " + std::to_string(v))
                        .at(at);
                }
                return error_info(p->range_error, std::string(p->noun) + " " + std::to_string(v) + " is outside " +
                                                      std::to_string(p->min) + ".." + std::to_string(p->max))
                    .at(at);
            }
            return {};
        };
        if (given == param_kind::number) {
            if (auto e = in_range(std::get<std::uint64_t>(value), where)) {
                return e;
            }
        } else if (given == param_kind::numbers) {
            const auto& items = std::get<std::vector<std::uint64_t>>(value);
            for (std::size_t i = 0; i < items.size(); ++i) {
                if (auto e = in_range(items[i], where + "[" + std::to_string(i) + "]")) {
                    return e;
                }
            }
        } else {
            const std::string shown = detail::quote(std::get<std::string>(value));
            std::string known;
            bool ok = false;
            for (const auto n : p->names) {
                ok = ok || n == std::get<std::string>(value);
                known += (known.empty() ? "" : ", ") + std::string(n);
            }
            if (!ok) {
                return error_info(fleet_errc::unknown_strategy, of + shown + " is not one of " + known).at(where);
            }
        }
    }
    return {};
}

/// Adds every parameter spec leaves out, with its default, and removes an implicit_default
/// parameter stated at its default (spec must pass check_strategy).
inline void fill_defaults(strategy_spec& spec) {
    if (const auto* row = find_strategy(spec.name)) {
        for (const auto& p : row->params) {
            if (p.implicit_default) {
                const auto at = spec.params.find(p.name);
                if (at != spec.params.end() && at->second == strategy_param{p.number_default}) {
                    spec.params.erase(at);
                }
                continue;
            }
            switch (p.kind) {
                case param_kind::number: spec.params.try_emplace(std::string(p.name), p.number_default); break;
                case param_kind::name: spec.params.try_emplace(std::string(p.name), std::string(p.name_default)); break;
                case param_kind::numbers: spec.params.try_emplace(std::string(p.name), std::vector<std::uint64_t>{}); break;
            }
        }
    }
}

/// Checks a node's per-node data against a strategy: tokens, slots, points and partitions only
/// where the row takes them, and whole weights where it needs them. index is the node's place
/// in the description, for where() ("nodes[3].tokens").
[[nodiscard]] inline auto check_node_data(const strategy_row& row, const snapshot_node& n, std::size_t index)
    -> error_info {
    const auto given = [&](node_data d) {
        switch (d) {
            case node_data::tokens: return !n.tokens.empty();
            case node_data::slots: return !n.slots.empty();
            case node_data::points: return !n.points.empty();
            case node_data::partition_spans: return !n.partitions.empty();
            case node_data::none: break;
        }
        return false;
    };
    for (const auto d : {node_data::tokens, node_data::slots, node_data::points, node_data::partition_spans}) {
        if (d != row.per_node && given(d)) {
            std::string takers;
            for (const auto& r : strategy_table) {
                if (r.per_node == d) {
                    takers += (takers.empty() ? "" : ", ") + detail::quote(r.name);
                }
            }
            return error_info(errc::invalid_argument, "node " + detail::quote(n.id) + ": " +
                                                          std::string(to_string(d)) + " apply only to strategy " +
                                                          takers)
                .at_node(index, to_string(d));
        }
    }
    if (row.whole_weights &&
        (!(n.weight >= 1.0 && n.weight <= 9007199254740992.0) ||
         static_cast<double>(static_cast<std::uint64_t>(n.weight)) != n.weight)) {
        return error_info(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " + detail::format_weight(n.weight) +
                                                    " is not a whole number from 1 to 2^53 (ketama weights are integers)")
            .at_node(index, "weight");
    }
    return {};
}

KEYPLACE_NAMESPACE_END

#endif
