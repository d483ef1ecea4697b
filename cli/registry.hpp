// keyplace-cli registry: one entry per hash function and per strategy, each a type with its
// name, one line of help, the options it takes and how to build it. Usage, help, option checks
// and dispatch are generated from the lists at the end of each section. The strategies are the
// rows of the library's strategy table: see "strategies" below.
#ifndef KEYPLACE_CLI_REGISTRY_HPP_INCLUDED
#define KEYPLACE_CLI_REGISTRY_HPP_INCLUDED

#include "args.hpp"
#include "output.hpp"
#include "spec.hpp"

#include <keyplace/keyplace.hpp>
#include <keyplace/anchor.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/token_allocation.hpp>
#include <keyplace/fleet/snapshot_strategies.hpp>
#include <keyplace/fleet/strategy_table.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace keyplace_cli {

/// The one option name for how many copies a key has, in every command (--copies). A strategy
/// with a replica rule of its own (cassandra) takes it in that rule's form; check_strategy_options
/// leaves it to the command for the others.
inline constexpr std::string_view copies_name = "copies";


// ---- lists of entries -------------------------------------------------------------------

/// A compile-time list of registry entries: types with static name and help.
template <class... E>
struct entry_list {};

template <class... E>
auto entry_names(entry_list<E...>) -> std::vector<std::string_view> {
    return {E::name...};
}

/// Calls f(std::type_identity<E>{}) for every entry E, in order.
template <class... E, class F>
void for_each_entry(entry_list<E...>, F&& f) {
    (f(std::type_identity<E>{}), ...);
}

/// f(std::type_identity<E>{}) for the index-th entry E (index < the list's size).
template <class... E, class F>
auto visit_entry(entry_list<E...>, std::size_t index, F&& f) {
    using result = std::common_type_t<decltype(f(std::type_identity<E>{}))...>;
    std::optional<result> out;
    std::size_t i = 0;
    (void)((i++ == index && (out.emplace(f(std::type_identity<E>{})), true)) || ...);
    return std::move(out).value();
}

/// --NAME X: an entry of List by its name; without spec.required, the first is the default.
/// A command's own choice (no owner) fails as "unknown NOUN 'x' (known: ...)", a strategy's
/// as "--NAME 'x' is not NOUN of OWNER (...)".
template <class List>
struct choice_option {
    using list = List;

    option_spec spec;
    std::string_view noun;
    std::string_view owner{};

    [[nodiscard]] auto parse(std::string_view v) const -> std::size_t {
        const auto names = entry_names(List{});
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == v) {
                return i;
            }
        }
        if (owner.empty()) {
            // A likely typo names what was meant; otherwise every name.
            const auto meant = did_you_mean(v, names);
            usage_error("unknown " + std::string(noun) + " " + quote(v) +
                        (meant.empty() ? " (known: " + join(names, ", ", ", ") + ")" : meant));
        }
        usage_error("--" + std::string(spec.name) + " " + quote(v) + " is not " + std::string(noun) + " of " +
                    std::string(owner) + " (" + join(names, ", ", ", ") + ")");
    }
    /// The index of the entry given, or of the default.
    [[nodiscard]] auto get(const parsed_args& a) const -> std::size_t {
        const auto v = a.get(spec);
        return v ? parse(*v) : 0;
    }
    /// f(std::type_identity<E>{}) for the entry chosen.
    template <class F>
    auto visit(const parsed_args& a, F&& f) const {
        return visit_entry(List{}, get(a), std::forward<F>(f));
    }
    template <class E>
    [[nodiscard]] auto is(const parsed_args& a) const -> bool {
        return visit(a, [](auto chosen) { return std::is_same_v<typename decltype(chosen)::type, E>; });
    }
    [[nodiscard]] auto default_text() const -> std::string {
        return spec.required ? "" : std::string(entry_names(List{}).front());
    }
    [[nodiscard]] auto describe() const -> std::string {
        return spec.required ? std::string(spec.help)
                             : with_default(std::string(spec.help) + ": " + join(entry_names(List{}), ", ", " or "),
                                            default_text());
    }
};

