// keyplace-cli inputs: node SPECs (inline or @FILE) in each strategy family's entry syntax, and
// key lines. Only syntax is checked here; what a membership may hold, the library checks.
#ifndef KEYPLACE_CLI_SPEC_HPP_INCLUDED
#define KEYPLACE_CLI_SPEC_HPP_INCLUDED

#include "args.hpp"
#include "output.hpp"

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <ios>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keyplace_cli {

/// The bytes of the file at path, at most limit of them; what names the file in failures
/// ("node file"), which give the path and the OS's reason. Reads at most limit + 1 bytes.
inline auto read_file(const std::string& path, std::string_view what,
                      std::size_t limit = std::numeric_limits<std::size_t>::max()) -> std::string {
    const std::string name = std::string(what) + " " + quote(path);
    errno = 0;
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) {
        input_error("cannot read " + name + ": " + os_error());
    }
    std::string data;
    char buf[1 << 16];
    while (true) {
        const std::size_t room = limit - data.size();
        const std::size_t want = room < sizeof buf ? room + 1 : sizeof buf;
        errno = 0;
        const std::size_t got = std::fread(buf, 1, want, file.get());
        if (got > room) {
            input_error(name + " is larger than " + std::to_string(limit >> 20) + " MiB");
        }
        data.append(buf, got);
        if (got < want) {
            if (std::ferror(file.get()) != 0) {
                input_error("cannot read " + name + ": " + os_error());
            }
            return data;
        }
    }
}

// ---- the SPEC grammar: one rule for ids and locations in every strategy's entries ------------

inline constexpr std::string_view node_form = "ID[=WEIGHT][@REGION[/ZONE[/RACK]]]";
inline constexpr std::string_view token_form = "ID=TOKEN[;TOKEN...][@REGION[/ZONE[/RACK]]]";
inline constexpr std::string_view cassandra_form = "ID=TOKEN[;TOKEN...][@DC[/RACK]]";
inline constexpr std::string_view redis_form = "ID=FIRST-LAST[;FIRST-LAST...], ID= or ID";

/// Fails unless name is a valid id (what: "node id") or location part ("region") by the library's
/// name grammar (keyplace::check_name), naming the entry and the form expected. A location part
/// given is not empty ("eu//r1").
inline void check_name(std::string_view what, std::string_view name, bool id, std::string_view entry,
                       const std::string& where, std::string_view form) {
    const auto f = name.empty() ? keyplace::error_info(keyplace::errc::invalid_name, std::string(what) + " is empty")
                                : keyplace::detail::check_name_as(id ? keyplace::name_kind::node_id
                                                                     : keyplace::name_kind::location_part,
                                                                  what, name);
    if (f) {
        const std::string in = entry == name ? "" : " in " + quote(entry);
        input_error(where + ": " + f.message() + in + " (expected " + std::string(form) + ")");
    }
}

/// One level of a location: its name in messages and where it goes.
struct location_level {
    std::string_view name;
    std::string* value;
};

/// Reads LOCATION (after '@': up to one part per level, '/'-separated, none empty) of node id.
inline void parse_location(std::string_view loc, std::initializer_list<location_level> levels, std::string_view id,
                           std::string_view entry, const std::string& where, std::string_view form) {
    const auto parts = split(loc, '/');
    if (parts.size() > levels.size()) {
        std::string most;  // the form's location without brackets: "REGION/ZONE/RACK"
        for (const char c : form.substr(form.find('@') + 1)) {
            most += c == '[' || c == ']' ? "" : std::string(1, c);
        }
        input_error(where + ": location " + quote(loc) + " of node " + quote(id) + " has more than " + most);
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
        check_name(levels.begin()[i].name, parts[i], false, entry, where, form);
        *levels.begin()[i].value = std::string(parts[i]);
    }
}

