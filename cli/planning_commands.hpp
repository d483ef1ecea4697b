// keyplace-cli planning commands: allocate (Cassandra's token allocation, for a Cassandra ring or
// the native ring of chosen tokens) and redis create / redis rebalance (redis-cli's slot planner).
#ifndef KEYPLACE_CLI_PLANNING_COMMANDS_HPP_INCLUDED
#define KEYPLACE_CLI_PLANNING_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "spec.hpp"

#include <keyplace/compat/redis.hpp>
#include <keyplace/compat/redis_planner.hpp>
#include <keyplace/token_allocation.hpp>

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace keyplace_cli {

inline constexpr plain_option masters_option{
    {"nodes", "ADDRESS,...", "the masters, as redis-cli is given them (host:port), or @PATH", true}};
inline constexpr plain_option slot_map_option{
    {"nodes", "SPEC", "the masters in redis-cli's list order: ID=FIRST-LAST[;...] (CLUSTER SLOTS), or @PATH", true}};
inline constexpr plain_option weights_option{
    {"weights", "ID=W,...", "--cluster-weight: a master's weight (default 1)"}};
inline constexpr plain_option threshold_option{
    {"threshold", "PERCENT", "--cluster-threshold: plan only if a master is off by more"}, "2"};
inline constexpr plain_option use_empty_flag{
    {"use-empty-masters", "", "--cluster-use-empty-masters: masters without slots take part"}};

/// A decimal number option (a float for redis-cli); names the option in errors.
inline auto decimal_of(std::string_view option, std::string_view v) -> double {
    const auto d = parse_decimal(v);
    if (!d) {
        usage_error("--" + std::string(option) + " " + quote(v) + " is not a number");
    }
    return *d;
}

/// A redis create address: HOST:PORT, the port after the last ':' (an IPv6 host keeps its
/// colons, as redis-cli reads it) and from 1 to 65535.
inline auto parse_address(std::string_view e, const std::string& where) -> std::string {
    check_name("address", e, true, e, where, "HOST:PORT");
    const auto colon = e.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        input_error(where + ": address " + quote(e) + " has no " + (colon == 0 ? "host" : "port") +
                    " (expected HOST:PORT)");
    }
    const auto port = parse_unsigned<std::uint16_t>(e.substr(colon + 1));
    if (!port || *port == 0) {
        input_error(where + ": port " + quote(e.substr(colon + 1)) + " of address " + quote(e) +
                    " is not a port from 1 to 65535");
    }
    return std::string(e);
}

/// Slot numbers as FIRST-LAST runs: "0-1364 5461".
inline auto slot_runs(const std::vector<std::uint16_t>& slots) -> std::vector<std::pair<unsigned, unsigned>> {
    std::vector<std::pair<unsigned, unsigned>> runs;
    for (const auto s : slots) {
        if (!runs.empty() && runs.back().second + 1 == s) {
            runs.back().second = s;
        } else {
            runs.emplace_back(s, s);
        }
    }
    return runs;
}

inline auto redis_create(const parsed_args& a) -> std::string {
    std::vector<std::string> addresses;
    for (const auto& n : parse_entries(a.value(masters_option.spec), parse_address)) {
        addresses.push_back(n);
    }
    const auto ranges = keyplace::compat::redis_create_ranges(addresses);
    std::string text;
    json_writer w;
    w.begin_object().key("ranges").begin_array();
    for (const auto& r : ranges) {
        text += r.node_id + "=" + std::to_string(r.first) + "-" + std::to_string(r.last) + "\n";
        w.begin_object().member("node", r.node_id).member("first", r.first).member("last", r.last).end_object();
    }
    w.end_array().end_object();
    return a.has(json_flag.spec) ? std::move(w).str() + "\n" : text;
}