// ---- hash functions (hash --function F) -----------------------------------------------------
// digest(key) is the line hash prints; function, where present, is the hasher a strategy
// can take as its key hash.

struct xxh3_hash {
    static constexpr std::string_view name = "xxh3";
    static constexpr std::string_view help = "XXH3-64, 16 hex digits as xxhsum prints them";
    static auto digest(std::string_view key) -> std::string { return hex64(keyplace::xxh3{}(key)); }
};

struct xxh64_hash {
    static constexpr std::string_view name = "xxh64";
    static constexpr std::string_view help = "XXH64 with seed 0, 16 hex digits";
    static auto digest(std::string_view key) -> std::string { return hex64(keyplace::xxh64{}(key)); }
};

struct md5_ketama_hash {
    static constexpr std::string_view name = "md5-ketama";
    static constexpr std::string_view help = "memcached clients' 32-bit MD5 key hash, decimal";
    using function = keyplace::compat::md5_ketama;
    static auto digest(std::string_view key) -> std::string { return std::to_string(function{}(key)); }
};

struct one_at_a_time_hash {
    static constexpr std::string_view name = "one-at-a-time";
    static constexpr std::string_view help = "Jenkins' one-at-a-time as libhashkit computes it, decimal";
    using function = keyplace::compat::one_at_a_time;
    static auto digest(std::string_view key) -> std::string { return std::to_string(function{}(key)); }
};

struct crc16_redis_hash {
    static constexpr std::string_view name = "crc16-redis";
    static constexpr std::string_view help = "the Redis Cluster slot (CRC-16/XMODEM of the hash tag), decimal";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::redis_slot(key));
    }
};

struct murmur3_cassandra_hash {
    static constexpr std::string_view name = "murmur3-cassandra";
    static constexpr std::string_view help = "the signed Murmur3Partitioner token of the line's bytes (a text key)";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::cassandra_token(keyplace::key_bytes(key)));
    }
};

struct murmur2_envoy_hash {
    static constexpr std::string_view name = "murmur2-envoy";
    static constexpr std::string_view help =
        "Envoy's MURMUR_HASH_2 (libstdc++ std::hash<std::string>), unsigned decimal";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::murmur2_64{}(key));
    }
};

using hash_functions = entry_list<xxh3_hash, xxh64_hash, md5_ketama_hash, one_at_a_time_hash, crc16_redis_hash,
                                  murmur3_cassandra_hash, murmur2_envoy_hash>;

// ---- strategies (--strategy S) --------------------------------------------------------------
// Every row of the library's strategy table is a strategy here: table_entry<B> takes its name,
// its help and its options from the row, and builds through the row's snapshot binding B from a
// description of the SPEC's nodes, so a strategy a snapshot holds needs nothing in this file.
// What the command line adds to a row is in cli_traits<B>: a SPEC form's help (spec_help),
// signed or narrower pre-hashed points (signed_points, max_point), a replica rule of its own
// (replica_options(), replicas(strategy, args)) and, for a strategy whose state is its history,
// how diff derives the after state (derive(before, args, SPEC)).

/// How one key's copies are chosen: place(point, out) writes at most width node indices into
/// out and says how many; a replica placer also has a summary of how well it spreads them.
struct replica_rule {
    std::size_t width = 0;
    std::function<keyplace::replica_result(std::uint64_t, std::span<keyplace::node_index>)> place;
    std::optional<replica_summary> summary{};
    /// A strategy that places a key by its bytes places its copies by them too (place is then
    /// for --prehashed points).
    std::function<keyplace::replica_result(std::span<const std::byte>, std::span<keyplace::node_index>)> place_key{};
};

/// Refuses, as a bad argument naming its option, a strategy the table refuses: the check a
/// document's strategy gets (keyplace::check_strategy), in its words.
inline void check_strategy_args(const keyplace::strategy_spec& strategy) {
    if (auto e = keyplace::check_strategy(strategy)) {
        constexpr std::string_view params = "strategy.params.";
        const std::string& where = e.where();
        usage_error(where.starts_with(params) ? "--" + where.substr(params.size()) + ": " + e.message() : e.message());
    }
}

