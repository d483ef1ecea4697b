// keyplace-cli: the operator's view of placement. The whole program lives in this header so
// the tests can run it in-process on string streams; main.cpp only forwards argv.
#ifndef KEYPLACE_EXAMPLES_CLI_KEYPLACE_CLI_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_KEYPLACE_CLI_HPP_INCLUDED

#include <keyplace/keyplace.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace keyplace_cli {

/// Exit codes: 0 success, 1 bad input data (keys, node files), 2 bad arguments.
inline constexpr int exit_ok = 0;
inline constexpr int exit_bad_input = 1;
inline constexpr int exit_usage = 2;

inline constexpr std::string_view usage_text =
    "usage:\n"
    "  keyplace-cli hash --function xxh3|xxh64|md5-ketama|one-at-a-time|crc16-redis|murmur3-cassandra|\n"
    "      murmur2-envoy; md5-ketama, one-at-a-time: memcached clients' 32-bit key hashes, decimal\n"
    "      xxh3/xxh64: 16 hex digits; crc16-redis: the Redis Cluster slot; murmur3-cassandra:\n"
    "      the signed Murmur3Partitioner token of the line's bytes (a text key); murmur2-envoy:\n"
    "      Envoy's MURMUR_HASH_2 (libstdc++ std::hash<std::string>), unsigned decimal\n"
    "  keyplace-cli locate --strategy S --nodes SPEC [--vnodes V] [--table-size M] [--prehashed]\n"
    "      S: ring (--vnodes, default 160), rendezvous, jump, jump-guava (nodes in bucket\n"
    "      order, weight 1), maglev (--table-size, a prime, default 65537), modulo (baseline)\n"
    "      [--replicas N [--spread node|rack|zone|region] [--on-shortfall fail|relax]]: N copies\n"
    "      per key, comma-separated in order, then ' degraded' when too few domains were relaxed\n"
    "      S: ketama (libmemcached KETAMA_WEIGHTED), ketama-spy (spymemcached strings),\n"
    "      ketama-unweighted [--hash one-at-a-time|md5-ketama] (libmemcached KETAMA),\n"
    "      libketama: ids are server addresses (host[:port]), weights whole numbers\n"
    "      S: envoy-ring [--min-ring-size N] [--max-ring-size N] [--hash xxh64|murmur2-envoy],\n"
    "      envoy-maglev [--table-size M]: Envoy's RING_HASH and MAGLEV, ids = the strings Envoy\n"
    "      hashes (ip:port), whole-number weights, keys hashed with XXH64\n"
    "      S: cassandra: SPEC entries ID=TOKEN[;TOKEN...][@DC[/RACK]], keys hashed as text to\n"
    "      Murmur3Partitioner tokens (--prehashed: signed tokens); [--replication RF] for\n"
    "      SimpleStrategy or [--replication DC:RF[,DC:RF...]] for NetworkTopologyStrategy\n"
    "      S: redis: SPEC entries ID=FIRST-LAST[;FIRST-LAST...] (slot ranges), or IDs alone for\n"
    "      an even split; keys hashed to slots as the server does (hash tags included)\n"
    "\n"
    "  keyplace-cli diff --strategy S --before SPEC --after SPEC [--keys FILE] [--vnodes V] [--table-size M]\n"
    "      what a membership change moves, against the minimum; without --keys exact over the\n"
    "      hash space for ring and maglev, else over a fixed sample of 131072 points\n"
    "  keyplace-cli stats --strategy S --nodes SPEC [--keys N] [--vnodes V] [--table-size M]\n"
    "      each node's share of the hash space and of N keys \"key-0\"... (default 100000)\n"
    "  --json on any command: one JSON object on stdout instead of text\n"
    "\n"
    "Keys are read from stdin, one per line: the bytes between newlines, not trimmed; an\n"
    "empty line is the empty key. --prehashed: each line is an unsigned decimal 64-bit point.\n"
    "SPEC: comma-separated ID[=WEIGHT][@REGION[/ZONE[/RACK]]], or @PATH to a file with one\n"
    "such entry per line (blank lines and lines starting with # are skipped).\n"
    "Output is written only when every input line was valid. Exit status: 0 ok, 1 bad input,\n"
    "2 bad arguments.\n";

/// A failure with the exit status it maps to and one line for stderr.
struct cli_error : std::runtime_error {
    int status;
    cli_error(int s, const std::string& what) : std::runtime_error(what), status(s) {}
};

[[noreturn]] inline void usage_error(const std::string& what) { throw cli_error(exit_usage, what); }
[[noreturn]] inline void input_error(const std::string& what) {
    throw cli_error(exit_bad_input, what);
}

inline auto quote(std::string_view s) -> std::string { return keyplace::detail::quote(s); }

