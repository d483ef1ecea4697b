// keyplace-cli output: each command's result as text or as one JSON object, and the numbers,
// tables and help columns they are made of. Output is written only after every check (hash
// and locate hold theirs as they stream, see stream.hpp).
#ifndef KEYPLACE_CLI_OUTPUT_HPP_INCLUDED
#define KEYPLACE_CLI_OUTPUT_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/node.hpp>
#include <keyplace/replicas.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace keyplace_cli {

/// The shortest decimal that reads back as the same double ("1", "0.5", "1e+300", "inf").
inline auto shortest(double v) -> std::string {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

/// Fixed decimals and JSON literals: the library's own (one rule for every report).
using keyplace::detail::fixed;
using keyplace::detail::json_number;
using keyplace::detail::json_string;
using keyplace::detail::json_writer;

/// A fraction as a percentage with four decimals: "10.4894%".
inline auto percent(double f) -> std::string {
    return fixed(100 * f, 4) + "%";
}

/// 16 lower-case hex digits, as xxhsum prints a 64-bit digest.
inline auto hex64(std::uint64_t v) -> std::string {
    char buf[16];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
    const std::string digits(buf, ec == std::errc{} ? end : buf);
    return std::string(16 - digits.size(), '0') + digits;
}

/// Fixed-width text tables: each column padded to its widest cell, no trailing spaces.
inline auto text_table(const std::vector<std::vector<std::string>>& rows) -> std::string {
    std::vector<std::size_t> width;
    for (const auto& row : rows) {
        width.resize(std::max(width.size(), row.size()), 0);
        for (std::size_t c = 0; c < row.size(); ++c) {
            width[c] = std::max(width[c], row[c].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            line += (c == 0 ? "" : "  ") + row[c] + std::string(width[c] - row[c].size(), ' ');
        }
        out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    }
    return out;
}

/// Joins items: join({"a", "b", "c"}, ", ", " and ") == "a, b and c".
inline auto join(const std::vector<std::string_view>& items, std::string_view sep, std::string_view last_sep)
    -> std::string {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += i == 0 ? "" : (i + 1 == items.size() ? last_sep : sep);
        out += items[i];
    }
    return out;
}

/// Help rows: each term padded to a column, its text after it (on the next line if the
/// term is too wide); indent before every term.
inline auto help_rows(const std::vector<std::pair<std::string, std::string>>& rows, std::string_view indent)
    -> std::string {
    constexpr std::size_t column = 24;
    std::string out;
    for (const auto& [term, text] : rows) {
        std::string line = std::string(indent) + term;
        if (!text.empty()) {
            line += line.size() + 2 > column ? "\n" + std::string(column, ' ') : std::string(column - line.size(), ' ');
            line += text;
        }
        out += line + "\n";
    }
    return out;
}

// ---- command results ----------------------------------------------------------------------------

// hash and locate write one result per key as they go (key_results in stream.hpp): a line,
// or an item of the one array of their JSON object: {"function":F,"digests":[...]},
// {"owners":[...]}, {"replicas":[[...],...]} (with the placer's summary, if it has one).

/// One key's copies, in placement order.
struct replica_line {
    std::vector<std::string_view> ids;
    bool degraded = false;
};

/// How well a replica placer spreads copies, for its JSON object.
struct replica_summary {
    bool degraded = false;
    keyplace::failure_domain achieved = keyplace::failure_domain::node;
};

/// locate with replicas: one key's copies comma-separated, " degraded" after a degraded set;
/// or the JSON array of its ids.
inline auto render_replica_line(const replica_line& line, bool json) -> std::string {
    std::string out = json ? "[" : "";
    for (std::size_t k = 0; k < line.ids.size(); ++k) {
        out += k == 0 ? "" : ",";
        out += json ? json_string(line.ids[k]) : std::string(line.ids[k]);
    }
    return out + (json ? "]" : line.degraded ? " degraded" : "");
}

/// The end of locate's {"replicas":[...] object: the placer's summary, if it has one.
inline auto replica_summary_tail(const std::optional<replica_summary>& summary) -> std::string {
    return (summary ? ",\"degraded\":" + std::string(summary->degraded ? "true" : "false") +
                          ",\"achieved\":" + json_string(keyplace::to_string(summary->achieved))
                    : std::string()) +
           "}";
}

inline auto method_name(keyplace::share_method m) -> std::string {
    switch (m) {
        case keyplace::share_method::exact:
            return "exact";
        case keyplace::share_method::expected:
            return "expected";
        case keyplace::share_method::sampled:
            return "sampled";
    }
    return "?";
}

/// diff: the movement against its minimums and each node's flows.
inline auto render_movement(std::string_view strategy, std::size_t before, std::size_t after, const std::string& basis,
                            const keyplace::movement_report& r, bool json) -> std::string {
    // Infinite (JSON null) when something moved and nothing had to; 1 when nothing did.
    const double ratio =
        r.minimum > 0 ? r.moved / r.minimum : (r.moved > 0 ? std::numeric_limits<double>::infinity() : 1.0);
    if (json) {
        json_writer w;
        w.begin_object().member("strategy", strategy).member("basis", basis).member("keys", r.keys);
        w.member("moved", r.moved).member("minimum", r.minimum).member("moved_over_minimum", ratio);
        w.member("minimum_method", method_name(r.minimum_method)).member("fair_minimum", r.fair_minimum);
        w.member("violations", r.violations).key("flows").begin_array();
        for (const auto& f : r.flows) {
            w.begin_object().member("id", f.id).member("inflow", f.inflow).member("outflow", f.outflow).end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    std::string out = "strategy " + std::string(strategy) + ": " + std::to_string(before) + " -> " +
                      std::to_string(after) + " nodes; " + basis + "\n";
    out += text_table({
        {"moved", percent(r.moved), "keys whose owner changed"},
        {"minimum", percent(r.minimum),
         "the least any placement moves to reach these shares (" + method_name(r.minimum_method) + ")"},
        {"fair minimum", percent(r.fair_minimum), "the least an ideally balanced scheme moves"},
        {"moved/minimum", fixed(ratio, 3), ""},
        {"violations", percent(r.violations), "moved between two nodes present in both"},
    });
    std::vector<std::vector<std::string>> rows{{"node", "inflow", "outflow"}};
    for (const auto& f : r.flows) {
        rows.push_back({f.id, percent(f.inflow), percent(f.outflow)});
    }
    return out + "\n" + text_table(rows);
}

/// stats: each node's weight, share and keys of the count placed, and the load summary.
/// basis names the keys ("\"key-0\" ... \"key-99\"", "4 keys from 'k.txt'").
inline auto render_stats(std::string_view strategy, std::span<const keyplace::node> nodes,
                         const keyplace::ownership_report& own, const keyplace::load_report& l, std::size_t count,
                         const std::string& basis, bool json) -> std::string {
    if (json) {
        json_writer w;
        w.begin_object().member("strategy", strategy).member("keys", count).member("basis", basis);
        w.member("share_method", method_name(own.method)).member("share_error_bound", own.error_bound);
        w.member("max_over_mean", l.max_over_mean).member("min_over_mean", l.min_over_mean).member("cv", l.cv);
        w.key("nodes").begin_array();
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            w.begin_object().member("id", nodes[i].id).member("weight", nodes[i].weight);
            w.member("share", own.share[i]).member("keys", l.keys[i]).end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    const double mean = static_cast<double>(count) / static_cast<double>(nodes.size());
    std::vector<std::vector<std::string>> rows{{"node", "weight", "share", "keys", "keys/mean"}};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        rows.push_back({nodes[i].id, shortest(nodes[i].weight), percent(own.share[i]), std::to_string(l.keys[i]),
                        fixed(static_cast<double>(l.keys[i]) / mean, 4)});
    }
    const std::string bound =
        own.method == keyplace::share_method::sampled ? " (within " + percent(own.error_bound) + ")" : "";
    return "strategy " + std::string(strategy) + ": " + std::to_string(nodes.size()) +
           " nodes; share: " + method_name(own.method) + bound + "; keys: " + basis + "\n" +
           text_table(rows) + "\nmax/mean " + fixed(l.max_over_mean, 4) +
           "  min/mean " + fixed(l.min_over_mean, 4) + "  cv " + fixed(l.cv, 4) + "\n";
}

}  // namespace keyplace_cli

#endif