/// --NAME VALUE: a strategy-table parameter as an option, with the row's default, range, names
/// and meaning, checked by the table.
struct param_option {
    option_spec spec;
    const keyplace::strategy_parameter* param = nullptr;
    std::string_view owner{};  ///< the strategy it belongs to

    [[nodiscard]] auto parse(std::string_view v) const -> keyplace::strategy_param {
        keyplace::strategy_param value;
        if (param->kind == keyplace::param_kind::name) {
            value = std::string(v);
        } else {
            value = number_option<std::uint64_t>{spec}.parse(v);  // a whole number; its range is the table's
        }
        keyplace::strategy_spec alone;
        alone.name = std::string(owner);
        alone.params.emplace(std::string(param->name), value);
        check_strategy_args(alone);
        return value;
    }
    /// The value a description without the option has (for an implicit default: the one a new
    /// description states).
    [[nodiscard]] auto fallback() const -> keyplace::strategy_param {
        if (param->kind == keyplace::param_kind::name) {
            return std::string(param->name_default);
        }
        return param->implicit_default ? param->number_stated : param->number_default;
    }
    [[nodiscard]] auto default_text() const -> std::string {
        const auto f = fallback();
        return std::holds_alternative<std::string>(f) ? std::get<std::string>(f)
                                                      : std::to_string(std::get<std::uint64_t>(f));
    }
    [[nodiscard]] auto describe() const -> std::string {
        std::string help(spec.help);
        if (param->kind == keyplace::param_kind::name) {
            help += ": " + join(std::vector<std::string_view>(param->names.begin(), param->names.end()), ", ", " or ");
        }
        return with_default(help, default_text());
    }
};

/// Whether a row's parameter is a strategy option: a number or a name the copies options do not
/// set (a list, such as a removed stack, comes from diff's derivation or from a snapshot).
constexpr auto is_option(const keyplace::strategy_parameter& p) -> bool {
    return p.kind != keyplace::param_kind::numbers && !p.from_copies;
}

/// A parameter's option: --NAME SYMBOL (else "X").
constexpr auto make_param_option(const keyplace::strategy_row& row, const keyplace::strategy_parameter& p)
    -> param_option {
    return {{p.name, p.symbol.empty() ? std::string_view("X") : p.symbol, p.meaning}, &p, row.name};
}

/// The index of a strategy-table row.
constexpr auto row_index(std::string_view name) -> std::size_t {
    return static_cast<std::size_t>(keyplace::find_strategy(name) - keyplace::strategy_table);
}

/// The options of the Index-th row, in its order.
template <std::size_t Index>
constexpr auto row_options() {
    constexpr const keyplace::strategy_row& row = keyplace::strategy_table[Index];
    constexpr std::size_t count = static_cast<std::size_t>(std::count_if(row.params.begin(), row.params.end(), is_option));
    std::array<param_option, count> out{};
    std::size_t i = 0;
    for (const auto& p : row.params) {
        if (is_option(p)) {
            out[i++] = make_param_option(row, p);
        }
    }
    return out;
}

/// Where a command's copies options are: --copies and --spread of the command itself (locate,
/// whose copies a partition table holds), or elsewhere (snapshot create's --copies, which the
/// caller applies).
enum class copies_from { command, caller };

/// The strategy row's parameters a command line gives: the options given, each implicit default
/// at the value new descriptions state, and with copies_from::command the copies parameters from
/// the command's --copies and --spread, if given (the rest take the row's defaults).
template <class E>
auto given_params(const parsed_args& a, copies_from copies = copies_from::command)
    -> std::map<std::string, keyplace::strategy_param, std::less<>> {
    std::map<std::string, keyplace::strategy_param, std::less<>> params;
    if constexpr (requires { E::row; }) {
        for (const auto& p : E::row.params) {
            if (p.implicit_default) {
                params.emplace(std::string(p.name), p.number_stated);
            } else if (p.from_copies && copies == copies_from::command) {
                // The row's replicas are the command's --copies; its spread is --spread.
                const std::string_view given = p.name == "replicas" ? copies_name : p.name;
                if (const auto v = a.get(option_spec{given, "", ""})) {
                    if (p.kind == keyplace::param_kind::name) {
                        params.emplace(std::string(p.name), std::string(*v));
                    } else {  // not a number: 0, which the library refuses naming the parameter
                        params.emplace(std::string(p.name), parse_unsigned<std::uint64_t>(*v).value_or(0));
                    }
                }
            }
        }
        for (const auto& o : E::options()) {
            if (const auto v = a.get(o.spec)) {
                params.insert_or_assign(std::string(o.spec.name), o.parse(*v));
            }
        }
    }
    return params;
}

