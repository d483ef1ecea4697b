// keyplace-fleet's command line: the options, their one table (usage, parsing, validation) and
// the failure every refusal is. A header of its own so that the parser can be called without
// running the fleet (the fleet_options fuzz target).
#ifndef KEYPLACE_FLEET_PROGRAM_FLEET_OPTIONS_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_FLEET_OPTIONS_HPP_INCLUDED

#include "args.hpp"

#include <keyplace/fleet/strategy_table.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace keyplace_fleet {

// ---------------------------------------------------------------------------------------------
// Failures: one exception type carrying the message printed as "keyplace-fleet: <message>".
struct failure : std::runtime_error {
    int status;
    explicit failure(const std::string& m, int s = 1) : std::runtime_error(m), status(s) {}
};

// The most client processes (--clients).
inline constexpr std::size_t max_clients = 8;

// A regular file this process may execute (a directory is "executable" to access(X_OK)).
inline auto executable_file(const std::string& path) -> bool {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// ---------------------------------------------------------------------------------------------
// Options: one table gives usage, parsing and validation.
struct options {
    std::vector<std::string> strategies{"modulo", "ring", "rendezvous", "jump", "maglev", "ketama", "bounded"};
    std::vector<std::string> rules{"none", "write-set", "flush"};
    std::vector<double> alphas{0.99};  // 0 = uniform
    std::vector<std::uint64_t> seeds{1};
    std::uint64_t keys = 50000;
    std::uint64_t window = 5000;
    std::uint64_t steady = 4;   // windows
    std::uint64_t phase = 10;   // windows per event phase
    std::uint64_t warm = 0;     // requests of warm-up after the prefill
    double prefill = 1.0;  // fraction of the universe set before the run
    double writes = 0.01;
    std::uint64_t value_size = 100;
    std::uint64_t lag = 0;
    std::uint64_t clients = 1;
    std::string etcd;  // an endpoint http://IPV4:PORT, or "start"
    std::uint64_t late_ms = 50;
    bool late_ms_given = false;
    bool no_barrier = false;
    std::string memcached = "memcached";
    std::string json;
    std::string svg;
    bool cascade = false;
    bool rollout = false;
    bool strategies_given = false;
    bool rules_given = false;
    bool quiet = false;
};

// The value quoted as keyplace-cli quotes it: escaped control bytes, cut after 64 bytes.
inline auto bad(const std::string& opt, std::string_view v, const std::string& why) -> failure {
    return failure("--" + opt + " " + keyplace_cli::quote(v) + ": " + why, 2);
}

inline auto parse_u64(const std::string& opt, std::string_view v, std::uint64_t lo, std::uint64_t hi) -> std::uint64_t {
    const auto x = keyplace_cli::parse_unsigned<std::uint64_t>(v);
    if (!x || *x < lo || *x > hi) {
        throw bad(opt, v, "expected a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return *x;
}

inline auto parse_double(const std::string& opt, std::string_view v, double lo, double hi) -> double {
    const auto x = keyplace_cli::parse_decimal(v);
    if (!x || !(*x >= lo && *x <= hi)) {
        throw bad(opt, v, "expected a number in " + std::to_string(lo).substr(0, 4) + ".." +
                              std::to_string(hi).substr(0, 4));
    }
    return *x;
}

inline auto split(std::string_view v) -> std::vector<std::string_view> {
    return keyplace_cli::split(v, ',');
}

// A list's values, each once: a repeat is refused naming the item as given.
template <class T>
void check_distinct(const std::string& opt, const std::vector<std::string_view>& items, const std::vector<T>& values) {
    if (const auto i = keyplace_cli::first_repeat(std::span<const T>(values))) {
        throw bad(opt, items[*i], "listed twice");
    }
}

// Every strategy the fleet can place its servers with: each strategy-table row whose nodes need no
// data of their own (the servers are names), then "bounded" (the ring with bounded loads).
inline const std::vector<std::string> all_strategies = [] {
    std::vector<std::string> out;
    for (const auto& row : keyplace::strategy_table) {
        if (row.per_node == keyplace::node_data::none) {
            out.emplace_back(row.name);
        }
    }
    out.emplace_back("bounded");
    return out;
}();
inline const std::vector<std::string> all_rules{"none", "write-set", "flush"};

inline auto parse_names(const std::string& opt, std::string_view v, const std::vector<std::string>& allowed)
    -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto n : split(v)) {
        if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
            std::string list;
            for (const auto& a : allowed) {
                list += (list.empty() ? "" : ", ") + a;
            }
            throw bad(opt, n, "not one of " + list);
        }
        out.emplace_back(n);
    }
    check_distinct(opt, split(v), out);
    return out;
}

