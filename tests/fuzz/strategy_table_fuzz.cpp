// Fuzz target: the strategy table (include/keyplace/fleet/strategy_table.hpp): check_strategy,
// fill_defaults and check_node_data on fuzzed strategy names, parameters and nodes, then the
// snapshot build of what they accept.
//
// Input: a strategy (a row of the table, or fuzzed name bytes), a contract, up to four
// parameters (a row's parameter name or fuzzed bytes; a number near the parameter's range or
// fuzzed bits, or a name), then up to eight nodes (an id, a weight, and which per-node data the
// node carries).
// Invariants:
//  - check_strategy refuses exactly the spec whose name is no row, whose contract is not this
//    library's, or one of whose parameters is unknown to the row, of the wrong kind, outside a
//    checked range or not among its names; where() is the first such field (parameters in name
//    order); the code is the parameter's range_error for a range, else unknown_strategy; the
//    message is a bounded library message naming the offending value;
//  - an accepted spec, filled with its defaults, holds every parameter of its row with the kind
//    the row gives, is still accepted, and keeps the values given; filling again changes nothing;
//  - check_node_data refuses exactly a node carrying per-node data its row does not take, or a
//    weight that is not whole where the row needs whole weights, naming the node's id at
//    nodes[i];
//  - an accepted spec builds a snapshot or refuses with a bounded message; it builds when every
//    parameter is at its default and the nodes are plain (distinct ids, weight 1, the per-node
//    data the row needs).
#include "fuzz_support.hpp"
#include "snapshot_bounds.hpp"

#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/strategy_table.hpp>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace {

using keyplace_fuzz::input;

auto shown(const keyplace::strategy_param& v) -> std::string {
    return std::holds_alternative<std::uint64_t>(v) ? std::to_string(std::get<std::uint64_t>(v))
                                                    : keyplace::detail::quote(std::get<std::string>(v));
}

/// A number for parameter p: its edges, its default, or fuzzed bits.
auto number_for(input& in, const keyplace::strategy_parameter* p) -> std::uint64_t {
    const std::uint8_t pick = in.byte();
    if (p == nullptr || pick >= 8) {
        return pick % 2 == 0 ? in.bits<std::uint64_t>() : in.byte();
    }
    const std::uint64_t candidates[] = {p->min,     p->max,         p->min - 1,        p->max + 1,
                                        p->number_default, p->min + 1, p->max - 1, 0};
    return candidates[pick];
}

/// Why spec should be refused: the field to blame and the code, or nothing.
struct blame {
    std::string where;
    keyplace::errc code = keyplace::errc::unknown_strategy;
    std::string value;  ///< what the message must name
};

auto expected_blame(const keyplace::strategy_spec& spec) -> std::optional<blame> {
    const keyplace::strategy_row* row = nullptr;
    for (const auto& r : keyplace::strategy_table) {
        row = r.name == spec.name ? &r : row;
    }
    if (row == nullptr) {
        return blame{"strategy.name", keyplace::errc::unknown_strategy, keyplace::detail::quote(spec.name)};
    }
    if (spec.contract != KEYPLACE_CONTRACT_VERSION) {
        return blame{"strategy.contract", keyplace::errc::unknown_strategy, std::to_string(spec.contract)};
    }
    for (const auto& [name, value] : spec.params) {
        const std::string where = keyplace::detail::path_key("strategy.params", name);
        const keyplace::strategy_parameter* p = nullptr;
        for (const auto& q : row->params) {
            p = q.name == name ? &q : p;
        }
        if (p == nullptr) {
            return blame{where, keyplace::errc::unknown_strategy, keyplace::detail::quote(name)};
        }
        if (const auto* v = std::get_if<std::uint64_t>(&value)) {
            if (p->kind != keyplace::param_kind::number) {
                return blame{where, keyplace::errc::unknown_strategy, shown(value)};
            }
            if (p->range_checked && !(p->min <= *v && *v <= p->max)) {
                return blame{where, p->range_error, shown(value)};
            }
            continue;
        }
        if (p->kind != keyplace::param_kind::name) {
            return blame{where, keyplace::errc::unknown_strategy, shown(value)};
        }
        bool among = false;
        for (const auto n : p->names) {
            among = among || n == std::get<std::string>(value);
        }
        if (!among) {
            return blame{where, keyplace::errc::unknown_strategy, shown(value)};
        }
    }
    return std::nullopt;
}

