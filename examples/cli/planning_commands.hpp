// keyplace-cli planning commands: redis create / redis rebalance (redis-cli's slot planner).
#ifndef KEYPLACE_EXAMPLES_CLI_PLANNING_COMMANDS_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_PLANNING_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "spec.hpp"

#include <keyplace/compat/redis.hpp>
#include <keyplace/compat/redis_planner.hpp>

#include <charconv>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <system_error>
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
    double d = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size()) {
        usage_error("--" + std::string(option) + " " + quote(v) + " is not a number");
    }
    return d;
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
    for (const auto& n : parse_entries(a.value(masters_option.spec), [](std::string_view e, const std::string&) {
             return std::string(e);
         })) {
        addresses.push_back(n);
    }
    const auto ranges = keyplace::compat::redis_create_ranges(addresses);
    std::string text;
    std::vector<std::string> items;
    for (const auto& r : ranges) {
        text += r.node_id + "=" + std::to_string(r.first) + "-" + std::to_string(r.last) + "\n";
        items.push_back("{\"node\":" + json_string(r.node_id) + ",\"first\":" + std::to_string(r.first) +
                        ",\"last\":" + std::to_string(r.last) + "}");
    }
    return a.has(json_flag.spec) ? "{\"ranges\":" + json_array(items) + "}\n" : text;
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
        for (const auto part : split(*w, ',')) {
            const auto eq = part.rfind('=');
            if (eq == std::string_view::npos || eq == 0) {
                usage_error("--weights entry " + quote(part) + " is not ID=WEIGHT");
            }
            o.weights.push_back({std::string(part.substr(0, eq)), decimal_of("weights", part.substr(eq + 1))});
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
    std::vector<std::string> moves;
    for (const auto& m : plan.moves) {
        text += "Moving " + std::to_string(m.slots.size()) + " slots from " + m.from + " to " + m.to + ":";
        std::vector<std::string> runs;
        for (const auto& [first, last] : slot_runs(m.slots)) {
            text += " " + std::to_string(first) + (first == last ? "" : "-" + std::to_string(last));
            runs.push_back("[" + std::to_string(first) + "," + std::to_string(last) + "]");
        }
        text += "\n";
        moves.push_back("{\"from\":" + json_string(m.from) + ",\"to\":" + json_string(m.to) +
                        ",\"count\":" + std::to_string(m.slots.size()) + ",\"slots\":" + json_array(runs) + "}");
    }
    std::vector<std::string> balances;
    for (const auto& [id, b] : plan.balances) {
        balances.push_back("{\"node\":" + json_string(id) + ",\"balance\":" + std::to_string(b) + "}");
    }
    return json ? "{\"needed\":true,\"balances\":" + json_array(balances) + ",\"moves\":" + json_array(moves) + "}\n"
                : text;
}

struct redis_create_command {
    static constexpr std::string_view name = "redis create";
    static constexpr std::string_view help =
        "the slot ranges redis-cli --cluster create gives these masters, as --strategy redis SPEC lines";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() { return std::tuple{&masters_option, &json_flag}; }
    static auto run(const parsed_args& a, std::istream&) -> std::string { return redis_create(a); }
};

struct redis_rebalance_command {
    static constexpr std::string_view name = "redis rebalance";
    static constexpr std::string_view help =
        "the moves redis-cli --cluster rebalance makes, each with the slots it moves";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&slot_map_option, &weights_option, &threshold_option, &use_empty_flag, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string { return redis_rebalance(a); }
};

}  // namespace keyplace_cli

#endif
