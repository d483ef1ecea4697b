// keyplace-cli's planning commands: allocate, redis create, redis rebalance and advise.
#include "commands.hpp"
#include "planning_commands.hpp"

#include <keyplace/detail/text.hpp>
#include <keyplace/skew_advisor.hpp>

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace keyplace_cli {

auto allocate_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(allocate_nodes_option.spec)}, [&] { return allocate(a); });
}

auto redis_create_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(masters_option.spec)}, [&] { return redis_create(a); });
}

auto redis_rebalance_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(slot_map_option.spec)}, [&] { return redis_rebalance(a); });
}

namespace {

// --nodes N or --weights W,...: the weights, one a node.
auto advise_weights(const parsed_args& a) -> std::vector<double> {
    const auto n = advise_nodes_option.find(a);
    const auto list = a.get(advise_weights_option.spec);
    if (n.has_value() == list.has_value()) {
        usage_error(n ? "--nodes and --weights both give the nodes: give one" : "give the nodes: --nodes N or --weights W,...");
    }
    if (n) {
        return std::vector<double>(*n, 1.0);
    }
    std::vector<double> weights;
    for (const auto w : split(*list, ',')) {
        const auto d = parse_decimal(w);
        if (!d || !(*d > 0) || *d > 1e9) {
            usage_error("--weights: " + quote(w) + " is not a weight above 0 (up to 10^9)");
        }
        weights.push_back(*d);
    }
    return weights;
}

}  // namespace

auto advise_command::run(const parsed_args& a, std::istream&) -> std::string {
    const std::string strategy = a.value(advise_strategy_option.spec);
    const auto weights = advise_weights(a);
    const double target = decimal_of("target", a.value(advise_target_option.spec));
    if (!(target >= 1.0)) {
        usage_error("--target " + quote(a.value(advise_target_option.spec)) + " is below 1 (1 is perfect balance)");
    }
    // Each strategy's own parameter: given, the command forecasts it instead of advising.
    struct parameter_of {
        std::string_view strategy;
        std::string_view option;
        std::string_view name;  // as skew_advice names it
        std::optional<std::uint64_t> value;
    };
    const parameter_of parameters[] = {
        {"ring", "vnodes", "vnodes", advise_vnodes_option.find(a)},
        {"maglev", "table-size", "table_size", advise_table_option.find(a)},
        {"partitions", "partitions", "partitions", advise_partitions_option.find(a)},
        {"tokens", "tokens", "tokens", advise_tokens_option.find(a)},
    };
    const parameter_of* given = nullptr;
    for (const auto& p : parameters) {
        if (p.value && (given != nullptr || p.strategy != strategy)) {
            usage_error("--" + std::string(p.option) + " is not a parameter of " + quote(strategy) +
                        " (ring: --vnodes, maglev: --table-size, partitions: --partitions, tokens: --tokens)");
        }
        if (p.value) {
            given = &p;
        }
    }
    keyplace::skew_advice advice;
    keyplace::error_info err;
    if (given != nullptr) {
        // A forecast of the parameter given: the library refuses what the strategy refuses.
        try {
            advice.strategy = strategy;
            advice.parameter = std::string(given->name);
            advice.value = *given->value;
            const auto v = *given->value;
            advice.forecast = strategy == "ring"     ? keyplace::forecast_ring_skew(weights, v)
                              : strategy == "maglev" ? keyplace::forecast_maglev_skew(weights, v)
                              : strategy == "partitions"
                                  ? keyplace::forecast_partitions_skew(weights, static_cast<std::uint32_t>(v))
                                  : keyplace::forecast_token_skew(weights, v);
        } catch (const keyplace::error& e) {
            usage_error(e.what());
        }
    } else {
        auto got = keyplace::try_advise_skew(strategy, weights, target, err);
        if (!got) {
            usage_error(err.message());
        }
        advice = std::move(*got);
    }
    const bool met = advice.forecast.p99 <= target;
    if (a.has(json_flag.spec)) {
        keyplace::detail::json_writer w;
        w.begin_object()
            .member("strategy", strategy)
            .member("nodes", weights.size())
            .member("target", target)
            .member("parameter", advice.parameter)
            .member("value", advice.value)
            .member("p50", advice.forecast.p50)
            .member("p99", advice.forecast.p99)
            .member("exact", advice.forecast.exact)
            .member("trials", advice.forecast.trials)
            .member("meets_target", met);
        if (given == nullptr) {
            w.member("memory_bytes", advice.memory_bytes);
        }
        w.end_object();
        return std::move(w).str() + "\n";
    }
    std::string out = strategy + ", " + std::to_string(weights.size()) + " nodes, target p99 <= " +
                      keyplace::detail::fixed(target, 4) + ": " + (given == nullptr ? "advised " : "") + advice.parameter +
                      " " + std::to_string(advice.value) + "\n";
    out += "busiest node's share over its fair share: p50 " + keyplace::detail::fixed(advice.forecast.p50, 4) +
           ", p99 " + keyplace::detail::fixed(advice.forecast.p99, 4) +
           (advice.forecast.exact ? " (exact: the same for every membership)"
                                  : " (forecast over " + std::to_string(advice.forecast.trials) +
                                        (strategy == "tokens" ? " growths)" : " memberships)")) +
           "\n";
    if (given == nullptr) {
        out += "memory: " + std::to_string(advice.memory_bytes) + " bytes\n";
    } else {
        out += met ? "meets the target\n" : "misses the target\n";
    }
    return out;
}

}  // namespace keyplace_cli