/// Whether a SPEC lists every node of the strategy (locate, snapshot create) or nodes to add
/// to a snapshot's (snapshot next --add).
enum class spec_scope { all_nodes, added_nodes };

/// The snapshot nodes of a SPEC for a strategy row: plain members, or with the per-node data the
/// row takes (Cassandra's tokens, Redis slot ranges, chosen points). The SPEC is read once.
inline auto spec_nodes(const keyplace::strategy_row& row, const std::string& spec,
                       spec_scope scope = spec_scope::all_nodes) -> std::vector<keyplace::snapshot_node> {
    std::vector<keyplace::snapshot_node> out;
    switch (row.per_node) {
        case keyplace::node_data::tokens:
            for (auto& e : parse_entries(spec, parse_cassandra_node)) {
                keyplace::snapshot_node n{e.id};
                n.tokens = e.tokens;
                n.where.region = e.dc;
                n.where.rack = e.rack;
                out.push_back(std::move(n));
            }
            return out;
        case keyplace::node_data::points:
            for (auto& h : parse_entries(spec, parse_token_node)) {
                keyplace::snapshot_node n{h.member.id, "", h.member.weight, h.member.where};
                n.points = std::move(h.tokens);
                out.push_back(std::move(n));
            }
            return out;
        case keyplace::node_data::slots: {
            const auto r = parse_redis_spec(spec);
            if (scope == spec_scope::all_nodes && r.explicit_ranges && r.ranges.empty()) {
                // Bare ids split the slots evenly; ID= on every node gives none to anyone.
                input_error("no node holds a slot (give slot ranges, or bare ids for an even split)");
            }
            for (const auto& m : r.nodes) {
                keyplace::snapshot_node n{m.id, "", m.weight, m.where};
                for (const auto& range : r.ranges) {
                    if (range.node_id == m.id) {
                        n.slots.push_back({range.first, range.last});
                    }
                }
                out.push_back(std::move(n));
            }
            return out;
        }
        case keyplace::node_data::none:
        case keyplace::node_data::partition_spans:
            break;
    }
    const auto members = parse_spec(spec);
    if (row.whole_weights) {
        check_ketama_weights(members);
    }
    for (const auto& m : members) {
        out.push_back({m.id, "", m.weight, m.where});
    }
    return out;
}

/// What binding B builds: its one strategy type, or a variant when its parameters choose.
template <class B>
using binding_variant = typename keyplace::detail::bind::variant_of<keyplace::detail::bind::types<B>>::type;
template <class B>
using binding_built = std::conditional_t<std::variant_size_v<binding_variant<B>> == 1,
                                         std::variant_alternative_t<0, binding_variant<B>>, binding_variant<B>>;

/// Builds row E's strategy through its binding B, as a snapshot of the SPEC's nodes would.
template <class E, class B>
auto build_row(const parsed_args& a, const std::string& spec) -> binding_built<B> {
    using V = binding_variant<B>;
    keyplace::strategy_spec strategy;
    strategy.name = std::string(B::name);
    strategy.params = given_params<E>(a);
    keyplace::fill_defaults(strategy);
    check_strategy_args(strategy);
    keyplace::snapshot_description d;
    d.strategy = std::move(strategy);
    d.nodes = spec_nodes(E::row, spec);
    std::vector<std::uint32_t> members;
    std::vector<keyplace::node> plain;
    for (std::size_t i = 0; i < d.nodes.size(); ++i) {
        if (auto e = keyplace::check_node_data(E::row, d.nodes[i], i)) {
            throw keyplace::error(e);
        }
        members.push_back(static_cast<std::uint32_t>(i));
        plain.push_back(keyplace::detail::as_node(d.nodes[i]));
    }
    std::optional<V> out;
    if (auto f = B::build(keyplace::detail::bind::build_input<V>{d, members, plain}, out)) {
        throw keyplace::error(f);
    }
    if constexpr (std::variant_size_v<V> == 1) {
        return std::get<0>(std::move(*out));
    } else {
        return std::move(*out);
    }
}

