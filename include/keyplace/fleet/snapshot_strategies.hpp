// keyplace — which node owns a key. The strategies a snapshot holds: each row of the strategy
// table bound to the engine types it builds and to how it builds them from a description.
// snapshot.hpp derives from this list its strategy variant, its build dispatch and the check
// that every row states its engine; a strategy enters snapshots with a row (strategy_table.hpp)
// and a binding here.
#ifndef KEYPLACE_FLEET_SNAPSHOT_STRATEGIES_HPP_INCLUDED
#define KEYPLACE_FLEET_SNAPSHOT_STRATEGIES_HPP_INCLUDED

#include <keyplace/anchor.hpp>
#include <keyplace/config.hpp>
#include <keyplace/error.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/jumpback.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/modulo.hpp>
#include <keyplace/multiprobe.hpp>
#include <keyplace/node.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/ring.hpp>
#include <keyplace/fleet/snapshot_description.hpp>
#include <keyplace/fleet/strategy_table.hpp>
#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/mpchash.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/compat/redis.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

namespace detail::bind {

template <class... T>
struct types {};

/// A string as a template argument: a binding's name.
template <std::size_t N>
struct fixed_string {
    char text[N]{};
    constexpr fixed_string(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT: implicit, for "name"
    [[nodiscard]] constexpr auto view() const -> std::string_view { return {text, N - 1}; }
};

/// What a binding builds from: the description, the strategy's nodes (members[i] is the index in
/// d.nodes of plain[i]) and, when it builds the placement after a transition, the strategy now.
template <class Variant>
struct build_input {
    const snapshot_description& d;
    const std::vector<std::uint32_t>& members;
    const std::vector<node>& plain;
    const Variant* from = nullptr;