/// Parsed "--name value" / "--name=value" options and bare "--flag"s.
class options {
public:
    options(std::span<const std::string_view> args, std::span<const std::string_view> valued,
            std::span<const std::string_view> flags) {
        for (std::size_t i = 0; i < args.size(); ++i) {
            std::string_view a = args[i];
            if (a.substr(0, 2) != "--") {
                usage_error("unexpected argument " + quote(a));
            }
            std::string name(a.substr(2));
            std::optional<std::string> value;
            if (const auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name.resize(eq);
            }
            const bool is_valued = contains(valued, name);
            if (!is_valued && !contains(flags, name)) {
                usage_error("unknown option --" + name);
            }
            if (values_.count(name) != 0) {
                usage_error("option --" + name + " given twice");
            }
            if (is_valued && !value) {
                if (i + 1 == args.size()) {
                    usage_error("option --" + name + " needs a value");
                }
                value = std::string(args[++i]);
            } else if (!is_valued && value) {
                usage_error("option --" + name + " takes no value");
            }
            values_[name] = value.value_or("");
        }
    }

    [[nodiscard]] auto get(const std::string& name) const -> std::optional<std::string> {
        const auto it = values_.find(name);
        return it == values_.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    [[nodiscard]] auto required(const std::string& name) const -> std::string {
        auto v = get(name);
        if (!v) {
            usage_error("missing required option --" + name);
        }
        return *v;
    }
    [[nodiscard]] auto has(const std::string& name) const -> bool { return values_.count(name) != 0; }

private:
    static auto contains(std::span<const std::string_view> set, std::string_view name) -> bool {
        for (const auto s : set) {
            if (s == name) {
                return true;
            }
        }
        return false;
    }
    std::map<std::string, std::string> values_;
};

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

/// A whole-string unsigned decimal, or nothing (no sign, no spaces, no overflow).
template <class U>
auto parse_unsigned(std::string_view s) -> std::optional<U> {
    if (s.empty() || s.front() < '0' || s.front() > '9') {
        return std::nullopt;
    }
    U v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
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
        if (c == ',' || c == '=' || c == '@' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
            c == '\v' || c == '\f') {
            input_error(where + ": node id " + quote(rest) + " contains " +
                        quote(std::string_view(&c, 1)));
        }
    }
    n.id = std::string(rest);
    if (has_weight) {
        double w = 0;
        const auto [end, ec] = std::from_chars(weight.data(), weight.data() + weight.size(), w);
        if (weight.empty() || ec != std::errc{} || end != weight.data() + weight.size()) {
            input_error(where + ": weight " + quote(weight) + " of node " + quote(rest) +
                        " is not a number");
        }
        n.weight = w;
        if (auto f = keyplace::detail::check_node(n)) {
            input_error(where + ": " + f.message());
        }
    }
    if (has_loc) {
        std::string* parts[] = {&n.where.region, &n.where.zone, &n.where.rack};
        std::size_t part = 0;
        std::size_t start = 0;
        while (true) {
            const auto slash = loc.find('/', start);
            if (part == 3) {
                input_error(where + ": location " + quote(loc) + " of node " + quote(rest) +
                            " has more than REGION/ZONE/RACK");
            }
            *parts[part++] = std::string(loc.substr(start, slash - start));
            if (slash == std::string_view::npos) {
                break;
            }
            start = slash + 1;
        }
    }
    return n;
}

/// Splits SPEC into entries and parses each with parse(entry, where): comma-separated
/// entries, or @PATH to a file of one entry per line.
template <class Parse>
auto parse_entries(const std::string& spec, Parse&& parse) {
    std::vector<decltype(parse(std::string_view(), std::string()))> nodes;
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
            nodes.push_back(parse(v, path + ":" + std::to_string(line_no)));
        }
        if (nodes.empty()) {
            input_error("node file " + quote(path) + " lists no nodes");
        }
        return nodes;
    }
    if (spec.empty()) {
        input_error("--nodes: the node list is empty");
    }
    std::size_t start = 0;
    std::size_t entry_no = 0;
    while (true) {
        const auto comma = spec.find(',', start);
        ++entry_no;
        const std::string_view entry = std::string_view(spec).substr(start, comma - start);
        const std::string where = "--nodes entry " + std::to_string(entry_no);
        if (entry.empty()) {
            input_error(where + " is empty");
        }
        nodes.push_back(parse(entry, where));
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return nodes;
}

/// Parses SPEC of ID[=WEIGHT][@REGION[/ZONE[/RACK]]] entries.
inline auto parse_spec(const std::string& spec) -> std::vector<keyplace::node> { return parse_entries(spec, parse_node); }

/// Splits s at sep (an empty s gives one empty part).
inline auto split(std::string_view s, char sep) -> std::vector<std::string_view> {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const auto at = s.find(sep, start);
        parts.push_back(s.substr(start, at - start));
        if (at == std::string_view::npos) {
            return parts;
        }
        start = at + 1;
    }
}