// http://A.B.C.D:PORT, the form the late client's relay can reach.
inline auto is_ipv4_endpoint(std::string_view v) -> bool {
    constexpr std::string_view scheme = "http://";
    if (v.substr(0, scheme.size()) != scheme) {
        return false;
    }
    v.remove_prefix(scheme.size());
    const auto colon = v.rfind(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    in_addr a{};
    const std::string host(v.substr(0, colon));
    std::uint64_t port = 0;
    const auto ps = v.substr(colon + 1);
    const auto r = std::from_chars(ps.data(), ps.data() + ps.size(), port);
    return ::inet_pton(AF_INET, host.c_str(), &a) == 1 && r.ec == std::errc{} && r.ptr == ps.data() + ps.size() &&
           port >= 1 && port <= 65535;
}

struct option_spec {
    const char* name;
    const char* value;  // nullptr: a flag
    const char* help;
    std::function<void(options&, std::string_view)> set;
};

inline auto option_table() -> const std::vector<option_spec>& {
    static const std::vector<option_spec> table{
        {"strategies", "LIST",
         "any strategy-table row whose nodes take no data of their own, or bounded (default: "
         "modulo,ring,rendezvous,jump,maglev,ketama,bounded)",
         [](options& o, std::string_view v) {
             o.strategies = parse_names("strategies", v, all_strategies);
             o.strategies_given = true;
         }},
        {"rules", "LIST", "transition rules none,write-set,flush (default: all)",
         [](options& o, std::string_view v) {
             o.rules = parse_names("rules", v, all_rules);
             o.rules_given = true;
         }},
        {"alphas", "LIST", "Zipf exponents in 0.1..3, or 'uniform' (default 0.99)",
         [](options& o, std::string_view v) {
             o.alphas.clear();
             for (const auto a : split(v)) {
                 o.alphas.push_back(a == "uniform" ? 0.0 : parse_double("alphas", a, 0.1, 3.0));
             }
             check_distinct("alphas", split(v), o.alphas);
         }},
        {"seeds", "LIST", "key salts, whole numbers (default 1)",
         [](options& o, std::string_view v) {
             o.seeds.clear();
             for (const auto s : split(v)) {
                 o.seeds.push_back(parse_u64("seeds", s, 0, UINT32_MAX));
             }
             check_distinct("seeds", split(v), o.seeds);
         }},
        {"keys", "N", "key universe, 100..10000000 (default 50000)",
         [](options& o, std::string_view v) { o.keys = parse_u64("keys", v, 100, 10000000); }},
        {"window", "N", "requests per window, 100..10000000 (default 5000)",
         [](options& o, std::string_view v) { o.window = parse_u64("window", v, 100, 10000000); }},
        {"steady", "N", "steady windows before the join, 1..1000 (default 4)",
         [](options& o, std::string_view v) { o.steady = parse_u64("steady", v, 1, 1000); }},
        {"phase", "N", "windows after each event, 1..1000 (default 10)",
         [](options& o, std::string_view v) { o.phase = parse_u64("phase", v, 1, 1000); }},
        {"warm", "N", "warm-up requests before the steady windows, 0..100000000 (default 0)",
         [](options& o, std::string_view v) { o.warm = parse_u64("warm", v, 0, 100000000); }},
        {"prefill", "F", "fraction of the keys set before the run, 0..1 (default 1: fully warm)",
         [](options& o, std::string_view v) { o.prefill = parse_double("prefill", v, 0.0, 1.0); }},
        {"writes", "F", "fraction of requests that are writes, 0..0.5 (default 0.01)",
         [](options& o, std::string_view v) { o.writes = parse_double("writes", v, 0.0, 0.5); }},
        {"value-size", "N", "value bytes, 16..100000 (default 100)",
         [](options& o, std::string_view v) { o.value_size = parse_u64("value-size", v, 16, 100000); }},
        {"lag", "N", "requests a client keeps using an old epoch after a publish, 0..10000000 (default 0)",
         [](options& o, std::string_view v) { o.lag = parse_u64("lag", v, 0, 10000000); }},
        {"clients", "N", "client processes following membership through etcd, 1..8 (default 1: one client here)",
         [](options& o, std::string_view v) { o.clients = parse_u64("clients", v, 1, max_clients); }},
        {"etcd", "URL", "etcd for --clients: http://IPV4:PORT, or 'start' to run one on free loopback ports",
         [](options& o, std::string_view v) {
             o.etcd = std::string(v);
             if (v != "start" && !is_ipv4_endpoint(v)) {
                 throw bad("etcd", v, "expected 'start' or http://IPV4:PORT");
             }
         }},
        {"late-ms", "D", "with --clients: everything etcd sends the last client arrives D ms late, 0..10000 (default 50)",
         [](options& o, std::string_view v) {
             o.late_ms = parse_u64("late-ms", v, 0, 10000);
             o.late_ms_given = true;
         }},
        {"no-barrier", nullptr, "with --clients: publish each completing epoch without waiting for the clients' reports",
         [](options& o, std::string_view) { o.no_barrier = true; }},
        {"memcached", "PATH", "the memcached binary (default: memcached on PATH)",
         [](options& o, std::string_view v) {
             o.memcached = std::string(v);
             // Refused here, not after five attempts to start it; a path that does not exist is a
             // missing memcached (status 77, below).
             if (v.empty() || (v.find('/') != std::string_view::npos && ::access(o.memcached.c_str(), F_OK) == 0 &&
                               !executable_file(o.memcached))) {
                 throw bad("memcached", v, "not an executable regular file");
             }
         }},
        {"json", "FILE", "also write every figure as JSON to FILE ('-': stdout instead of the table)",
         [](options& o, std::string_view v) { o.json = std::string(v); }},
        {"svg", "FILE", "write the hit-rate timeline (first alpha, seed and rule) to FILE",
         [](options& o, std::string_view v) { o.svg = std::string(v); }},
        {"rollout", nullptr,
         "with --clients: measure a ramped join and its rollback against a one-shot join (default strategy ring)",
         [](options& o, std::string_view) { o.rollout = true; }},
        {"cascade", nullptr, "run the ring-cascade simulation (no servers) and exit",
         [](options& o, std::string_view) { o.cascade = true; }},
        {"quiet", nullptr, "no progress on stderr", [](options& o, std::string_view) { o.quiet = true; }},
    };
    return table;
}

inline auto usage() -> std::string {
    std::string u = "usage: keyplace-fleet [options]\n";
    for (const auto& o : option_table()) {
        std::string left = std::string("  --") + o.name + (o.value != nullptr ? std::string(" ") + o.value : "");
        left.resize(std::max<std::size_t>(left.size() + 1, 22), ' ');
        u += left + o.help + "\n";
    }
    return u;
}

/// The options of argv, read by keyplace-cli's parser (--NAME VALUE, --NAME=VALUE or --FLAG,
/// each at most once), each then set in command-line order; nothing: --help.
inline auto parse(int argc, char** argv) -> std::optional<options> {
    const auto& table = option_table();
    std::vector<keyplace_cli::option_spec> known;
    for (const auto& s : table) {
        known.push_back({s.name, s.value != nullptr ? s.value : "", s.help});
    }
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    std::optional<keyplace_cli::parsed_args> given;
    try {
        given.emplace(args, known);
    } catch (const keyplace_cli::cli_error& e) {
        throw failure(e.what(), 2);
    }
    if (given->help()) {
        return std::nullopt;
    }
    options o;
    for (const auto name : given->names()) {
        const auto at = static_cast<std::size_t>(
            std::find_if(known.begin(), known.end(), [&](const keyplace_cli::option_spec& k) { return k.name == name; }) -
            known.begin());
        table[at].set(o, given->get(known[at]).value_or(""));
    }
    if (o.rollout && !o.strategies_given) {
        o.strategies = {"ring"};
    }
    return o;
}

}  // namespace keyplace_fleet

#endif
