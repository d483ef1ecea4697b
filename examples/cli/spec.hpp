// keyplace-cli inputs: node SPECs (inline or @FILE) in each strategy family's entry syntax, and
// key lines. Only syntax is checked here; what a membership may hold, the library checks.
#ifndef KEYPLACE_EXAMPLES_CLI_SPEC_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_SPEC_HPP_INCLUDED

#include "args.hpp"
#include "output.hpp"

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/node.hpp>
#include <keyplace/token_allocation.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <istream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace keyplace_cli {

/// Splits input into keys: the bytes between newlines. A final newline ends the last key
/// (it does not start an empty one); empty input has no keys.
inline auto read_keys(std::istream& in) -> std::vector<std::string> {
    const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::string> keys;
    std::size_t start = 0;
    while (start < data.size()) {
        const std::size_t nl = data.find('\n', start);
        if (nl == std::string::npos) {
            keys.push_back(data.substr(start));
            break;
        }
        keys.push_back(data.substr(start, nl - start));
        start = nl + 1;
    }
    return keys;
}

/// Parses one ID[=WEIGHT][@REGION[/ZONE[/RACK]]] entry; where names the entry in errors.
inline auto parse_node(std::string_view entry, const std::string& where) -> keyplace::node {
    keyplace::node n;
    std::string_view rest = entry;
    std::string_view loc;
    bool has_loc = false;
    if (const auto at = rest.find('@'); at != std::string_view::npos) {
        loc = rest.substr(at + 1);
        rest = rest.substr(0, at);
        has_loc = true;
    }
    std::string_view weight;
    bool has_weight = false;
    if (const auto eq = rest.find('='); eq != std::string_view::npos) {
        weight = rest.substr(eq + 1);
        rest = rest.substr(0, eq);
        has_weight = true;
    }
    if (rest.empty()) {
        input_error(where + ": node id is empty in " + quote(entry));
    }
    for (const char c : rest) {
        if (c == ',' || c == '=' || c == '@' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
            c == '\f') {
            input_error(where + ": node id " + quote(rest) + " contains " + quote(std::string_view(&c, 1)));
        }
    }
    n.id = std::string(rest);
    if (has_weight) {
        // The number only; whether the strategy accepts it (finite, > 0, whole) is the library's call.
        double w = 0;
        const auto [end, ec] = std::from_chars(weight.data(), weight.data() + weight.size(), w);
        if (weight.empty() || ec != std::errc{} || end != weight.data() + weight.size()) {
            input_error(where + ": weight " + quote(weight) + " of node " + quote(rest) + " is not a number");
        }
        n.weight = w;
    }
    if (has_loc) {
        const auto parts = split(loc, '/');
        if (parts.size() > 3) {
            input_error(where + ": location " + quote(loc) + " of node " + quote(rest) +
                        " has more than REGION/ZONE/RACK");
        }
        std::string* fields[] = {&n.where.region, &n.where.zone, &n.where.rack};
        for (std::size_t i = 0; i < parts.size(); ++i) {
            *fields[i] = std::string(parts[i]);
        }
    }
    return n;
}

/// Splits SPEC into entries and parses each with parse(entry, where): comma-separated
/// entries, or @PATH to a file of one entry per line (blank and # lines skipped).
template <class Parse>
auto parse_entries(const std::string& spec, Parse&& parse) {
    std::vector<decltype(parse(std::string_view(), std::string()))> entries;
    if (!spec.empty() && spec.front() == '@') {
        const std::string path = spec.substr(1);
        std::ifstream file(path, std::ios::binary);
        if (!file) {
            input_error("cannot read node file " + quote(path));
        }
        std::string line;
        std::size_t line_no = 0;
        while (std::getline(file, line)) {
            ++line_no;
            std::string_view v = line;
            const auto first = v.find_first_not_of(" \t\r");
            if (first == std::string_view::npos || v[first] == '#') {
                continue;
            }
            v = v.substr(first, v.find_last_not_of(" \t\r") - first + 1);
            entries.push_back(parse(v, path + ":" + std::to_string(line_no)));
        }
        if (entries.empty()) {
            input_error("node file " + quote(path) + " lists no nodes");
        }
        return entries;
    }
    if (spec.empty()) {
        input_error("--nodes: the node list is empty");
    }
    const auto parts = split(spec, ',');
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string where = "--nodes entry " + std::to_string(i + 1);
        if (parts[i].empty()) {
            input_error(where + " is empty");
        }
        entries.push_back(parse(parts[i], where));
    }
    return entries;
}

/// The nodes of a SPEC of ID[=WEIGHT][@REGION[/ZONE[/RACK]]] entries.
inline auto parse_spec(const std::string& spec) -> std::vector<keyplace::node> {
    return parse_entries(spec, parse_node);
}

/// The ketama servers of SPEC: ids as addresses, weights as whole numbers.
inline auto ketama_servers(const std::string& spec) -> std::vector<keyplace::compat::ketama_server> {
    std::vector<keyplace::compat::ketama_server> servers;
    for (const auto& n : parse_spec(spec)) {
        // The largest double below 2^64, so the conversion is exact; 0 is the library's to refuse.
        if (!(n.weight >= 0 && n.weight <= 18446744073709549568.0 && n.weight == std::floor(n.weight))) {
            input_error("ketama weight " + shortest(n.weight) + " of server " + quote(n.id) + " is not a whole number");
        }
        servers.push_back({n.id, static_cast<std::uint64_t>(n.weight)});
    }
    return servers;
}