/// A whole-string signed decimal 64-bit integer, or nothing.
inline auto parse_signed(std::string_view s) -> std::optional<std::int64_t> {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// Parses one Cassandra entry ID=TOKEN[;TOKEN...][@DC[/RACK]] (signed decimal tokens; DC and
/// RACK default to SimpleSnitch's datacenter1 and rack1).
inline auto parse_cassandra_node(std::string_view entry, const std::string& where) -> keyplace::compat::cassandra_endpoint {
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

/// A Redis entry: ID, or ID=RANGE[;RANGE...] with RANGE = SLOT or FIRST-LAST.
struct redis_entry {
    keyplace::node node;
    std::vector<keyplace::compat::slot_range> ranges;
};

inline auto parse_redis_node(std::string_view entry, const std::string& where) -> redis_entry {
    redis_entry r;
    const auto eq = entry.find('=');
    r.node.id = std::string(entry.substr(0, eq));
    if (eq == std::string_view::npos) {
        return r;
    }
    for (const auto range : split(entry.substr(eq + 1), ';')) {
        const auto dash = range.find('-');
        const auto first = parse_unsigned<std::uint16_t>(range.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : parse_unsigned<std::uint16_t>(range.substr(dash + 1));
        if (!first || !last) {
            input_error(where + ": slot range " + quote(range) + " of node " + quote(r.node.id) + " is not SLOT or FIRST-LAST");
        }
        r.ranges.push_back({*first, *last, r.node.id});
    }
    return r;
}

/// The Redis slot map of SPEC: explicit ranges on every entry, or none (an even split).
inline auto build_redis(const std::string& spec) -> keyplace::compat::redis_cluster {
    const auto entries = parse_entries(spec, parse_redis_node);
    std::vector<keyplace::node> nodes;
    std::vector<keyplace::compat::slot_range> ranges;
    std::size_t with_ranges = 0;
    for (const auto& e : entries) {
        nodes.push_back(e.node);
        ranges.insert(ranges.end(), e.ranges.begin(), e.ranges.end());
        with_ranges += e.ranges.empty() ? 0 : 1;
    }
    if (with_ranges != 0 && with_ranges != entries.size()) {
        input_error("--strategy redis: give slot ranges on every node or on none");
    }
    return with_ranges == 0 ? keyplace::compat::redis_cluster::build_even(nodes)
                            : keyplace::compat::redis_cluster::build(nodes, ranges);
}

inline void append_hex64(std::string& out, std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    out.append(buf, 16);
}

/// A JSON string literal. Bytes are written as they are (ids are expected to be UTF-8);
/// quotes, backslashes and control bytes are escaped.
inline auto json_string(std::string_view s) -> std::string {
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

/// A JSON number: the shortest form that reads back as the same double.
inline auto json_number(double v) -> std::string {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, end) : std::string("null");
}

/// A JSON array of already-formatted values.
inline auto json_array(const std::vector<std::string>& items) -> std::string {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i == 0 ? "" : ",") + items[i];
    }
    return out + "]";
}

/// Fixed-width text tables: each column padded to its widest cell.
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

inline auto percent(double f) -> std::string {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f%%", 100 * f);
    return buf;
}

inline auto cmd_hash(const options& opt, std::istream& in) -> std::string {
    const std::string fn = opt.required("function");
    if (fn != "xxh3" && fn != "xxh64" && fn != "crc16-redis" && fn != "murmur3-cassandra" && fn != "murmur2-envoy" &&
        fn != "md5-ketama" && fn != "one-at-a-time") {
        usage_error("unknown hash function " + quote(fn) +
                    " (known: xxh3, xxh64, md5-ketama, one-at-a-time, crc16-redis, murmur3-cassandra, murmur2-envoy)");
    }
    std::vector<std::string> digests;
    for (const auto& k : read_keys(in)) {
        std::string digest;
        if (fn == "crc16-redis") {
            digest = std::to_string(keyplace::compat::redis_slot(k));  // the slot, decimal
        } else if (fn == "murmur3-cassandra") {
            digest = std::to_string(keyplace::compat::cassandra_token(keyplace::key_bytes(std::string_view(k))));
        } else if (fn == "md5-ketama") {
            digest = std::to_string(keyplace::compat::md5_ketama{}(std::string_view(k)));
        } else if (fn == "one-at-a-time") {
            digest = std::to_string(keyplace::compat::one_at_a_time{}(std::string_view(k)));
        } else if (fn == "murmur2-envoy") {
            digest = std::to_string(keyplace::compat::murmur2_64{}(std::string_view(k)));  // as Envoy's ring prints it
        } else {
            append_hex64(digest, fn == "xxh3" ? keyplace::xxh3{}(std::string_view(k)) : keyplace::xxh64{}(std::string_view(k)));
        }
        digests.push_back(digest);
    }
    std::string out;
    if (opt.has("json")) {
        std::vector<std::string> items;
        for (const auto& d : digests) {
            items.push_back(json_string(d));
        }
        return "{\"function\":" + json_string(fn) + ",\"digests\":" + json_array(items) + "}\n";
    }
    for (const auto& d : digests) {
        out += d + "\n";
    }
    return out;
}

/// The strategies keyplace-cli knows, for messages.
inline constexpr std::string_view strategy_names =
    "ring, rendezvous, jump, jump-guava, maglev, modulo, ketama, ketama-spy, ketama-unweighted, libketama, "
    "envoy-ring, envoy-maglev, cassandra, redis";

/// The ketama servers of SPEC: ids as addresses, weights as whole numbers.
inline auto ketama_servers(const std::string& spec) -> std::vector<keyplace::compat::ketama_server> {
    std::vector<keyplace::compat::ketama_server> servers;
    for (const auto& n : parse_spec(spec)) {
        if (n.weight != std::floor(n.weight) || n.weight > 18446744073709549568.0) {
            input_error("ketama weight " + keyplace::detail::format_weight(n.weight) + " of server " + quote(n.id) +
                        " is not a whole number");
        }
        servers.push_back({n.id, static_cast<std::uint64_t>(n.weight)});
    }
    return servers;
}

/// Builds the strategy named by --strategy over the nodes of spec and calls use(strategy).
template <class Use>
auto with_strategy(const options& opt, const std::string& spec, Use&& use) -> std::string {
    const std::string strategy = opt.required("strategy");
    std::optional<std::uint32_t> vnodes;
    if (const auto v = opt.get("vnodes")) {
        vnodes = parse_unsigned<std::uint32_t>(*v);
        if (!vnodes || *vnodes == 0) {
            usage_error("--vnodes " + quote(*v) + " is not an integer from 1 to 4294967295");
        }
    }
    std::optional<std::uint64_t> table_size;
    if (const auto t = opt.get("table-size")) {
        table_size = parse_unsigned<std::uint64_t>(*t);
        if (!table_size || *table_size > keyplace::maglev_max_table_size ||
            !keyplace::detail::is_prime(*table_size)) {
            usage_error("--table-size " + quote(*t) + " is not a prime from 2 to " +
                        std::to_string(keyplace::maglev_max_table_size));
        }
    }
    std::optional<std::uint64_t> min_ring;
    std::optional<std::uint64_t> max_ring;
    for (auto [name, value] : {std::pair{"min-ring-size", &min_ring}, std::pair{"max-ring-size", &max_ring}}) {
        if (const auto v = opt.get(name)) {
            *value = parse_unsigned<std::uint64_t>(*v);
            if (!*value) {
                usage_error(std::string("--") + name + " " + quote(*v) + " is not an unsigned integer");
            }
        }
    }
    const auto hash = opt.get("hash");
    const bool known = strategy == "ring" || strategy == "modulo" || strategy == "rendezvous" ||
                       strategy == "jump" || strategy == "jump-guava" || strategy == "maglev" ||
                       strategy == "ketama" || strategy == "ketama-spy" || strategy == "ketama-unweighted" ||
                       strategy == "libketama" || strategy == "envoy-ring" || strategy == "envoy-maglev" ||
                       strategy == "cassandra" || strategy == "redis";
    if (!known) {
        usage_error("unknown strategy " + quote(strategy) + " (known: " + std::string(strategy_names) + ")");
    }
    if (strategy != "ring" && vnodes) {
        usage_error("--vnodes applies only to --strategy ring");
    }
    if (strategy != "maglev" && strategy != "envoy-maglev" && table_size) {
        usage_error("--table-size applies only to --strategy maglev and envoy-maglev");
    }
    if (strategy != "envoy-ring" && (min_ring || max_ring)) {
        usage_error("--min-ring-size and --max-ring-size apply only to --strategy envoy-ring");
    }
    if (hash && strategy != "envoy-ring" && strategy != "ketama-unweighted") {
        usage_error("--hash applies only to --strategy envoy-ring and ketama-unweighted");
    }
    if (hash && strategy == "envoy-ring" && *hash != "xxh64" && *hash != "murmur2-envoy") {
        usage_error("--hash " + quote(*hash) + " is not an entry hash of envoy-ring (xxh64, murmur2-envoy)");
    }
    if (hash && strategy == "ketama-unweighted" && *hash != "one-at-a-time" && *hash != "md5-ketama") {
        usage_error("--hash " + quote(*hash) + " is not a key hash of ketama-unweighted (one-at-a-time, md5-ketama)");
    }
    try {
        using keyplace::compat::ketama_dialect;
        if (strategy == "ketama" || strategy == "ketama-spy" || strategy == "libketama") {
            const auto dialect = strategy == "ketama"       ? ketama_dialect::libmemcached_weighted
                                 : strategy == "ketama-spy" ? ketama_dialect::libmemcached_spy
                                                            : ketama_dialect::libketama;
            return use(keyplace::compat::build_ketama(dialect, ketama_servers(spec)));
        }
        if (strategy == "ketama-unweighted") {
            if (hash == "md5-ketama") {
                return use(keyplace::compat::build_ketama(ketama_dialect::libmemcached_unweighted, ketama_servers(spec)));
            }
            return use(keyplace::compat::build_ketama<keyplace::compat::one_at_a_time>(ketama_dialect::libmemcached_unweighted,
                                                                                      ketama_servers(spec)));
        }
        if (strategy == "envoy-ring") {
            keyplace::compat::envoy_ring_hash_config cfg;
            cfg.min_ring_size = min_ring.value_or(cfg.min_ring_size);
            cfg.max_ring_size = max_ring.value_or(cfg.max_ring_size);
            if (hash == "murmur2-envoy") {
                cfg.hash_function = keyplace::compat::envoy_hash_function::murmur_hash_2;
            }
            return use(keyplace::compat::envoy_ring_hash::build(parse_spec(spec), cfg));
        }
        if (strategy == "envoy-maglev") {
            keyplace::compat::envoy_maglev_config cfg;
            cfg.table_size = table_size.value_or(cfg.table_size);
            return use(keyplace::compat::envoy_maglev::build(parse_spec(spec), cfg));
        }
        if (strategy == "cassandra") {
            return use(keyplace::compat::cassandra_ring::build(parse_entries(spec, parse_cassandra_node)));
        }
        if (strategy == "redis") {
            return use(build_redis(spec));
        }
        const auto nodes = parse_spec(spec);
        if (strategy == "ring") {
            keyplace::ring_config cfg;
            cfg.vnodes = vnodes.value_or(cfg.vnodes);
            return use(keyplace::ring::build(nodes, cfg));
        }
        if (strategy == "rendezvous") {
            return use(keyplace::rendezvous::build(nodes));
        }
        if (strategy == "jump") {
            return use(keyplace::jump::build(nodes));
        }
        if (strategy == "jump-guava") {
            return use(keyplace::jump_guava::build(nodes));
        }
        if (strategy == "maglev") {
            keyplace::maglev_config cfg;
            cfg.table_size = table_size.value_or(cfg.table_size);
            return use(keyplace::maglev::build(nodes, cfg));
        }
        return use(keyplace::modulo::build(nodes));
    } catch (const keyplace::error& e) {
        input_error(e.what());
    }
}

/// The largest pre-hashed point S reads whole: a Redis slot, a 32-bit ketama point, else 2^64 - 1.
template <class S>
constexpr auto max_point() -> std::uint64_t {
    if constexpr (std::is_same_v<S, keyplace::compat::redis_cluster>) {
        return keyplace::compat::redis_slot_count - 1;
    } else if constexpr (requires { typename S::point_type; }) {
        return std::numeric_limits<std::make_unsigned_t<typename S::point_type>>::max();
    } else {
        return std::numeric_limits<std::uint64_t>::max();
    }
}
template <class S>
constexpr auto point_kind() -> std::string_view {
    return std::is_same_v<S, keyplace::compat::redis_cluster> ? "redis (a slot)" : "ketama (32 bits)";
}

/// The points of the input lines: hashed with S's key hash, or parsed with --prehashed.
template <class S>
auto input_points(const std::vector<std::string>& keys, bool prehashed) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> points(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!prehashed) {
            points[i] = keyplace::hash_key(typename S::key_hash{}, std::string_view(keys[i]));
            continue;
        }
        std::optional<std::uint64_t> p;
        if constexpr (std::is_same_v<S, keyplace::compat::cassandra_ring>) {
            const auto token = parse_signed(keys[i]);  // a pre-hashed Cassandra key is its token
            p = token ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*token)) : std::nullopt;
        } else {
            p = parse_unsigned<std::uint64_t>(keys[i]);
            // A point the strategy would silently truncate is an input error, not a point.
            if (p && *p > max_point<S>()) {
                input_error("stdin line " + std::to_string(i + 1) + ": point " + keys[i] + " is above " +
                            std::to_string(max_point<S>()) + ", the largest point of --strategy " +
                            std::string(point_kind<S>()));
            }
        }
        if (!p) {
            input_error("stdin line " + std::to_string(i + 1) + ": " + quote(keys[i]) + " is not " +
                        (std::is_same_v<S, keyplace::compat::cassandra_ring> ? "a signed decimal 64-bit token"
                                                                             : "an unsigned decimal 64-bit point"));
        }
        points[i] = *p;
    }
    return points;
}

