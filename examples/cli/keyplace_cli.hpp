// keyplace-cli: the operator's view of placement. The whole program lives in this header so
// the tests can run it in-process on string streams; main.cpp only forwards argv.
#ifndef KEYPLACE_EXAMPLES_CLI_KEYPLACE_CLI_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_KEYPLACE_CLI_HPP_INCLUDED

#include <keyplace/keyplace.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
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
    "  keyplace-cli hash --function xxh3|xxh64\n"
    "  keyplace-cli locate --strategy S --nodes SPEC [--vnodes V] [--table-size M] [--prehashed]\n"
    "      S: ring (--vnodes, default 160), rendezvous, jump, jump-guava (nodes in bucket\n"
    "      order, weight 1), maglev (--table-size, a prime, default 65537), modulo (baseline)\n"
    "      [--replicas N [--spread node|rack|zone|region] [--on-shortfall fail|relax]]: N copies\n"
    "      per key, comma-separated in order, then ' degraded' when too few domains were relaxed\n"
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
            input_error(where + ": " + f.message);
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

/// Parses SPEC: comma-separated entries, or @PATH to a file of one entry per line.
inline auto parse_spec(const std::string& spec) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> nodes;
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
            nodes.push_back(parse_node(v, path + ":" + std::to_string(line_no)));
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
        nodes.push_back(parse_node(entry, where));
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return nodes;
}

inline void append_hex64(std::string& out, std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    out.append(buf, 16);
}

inline auto cmd_hash(const options& opt, std::istream& in) -> std::string {
    const std::string fn = opt.required("function");
    std::string out;
    const auto keys = read_keys(in);
    if (fn == "xxh3") {
        for (const auto& k : keys) {
            append_hex64(out, keyplace::xxh3{}(std::string_view(k)));
            out += '\n';
        }
    } else if (fn == "xxh64") {
        for (const auto& k : keys) {
            append_hex64(out, keyplace::xxh64{}(std::string_view(k)));
            out += '\n';
        }
    } else {
        usage_error("unknown hash function " + quote(fn) + " (known: xxh3, xxh64)");
    }
    return out;
}

/// The strategies keyplace-cli knows, for messages.
inline constexpr std::string_view strategy_names = "ring, rendezvous, jump, jump-guava, maglev, modulo";

/// Builds the strategy named by --strategy from the parsed options and calls use(strategy).
template <class Use>
auto with_strategy(const options& opt, Use&& use) -> std::string {
    const std::string strategy = opt.required("strategy");
    const std::string spec = opt.required("nodes");
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
    const bool known = strategy == "ring" || strategy == "modulo" || strategy == "rendezvous" ||
                       strategy == "jump" || strategy == "jump-guava" || strategy == "maglev";
    if (!known) {
        usage_error("unknown strategy " + quote(strategy) + " (known: " + std::string(strategy_names) + ")");
    }
    if (strategy != "ring" && vnodes) {
        usage_error("--vnodes applies only to --strategy ring");
    }
    if (strategy != "maglev" && table_size) {
        usage_error("--table-size applies only to --strategy maglev");
    }
    const auto nodes = parse_spec(spec);
    try {
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

/// The points of the input lines: hashed with S's key hash, or parsed with --prehashed.
template <class S>
auto input_points(const std::vector<std::string>& keys, bool prehashed) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> points(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!prehashed) {
            points[i] = keyplace::hash_key(typename S::key_hash{}, std::string_view(keys[i]));
            continue;
        }
        const auto p = parse_unsigned<std::uint64_t>(keys[i]);
        if (!p) {
            input_error("stdin line " + std::to_string(i + 1) + ": " + quote(keys[i]) +
                        " is not an unsigned decimal 64-bit point");
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

inline auto cmd_locate(const options& opt, std::istream& in) -> std::string {
    const bool prehashed = opt.has("prehashed");
    const auto policy = replica_options(opt);
    return with_strategy(opt, [&](const auto& s) -> std::string {
        using S = std::remove_cvref_t<decltype(s)>;
        if (!policy) {
            const auto points = input_points<S>(read_keys(in), prehashed);
            std::string out;
            for (const auto p : points) {
                out += s.nodes()[s.pick(p).value].id;
                out += '\n';
            }
            return out;
        }
        if constexpr (keyplace::ordered_placement_strategy<S>) {
            const auto placer = keyplace::replica_placer<S>::build(s, *policy);
            const auto points = input_points<S>(read_keys(in), prehashed);
            std::vector<keyplace::node_index> copies(placer.count());
            std::string out;
            for (const auto p : points) {
                const auto r = placer.place(p, copies);
                for (std::size_t k = 0; k < r.placed; ++k) {
                    out += (k == 0 ? "" : ",") + s.nodes()[copies[k].value].id;
                }
                out += r.degraded ? " degraded\n" : "\n";
            }
            return out;
        } else {
            usage_error("--replicas needs a strategy with a preference order (ring, rendezvous, maglev)");
        }
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
        if (command == "hash") {
            static constexpr std::string_view valued[] = {"function"};
            result = cmd_hash(options(rest, valued, {}), in);
        } else if (command == "locate") {
            static constexpr std::string_view valued[] = {"strategy", "nodes", "vnodes", "table-size",
                                                          "replicas", "spread", "on-shortfall"};
            static constexpr std::string_view flags[] = {"prehashed"};
            result = cmd_locate(options(rest, valued, flags), in);
        } else {
            usage_error("unknown command " + quote(command) + " (known: hash, locate)");
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