/// Parses one ID[=WEIGHT][@REGION[/ZONE[/RACK]]] entry; where names the entry in errors.
inline auto parse_node(std::string_view entry, const std::string& where) -> keyplace::node {
    keyplace::node n;
    const auto at = entry.find('@');
    std::string_view rest = entry.substr(0, at);
    std::string_view weight;
    bool has_weight = false;
    if (const auto eq = rest.find('='); eq != std::string_view::npos) {
        weight = rest.substr(eq + 1);
        rest = rest.substr(0, eq);
        has_weight = true;
    }
    check_name("node id", rest, true, entry, where, node_form);
    n.id = std::string(rest);
    if (has_weight) {
        // The number only; whether the strategy accepts it (finite, > 0, whole) is the library's call.
        const auto w = parse_decimal(weight);
        if (!w) {
            input_error(where + ": weight " + quote(weight) + " of node " + quote(rest) + " is not a number");
        }
        n.weight = *w;
    }
    if (at != std::string_view::npos) {
        parse_location(entry.substr(at + 1),
                       {{"region", &n.where.region}, {"zone", &n.where.zone}, {"rack", &n.where.rack}}, rest, entry,
                       where, node_form);
    }
    return n;
}

/// The most a node file may hold.
inline constexpr std::size_t node_file_limit = std::size_t{64} << 20;

/// Whether SPEC names a node file (@PATH) rather than listing entries.
inline auto is_node_file(std::string_view spec) -> bool {
    return !spec.empty() && spec.front() == '@';
}

/// f(), which reads nothing but SPECs: what fails in it (a bad entry; a membership the library
/// refuses, such as a duplicate id, a table smaller than the node count or more replicas than
/// nodes) is an argument error (2) when every SPEC was inline, bad input (1) when one is a file.
template <class F>
auto from_specs(std::initializer_list<std::string_view> specs, F&& f) -> decltype(f()) {
    const bool from_file = std::any_of(specs.begin(), specs.end(), is_node_file);
    try {
        return f();
    } catch (const keyplace::error& e) {
        throw cli_error(from_file ? exit_bad_input : exit_usage, e.what());
    } catch (cli_error& e) {
        if (!from_file && e.status == exit_bad_input) {
            e.status = exit_usage;
        }
        throw;
    }
}

/// Whether a SPEC may list no entry ('' or a node file of blank and # lines only): only where
/// the library starts from nothing (allocate --strategy tokens, the first node of a ring).
enum class listing { at_least_one, may_be_empty };

/// Splits SPEC into entries and parses each with parse(entry, where): comma-separated
/// entries, or @PATH to a file of one entry per line (blank and # lines skipped). A bad
/// inline entry is an argument error (2), a bad line of a file bad input (1).
template <class Parse>
auto parse_entries(const std::string& spec, Parse&& parse, listing count = listing::at_least_one) {
    std::vector<decltype(parse(std::string_view(), std::string()))> entries;
    if (is_node_file(spec)) {
        const std::string path = spec.substr(1);
        const std::string data = read_file(path, "node file", node_file_limit);
        // A UTF-8 byte-order mark (as some editors save text) opens the file, not its first id.
        constexpr std::string_view bom = "\xef\xbb\xbf";
        const auto lines = split(std::string_view(data).substr(data.starts_with(bom) ? bom.size() : 0), '\n');
        for (std::size_t i = 0; i < lines.size(); ++i) {
            std::string_view v = lines[i];
            const auto first = v.find_first_not_of(" \t\r");
            if (first == std::string_view::npos || v[first] == '#') {
                continue;
            }
            v = v.substr(first, v.find_last_not_of(" \t\r") - first + 1);
            entries.push_back(parse(v, quote(path) + ":" + std::to_string(i + 1)));
        }
        if (entries.empty() && count == listing::at_least_one) {
            input_error("node file " + quote(path) + " lists no nodes");
        }
        return entries;
    }
    if (spec.empty()) {
        if (count == listing::may_be_empty) {
            return entries;
        }
        usage_error("--nodes: the node list is empty");
    }
    const auto parts = split(spec, ',');
    try {
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const std::string where = "--nodes entry " + std::to_string(i + 1);
            if (parts[i].empty()) {
                input_error(where + " is empty");
            }
            entries.push_back(parse(parts[i], where));
        }
    } catch (cli_error& e) {
        e.status = exit_usage;  // the entry is an argument
        throw;
    }
    return entries;
}