/// The replica policy of --replicas, --spread and --on-shortfall, if --replicas was given.
inline auto replica_options(const options& opt) -> std::optional<keyplace::replica_policy> {
    const auto count = opt.get("replicas");
    if (!count) {
        if (opt.has("spread") || opt.has("on-shortfall")) {
            usage_error("--spread and --on-shortfall need --replicas");
        }
        return std::nullopt;
    }
    keyplace::replica_policy policy;
    const auto n = parse_unsigned<std::size_t>(*count);
    if (!n || *n == 0) {
        usage_error("--replicas " + quote(*count) + " is not a positive integer");
    }
    policy.count = *n;
    if (const auto level = opt.get("spread")) {
        const auto parsed = keyplace::parse_failure_domain(*level);
        if (!parsed) {
            usage_error("--spread " + quote(*level) + " is not a level (node, rack, zone, region)");
        }
        policy.spread = *parsed;
    }
    if (const auto rule = opt.get("on-shortfall")) {
        if (*rule != "fail" && *rule != "relax") {
            usage_error("--on-shortfall " + quote(*rule) + " is not fail or relax");
        }
        policy.on_shortfall = *rule == "fail" ? keyplace::shortfall::fail : keyplace::shortfall::relax;
    }
    return policy;
}

/// One key's replicas: their ids comma-separated onto out (no newline), a JSON array onto sets.
template <class S>
void append_replicas(const S& s, std::span<const keyplace::node_index> copies, std::string& out,
                     std::vector<std::string>& sets) {
    std::vector<std::string> ids;
    for (std::size_t k = 0; k < copies.size(); ++k) {
        out += (k == 0 ? "" : ",") + s.nodes()[copies[k].value].id;
        ids.push_back(json_string(s.nodes()[copies[k].value].id));
    }
    sets.push_back(json_array(ids));
}