    /// A parameter's value (check_strategy and fill_defaults have checked and filled it).
    [[nodiscard]] auto number(std::string_view n) const -> std::uint64_t {
        return std::get<std::uint64_t>(d.strategy.params.find(n)->second);
    }
    [[nodiscard]] auto name(std::string_view n) const -> const std::string& {
        return std::get<std::string>(d.strategy.params.find(n)->second);
    }
    [[nodiscard]] auto numbers(std::string_view n) const -> const std::vector<std::uint64_t>& {
        return std::get<std::vector<std::uint64_t>>(d.strategy.params.find(n)->second);
    }
    /// The strategy now, as an S (the placement after a transition derives from it).
    template <class S>
    [[nodiscard]] auto previous() const -> const S* {
        return from == nullptr ? nullptr : &std::get<S>(*from);
    }
};

/// A strategy build's refusal, located in the description: the node it names (plain[i] is
/// members[i]), the parameter of the configuration field it names (anchor's, memento's and
/// partitions' fields are named as their parameters), else `otherwise`.
[[nodiscard]] inline auto engine_failure(failure f, const std::vector<std::uint32_t>& members,
                                         std::string_view otherwise) -> failure {
    if (f.node() && *f.node() < members.size()) {
        return error_access::renumbered(std::move(f), members[*f.node()]);
    }
    if (!f.where().empty()) {
        std::string field = "strategy.params." + f.where();
        return std::move(f).at(std::move(field));
    }
    return std::move(f).at(std::string(otherwise));
}

/// out holds what a try_build gave, or the refusal is located (engine_failure).
template <class Variant, class S>
auto take(const build_input<Variant>& in, std::optional<Variant>& out, std::optional<S>&& built, error_info&& err,
          std::string_view otherwise = "nodes") -> failure {
    if (!built) {
        return engine_failure(std::move(err), in.members, otherwise);
    }
    out.emplace(std::move(*built));
    return {};
}

// ---- the bindings: name (a row of strategy_table), types (what build can give), build ----------

struct ring_binding {
    static constexpr std::string_view name = "ring";
    using built = types<ring>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        constexpr std::string_view at = "strategy.params.vnodes";
        if (in.number("vnodes") > 0xffffffffU) {  // wider than the config's field
            return fail(errc::invalid_vnodes, "vnodes " + std::to_string(in.number("vnodes")) + " is outside 1.." +
                                                  std::to_string(ring_max_points))
                .at(std::string(at));
        }
        error_info err;
        auto s = ring::try_build(in.plain, ring_config{static_cast<std::uint32_t>(in.number("vnodes"))}, err);
        return take(in, out, std::move(s), std::move(err), at);
    }
};

/// A strategy built from its nodes alone.
template <class S, fixed_string Name>
struct plain_binding {
    static constexpr std::string_view name = Name.view();
    using built = types<S>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        auto s = S::try_build(in.plain, err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct maglev_binding {
    static constexpr std::string_view name = "maglev";
    using built = types<maglev>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        auto s = maglev::try_build(in.plain, maglev_config{in.number("table-size")}, err);
        return take(in, out, std::move(s), std::move(err), "strategy.params.table-size");
    }
};

struct multiprobe_binding {
    static constexpr std::string_view name = "multiprobe";
    using built = types<multiprobe>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        auto s = multiprobe::try_build(in.plain, multiprobe_config{static_cast<std::uint32_t>(in.number("probes"))}, err);
        return take(in, out, std::move(s), std::move(err));
    }
};

/// go-mpchash: keys are placed by their bytes (strategy_row::by_key_bytes).
struct mpchash_binding {
    static constexpr std::string_view name = "mpchash";
    using built = types<compat::mpchash>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        auto s = compat::mpchash::try_build(in.plain, multiprobe_config{static_cast<std::uint32_t>(in.number("probes"))},
                                            err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct envoy_ring_binding {
    static constexpr std::string_view name = "envoy-ring";
    using built = types<compat::envoy_ring_hash>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        compat::envoy_ring_hash_config c;
        c.min_ring_size = in.number("min-ring-size");
        c.max_ring_size = in.number("max-ring-size");
        c.hash_function = in.name("hash") == "xxh64" ? compat::envoy_hash_function::xx_hash
                                                     : compat::envoy_hash_function::murmur_hash_2;
        error_info err;
        auto s = compat::envoy_ring_hash::try_build(in.plain, c, err);
        return take(in, out, std::move(s), std::move(err), "strategy.params");  // the ring sizes, together
    }
};

struct envoy_maglev_binding {
    static constexpr std::string_view name = "envoy-maglev";
    using built = types<compat::envoy_maglev>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        compat::envoy_maglev_config c;
        c.table_size = in.number("table-size");
        error_info err;
        auto s = compat::envoy_maglev::try_build(in.plain, c, err);
        return take(in, out, std::move(s), std::move(err), "strategy.params.table-size");
    }
};

/// A ketama dialect with the MD5 key hash (whole weights: check_node_data).
template <fixed_string Name, compat::ketama_dialect Dialect>
struct ketama_binding {
    static constexpr std::string_view name = Name.view();
    using built = types<compat::ketama_ring<compat::md5_ketama>>;
    template <class V>
    static auto servers(const build_input<V>& in) -> std::vector<compat::ketama_server> {
        std::vector<compat::ketama_server> out;
        for (const auto m : in.members) {
            out.push_back({in.d.nodes[m].id, static_cast<std::uint64_t>(in.d.nodes[m].weight), in.d.nodes[m].where});
        }
        return out;
    }
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        auto s = compat::try_build_ketama<compat::md5_ketama>(Dialect, servers(in), err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct ketama_unweighted_binding {
    static constexpr std::string_view name = "ketama-unweighted";
    using built = types<compat::ketama_ring<compat::one_at_a_time>, compat::ketama_ring<compat::md5_ketama>>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        using dialect = ketama_binding<"ketama", compat::ketama_dialect::libmemcached_unweighted>;
        error_info err;
        if (in.name("hash") == "one-at-a-time") {
            auto s = compat::try_build_ketama<compat::one_at_a_time>(compat::ketama_dialect::libmemcached_unweighted,
                                                                      dialect::servers(in), err);
            return take(in, out, std::move(s), std::move(err));
        }
        auto s = compat::try_build_ketama<compat::md5_ketama>(compat::ketama_dialect::libmemcached_unweighted,
                                                               dialect::servers(in), err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct cassandra_binding {
    static constexpr std::string_view name = "cassandra";
    using built = types<compat::cassandra_ring>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        std::vector<compat::cassandra_endpoint> eps;
        for (const auto m : in.members) {
            const auto& n = in.d.nodes[m];
            eps.push_back({n.id, n.tokens, n.where.region.empty() ? "datacenter1" : n.where.region,
                           n.where.rack.empty() ? "rack1" : n.where.rack, n.where.zone});
        }
        error_info err;
        auto s = compat::cassandra_ring::try_build(eps, err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct redis_binding {
    static constexpr std::string_view name = "redis";
    using built = types<compat::redis_cluster>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        std::vector<compat::slot_range> ranges;
        for (const auto m : in.members) {
            for (const auto& r : in.d.nodes[m].slots) {
                ranges.push_back({r.first, r.last, in.d.nodes[m].id});
            }
        }
        // No node lists a range: the even split.
        if (ranges.empty()) {
            if (auto f = compat::redis_even_ranges(in.plain, ranges)) {
                return engine_failure(std::move(f), in.members, "nodes");
            }
        }
        error_info err;
        auto s = compat::redis_cluster::try_build(in.plain, ranges, err);
        return take(in, out, std::move(s), std::move(err));
    }
};

struct tokens_binding {
    static constexpr std::string_view name = "tokens";
    using built = types<compat::point_ring<std::uint64_t, xxh3>>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        std::vector<ring_point<std::uint64_t>> points;
        for (std::size_t i = 0; i < in.members.size(); ++i) {
            for (const auto t : in.d.nodes[in.members[i]].points) {
                points.push_back({t, static_cast<std::uint32_t>(i)});
            }
        }
        error_info err;
        auto chosen = compat::point_ring<std::uint64_t, xxh3>::try_build(
            in.plain, compat::given_points<std::uint64_t>(std::move(points)), err);
        if (chosen && (err = compat::check_chosen_points(*chosen))) {
            chosen.reset();
        }
        return take(in, out, std::move(chosen), std::move(err));
    }
};

/// AnchorHash's or MementoHash's table now: the parameters' removed buckets (and AnchorHash's
/// capacity; 0 means the nodes that own keys now or after the transition), the working buckets
/// taken in ascending order by the nodes that own keys now, in document order. After a
/// transition: that table without each leaving (or read-only) node, then with each joining node (document
/// order), so only their keys move and a returning bucket is the last one removed.
template <class S, fixed_string Name>
struct buckets_binding {
    static constexpr std::string_view name = Name.view();
    using built = types<S>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        error_info err;
        if (const S* now = in.template previous<S>()) {
            // Removing or adding node i: what fails concerns node i.
            std::optional<S> next = *now;
            for (std::size_t i = 0; i < in.d.nodes.size(); ++i) {
                const auto& n = in.d.nodes[i];
                if (owns_now(n.state) && !owns_after(n.state) && !(next = next->try_without(n.id, err))) {
                    return std::move(err).at_node(i);
                }
            }
            for (std::size_t i = 0; i < in.d.nodes.size(); ++i) {
                const auto& n = in.d.nodes[i];
                if (n.state == node_state::joining && !(next = next->try_with(as_node(n), err))) {
                    return std::move(err).at_node(i);
                }
            }
            out.emplace(std::move(*next));
            return {};
        }
        typename S::config_type config;
        for (const auto b : in.numbers("removed")) {
            config.removed.push_back(static_cast<std::uint32_t>(b));  // within 32 bits: check_strategy
        }
        if constexpr (requires { config.capacity; }) {
            config.capacity = static_cast<std::uint32_t>(in.number("capacity"));
            if (config.capacity == 0) {
                config.capacity = static_cast<std::uint32_t>(std::count_if(
                    in.d.nodes.begin(), in.d.nodes.end(), [](const snapshot_node& n) { return n.state != node_state::left; }));
            }
        }
        auto table = S::try_build(in.plain, config, err);
        return take(in, out, std::move(table), std::move(err));
    }
};

/// The partition table: the one the nodes list (or a fresh claim when none lists any) for the
/// placement now; after a transition, that table transitioned() to the nodes owning keys after
/// it (one claim), so every process derives the same table.
struct partitions_binding {
    static constexpr std::string_view name = "partitions";
    using built = types<partitions>;
    template <class V>
    static auto build(const build_input<V>& in, std::optional<V>& out) -> failure {
        // Wider than the config's fields: refused here, in the library's words, before narrowing.
        if (in.number("partitions") > max_partitions) {
            return fail(errc::invalid_partition_count, "partition count " + std::to_string(in.number("partitions")) +
                                                           " is outside 1.." + std::to_string(max_partitions))
                .at("strategy.params.partitions");
        }
        if (in.number("replicas") > max_partition_replicas) {
            return fail(errc::invalid_replica_count, "replica count " + std::to_string(in.number("replicas")) +
                                                         " is outside 1.." + std::to_string(max_partition_replicas))
                .at("strategy.params.replicas");
        }
        partitions_config config;
        config.partitions = static_cast<std::uint32_t>(in.number("partitions"));
        config.replicas = static_cast<std::uint32_t>(in.number("replicas"));
        config.spread = *parse_failure_domain(in.name("spread"));
        // Not stated: contract 1 (a document written before contract 2; fill_defaults leaves it out).
        const auto& params = in.d.strategy.params;
        config.contract = params.find("contract") == params.end() ? 1U : static_cast<std::uint32_t>(in.number("contract"));
        error_info err;
        if (const partitions* now = in.template previous<partitions>()) {
            return take(in, out, now->try_transitioned(in.plain, err), std::move(err));
        }
        const bool listed = std::any_of(in.d.nodes.begin(), in.d.nodes.end(),
                                        [](const snapshot_node& n) { return !n.partitions.empty(); });
        if (!listed) {
            return take(in, out, partitions::try_build(in.plain, config, err), std::move(err));
        }
        return from_spans(in, out, config);
    }

private:
    template <class V>
    static auto from_spans(const build_input<V>& in, std::optional<V>& out, const partitions_config& config) -> failure {
        std::vector<node> sorted;
        if (auto f = sorted_membership(in.plain, sorted)) {
            return engine_failure(std::move(f), in.members, "nodes");
        }
        constexpr std::uint32_t unset = 0xffffffffU;
        const std::size_t slots = std::size_t{config.partitions} * config.replicas;
        std::vector<std::uint32_t> owner(slots, unset);
        for (std::size_t i = 0; i < in.d.nodes.size(); ++i) {
            const auto& n = in.d.nodes[i];
            if (n.partitions.empty()) {
                continue;
            }
            const std::size_t at = find_sorted(sorted, n.id);
            if (at == sorted.size()) {
                return fail(errc::invalid_partition_table, "node " + quote(n.id) + " is " +
                                                               std::string(to_string(n.state)) +
                                                               " and so holds no partition now")
                    .at_node(i, "partitions");
            }
            for (std::size_t k = 0; k < n.partitions.size(); ++k) {
                const auto& span = n.partitions[k];
                if (span.first > span.last || span.last >= config.partitions || span.rank >= config.replicas) {
                    return fail(errc::invalid_partition_table,
                                "node " + quote(n.id) + ": partitions " + std::to_string(span.first) + "-" +
                                    std::to_string(span.last) + " at rank " + std::to_string(span.rank) +
                                    " are not within 0-" + std::to_string(config.partitions - 1) + " at ranks 0-" +
                                    std::to_string(config.replicas - 1))
                        .at_node(i, "partitions[" + std::to_string(k) + "]");
                }
                // span.last < config.partitions <= 2^20 (checked above): q indexes on 32-bit targets too.
                for (auto q = static_cast<std::size_t>(span.first); q <= span.last; ++q) {
                    auto& o = owner[q * config.replicas + span.rank];
                    if (o != unset) {
                        return fail(errc::invalid_partition_table,
                                    "partition " + std::to_string(q) + " rank " + std::to_string(span.rank) +
                                        " is held by both " + quote(sorted[o].id) + " and " + quote(n.id))
                            .at_node(i, "partitions[" + std::to_string(k) + "]");
                    }
                    o = static_cast<std::uint32_t>(at);
                }
            }
        }
        std::vector<node_index> table(slots);
        for (std::size_t k = 0; k < slots; ++k) {
            if (owner[k] == unset) {
                return fail(errc::invalid_partition_table, "partition " + std::to_string(k / config.replicas) +
                                                               " rank " + std::to_string(k % config.replicas) +
                                                               " is held by no node")
                    .at("nodes");
            }
            table[k] = node_index{owner[k]};
        }
        error_info err;
        auto given = partitions::try_from_table(sorted, config, table, err);
        if (!given) {
            // Its input is sorted: its node is one in id order.
            return engine_failure(in_input_order(std::move(err), in.plain), in.members, "nodes");
        }
        // A table whose slot counts its own weights would change is not the placement the document
        // describes: a weight changed by hand, which only a claim from the old table applies
        // (successor(weights)). Owner counts are the contract-1 document's own (the digest vectors
        // list tables whose owners a claim would balance otherwise).
        if (const auto gap = given->off_quota(); gap && !gap->owners) {
            const auto& n = given->node(gap->node);
            const auto at = std::find_if(in.d.nodes.begin(), in.d.nodes.end(),
                                         [&](const snapshot_node& x) { return x.id == n.id; });
            return fail(errc::invalid_partition_table,
                        "node " + quote(n.id) + " holds " + std::to_string(gap->held) +
                            " partition slots where its weight " + format_weight(n.weight) + " gives it " +
                            std::to_string(gap->quota) +
                            ": a weight change moves partitions; derive the next epoch with the new weights")
                .at_node(static_cast<std::size_t>(at - in.d.nodes.begin()));
        }
        out.emplace(std::move(*given));
        return {};
    }
};

/// Every strategy a snapshot holds, in the strategy table's order (checked below).
using snapshot_strategies =
    types<ring_binding, plain_binding<rendezvous, "rendezvous">, plain_binding<jump, "jump">,
          plain_binding<jump_guava, "jump-guava">, plain_binding<jumpback, "jumpback">, maglev_binding,
          plain_binding<modulo, "modulo">, envoy_ring_binding, envoy_maglev_binding,
          ketama_binding<"ketama", compat::ketama_dialect::libmemcached_weighted>,
          ketama_binding<"ketama-spy", compat::ketama_dialect::libmemcached_spy>, ketama_unweighted_binding,
          ketama_binding<"libketama", compat::ketama_dialect::libketama>,
          ketama_binding<"hash-ring", compat::ketama_dialect::python_hash_ring>, cassandra_binding, redis_binding,
          tokens_binding, multiprobe_binding, mpchash_binding, partitions_binding, buckets_binding<anchor, "anchor">,
          buckets_binding<memento, "memento">>;

// ---- what snapshot.hpp derives from the list ------------------------------------------------

/// std::variant of the types in a list, each once, in order of first appearance.
template <class Variant, class List>
struct unique_into;
template <class... Done>
struct unique_into<std::variant<Done...>, types<>> {
    using type = std::variant<Done...>;
};
template <class... Done, class T, class... Rest>
struct unique_into<std::variant<Done...>, types<T, Rest...>> {
    using type = typename unique_into<
        std::conditional_t<(std::is_same_v<T, Done> || ...), std::variant<Done...>, std::variant<Done..., T>>,
        types<Rest...>>::type;
};

template <class... L>
struct concat;
template <>
struct concat<> {
    using type = types<>;
};
template <class... A>
struct concat<types<A...>> {
    using type = types<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<types<A...>, types<B...>, Rest...> {
    using type = typename concat<types<A..., B...>, Rest...>::type;
};

template <class List>
struct variant_of;
template <class... B>
struct variant_of<types<B...>> {
    using type = typename unique_into<std::variant<>, typename concat<typename B::built...>::type>::type;
};

/// Builds the strategy named name into out; false if no binding has that name.
template <class Variant, class... B>
auto build_named(types<B...>, std::string_view name, const build_input<Variant>& in, std::optional<Variant>& out,
                 failure& f) -> bool {
    return ((B::name == name && (f = B::build(in, out), true)) || ...);
}

/// Whether the list names the table's rows, one binding each, in the table's order.
template <class... B>
constexpr auto binds_every_row(types<B...>) -> bool {
    constexpr std::string_view names[] = {B::name...};
    if (std::size(names) != std::size(strategy_table)) {
        return false;
    }
    for (std::size_t i = 0; i < std::size(names); ++i) {
        if (names[i] != strategy_table[i].name) {
            return false;
        }
    }
    return true;
}
static_assert(binds_every_row(snapshot_strategies{}),
              "every strategy-table row has one binding in snapshot_strategies, in the table's order");

}  // namespace detail::bind

KEYPLACE_NAMESPACE_END

#endif  // KEYPLACE_FLEET_SNAPSHOT_STRATEGIES_HPP_INCLUDED