/// --copies RF | DC:RF[,DC:RF...]: SimpleStrategy's factor, or NetworkTopologyStrategy's per
/// datacenter.
struct replication_option {
    option_spec spec;

    struct factors {
        std::optional<std::uint32_t> simple;
        std::vector<keyplace::compat::dc_replication> by_dc;
    };

    [[nodiscard]] auto parse(std::string_view v) const -> factors {
        factors f;
        const std::string option = "--" + std::string(spec.name) + " ";
        if (v.find(':') == std::string_view::npos) {
            f.simple = parse_unsigned<std::uint32_t>(v);
            if (!f.simple || *f.simple == 0) {
                usage_error(option + quote(v) + " is not RF (a positive integer) or DC:RF[,DC:RF...]");
            }
            return f;
        }
        for (const auto part : split(v, ',')) {
            const auto colon = part.rfind(':');
            const auto rf =
                colon == std::string_view::npos ? std::nullopt : parse_unsigned<std::uint32_t>(part.substr(colon + 1));
            if (!rf || colon == 0) {
                usage_error(option + "entry " + quote(part) + " is not DC:RF");
            }
            f.by_dc.push_back({std::string(part.substr(0, colon)), *rf});
        }
        return f;
    }
    /// The factors given, or nothing.
    [[nodiscard]] auto find(const parsed_args& a) const -> std::optional<factors> {
        const auto v = a.get(spec);
        return v ? std::optional<factors>(parse(*v)) : std::nullopt;
    }
    [[nodiscard]] auto default_text() const -> std::string { return ""; }
    [[nodiscard]] auto describe() const -> std::string { return std::string(spec.help); }
};

inline constexpr replication_option cassandra_replication{
    {copies_name, "RF|DC:RF,...",
     "Cassandra's replication: SimpleStrategy's RF, or NetworkTopologyStrategy's per datacenter"}};

/// diff's after state for a strategy whose state is its history (anchor, memento): the before
/// value without the ids the after list drops (in before's order), then with the ids it adds
/// (in the after list's order), so removed buckets stay removed and re-adds are LIFO.
template <class S>
auto derive_members(const S& before, const std::string& nodes) -> S {
    const auto after = parse_spec(nodes);
    S out = before;
    for (const auto& n : before.nodes()) {
        const bool kept = std::any_of(after.begin(), after.end(), [&](const keyplace::node& m) { return m.id == n.id; });
        if (!kept) {
            out = out.without(n.id);
        }
    }
    for (const auto& m : after) {
        if (!out.find(m.id)) {
            out = out.with(m);
        }
    }
    return out;
}

namespace bind = keyplace::detail::bind;

/// What the command line adds to a strategy-table row (see above); most rows need nothing.
template <class B>
struct cli_traits {};

inline constexpr std::string_view envoy_spec_help =
    "ids are the strings Envoy hashes (ip:port), weights whole numbers; keys hashed with XXH64";
inline constexpr std::string_view ketama_spec_help =
    "ids are server addresses host[:port] (the port defaults to 11211), weights whole numbers";

template <>
struct cli_traits<bind::envoy_ring_binding> {
    static constexpr std::string_view spec_help = envoy_spec_help;
};
template <>
struct cli_traits<bind::envoy_maglev_binding> {
    static constexpr std::string_view spec_help = envoy_spec_help;
};
template <bind::fixed_string N, keyplace::compat::ketama_dialect D>
struct cli_traits<bind::ketama_binding<N, D>> {
    static constexpr std::string_view spec_help = D == keyplace::compat::ketama_dialect::python_hash_ring
                                                      ? "ids are node names hashed as written, weights whole numbers"
                                                      : ketama_spec_help;
};
template <>
struct cli_traits<bind::ketama_unweighted_binding> {
    static constexpr std::string_view spec_help = ketama_spec_help;
};
template <>
struct cli_traits<bind::mpchash_binding> {
    static constexpr std::string_view spec_help =
        "ids are go-mpchash's bucket names, hashed as written; a --prehashed line is a key's H(key, 1)";
};