/// Parses one Cassandra entry ID=TOKEN[;TOKEN...][@DC[/RACK]] (signed decimal tokens; DC and
/// RACK default to SimpleSnitch's datacenter1 and rack1).
inline auto parse_cassandra_node(std::string_view entry, const std::string& where)
    -> keyplace::compat::cassandra_endpoint {
    keyplace::compat::cassandra_endpoint e;
    std::string_view rest = entry;
    if (const auto at = rest.find('@'); at != std::string_view::npos) {
        const auto loc = split(rest.substr(at + 1), '/');
        if (loc.size() > 2 || loc[0].empty() || (loc.size() == 2 && loc[1].empty())) {
            input_error(where + ": location " + quote(rest.substr(at + 1)) + " is not DC or DC/RACK");
        }
        e.dc = std::string(loc[0]);
        if (loc.size() == 2) {
            e.rack = std::string(loc[1]);
        }
        rest = rest.substr(0, at);
    }
    const auto eq = rest.find('=');
    if (eq == std::string_view::npos) {
        input_error(where + ": " + quote(entry) + " has no tokens (ID=TOKEN;TOKEN...@DC/RACK)");
    }
    e.id = std::string(rest.substr(0, eq));
    for (const auto t : split(rest.substr(eq + 1), ';')) {
        const auto token = parse_signed(t);
        if (!token) {
            input_error(where + ": token " + quote(t) + " of node " + quote(e.id) + " is not a signed 64-bit integer");
        }
        e.tokens.push_back(*token);
    }
    return e;
}

/// Parses one chosen-token entry ID=TOKEN[;TOKEN...][@REGION[/ZONE[/RACK]]] (unsigned decimal
/// tokens): the id and location as parse_node reads them.
inline auto parse_token_node(std::string_view entry, const std::string& where) -> keyplace::token_holder {
    const auto at = entry.find('@');
    const auto head = entry.substr(0, at);
    const auto eq = head.find('=');
    if (eq == std::string_view::npos) {
        input_error(where + ": " + quote(entry) + " has no tokens (ID=TOKEN;TOKEN...)");
    }
    std::string plain(head.substr(0, eq));
    if (at != std::string_view::npos) {
        plain += entry.substr(at);
    }
    keyplace::token_holder h{parse_node(plain, where), {}};
    for (const auto t : split(head.substr(eq + 1), ';')) {
        const auto token = parse_unsigned<std::uint64_t>(t);
        if (!token) {
            input_error(where + ": token " + quote(t) + " of node " + quote(h.member.id) +
                        " is not an unsigned decimal 64-bit integer");
        }
        h.tokens.push_back(*token);
    }
    return h;
}

/// A Redis slot map as SPEC gives it: ID=RANGE[;RANGE...] entries (RANGE = SLOT or
/// FIRST-LAST; ID= alone is a master without slots), or bare ids (no ranges: an even split).
struct redis_spec {
    std::vector<keyplace::node> nodes;
    std::vector<keyplace::compat::slot_range> ranges;
    bool explicit_ranges = false;  // ranges given (on every node); otherwise the even split
};

inline auto parse_redis_spec(const std::string& spec) -> redis_spec {
    struct entry {
        keyplace::node node;
        std::vector<keyplace::compat::slot_range> ranges;
        bool explicit_ranges = false;  // ID= is a master without slots
    };
    const auto entries = parse_entries(spec, [](std::string_view text, const std::string& where) {
        entry r;
        const auto eq = text.find('=');
        r.node.id = std::string(text.substr(0, eq));
        if (eq == std::string_view::npos) {
            return r;
        }
        r.explicit_ranges = true;
        if (eq + 1 == text.size()) {
            return r;
        }
        for (const auto range : split(text.substr(eq + 1), ';')) {
            const auto dash = range.find('-');
            const auto first = parse_unsigned<std::uint16_t>(range.substr(0, dash));
            const auto last =
                dash == std::string_view::npos ? first : parse_unsigned<std::uint16_t>(range.substr(dash + 1));
            if (!first || !last) {
                input_error(where + ": slot range " + quote(range) + " of node " + quote(r.node.id) +
                            " is not SLOT or FIRST-LAST");
            }
            r.ranges.push_back({*first, *last, r.node.id});
        }
        return r;
    });
    redis_spec out;
    std::size_t with_ranges = 0;
    for (const auto& e : entries) {
        out.nodes.push_back(e.node);
        out.ranges.insert(out.ranges.end(), e.ranges.begin(), e.ranges.end());
        with_ranges += e.explicit_ranges ? 1 : 0;
    }
    if (with_ranges != 0 && with_ranges != entries.size()) {
        input_error("give slot ranges on every node or on none (bare ids split the slots evenly)");
    }
    out.explicit_ranges = with_ranges != 0;
    return out;
}

}  // namespace keyplace_cli

#endif