/// The nodes of a SPEC of ID[=WEIGHT][@REGION[/ZONE[/RACK]]] entries.
inline auto parse_spec(const std::string& spec) -> std::vector<keyplace::node> {
    return parse_entries(spec, parse_node);
}

/// Refuses a weight that is not a whole number (ketama's weights are point counts).
inline void check_ketama_weights(std::span<const keyplace::node> nodes) {
    for (const auto& n : nodes) {
        // The largest double below 2^64, so the conversion is exact; 0 is the library's to refuse.
        if (!(n.weight >= 0 && n.weight <= 18446744073709549568.0 && n.weight == std::floor(n.weight))) {
            input_error("ketama weight " + shortest(n.weight) + " of server " + quote(n.id) + " is not a whole number");
        }
    }
}

/// The ketama servers of SPEC: ids as addresses, weights as whole numbers.
inline auto ketama_servers(const std::string& spec) -> std::vector<keyplace::compat::ketama_server> {
    const auto nodes = parse_spec(spec);
    check_ketama_weights(nodes);
    std::vector<keyplace::compat::ketama_server> servers;
    for (const auto& n : nodes) {
        servers.push_back({n.id, static_cast<std::uint64_t>(n.weight)});
    }
    return servers;
}

/// An ID=TOKEN[;TOKEN...][@LOCATION] entry in parts: the id (checked), each token's text and
/// the location, if given.
struct token_entry {
    std::string_view id;
    std::vector<std::string_view> tokens;
    std::optional<std::string_view> location;
};

inline auto split_token_entry(std::string_view entry, const std::string& where, std::string_view form)
    -> token_entry {
    const auto at = entry.find('@');
    const auto head = entry.substr(0, at);
    const auto eq = head.find('=');
    if (eq == std::string_view::npos) {
        input_error(where + ": " + quote(entry) + " has no tokens (expected " + std::string(form) + ")");
    }
    token_entry t{head.substr(0, eq), split(head.substr(eq + 1), ';'), std::nullopt};
    check_name("node id", t.id, true, entry, where, form);
    if (at != std::string_view::npos) {
        t.location = entry.substr(at + 1);
    }
    return t;
}

/// Parses one Cassandra entry ID=TOKEN[;TOKEN...][@DC[/RACK]] (signed decimal tokens; DC and
/// RACK default to SimpleSnitch's datacenter1 and rack1).
inline auto parse_cassandra_node(std::string_view entry, const std::string& where)
    -> keyplace::compat::cassandra_endpoint {
    const auto t = split_token_entry(entry, where, cassandra_form);
    keyplace::compat::cassandra_endpoint e;
    e.id = std::string(t.id);
    if (t.location) {
        parse_location(*t.location, {{"datacenter", &e.dc}, {"rack", &e.rack}}, t.id, entry, where, cassandra_form);
    }
    for (const auto text : t.tokens) {
        const auto token = parse_signed(text);
        if (!token) {
            input_error(where + ": token " + quote(text) + " of node " + quote(e.id) +
                        " is not a signed 64-bit integer");
        }
        e.tokens.push_back(*token);
    }
    return e;
}

/// Parses one chosen-token entry ID=TOKEN[;TOKEN...][@REGION[/ZONE[/RACK]]] (unsigned decimal
/// tokens).
inline auto parse_token_node(std::string_view entry, const std::string& where) -> keyplace::token_holder {
    const auto t = split_token_entry(entry, where, token_form);
    keyplace::token_holder h;
    h.member.id = std::string(t.id);
    if (t.location) {
        auto& w = h.member.where;
        parse_location(*t.location, {{"region", &w.region}, {"zone", &w.zone}, {"rack", &w.rack}}, t.id, entry, where,
                       token_form);
    }
    for (const auto text : t.tokens) {
        const auto token = parse_unsigned<std::uint64_t>(text);
        if (!token) {
            input_error(where + ": token " + quote(text) + " of node " + quote(h.member.id) +
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
        check_name("node id", text.substr(0, eq), true, text, where, redis_form);
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