template <>
struct cli_traits<bind::cassandra_binding> {
    static constexpr std::string_view spec_help =
        "ID=TOKEN[;TOKEN...][@DC[/RACK]] (DC/RACK by default datacenter1/rack1); --prehashed: signed tokens";
    static constexpr bool signed_points = true;
    static constexpr auto replica_options() { return std::tuple{&cassandra_replication}; }
    /// The replicas --copies lists (Cassandra's replication), or nothing without it. Cassandra takes an RF above the
    /// node count: a key then has every node once.
    static auto replicas(const keyplace::compat::cassandra_ring& ring, const parsed_args& a)
        -> std::optional<replica_rule> {
        const auto f = cassandra_replication.find(a);
        if (!f) {
            return std::nullopt;
        }
        if (f->simple) {
            const std::uint32_t rf = *f->simple;
            return replica_rule{
                std::min<std::size_t>(rf, ring.size()),
                [&ring, rf](std::uint64_t p, std::span<keyplace::node_index> out) {
                    return keyplace::replica_result{ring.simple_strategy(static_cast<std::int64_t>(p), rf, out)};
                }};
        }
        auto plan = ring.network_topology(f->by_dc);
        const auto width = plan.replica_count();
        return replica_rule{width,
                            [&ring, plan = std::move(plan)](std::uint64_t p, std::span<keyplace::node_index> out) {
                                return keyplace::replica_result{
                                    ring.network_topology_replicas(static_cast<std::int64_t>(p), plan, out)};
                            }};
    }
};

template <>
struct cli_traits<bind::redis_binding> {
    static constexpr std::string_view spec_help =
        "ID=FIRST-LAST[;FIRST-LAST...] (slot ranges; ID= holds none), or ids alone for an even split";
    static constexpr std::uint64_t max_point = keyplace::compat::redis_slot_count - 1;
};

template <>
struct cli_traits<bind::tokens_binding> {
    static constexpr std::string_view spec_help =
        "ID=TOKEN[;TOKEN...][@REGION[/ZONE[/RACK]]] (unsigned decimal tokens, distinct)";
};

template <>
struct cli_traits<bind::partitions_binding> {
    /// diff's after state: the before table transitioned to the new members (the table is state).
    static auto derive(const keyplace::partitions& before, const parsed_args&, const std::string& nodes) {
        return before.transitioned(parse_spec(nodes));
    }
};

template <class S, bind::fixed_string N>
struct cli_traits<bind::buckets_binding<S, N>> {
    static auto derive(const S& before, const parsed_args&, const std::string& nodes) {
        return derive_members(before, nodes);
    }
};

/// The strategy of a strategy-table row, bound by B (a binding of keyplace's snapshot_strategies).
template <class B>
struct table_entry : cli_traits<B> {
    static constexpr const keyplace::strategy_row& row = *keyplace::find_strategy(B::name);
    static constexpr std::string_view name = B::name;
    static constexpr std::string_view help = row.summary;
    static constexpr auto param_options = row_options<row_index(B::name)>();
    static constexpr auto options() -> const auto& { return param_options; }
    static auto build(const parsed_args& a, const std::string& nodes) -> binding_built<B> {
        return build_row<table_entry, B>(a, nodes);
    }
};

template <class List>
struct cli_strategies;
template <class... B>
struct cli_strategies<bind::types<B...>> {
    using type = entry_list<table_entry<B>...>;
};

/// Every strategy of keyplace's strategy table, in its order.
using strategies = cli_strategies<bind::snapshot_strategies>::type;

// ---- what generic code asks of an entry -------------------------------------------------------

/// Which strategy options a command takes: none, those that shape the strategy, or those and
/// the ones that shape replicas (locate).
enum class strategy_use { none, build, locate };

/// Calls f(option) for every option of a tuple of pointers to options, or an array of options.
template <class Options, class F>
void for_each_in(const Options& options, F&& f) {
    const auto call = [&](const auto& o) {
        if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(o)>>) {
            f(*o);
        } else {
            f(o);
        }
    };
    std::apply([&](const auto&... o) { (call(o), ...); }, options);
}