/// Cassandra replicas of each point under --replication: "N" is SimpleStrategy with RF N,
/// "DC:RF[,DC:RF...]" NetworkTopologyStrategy. One comma-separated line per key.
inline auto cassandra_replicas(const keyplace::compat::cassandra_ring& ring, const std::string& spec,
                               const std::vector<std::uint64_t>& points, bool json) -> std::string {
    std::vector<keyplace::compat::dc_replication> dcs;
    std::optional<std::uint32_t> simple_rf;
    if (spec.find(':') == std::string::npos) {
        simple_rf = parse_unsigned<std::uint32_t>(spec);
        if (!simple_rf || *simple_rf == 0) {
            usage_error("--replication " + quote(spec) + " is not RF (a positive integer) or DC:RF[,DC:RF...]");
        }
    } else {
        for (const auto part : split(spec, ',')) {
            const auto colon = part.rfind(':');
            const auto rf = colon == std::string_view::npos ? std::nullopt : parse_unsigned<std::uint32_t>(part.substr(colon + 1));
            if (!rf || colon == 0) {
                usage_error("--replication entry " + quote(part) + " is not DC:RF");
            }
            dcs.push_back({std::string(part.substr(0, colon)), *rf});
        }
    }
    try {
        const auto plan = simple_rf ? keyplace::compat::nts_replication() : ring.network_topology(dcs);
        // Cassandra accepts an RF above the node count; a key then has every node once.
        std::vector<keyplace::node_index> copies(simple_rf ? std::min<std::size_t>(*simple_rf, ring.size())
                                                           : plan.replica_count());
        std::string out;
        std::vector<std::string> sets;
        for (const auto p : points) {
            const auto token = static_cast<std::int64_t>(p);
            const auto got = simple_rf ? ring.simple_strategy(token, *simple_rf, copies)
                                       : ring.network_topology_replicas(token, plan, copies);
            append_replicas(ring, std::span<const keyplace::node_index>(copies).first(got), out, sets);
            out += "\n";
        }
        return json ? "{\"replicas\":" + json_array(sets) + "}\n" : out;
    } catch (const keyplace::error& e) {
        input_error(e.what());
    }
}