inline auto redis_rebalance(const parsed_args& a) -> std::string {
    const auto spec = parse_redis_spec(a.value(slot_map_option.spec));
    if (!spec.explicit_ranges) {
        usage_error("--nodes: give each master its slot ranges (ID=FIRST-LAST[;...])");
    }
    const auto cluster = keyplace::compat::redis_cluster::build(spec.nodes, spec.ranges);
    std::vector<std::string> order;
    for (const auto& n : spec.nodes) {
        order.push_back(n.id);
    }
    keyplace::compat::redis_rebalance_options o;
    o.use_empty_masters = a.has(use_empty_flag.spec);
    const std::string threshold = a.get(threshold_option.spec).value_or(std::string(threshold_option.fallback));
    o.threshold = decimal_of(threshold_option.spec.name, threshold);
    if (const auto w = a.get(weights_option.spec)) {
        std::vector<std::string> ids;
        for (const auto part : split(*w, ',')) {
            const auto eq = part.rfind('=');
            if (eq == std::string_view::npos || eq == 0) {
                usage_error("--weights entry " + quote(part) + " is not ID=WEIGHT");
            }
            o.weights.push_back({std::string(part.substr(0, eq)), decimal_of("weights", part.substr(eq + 1))});
            ids.push_back(o.weights.back().id);
        }
        if (const auto twice = first_repeat(std::span<const std::string>(ids))) {
            usage_error("--weights names master " + quote(ids[*twice]) + " twice");
        }
    }
    const auto plan = keyplace::compat::redis_rebalance(cluster, order, o);
    const bool json = a.has(json_flag.spec);
    if (!plan.needed) {
        return json ? "{\"needed\":false,\"moves\":[]}\n"
                    : "No rebalancing needed: every master is within the " + threshold +
                          "% threshold\n";
    }
    std::string text;
    json_writer w;
    w.begin_object().member("needed", true).key("balances").begin_array();
    for (const auto& [id, b] : plan.balances) {
        w.begin_object().member("node", id).member("balance", b).end_object();
    }
    w.end_array().key("moves").begin_array();
    for (const auto& m : plan.moves) {
        text += "Moving " + std::to_string(m.slots.size()) + " slots from " + m.from + " to " + m.to + ":";
        w.begin_object().member("from", m.from).member("to", m.to).member("count", m.slots.size());
        w.key("slots").begin_array();
        for (const auto& [first, last] : slot_runs(m.slots)) {
            text += " " + std::to_string(first) + (first == last ? "" : "-" + std::to_string(last));
            w.begin_array().write(first).write(last).end_array();
        }
        w.end_array().end_object();
        text += "\n";
    }
    w.end_array().end_object();
    return json ? std::move(w).str() + "\n" : text;
}

// ---- allocate ---------------------------------------------------------------------------------

inline constexpr plain_option allocate_strategy_option{
    {"strategy", "S", "cassandra (signed Murmur3 tokens) or tokens (the native ring of chosen tokens)", true}};
inline constexpr plain_option allocate_nodes_option{
    {"nodes", "SPEC", "the ring: --strategy cassandra's or tokens' SPEC entries (tokens: '' for an empty ring)", true}};
inline constexpr plain_option add_option{
    {"add", "ID[@LOCATION]", "the joining node (cassandra: ID@DC/RACK; tokens: ID@REGION/ZONE/RACK)", true}};
inline constexpr number_option<std::size_t> token_count_option{
    {"tokens", "N", "tokens for the joining node"}, 16, 1, keyplace::max_allocated_tokens};
inline constexpr plain_option allocate_replication_option{
    {copies_name, "RF|DC:RF,...",
     "the copies to balance: cassandra's SimpleStrategy RF or NetworkTopologyStrategy's per datacenter; "
     "tokens: RF",
     true}};
inline constexpr plain_option groups_option{
    {"spread", "LEVEL", "tokens: copies on distinct nodes, racks, zones or regions (the groups balanced)"}, "node"};
inline constexpr number_option<std::uint64_t> seed_option{
    {"seed", "S", "seeds the first tokens of an empty ring or datacenter (Cassandra draws them at random)"}, 0};

/// The allocated tokens: as a SPEC entry for the node file, or {"node", "tokens", "initial_token"}.
template <class Token>
auto render_allocation(const std::string& id, const std::string& location, const std::vector<Token>& tokens,
                       bool json) -> std::string {
    std::string entry = id + "=";
    std::string initial;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        entry += (i == 0 ? "" : ";") + std::to_string(tokens[i]);
        initial += (i == 0 ? "" : ",") + std::to_string(tokens[i]);
    }
    if (json) {
        json_writer w;
        w.begin_object().member("node", id).key("tokens").array(tokens).member("initial_token", initial).end_object();
        return std::move(w).str() + "\n";
    }
    return entry + (location.empty() ? "" : "@" + location) + "\n";
}