/// Calls f(option) for every option of E a command with this use takes.
template <class E, class F>
void for_each_option(strategy_use use, F&& f) {
    if constexpr (requires { E::options(); }) {
        for_each_in(E::options(), f);
    }
    if constexpr (requires { E::replica_options(); }) {
        if (use == strategy_use::locate) {
            for_each_in(E::replica_options(), f);
        }
    }
}

template <class E>
auto option_specs(strategy_use use) -> std::vector<option_spec> {
    std::vector<option_spec> out;
    for_each_option<E>(use, [&](const auto& o) { out.push_back(o.spec); });
    return out;
}

template <class E>
auto takes_option(std::string_view name, strategy_use use) -> bool {
    for (const auto& s : option_specs<E>(use)) {
        if (s.name == name) {
            return true;
        }
    }
    return false;
}

/// Every strategy option a command with this use accepts on its command line.
inline auto all_strategy_options(strategy_use use) -> std::vector<option_spec> {
    std::vector<option_spec> out;
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        const auto own = option_specs<E>(use);
        out.insert(out.end(), own.begin(), own.end());
    });
    return out;
}

/// What E::build returns: a strategy, or a variant of strategies.
template <class E>
using built_t = decltype(E::build(std::declval<const parsed_args&>(), std::declval<const std::string&>()));

template <class T>
inline constexpr bool is_variant = false;
template <class... S>
inline constexpr bool is_variant<std::variant<S...>> = true;

/// f(strategy) for what E::build returned.
template <class Built, class F>
auto use_built(const Built& built, F&& f) {
    if constexpr (is_variant<Built>) {
        return std::visit(std::forward<F>(f), built);
    } else {
        return f(built);
    }
}

/// f(before, after) for two builds of one entry (the same alternative: the same options chose it).
template <class Built, class F>
auto use_built(const Built& before, const Built& after, F&& f) {
    if constexpr (is_variant<Built>) {
        return std::visit([&](const auto& b) { return f(b, std::get<std::remove_cvref_t<decltype(b)>>(after)); },
                          before);
    } else {
        return f(before, after);
    }
}

template <class T>
inline constexpr bool ordered_built = keyplace::ordered_placement_strategy<T>;
template <class... S>
inline constexpr bool ordered_built<std::variant<S...>> = (keyplace::ordered_placement_strategy<S> && ...);

/// Whether every strategy E builds has a preference order (and so takes --copies).
template <class E>
inline constexpr bool has_order = ordered_built<built_t<E>>;

inline auto ordered_strategy_names() -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        if (has_order<E>) {
            out.push_back(E::name);
        }
    });
    return out;
}

inline constexpr choice_option<strategies> strategy_option{{"strategy", "S", "the placement strategy (below)", true},
                                                           "strategy"};

/// Checks the strategy options given against E: each must be one E takes (else a usage error
/// naming the option, the strategies that take it and E), and its value must parse.
template <class E>
void check_strategy_options(const parsed_args& a, strategy_use use) {
    for (const auto given : a.names()) {
        if (takes_option<E>(given, use) || given == copies_name) {
            continue;
        }
        std::vector<std::string_view> takers;
        for_each_entry(strategies{}, [&]<class T>(std::type_identity<T>) {
            if (takes_option<T>(given, use)) {
                takers.push_back(T::name);
            }
        });
        if (!takers.empty()) {
            usage_error("--" + std::string(given) + " applies only to --strategy " + join(takers, ", ", " and ") +
                        ", not to " + std::string(E::name));
        }
    }
    for_each_option<E>(use, [&](const auto& o) {
        if (const auto v = a.get(o.spec)) {
            (void)o.parse(*v);
        }
    });
}

/// f(std::type_identity<E>{}) for the strategy entry E that --strategy names, once the strategy
/// options given are checked against it.
template <class F>
auto with_strategy(const parsed_args& a, strategy_use use, F&& f) {
    return strategy_option.visit(a, [&]<class E>(std::type_identity<E> entry) {
        check_strategy_options<E>(a, use);
        return f(entry);
    });
}

}  // namespace keyplace_cli

#endif