inline auto cmd_locate(const options& opt, std::istream& in) -> std::string {
    const bool prehashed = opt.has("prehashed");
    const auto policy = replica_options(opt);
    const auto replication = opt.get("replication");
    if (replication && (policy || opt.required("strategy") != "cassandra")) {
        usage_error("--replication applies only to --strategy cassandra, without --replicas");
    }
    return with_strategy(opt, opt.required("nodes"), [&](const auto& s) -> std::string {
        using S = std::remove_cvref_t<decltype(s)>;
        const bool json = opt.has("json");
        if constexpr (std::is_same_v<S, keyplace::compat::cassandra_ring>) {
            if (replication) {
                return cassandra_replicas(s, *replication, input_points<S>(read_keys(in), prehashed), json);
            }
        }
        if (!policy) {
            const auto points = input_points<S>(read_keys(in), prehashed);
            std::string out;
            std::vector<std::string> items;
            for (const auto p : points) {
                const auto& id = s.nodes()[s.pick(p).value].id;
                if (json) {
                    items.push_back(json_string(id));
                } else {
                    out += id + "\n";
                }
            }
            return json ? "{\"owners\":" + json_array(items) + "}\n" : out;
        }
        if constexpr (keyplace::ordered_placement_strategy<S>) {
            const auto placer = keyplace::replica_placer<S>::build(s, *policy);
            const auto points = input_points<S>(read_keys(in), prehashed);
            std::vector<keyplace::node_index> copies(placer.count());
            std::string out;
            std::vector<std::string> sets;
            for (const auto p : points) {
                const auto r = placer.place(p, copies);
                append_replicas(s, std::span<const keyplace::node_index>(copies).first(r.placed), out, sets);
                out += r.degraded ? " degraded\n" : "\n";
            }
            if (json) {
                return "{\"replicas\":" + json_array(sets) + ",\"degraded\":" + (placer.degraded() ? "true" : "false") +
                       ",\"achieved\":" + json_string(keyplace::to_string(placer.achieved())) + "}\n";
            }
            return out;
        } else {
            usage_error("--replicas needs a strategy with a preference order (ring, rendezvous, maglev)");
        }
    });
}