inline auto allocate(const parsed_args& a) -> std::string {
    const std::string strategy = a.value(allocate_strategy_option.spec);
    const std::string add = a.value(add_option.spec);
    const std::size_t count = token_count_option.get(a);
    const std::uint64_t seed = seed_option.get(a);
    const bool json = a.has(json_flag.spec);
    const auto replication = cassandra_replication.parse(a.value(allocate_replication_option.spec));
    const auto at = add.find('@');
    const std::string location = at == std::string::npos ? "" : add.substr(at + 1);
    if (at != std::string::npos && location.empty()) {
        input_error("--add: location of node " + quote(add.substr(0, at)) + " is empty (expected " +
                    std::string(add_option.spec.value) + ")");
    }
    if (strategy == "cassandra") {
        if (a.has(groups_option.spec)) {
            usage_error("--spread applies to --strategy tokens; Cassandra's racks come from the SPEC");
        }
        const auto endpoints = parse_entries(a.value(allocate_nodes_option.spec), parse_cassandra_node,
                                             listing::may_be_empty);
        if (endpoints.empty()) {
            input_error("--strategy cassandra needs at least one node in --nodes (a Cassandra ring is never "
                        "empty; --strategy tokens starts from an empty ring)");
        }
        const auto ring = keyplace::compat::cassandra_ring::build(endpoints);
        // The joining node as a Cassandra entry with a placeholder token: its id and location.
        auto joiner = parse_cassandra_node(add.substr(0, at) + "=0" + (location.empty() ? "" : "@" + location), "--add");
        joiner.tokens.clear();
        const auto tokens =
            replication.simple
                ? keyplace::compat::allocate_tokens(ring, joiner, count,
                                                    keyplace::compat::simple_strategy_replication{*replication.simple},
                                                    seed)
                : keyplace::compat::allocate_tokens(
                      ring, joiner, count, keyplace::compat::network_topology_replication{replication.by_dc}, seed);
        return render_allocation(joiner.id, location.empty() ? "" : joiner.dc + "/" + joiner.rack, tokens, json);
    }
    if (strategy == "tokens") {
        if (!replication.simple) {
            usage_error("--copies for --strategy tokens is RF, a positive integer");
        }
        keyplace::token_replication r;
        r.factor = *replication.simple;
        if (const auto level = a.get(groups_option.spec)) {
            const auto parsed = keyplace::parse_failure_domain(*level);
            if (!parsed) {
                usage_error("--spread " + quote(*level) + " is not a level (node, rack, zone, region)");
            }
            r.groups = *parsed;
        }
        // No node yet: the library gives the first node its tokens from the seed.
        const auto holders = parse_entries(a.value(allocate_nodes_option.spec), parse_token_node, listing::may_be_empty);
        const auto joiner = parse_node(add, "--add");
        const auto tokens = keyplace::allocate_tokens(holders, joiner, count, r, seed);
        return render_allocation(joiner.id, location, tokens, json);
    }
    usage_error("allocate --strategy " + quote(strategy) + " is not cassandra or tokens");
}

struct allocate_command {
    static constexpr std::string_view name = "allocate";
    static constexpr std::string_view help =
        "tokens for a joining node, chosen as Cassandra's allocator does to balance replicated ownership";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&allocate_strategy_option, &allocate_nodes_option, &add_option,  &token_count_option,
                          &allocate_replication_option, &groups_option,      &seed_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

// ---- redis create / redis rebalance -------------------------------------------------------------

struct redis_create_command {
    static constexpr std::string_view name = "redis create";
    static constexpr std::string_view help =
        "the slot ranges redis-cli --cluster create gives these masters, as --strategy redis SPEC lines";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() { return std::tuple{&masters_option, &json_flag}; }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct redis_rebalance_command {
    static constexpr std::string_view name = "redis rebalance";
    static constexpr std::string_view help =
        "the moves redis-cli --cluster rebalance makes, each with the slots it moves";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&slot_map_option, &weights_option, &threshold_option, &use_empty_flag, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};
// ---- advise --------------------------------------------------------------------------------------

inline constexpr plain_option advise_strategy_option{{"strategy", "S", "ring, maglev, partitions or tokens (allocated)", true}};
inline constexpr number_option<std::size_t> advise_nodes_option{
    {"nodes", "N", "how many nodes, of equal weight (or --weights)"}, std::nullopt, 1, 100000};
inline constexpr plain_option advise_weights_option{{"weights", "W,...", "instead of --nodes: each node's weight"}};
inline constexpr plain_option advise_target_option{
    {"target", "T", "the busiest node's share over its fair share that p99 may reach (1.10: 10% above)", true}};
inline constexpr number_option<std::uint32_t> advise_vnodes_option{
    {"vnodes", "V", "instead of advising: forecast a ring of V points a unit of weight"}, std::nullopt, 1};
inline constexpr number_option<std::uint64_t> advise_table_option{
    {"table-size", "M", "instead of advising: forecast a Maglev table of M entries (a prime)"}, std::nullopt, 1};
inline constexpr number_option<std::uint32_t> advise_partitions_option{
    {"partitions", "Q", "instead of advising: forecast Q partitions (a power of two)"}, std::nullopt, 1};
inline constexpr number_option<std::uint32_t> advise_tokens_option{
    {"tokens", "T", "instead of advising: forecast T allocated tokens a unit of weight"}, std::nullopt, 1, 65536};

struct advise_command {
    static constexpr std::string_view name = "advise";
    static constexpr std::string_view help =
        "the skew a strategy will have over N nodes (p50, p99), and the least vnodes, table size, partitions or tokens for a target";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&advise_strategy_option, &advise_nodes_option,  &advise_weights_option,
                          &advise_target_option,   &advise_vnodes_option, &advise_table_option,
                          &advise_partitions_option, &advise_tokens_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};
}  // namespace keyplace_cli

#endif