/// Whether a node's data fits the row, by the row's description of what it takes.
auto node_fits(const keyplace::strategy_row& row, const keyplace::snapshot_node& n) -> bool {
    using keyplace::node_data;
    if ((!n.tokens.empty() && row.per_node != node_data::tokens) ||
        (!n.slots.empty() && row.per_node != node_data::slots) ||
        (!n.points.empty() && row.per_node != node_data::points) ||
        (!n.partitions.empty() && row.per_node != node_data::partition_spans)) {
        return false;
    }
    if (!row.whole_weights) {
        return true;
    }
    const double w = n.weight;
    return w >= 1 && w <= 9007199254740992.0 && w == static_cast<double>(static_cast<std::int64_t>(w));
}

auto weight_of(std::uint8_t b) -> double {
    constexpr double weights[] = {1.0, 2.0, 0.5, 3.0, 1.5, 0.0, -2.0, 9007199254740992.0, 9007199254740994.0,
                                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                                  1e-300};
    return weights[b % std::size(weights)];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    constexpr std::size_t rows = std::size(keyplace::strategy_table);
    keyplace::strategy_spec spec;
    const std::uint8_t which = in.byte();
    const keyplace::strategy_row* chosen = which < 0xf0 ? &keyplace::strategy_table[which % rows] : nullptr;
    spec.name = chosen != nullptr ? std::string(chosen->name) : std::string(in.take(in.below(24)));
    if (in.byte() % 16 == 15) {
        spec.contract = in.bits<std::uint32_t>();
    }
    const std::size_t n_params = in.below(5);
    bool default_params = true;
    for (std::size_t i = 0; i < n_params; ++i) {
        const std::uint8_t pick = in.byte();
        const keyplace::strategy_parameter* p = nullptr;
        std::string name;
        if (chosen != nullptr && !chosen->params.empty() && pick < 0xe0) {
            p = &chosen->params[pick % chosen->params.size()];
            name = std::string(p->name);
        } else {
            name = std::string(in.take(in.below(16)));
        }
        keyplace::strategy_param value;
        bool as_number = p == nullptr || p->kind == keyplace::param_kind::number;
        as_number = in.byte() % 4 == 3 ? !as_number : as_number;  // now and then the wrong kind
        if (as_number) {
            value = number_for(in, p);
            default_params = default_params && p != nullptr && p->kind == keyplace::param_kind::number &&
                             std::get<std::uint64_t>(value) == p->number_default;
        } else {
            const std::uint8_t n = in.byte();
            value = p != nullptr && !p->names.empty() && n < 0xc0 ? std::string(p->names[n % p->names.size()])
                                                                  : std::string(in.take(in.below(16)));
            default_params = default_params && p != nullptr && p->kind == keyplace::param_kind::name &&
                             std::get<std::string>(value) == p->name_default;
        }
        spec.params.insert_or_assign(std::move(name), std::move(value));
    }

    keyplace::error_info err;
    try {
        err = keyplace::check_strategy(spec);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "check_strategy threw", {});
    }
    const auto expected = expected_blame(spec);
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "check_strategy(%s): %s at %s\n", spec.name.c_str(), err ? err.message().c_str() : "ok",
                     err.where().c_str());
    }
    KEYPLACE_FUZZ_CHECK_MSG(static_cast<bool>(err) == expected.has_value(), err.message());
    if (expected) {
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
        KEYPLACE_FUZZ_CHECK_MSG(err.where() == expected->where, err.where() + " != " + expected->where);
        KEYPLACE_FUZZ_CHECK_MSG(err.code() == expected->code, err.message());
        KEYPLACE_FUZZ_CHECK_MSG(err.message().find(expected->value) != std::string::npos,
                                err.message() + " does not name " + expected->value);
        return 0;
    }

    const keyplace::strategy_row& row = *keyplace::find_strategy(spec.name);
    keyplace::strategy_spec filled = spec;
    keyplace::fill_defaults(filled);
    KEYPLACE_FUZZ_CHECK(filled.params.size() == row.params.size());
    for (const auto& p : row.params) {
        const auto it = filled.params.find(p.name);
        KEYPLACE_FUZZ_CHECK(it != filled.params.end());
        KEYPLACE_FUZZ_CHECK(std::holds_alternative<std::uint64_t>(it->second) == (p.kind == keyplace::param_kind::number));
    }
    for (const auto& [name, value] : spec.params) {
        KEYPLACE_FUZZ_CHECK(filled.params.find(name)->second == value);
    }
    KEYPLACE_FUZZ_CHECK(!keyplace::check_strategy(filled));
    keyplace::strategy_spec twice = filled;
    keyplace::fill_defaults(twice);
    KEYPLACE_FUZZ_CHECK(twice == filled);

    // The nodes.
    keyplace::snapshot_description d;
    d.cluster = "fuzz";
    d.strategy = spec;
    bool plain = true;
    const std::size_t n_nodes = in.below(9);
    for (std::size_t i = 0; i < n_nodes; ++i) {
        keyplace::snapshot_node n;
        const std::uint8_t id = in.byte();
        const bool fuzzed_id = id >= 0xf0;
        n.id = fuzzed_id ? std::string(in.take(in.below(12))) : "n" + std::to_string(i);
        const std::uint8_t w = in.byte();
        n.weight = w < 0x80 ? 1.0 : weight_of(w);
        const std::uint8_t carries = in.byte();
        // By default the data the row needs (cassandra's tokens, the tokens strategy's points).
        const bool needs_tokens = row.per_node == keyplace::node_data::tokens;
        const bool needs_points = row.per_node == keyplace::node_data::points;
        const bool extra = carries >= 0x80;
        if (needs_tokens || (extra && (carries & 1U) != 0)) {
            n.tokens.push_back(static_cast<std::int64_t>(i) * 1000000007LL - 4000000000LL);
        }
        if (extra && (carries & 2U) != 0) {
            n.slots.push_back({static_cast<std::uint16_t>(i), static_cast<std::uint16_t>(i)});
        }
        if (needs_points || (extra && (carries & 4U) != 0)) {
            n.points.push_back(std::uint64_t{0x9e3779b97f4a7c15ULL} * (i + 1));
        }
        if (extra && (carries & 8U) != 0) {
            n.partitions.push_back({0, 0, 0});
        }
        plain = plain && !fuzzed_id && n.weight == 1.0 && !extra;
        const bool fits = node_fits(row, n);
        const auto nerr = keyplace::check_node_data(row, n, i);
        KEYPLACE_FUZZ_CHECK_MSG(static_cast<bool>(nerr) != fits, nerr.message());
        if (nerr) {
            KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(nerr.message());
            KEYPLACE_FUZZ_CHECK(nerr.message().find(keyplace::detail::quote(n.id)) != std::string::npos);
            KEYPLACE_FUZZ_CHECK(nerr.where().rfind("nodes[" + std::to_string(i) + "].", 0) == 0);
        }
        d.nodes.push_back(std::move(n));
    }
    if (!keyplace_fuzz::affordable(d)) {
        return 0;
    }
    std::optional<keyplace::snapshot> s;
    try {
        s = keyplace::snapshot::try_build(d, err);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "try_build threw", {});
    }
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "build: %s\n", s ? "ok" : err.message().c_str());
    }
    if (!s) {
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
        KEYPLACE_FUZZ_CHECK_MSG(!(default_params && plain && !d.nodes.empty()), err.message());
        return 0;
    }
    KEYPLACE_FUZZ_CHECK(s->describe().strategy == filled);
    KEYPLACE_FUZZ_CHECK(s->verify());
    return 0;
}