inline auto method_name(keyplace::share_method m) -> std::string {
    switch (m) {
        case keyplace::share_method::exact: return "exact";
        case keyplace::share_method::expected: return "expected";
        case keyplace::share_method::sampled: return "sampled";
    }
    return "?";
}

/// The keys of --keys FILE (one per line, as for stdin), or nothing without --keys.
inline auto key_file(const options& opt) -> std::optional<std::vector<std::string>> {
    const auto path = opt.get("keys");
    if (!path) {
        return std::nullopt;
    }
    std::ifstream file(*path, std::ios::binary);
    if (!file) {
        input_error("cannot read key file " + quote(*path));
    }
    auto keys = read_keys(file);
    if (keys.empty()) {
        input_error("key file " + quote(*path) + " has no keys");
    }
    return keys;
}

inline auto cmd_diff(const options& opt) -> std::string {
    const auto keys = key_file(opt);
    const std::string before_spec = opt.required("before");
    const std::string after_spec = opt.required("after");
    return with_strategy(opt, before_spec, [&](const auto& before) -> std::string {
        using S = std::remove_cvref_t<decltype(before)>;
        std::string out;
        with_strategy(opt, after_spec, [&](const auto& after) -> std::string {
            using T = std::remove_cvref_t<decltype(after)>;
            if constexpr (std::is_same_v<S, T>) {
                keyplace::movement_report r;
                std::string basis;
                if (keys) {
                    const auto points = input_points<S>(*keys, false);
                    r = keyplace::movement(before, after, points);
                    basis = std::to_string(keys->size()) + " keys from " + quote(*opt.get("keys"));
                } else {
                    r = keyplace::movement(before, after);
                    basis = r.exact ? "exact, over the whole hash space"
                                    : "sampled, " + std::to_string(keyplace::analysis_sample_size) + " fixed points";
                }
                const double ratio = r.minimum > 0 ? r.moved / r.minimum : (r.moved > 0 ? std::numeric_limits<double>::infinity() : 1.0);
                if (opt.has("json")) {
                    std::vector<std::string> flows;
                    for (const auto& f : r.flows) {
                        flows.push_back("{\"id\":" + json_string(f.id) + ",\"inflow\":" + json_number(f.inflow) +
                                        ",\"outflow\":" + json_number(f.outflow) + "}");
                    }
                    out = "{\"strategy\":" + json_string(opt.required("strategy")) + ",\"basis\":" + json_string(basis) +
                          ",\"keys\":" + std::to_string(r.keys) + ",\"moved\":" + json_number(r.moved) +
                          ",\"minimum\":" + json_number(r.minimum) + ",\"minimum_method\":" +
                          json_string(method_name(r.minimum_method)) + ",\"fair_minimum\":" + json_number(r.fair_minimum) +
                          ",\"violations\":" + json_number(r.violations) + ",\"flows\":" + json_array(flows) + "}\n";
                    return out;
                }
                char ratio_text[32];
                std::snprintf(ratio_text, sizeof ratio_text, "%.3f", ratio);
                out = "strategy " + opt.required("strategy") + ": " + std::to_string(before.size()) + " -> " +
                      std::to_string(after.size()) + " nodes; " + basis + "\n";
                out += text_table({
                    {"moved", percent(r.moved), "keys whose owner changed"},
                    {"minimum", percent(r.minimum), "the least any placement moves to reach these shares (" +
                                                        method_name(r.minimum_method) + ")"},
                    {"fair minimum", percent(r.fair_minimum), "the least an ideally balanced scheme moves"},
                    {"moved/minimum", ratio_text, ""},
                    {"violations", percent(r.violations), "moved between two nodes present in both"},
                });
                std::vector<std::vector<std::string>> rows{{"node", "inflow", "outflow"}};
                for (const auto& f : r.flows) {
                    rows.push_back({f.id, percent(f.inflow), percent(f.outflow)});
                }
                out += "\n" + text_table(rows);
            }
            return out;
        });
        return out;
    });
}

inline auto cmd_stats(const options& opt) -> std::string {
    std::size_t count = 100'000;
    if (const auto k = opt.get("keys")) {
        const auto n = parse_unsigned<std::size_t>(*k);
        if (!n || *n == 0) {
            usage_error("--keys " + quote(*k) + " is not a positive integer");
        }
        count = *n;
    }
    return with_strategy(opt, opt.required("nodes"), [&](const auto& s) -> std::string {
        using S = std::remove_cvref_t<decltype(s)>;
        std::vector<std::uint64_t> points(count);
        for (std::size_t i = 0; i < count; ++i) {
            points[i] = keyplace::hash_key(typename S::key_hash{}, "key-" + std::to_string(i));
        }
        const auto own = keyplace::ownership(s);
        const auto l = keyplace::load(s, points);
        const double mean = static_cast<double>(count) / static_cast<double>(s.size());
        if (opt.has("json")) {
            std::vector<std::string> rows;
            for (std::size_t i = 0; i < s.size(); ++i) {
                rows.push_back("{\"id\":" + json_string(s.nodes()[i].id) + ",\"weight\":" + json_number(s.nodes()[i].weight) +
                               ",\"share\":" + json_number(own.share[i]) + ",\"keys\":" + std::to_string(l.keys[i]) + "}");
            }
            return "{\"strategy\":" + json_string(opt.required("strategy")) + ",\"keys\":" + std::to_string(count) +
                   ",\"share_method\":" + json_string(method_name(own.method)) + ",\"share_error_bound\":" +
                   json_number(own.error_bound) + ",\"max_over_mean\":" + json_number(l.max_over_mean) +
                   ",\"min_over_mean\":" + json_number(l.min_over_mean) + ",\"cv\":" + json_number(l.cv) +
                   ",\"nodes\":" + json_array(rows) + "}\n";
        }
        std::vector<std::vector<std::string>> rows{{"node", "weight", "share", "keys", "keys/mean"}};
        for (std::size_t i = 0; i < s.size(); ++i) {
            char ratio[32];
            std::snprintf(ratio, sizeof ratio, "%.4f", static_cast<double>(l.keys[i]) / mean);
            rows.push_back({s.nodes()[i].id, json_number(s.nodes()[i].weight), percent(own.share[i]),
                            std::to_string(l.keys[i]), ratio});
        }
        char summary[160];
        std::snprintf(summary, sizeof summary, "max/mean %.4f  min/mean %.4f  cv %.4f", l.max_over_mean, l.min_over_mean, l.cv);
        std::string bound = own.method == keyplace::share_method::sampled ? " (within " + percent(own.error_bound) + ")" : "";
        return "strategy " + opt.required("strategy") + ": " + std::to_string(s.size()) + " nodes; share: " +
               method_name(own.method) + bound + "; keys: \"key-0\" ... \"key-" + std::to_string(count - 1) + "\"\n" +
               text_table(rows) + "\n" + summary + "\n";
    });
}

/// Runs keyplace-cli with args (without the program name). Writes to out only on success.
inline auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
                std::ostream& err) -> int {
    try {
        if (args.empty()) {
            usage_error("no command given");
        }
        const std::string_view command = args.front();
        const auto rest = args.subspan(1);
        if (command == "--help" || command == "-h" || command == "help") {
            out << usage_text;
            return exit_ok;
        }
        std::string result;
        static constexpr std::string_view json_flag[] = {"json"};
        if (command == "hash") {
            static constexpr std::string_view valued[] = {"function"};
            result = cmd_hash(options(rest, valued, json_flag), in);
        } else if (command == "locate") {
            static constexpr std::string_view valued[] = {"strategy", "nodes", "vnodes", "table-size", "min-ring-size",
                                                          "max-ring-size", "hash", "replicas", "spread", "on-shortfall",
                                                          "replication"};
            static constexpr std::string_view flags[] = {"prehashed", "json"};
            result = cmd_locate(options(rest, valued, flags), in);
        } else if (command == "diff") {
            static constexpr std::string_view valued[] = {"strategy", "before", "after", "keys", "vnodes", "table-size",
                                                          "min-ring-size", "max-ring-size", "hash"};
            result = cmd_diff(options(rest, valued, json_flag));
        } else if (command == "stats") {
            static constexpr std::string_view valued[] = {"strategy", "nodes", "keys", "vnodes", "table-size",
                                                          "min-ring-size", "max-ring-size", "hash"};
            result = cmd_stats(options(rest, valued, json_flag));
        } else {
            usage_error("unknown command " + quote(command) + " (known: hash, locate, diff, stats)");
        }
        out << result;
        out.flush();
        return exit_ok;
    } catch (const cli_error& e) {
        err << "keyplace-cli: " << e.what() << '\n';
        return e.status;
    }
}

}  // namespace keyplace_cli

#endif
