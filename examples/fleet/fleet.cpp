// keyplace-fleet — a real cache fleet: memcached servers on 127.0.0.1 placed by keyplace, a
// look-aside workload with Zipf popularity, membership changes published as snapshot epochs,
// measured through a join, a leave and a rejoin against a control run (README, "A real cache
// fleet"). --cascade runs the ring-cascade simulation instead (no servers).
#include <keyplace/analysis.hpp>
#include <keyplace/bounded_load.hpp>
#include <keyplace/publisher.hpp>
#include <keyplace/snapshot.hpp>

#include <libmemcached/memcached.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace kp = keyplace;

// ---------------------------------------------------------------------------------------------
// Failures: one exception type carrying the message printed as "keyplace-fleet: <message>".
struct failure : std::runtime_error {
    int status;
    explicit failure(const std::string& m, int s = 1) : std::runtime_error(m), status(s) {}
};

// Exit status when memcached is absent: ctest's conventional skip code.
constexpr int status_no_memcached = 77;

// ---------------------------------------------------------------------------------------------
// Servers. Children are recorded in a fixed array the signal handler can read.
constexpr std::size_t max_servers = 16;
std::array<std::atomic<pid_t>, max_servers> children{};

void kill_children() noexcept {
    for (auto& c : children) {
        const pid_t p = c.exchange(0);
        if (p > 0) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
    }
}

extern "C" void on_signal(int sig) {
    kill_children();  // kill and waitpid are async-signal-safe
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

auto find_executable(const std::string& name) -> std::optional<std::string> {
    if (name.find('/') != std::string::npos) {
        return ::access(name.c_str(), X_OK) == 0 ? std::optional<std::string>(name) : std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        const std::string full = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(full.c_str(), X_OK) == 0) {
            return full;
        }
    }
    return std::nullopt;
}

// A port the kernel has just handed out (bound, then released for memcached to take).
auto free_port() -> std::uint16_t {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        throw failure(std::string("cannot open a socket: ") + std::strerror(errno));
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    ::close(fd);
    if (!ok) {
        throw failure(std::string("cannot find a free port: ") + std::strerror(errno));
    }
    return ntohs(a.sin_port);
}

// Whether the server on port answers "version\r\n" with "VERSION ...".
auto answers_version(std::uint16_t port) -> bool {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::write(fd, "version\r\n", 9) == 9;
    if (ok) {
        pollfd p{fd, POLLIN, 0};
        char buf[64] = {};
        ok = ::poll(&p, 1, 1000) == 1 && ::read(fd, buf, sizeof buf - 1) >= 8 && std::strncmp(buf, "VERSION ", 8) == 0;
    }
    ::close(fd);
    return ok;
}

struct server {
    std::size_t slot = 0;  // index into children
    std::uint16_t port = 0;
    pid_t pid = 0;
};

// Starts memcached on a free loopback port and waits until it answers version (5 s at most).
auto start_server(const std::string& binary, std::size_t slot) -> server {
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::uint16_t port = free_port();
        const std::string port_s = std::to_string(port);
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0) {
            throw failure(std::string("cannot fork: ") + std::strerror(errno));
        }
        if (pid == 0) {
            // As root, drop to nobody here rather than with memcached's -u: a change of user clears
            // the parent-death signal, which is set after it so that the server dies with this
            // program even when that is killed with SIGKILL.
            if (::geteuid() == 0) {
                const passwd* nobody = ::getpwnam("nobody");
                if (nobody == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(nobody->pw_gid) != 0 ||
                    ::setuid(nobody->pw_uid) != 0) {
                    ::_exit(126);
                }
            }
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                ::_exit(1);
            }
            std::vector<const char*> argv{binary.c_str(), "-l", "127.0.0.1", "-p", port_s.c_str(), "-U", "0",
                                          "-m", "64", "-t", "1", nullptr};
            ::execv(binary.c_str(), const_cast<char* const*>(argv.data()));
            ::_exit(127);
        }
        children[slot].store(pid);
        for (int i = 0; i < 500; ++i) {
            if (answers_version(port)) {
                return {slot, port, pid};
            }
            int st = 0;
            if (::waitpid(pid, &st, WNOHANG) == pid) {
                children[slot].store(0);
                break;  // exited (the port was taken meanwhile): try another port
            }
            ::usleep(10000);
        }
        if (const pid_t p = children[slot].exchange(0); p > 0) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
    }
    throw failure("memcached (" + binary + ") did not answer version on 127.0.0.1 after 5 attempts");
}

// One libmemcached connection per server; placement is keyplace's.
struct connection {
    memcached_st* mc = nullptr;
    explicit connection(std::uint16_t port) : mc(memcached_create(nullptr)) {
        if (mc == nullptr || memcached_server_add(mc, "127.0.0.1", port) != MEMCACHED_SUCCESS) {
            throw failure("libmemcached: cannot add server 127.0.0.1:" + std::to_string(port));
        }
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NOREPLY, 1);  // sets and deletes: no round trip
    }
    connection(const connection&) = delete;
    auto operator=(const connection&) -> connection& = delete;
    ~connection() { memcached_free(mc); }
};

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
    std::string memcached = "memcached";
    std::string json;
    std::string svg;
    bool cascade = false;
    bool quiet = false;
};

auto bad(const std::string& opt, std::string_view v, const std::string& why) -> failure {
    const std::string shown = v.size() > 40 ? std::string(v.substr(0, 40)) + "..." : std::string(v);
    return failure("--" + opt + " '" + shown + "': " + why, 2);
}

auto parse_u64(const std::string& opt, std::string_view v, std::uint64_t lo, std::uint64_t hi) -> std::uint64_t {
    std::uint64_t x = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc{} || r.ptr != v.data() + v.size() || x < lo || x > hi) {
        throw bad(opt, v, "expected a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return x;
}

auto parse_double(const std::string& opt, std::string_view v, double lo, double hi) -> double {
    const std::string s(v);
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !(x >= lo && x <= hi)) {
        throw bad(opt, v, "expected a number in " + std::to_string(lo).substr(0, 4) + ".." +
                              std::to_string(hi).substr(0, 4));
    }
    return x;
}

auto split(std::string_view v) -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    while (true) {
        const auto c = v.find(',');
        out.push_back(v.substr(0, c));
        if (c == std::string_view::npos) {
            return out;
        }
        v = v.substr(c + 1);
    }
}

const std::vector<std::string> all_strategies{"modulo", "ring", "rendezvous", "jump", "maglev", "ketama", "bounded"};
const std::vector<std::string> all_rules{"none", "write-set", "flush"};

auto parse_names(const std::string& opt, std::string_view v, const std::vector<std::string>& allowed)
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
    return out;
}

struct option_spec {
    const char* name;
    const char* value;  // nullptr: a flag
    const char* help;
    std::function<void(options&, std::string_view)> set;
};

auto option_table() -> const std::vector<option_spec>& {
    static const std::vector<option_spec> table{
        {"strategies", "LIST", "modulo,ring,rendezvous,jump,maglev,ketama,bounded (default: all)",
         [](options& o, std::string_view v) { o.strategies = parse_names("strategies", v, all_strategies); }},
        {"rules", "LIST", "transition rules none,write-set,flush (default: all)",
         [](options& o, std::string_view v) { o.rules = parse_names("rules", v, all_rules); }},
        {"alphas", "LIST", "Zipf exponents in 0.1..3, or 'uniform' (default 0.99)",
         [](options& o, std::string_view v) {
             o.alphas.clear();
             for (const auto a : split(v)) {
                 o.alphas.push_back(a == "uniform" ? 0.0 : parse_double("alphas", a, 0.1, 3.0));
             }
         }},
        {"seeds", "LIST", "key salts, whole numbers (default 1)",
         [](options& o, std::string_view v) {
             o.seeds.clear();
             for (const auto s : split(v)) {
                 o.seeds.push_back(parse_u64("seeds", s, 0, UINT32_MAX));
             }
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
        {"memcached", "PATH", "the memcached binary (default: memcached on PATH)",
         [](options& o, std::string_view v) { o.memcached = std::string(v); }},
        {"json", "FILE", "also write every figure as JSON to FILE ('-': stdout instead of the table)",
         [](options& o, std::string_view v) { o.json = std::string(v); }},
        {"svg", "FILE", "write the hit-rate timeline (first alpha, seed and rule) to FILE",
         [](options& o, std::string_view v) { o.svg = std::string(v); }},
        {"cascade", nullptr, "run the ring-cascade simulation (no servers) and exit",
         [](options& o, std::string_view) { o.cascade = true; }},
        {"quiet", nullptr, "no progress on stderr", [](options& o, std::string_view) { o.quiet = true; }},
    };
    return table;
}

auto usage() -> std::string {
    std::string u = "usage: keyplace-fleet [options]\n";
    for (const auto& o : option_table()) {
        std::string left = std::string("  --") + o.name + (o.value != nullptr ? std::string(" ") + o.value : "");
        left.resize(std::max<std::size_t>(left.size() + 1, 22), ' ');
        u += left + o.help + "\n";
    }
    return u;
}

auto parse(int argc, char** argv) -> std::optional<options> {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            return std::nullopt;
        }
        const auto& t = option_table();
        const auto it = std::find_if(t.begin(), t.end(), [&](const option_spec& s) {
            return a.size() > 2 && a.substr(0, 2) == "--" && a.substr(2) == s.name;
        });
        if (it == t.end()) {
            const std::string shown = a.size() > 40 ? std::string(a.substr(0, 40)) + "..." : std::string(a);
            throw failure("unknown option '" + shown + "' (--help lists them)", 2);
        }
        if (it->value != nullptr && i + 1 >= argc) {
            throw failure(std::string("--") + it->name + " needs a value (" + it->value + ")", 2);
        }
        it->set(o, it->value != nullptr ? std::string_view(argv[++i]) : std::string_view{});
    }
    return o;
}

// ---------------------------------------------------------------------------------------------
// Workload: SplitMix64 (a fixed generator, not std::random), Zipf by inverse CDF.
struct splitmix {
    std::uint64_t s;
    auto next() noexcept -> std::uint64_t {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    auto unit() noexcept -> double { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

auto pow_neg(double base, double alpha) -> double { return std::exp(-alpha * std::log(base)); }

struct universe {
    std::vector<std::string> names;
    std::vector<double> weight;  // request probability, sums to 1
    std::vector<double> cdf;

    universe(std::uint64_t n, double alpha, std::uint64_t seed) {
        names.reserve(n);
        weight.resize(n);
        cdf.resize(n);
        double total = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            // The rank is the index; the salt makes another seed another set of names, hence other owners.
            names.push_back("s" + std::to_string(seed) + ":key:" + std::to_string(i));
            weight[i] = alpha == 0 ? 1.0 : pow_neg(static_cast<double>(i + 1), alpha);
            total += weight[i];
        }
        double run = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            weight[i] /= total;
            run += weight[i];
            cdf[i] = run;
        }
        cdf.back() = 1.0;
    }
    [[nodiscard]] auto draw(double u) const -> std::size_t {
        const auto it = std::lower_bound(cdf.begin(), cdf.end(), u);
        return std::min(static_cast<std::size_t>(it - cdf.begin()), cdf.size() - 1);
    }
};

// ---------------------------------------------------------------------------------------------
// Membership: snapshots of servers mc-0..mc-3 ("mc-<n>" is the id every strategy hashes; ketama
// places them as libmemcached places hosts named mc-0.. on port 11211, which it writes without
// ":port").
constexpr std::size_t initial_servers = 3;

auto strategy_of(const std::string& s) -> kp::strategy_spec {
    if (s == "ring" || s == "bounded") {
        return {.name = "ring", .params = {{"vnodes", std::uint64_t{160}}}};
    }
    if (s == "maglev") {
        return {.name = "maglev", .params = {{"table-size", std::uint64_t{65537}}}};
    }
    return {.name = s, .params = {}};
}

auto server_of(const kp::snapshot_node& n) -> std::size_t { return static_cast<std::size_t>(std::stoul(n.id.substr(3))); }

struct event {
    std::string name;  // join, leave, rejoin
    std::size_t server;
    bool adds;
};

auto events_for(const std::string& strategy) -> std::vector<event> {
    const std::size_t leaver = strategy == "jump" ? 3 : 1;  // jump removes only the last node
    return {{"join", 3, true}, {"leave", leaver, false}, {"rejoin", leaver, true}};
}

// The placement a client reads for one snapshot: server per key index, and the owner it had under
// the previous completed snapshot (the write set's previous owners).
struct table {
    std::uint64_t epoch = 0;
    std::vector<std::uint8_t> now;   // owner now (current placement)
    std::vector<std::uint8_t> next;  // owner after the transition (pending placement)
};

auto owners(const kp::snapshot& s, const kp::placement& p, const universe& u, const std::string& strategy,
            const std::vector<std::uint32_t>& request_weights) -> std::vector<std::uint8_t> {
    std::vector<std::uint8_t> out(u.names.size());
    if (strategy == "bounded") {
        // The batch form over the key universe with the expected request rates as weights: every
        // client computes the same table from the same snapshot and weights (a shard map). The
        // live form would have each client admit by its own in-flight counts, so clients would
        // disagree about owners: misses and stale copies on a cache.
        const auto& r = std::get<kp::ring>(p.strategy());
        std::vector<std::uint64_t> points(u.names.size());
        for (std::size_t k = 0; k < points.size(); ++k) {
            points[k] = p.point_of(u.names[k]);
        }
        const auto got = kp::bounded_assign(r, points, request_weights, {.load_factor = 1.25});
        for (std::size_t k = 0; k < out.size(); ++k) {
            out[k] = static_cast<std::uint8_t>(server_of(s.nodes()[p.member(got[k])]));
        }
        return out;
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
        out[k] = static_cast<std::uint8_t>(server_of(s.nodes()[p.owner(u.names[k])]));
    }
    return out;
}

// The kept fractions of one change: request-weighted over the universe, and key-weighted from
// keyplace's movement() between the two placements (both exact over the universe's keys).
struct kept {
    double requests = 0;
    double keys = 0;
};

auto kept_between(const kp::placement& a, const kp::placement& b, const std::vector<std::uint8_t>& ta,
                  const std::vector<std::uint8_t>& tb, const universe& u, bool bounded) -> kept {
    kept k;
    for (std::size_t i = 0; i < ta.size(); ++i) {
        k.requests += ta[i] == tb[i] ? u.weight[i] : 0.0;
    }
    if (bounded) {
        std::size_t same = 0;
        for (std::size_t i = 0; i < ta.size(); ++i) {
            same += ta[i] == tb[i] ? 1 : 0;
        }
        k.keys = static_cast<double>(same) / static_cast<double>(ta.size());
        return k;
    }
    a.visit([&](const auto& sa) {
        using S = std::decay_t<decltype(sa)>;
        if constexpr (std::is_same_v<S, kp::ring> || std::is_same_v<S, kp::rendezvous> ||
                      std::is_same_v<S, kp::jump> || std::is_same_v<S, kp::maglev> ||
                      std::is_same_v<S, kp::modulo> || std::is_same_v<S, kp::compat::ketama>) {
            const auto& sb = std::get<S>(b.strategy());
            std::vector<std::uint64_t> points(u.names.size());
            for (std::size_t i = 0; i < points.size(); ++i) {
                points[i] = a.point_of(u.names[i]);
            }
            k.keys = 1.0 - kp::movement(sa, sb, points).moved;
        }
    });
    return k;
}

// ---------------------------------------------------------------------------------------------
// One arm: a strategy, a rule, a popularity, a seed; events or none (the control).
struct window_stats {
    std::string phase;
    std::uint64_t epoch = 0;
    std::uint64_t gets = 0;
    std::uint64_t hits = 0;
    std::uint64_t db_reads = 0;
    std::uint64_t stale = 0;
    std::uint64_t old_epoch = 0;
    [[nodiscard]] auto hit_rate() const -> double {
        return gets == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(gets);
    }
};

struct arm_result {
    std::string strategy;
    std::string rule;  // "control" for the control arm
    double alpha = 0;
    std::uint64_t seed = 0;
    std::vector<window_stats> windows;
    std::map<std::string, kept> predicted;  // by event
};

struct fleet {
    std::vector<server> servers;
    std::vector<std::unique_ptr<connection>> conns;
};

auto run_arm(const options& o, fleet& f, const universe& u, const std::vector<std::uint32_t>& request_weights,
             const std::string& strategy, const std::string& rule, double alpha, std::uint64_t seed, bool control,
             const std::function<void(const std::string&)>& progress) -> arm_result {
    arm_result res{strategy, control ? "control" : rule, alpha, seed, {}, {}};
    auto flush = [&](std::size_t server) {
        if (memcached_flush(f.conns[server]->mc, 0) != MEMCACHED_SUCCESS) {
            throw failure("memcached: flush_all failed on mc-" + std::to_string(server) + ": " +
                          memcached_last_error_message(f.conns[server]->mc));
        }
    };
    for (std::size_t i = 0; i < f.conns.size(); ++i) {
        flush(i);
    }
    kp::snapshot_description d;
    d.cluster = "fleet";
    d.epoch = 1;
    d.strategy = strategy_of(strategy);
    for (std::size_t i = 0; i < initial_servers; ++i) {
        d.nodes.push_back({.id = "mc-" + std::to_string(i)});
    }
    kp::publisher pub(std::make_shared<const kp::snapshot>(kp::snapshot::build(d)));
    auto reader = pub.make_reader();

    // Tables per epoch, computed once per publish (the bounded form's assignment is not free).
    std::map<std::uint64_t, table> tables;
    std::map<std::uint64_t, std::shared_ptr<const kp::snapshot>> kept_alive;
    auto remember = [&](const std::shared_ptr<const kp::snapshot>& s) {
        tables[s->epoch()] = {s->epoch(), owners(*s, s->current(), u, strategy, request_weights),
                              owners(*s, s->pending(), u, strategy, request_weights)};
        kept_alive[s->epoch()] = s;
    };
    auto publish = [&](const kp::snapshot_description& nd) {
        auto s = std::make_shared<const kp::snapshot>(kp::snapshot::build(nd));
        remember(s);
        (void)pub.publish(s);
    };
    remember(pub.current());
    std::uint64_t completed_before = 1;  // the completed epoch before the latest event: previous owners

    std::vector<std::uint32_t> db(u.names.size(), 0);
    std::string value(o.value_size, 'x');
    splitmix rng{seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(alpha * 1000)};
    const kp::snapshot* snap = &reader.get();
    const table* tab = &tables.at(snap->epoch());
    std::uint64_t behind = 0;

    auto set_value = [&](std::size_t server, std::size_t k) {
        const std::string prefix = "v" + std::to_string(db[k]) + ":";
        std::copy(prefix.begin(), prefix.end(), value.begin());
        const auto& key = u.names[k];
        const auto rc = memcached_set(f.conns[server]->mc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED) {
            throw failure("memcached: set failed on mc-" + std::to_string(server) + ": " +
                          memcached_strerror(f.conns[server]->mc, rc));
        }
    };
    auto del = [&](std::size_t server, std::size_t k) {
        const auto& key = u.names[k];
        const auto rc = memcached_delete(f.conns[server]->mc, key.data(), key.size(), 0);
        if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED && rc != MEMCACHED_NOTFOUND) {
            throw failure("memcached: delete failed on mc-" + std::to_string(server) + ": " +
                          memcached_strerror(f.conns[server]->mc, rc));
        }
    };

    auto request = [&](window_stats& w) {
        if (snap->epoch() != pub.epoch()) {
            if (behind >= o.lag) {
                snap = &reader.get();
                tab = &tables.at(snap->epoch());
                behind = 0;
            } else {
                ++behind;
                ++w.old_epoch;
            }
        }
        const std::size_t k = u.draw(rng.unit());
        const std::size_t owner = tab->now[k];
        if (rng.unit() < o.writes) {
            ++db[k];
            std::array<std::size_t, 4> targets{owner, owner, owner, owner};
            if (rule == "write-set") {
                // The write set of the snapshot (owners now and after), and the owner under the
                // completed epoch before the latest event: it may hold the key and take it back.
                targets[1] = tab->next[k];
                targets[2] = tables.at(completed_before).now[k];
            }
            std::sort(targets.begin(), targets.end());
            for (std::size_t i = 0; i < targets.size(); ++i) {
                if (i == 0 || targets[i] != targets[i - 1]) {
                    del(targets[i], k);
                }
            }
            return;
        }
        ++w.gets;
        const auto& key = u.names[k];
        std::size_t len = 0;
        std::uint32_t flags = 0;
        memcached_return_t rc{};
        char* got = memcached_get(f.conns[owner]->mc, key.data(), key.size(), &len, &flags, &rc);
        if (got != nullptr) {
            ++w.hits;
            std::uint32_t version = 0;
            const char* colon = static_cast<const char*>(std::memchr(got, ':', len));
            if (len < 2 || got[0] != 'v' || colon == nullptr ||
                std::from_chars(got + 1, colon, version).ptr != colon) {
                std::free(got);
                throw failure("memcached returned a value this program did not write for " + key);
            }
            std::free(got);
            w.stale += version != db[k] ? 1 : 0;
            return;
        }
        if (rc != MEMCACHED_NOTFOUND) {
            throw failure("memcached: get failed on mc-" + std::to_string(owner) + ": " +
                          memcached_strerror(f.conns[owner]->mc, rc));
        }
        ++w.db_reads;
        set_value(owner, k);
    };

    auto run_windows = [&](const std::string& phase, std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i) {
            window_stats w;
            w.phase = phase;
            for (std::uint64_t r = 0; r < o.window; ++r) {
                request(w);
            }
            w.epoch = snap->epoch();
            res.windows.push_back(w);
        }
    };

    // A fraction F of the keys, spread over the ranks (key k when frac(k * phi) < F): with uniform
    // popularity the cache then starts at hit rate F, a cache sized for that share of the universe.
    for (std::size_t k = 0; k < u.names.size(); ++k) {
        if (static_cast<double>(static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ULL) * 0x1.0p-64 < o.prefill) {
            set_value(tab->now[k], k);
        }
    }
    {
        window_stats w;
        for (std::uint64_t r = 0; r < o.warm; ++r) {
            request(w);
        }
    }
    run_windows("steady", o.steady);
    for (const auto& e : events_for(strategy)) {
        progress(e.name);
        if (!control) {
            const auto before = pub.current();
            completed_before = before->epoch();
            // Step 1: the transition epoch (joining or leaving).
            auto nd = before->successor();
            if (e.adds) {
                nd.nodes.push_back({.id = "mc-" + std::to_string(e.server), .state = kp::node_state::joining});
            } else {
                for (auto& n : nd.nodes) {
                    n.state = server_of(n) == e.server ? kp::node_state::leaving : n.state;
                }
            }
            publish(nd);
            if (e.adds && rule == "flush") {
                flush(e.server);
            }
            // Step 2: the transition completes. A leaver is removed from the list, not kept as a
            // tombstone: a cache server that returns comes back under its own id (that return is
            // what this experiment measures); a tombstone would make it a new node.
            auto done = pub.current()->successor();
            std::erase_if(done.nodes, [](const kp::snapshot_node& n) { return n.state == kp::node_state::leaving; });
            for (auto& n : done.nodes) {
                n.state = kp::node_state::active;
            }
            publish(done);
            const auto after = pub.current();
            res.predicted[e.name] = kept_between(before->current(), after->current(), tables.at(before->epoch()).now,
                                                 tables.at(after->epoch()).now, u, strategy == "bounded");
        }
        run_windows(e.name, o.phase);
    }
    return res;
}

// ---------------------------------------------------------------------------------------------
// Per-arm figures against the control of the same strategy, popularity and seed.
struct event_figures {
    double predicted_requests = 0;
    double predicted_keys = 0;
    double measured = 0;            // first window's hit rate over the control's
    double first_hit = 0;
    double control_first_hit = 0;
    double first_miss_ratio = 0;    // first window's DB reads over the control's
    double db_multiple = 0;         // first window's DB reads over the mean per steady window (before the join)
    std::int64_t extra_db = 0;      // whole phase, over the control
    std::int64_t recovery = -1;     // windows until within 1 pp of the control (-1: not in the phase)
    std::uint64_t stale = 0;
    std::uint64_t old_epoch = 0;
};

auto figures(const arm_result& a, const arm_result& control, const std::string& ev) -> event_figures {
    event_figures f;
    if (const auto it = a.predicted.find(ev); it != a.predicted.end()) {
        f.predicted_requests = it->second.requests;
        f.predicted_keys = it->second.keys;
    }
    bool first = true;
    for (std::size_t i = 0; i < a.windows.size() && i < control.windows.size(); ++i) {
        const auto& w = a.windows[i];
        const auto& c = control.windows[i];
        if (w.phase != ev) {
            continue;
        }
        if (first) {
            f.first_hit = w.hit_rate();
            f.control_first_hit = c.hit_rate();
            f.measured = c.hit_rate() > 0 ? w.hit_rate() / c.hit_rate() : 0;
            f.first_miss_ratio =
                c.db_reads > 0 ? static_cast<double>(w.db_reads) / static_cast<double>(c.db_reads) : 0;
            first = false;
        }
        f.extra_db += static_cast<std::int64_t>(w.db_reads) - static_cast<std::int64_t>(c.db_reads);
        f.stale += w.stale;
        f.old_epoch += w.old_epoch;
    }
    double steady_reads = 0;
    double steady_windows = 0;
    for (const auto& w : a.windows) {
        steady_reads += w.phase == "steady" ? static_cast<double>(w.db_reads) : 0.0;
        steady_windows += w.phase == "steady" ? 1.0 : 0.0;
    }
    steady_reads /= steady_windows;
    for (const auto& w : a.windows) {
        if (w.phase == ev) {
            f.db_multiple = steady_reads > 0 ? static_cast<double>(w.db_reads) / steady_reads : 0;
            break;
        }
    }
    std::int64_t n = 0;
    for (std::size_t i = 0; i < a.windows.size() && i < control.windows.size(); ++i) {
        if (a.windows[i].phase != ev) {
            continue;
        }
        if (a.windows[i].hit_rate() >= control.windows[i].hit_rate() - 0.01) {
            f.recovery = n;
            break;
        }
        ++n;
    }
    return f;
}

auto alpha_name(double a) -> std::string {
    if (a == 0) {
        return "uniform";
    }
    char b[16];
    std::snprintf(b, sizeof b, "%.2f", a);
    return b;
}

auto fmt(const char* f, double v) -> std::string {
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

// The control of an arm: same strategy, popularity and seed.
auto control_key(const arm_result& a) -> std::string {
    return a.strategy + "/" + alpha_name(a.alpha) + "/" + std::to_string(a.seed);
}

const std::array<std::string, 3> event_names{"join", "leave", "rejoin"};

auto text_report(const std::vector<arm_result>& arms, const std::map<std::string, const arm_result*>& controls)
    -> std::string {
    std::string out;
    std::string last_group;
    for (const auto& a : arms) {
        if (a.rule == "control") {
            continue;
        }
        const std::string group = "alpha " + alpha_name(a.alpha) + ", seed " + std::to_string(a.seed);
        if (group != last_group) {
            const auto& c = *controls.at(control_key(a));
            out += "\n" + group + " (control steady hit rate " + fmt("%.3f", c.windows.front().hit_rate()) + ")\n";
            out += "strategy    rule       | join: kept pred (keys)  measured  hit 1st  miss x1st  extra DB  recov |"
                   " leave: kept pred  extra DB  stale | rejoin: kept pred  extra DB  stale\n";
            last_group = group;
        }
        const auto& c = *controls.at(control_key(a));
        const auto j = figures(a, c, "join");
        const auto l = figures(a, c, "leave");
        const auto r = figures(a, c, "rejoin");
        char line[512];
        std::snprintf(line, sizeof line,
                      "%-11s %-10s | %14.3f (%.3f) %9.3f %8.3f %9.2f %9lld %6lld | %17.3f %9lld %6llu | %18.3f %9lld "
                      "%6llu\n",
                      a.strategy.c_str(), a.rule.c_str(), j.predicted_requests, j.predicted_keys, j.measured,
                      j.first_hit, j.first_miss_ratio, static_cast<long long>(j.extra_db),
                      static_cast<long long>(j.recovery), l.predicted_requests, static_cast<long long>(l.extra_db),
                      static_cast<unsigned long long>(l.stale), r.predicted_requests,
                      static_cast<long long>(r.extra_db), static_cast<unsigned long long>(r.stale));
        out += line;
    }
    return out;
}

auto json_report(const options& o, const std::vector<server>& servers, const std::vector<arm_result>& arms,
                 const std::map<std::string, const arm_result*>& controls) -> std::string {
    std::string pids;
    for (const auto& s : servers) {
        pids += (pids.empty() ? "" : ",") + std::string("{\"port\":") + std::to_string(s.port) +
                ",\"pid\":" + std::to_string(s.pid) + "}";
    }
    std::string out = "{\"format\":\"keyplace.fleet/1\",\"servers\":[" + pids + "],\"keys\":" + std::to_string(o.keys) +
                      ",\"window\":" + std::to_string(o.window) + ",\"writes\":" + fmt("%.4f", o.writes) +
                      ",\"prefill\":" + fmt("%.3f", o.prefill) + ",\"arms\":[";
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const auto& a = arms[i];
        out += (i == 0 ? "\n" : ",\n");
        out += "{\"strategy\":\"" + a.strategy + "\",\"rule\":\"" + a.rule + "\",\"alpha\":\"" + alpha_name(a.alpha) +
               "\",\"seed\":" + std::to_string(a.seed) + ",\"windows\":[";
        for (std::size_t k = 0; k < a.windows.size(); ++k) {
            const auto& w = a.windows[k];
            out += std::string(k == 0 ? "" : ",") + "{\"phase\":\"" + w.phase + "\",\"epoch\":" +
                   std::to_string(w.epoch) + ",\"gets\":" + std::to_string(w.gets) + ",\"hit_rate\":" +
                   fmt("%.4f", w.hit_rate()) + ",\"db_reads\":" + std::to_string(w.db_reads) +
                   ",\"stale_hits\":" + std::to_string(w.stale) + ",\"old_epoch_requests\":" +
                   std::to_string(w.old_epoch) + "}";
        }
        out += "]";
        if (a.rule != "control") {
            const auto& c = *controls.at(control_key(a));
            out += ",\"events\":{";
            for (std::size_t e = 0; e < event_names.size(); ++e) {
                const auto f = figures(a, c, event_names[e]);
                out += std::string(e == 0 ? "" : ",") + "\"" + event_names[e] + "\":{\"kept_requests_predicted\":" +
                       fmt("%.4f", f.predicted_requests) + ",\"kept_keys_predicted\":" +
                       fmt("%.4f", f.predicted_keys) + ",\"kept_measured\":" + fmt("%.4f", f.measured) +
                       ",\"first_window_hit_rate\":" + fmt("%.4f", f.first_hit) +
                       ",\"control_first_window_hit_rate\":" + fmt("%.4f", f.control_first_hit) +
                       ",\"first_window_miss_ratio\":" + fmt("%.3f", f.first_miss_ratio) +
                       ",\"db_load_multiple\":" + fmt("%.3f", f.db_multiple) +
                       ",\"extra_db_reads\":" + std::to_string(f.extra_db) +
                       ",\"windows_to_recover\":" + std::to_string(f.recovery) +
                       ",\"stale_hits\":" + std::to_string(f.stale) +
                       ",\"old_epoch_requests\":" + std::to_string(f.old_epoch) + "}";
            }
            out += "}";
        }
        out += "}";
    }
    out += "\n]}\n";
    return out;
}

// The hit-rate timeline: one line per strategy, the control dashed, the events marked.
auto timeline_svg(const std::vector<const arm_result*>& lines, const std::string& title) -> std::string {
    constexpr double width = 900, height = 420, left = 60, right = 150, top = 40, bottom = 50;
    const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
    std::string b;
    const std::size_t n = lines.front()->windows.size();
    double ymin = 1.0;
    for (const auto* a : lines) {
        for (const auto& w : a->windows) {
            ymin = std::min(ymin, w.hit_rate());
        }
    }
    ymin = std::max(0.0, std::floor(ymin * 10) / 10);
    auto px = [&](double x) { return left + x / static_cast<double>(n) * (width - left - right); };
    auto py = [&](double y) { return height - bottom - (y - ymin) / (1.0 - ymin) * (height - top - bottom); };
    auto line = [&](double x1, double y1, double x2, double y2, const char* color, double w, bool dashed) {
        b += "<line x1=\"" + fmt("%.1f", x1) + "\" y1=\"" + fmt("%.1f", y1) + "\" x2=\"" + fmt("%.1f", x2) +
             "\" y2=\"" + fmt("%.1f", y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + fmt("%.1f", w) + "\"" +
             (dashed ? " stroke-dasharray=\"5,4\"" : "") + "/>\n";
    };
    auto text = [&](double x, double y, const std::string& s, const char* anchor) {
        b += "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) +
             "\" font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"" + anchor + "\">" + s + "</text>\n";
    };
    for (double t = ymin; t <= 1.0001; t += 0.1) {
        line(left, py(t), width - right, py(t), "#dddddd", 1, false);
        text(left - 6, py(t) + 4, fmt("%.1f", t), "end");
    }
    line(left, height - bottom, width - right, height - bottom, "black", 1, false);
    line(left, top, left, height - bottom, "black", 1, false);
    for (std::size_t i = 1; i < n; ++i) {
        if (lines.front()->windows[i].phase != lines.front()->windows[i - 1].phase) {
            line(px(static_cast<double>(i)), top, px(static_cast<double>(i)), height - bottom, "#888888", 1, true);
            text(px(static_cast<double>(i)) + 4, top + 12, lines.front()->windows[i].phase, "start");
        }
    }
    text((left + width - right) / 2, height - 14, "window of requests", "middle");
    text(16, top - 8, "hit rate", "start");
    for (std::size_t s = 0; s < lines.size(); ++s) {
        const bool ctl = lines[s]->rule == "control";
        const char* color = ctl ? "#555555" : colors[s % 7];
        for (std::size_t i = 1; i < lines[s]->windows.size(); ++i) {
            line(px(static_cast<double>(i) - 0.5), py(lines[s]->windows[i - 1].hit_rate()),
                 px(static_cast<double>(i) + 0.5), py(lines[s]->windows[i].hit_rate()), color, ctl ? 1.5 : 2, ctl);
        }
        const double ly = top + 16 + 18.0 * static_cast<double>(s);
        line(width - right + 10, ly, width - right + 30, ly, color, 2, ctl);
        text(width - right + 36, ly + 4, ctl ? std::string("control") : lines[s]->strategy, "start");
    }
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"420\" viewBox=\"0 0 900 420\">\n"
           "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"450\" y=\"22\" font-size=\"14\" "
           "text-anchor=\"middle\" font-family=\"sans-serif\">" +
           title + "</text>\n" + b + "</svg>\n";
}

void write_file(const std::string& path, const std::string& text) {
    FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        throw failure("cannot open " + path + ": " + std::strerror(errno));
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
    if (f != stdout && std::fclose(f) != 0) {
        throw failure("cannot write " + path);
    }
    if (!ok) {
        throw failure(path == "-" ? std::string("cannot write the output") : "cannot write " + path);
    }
}

// ---------------------------------------------------------------------------------------------
// The ring cascade: 8 nodes, each with capacity for 1 / (8 * 0.6) of the load; a node whose load
// exceeds its capacity is ejected and its keys go where the strategy sends them without it (the
// ring: its arcs to the next point clockwise). Loads are exact: arc measures for the rings, the
// bounded assignment of analysis_sample()'s 2^17 points for bounded loads.
auto cascade_loads(const std::vector<kp::node>& nodes, std::uint32_t vnodes, bool bounded) -> std::vector<double> {
    const auto r = kp::ring::build(nodes, {.vnodes = vnodes});
    if (!bounded) {
        return kp::ownership(r).share;
    }
    const auto& pts = kp::analysis_sample();
    const auto got = kp::bounded_assign(r, pts, {}, {.load_factor = 1.25});
    std::vector<double> share(nodes.size());
    for (const auto g : got) {
        share[g.value] += 1.0 / static_cast<double>(pts.size());
    }
    return share;
}

auto cascade_report() -> std::string {
    constexpr double capacity = 1.0 / (8 * 0.6);
    std::string out = "ring cascade: 8 nodes at 60% utilization (capacity " + fmt("%.4f", capacity) +
                      " of the load each); an overloaded node is ejected, the most overloaded first\n";
    struct arm {
        const char* name;
        std::uint32_t vnodes;
        bool bounded;
    };
    for (const auto& a : {arm{"1 token per node", 1, false}, arm{"256 tokens per node", 256, false},
                          arm{"bounded loads c=1.25 (1 token)", 1, true},
                          arm{"bounded loads c=1.25 (256 tokens)", 256, true}}) {
        for (const bool crash : {false, true}) {
            std::vector<kp::node> alive;
            for (int i = 0; i < 8; ++i) {
                alive.push_back({.id = "cache-" + std::to_string(i)});
            }
            std::string line = std::string(a.name) + (crash ? ", cache-0 crashes first" : ", no crash") + ": ";
            std::string order;
            if (crash) {
                alive.erase(alive.begin());
            }
            auto loads = cascade_loads(alive, a.vnodes, a.bounded);
            line += "max load " + fmt("%.3f", *std::max_element(loads.begin(), loads.end()));
            while (alive.size() > 1) {
                const auto worst = static_cast<std::size_t>(std::max_element(loads.begin(), loads.end()) - loads.begin());
                if (loads[worst] <= capacity) {
                    break;
                }
                order += (order.empty() ? "" : " -> ") + alive[worst].id + " (" + fmt("%.3f", loads[worst]) + ")";
                alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(worst));
                loads = cascade_loads(alive, a.vnodes, a.bounded);
            }
            const bool total = alive.size() == 1 && loads.front() > capacity;
            line += "; ejected: " + (order.empty() ? std::string("none") : order) + "; " +
                    std::to_string(alive.size()) + " left" + (total ? " (overloaded: the whole fleet is down)" : "");
            out += line + "\n";
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
auto run(const options& o) -> int {
    if (o.cascade) {
        write_file("-", cascade_report());
        return 0;
    }
    const auto binary = find_executable(o.memcached);
    if (!binary) {
        std::fprintf(stderr, "keyplace-fleet: memcached not found ('%s' is not an executable on PATH); install "
                             "memcached or pass --memcached PATH\n", o.memcached.c_str());
        return status_no_memcached;
    }
    const auto t0 = std::chrono::steady_clock::now();
    fleet f;
    for (std::size_t i = 0; i <= initial_servers; ++i) {
        f.servers.push_back(start_server(*binary, i));
        f.conns.push_back(std::make_unique<connection>(f.servers.back().port));
    }
    std::vector<arm_result> arms;
    const std::size_t total_arms = o.alphas.size() * o.seeds.size() * o.strategies.size() * (o.rules.size() + 1);
    std::size_t done = 0;
    for (const double alpha : o.alphas) {
        for (const auto seed : o.seeds) {
            const universe u(o.keys, alpha, seed);
            std::vector<std::uint32_t> weights(u.weight.size());
            for (std::size_t k = 0; k < weights.size(); ++k) {
                weights[k] = static_cast<std::uint32_t>(std::max(1.0, std::round(u.weight[k] * 0x1.0p31)));
            }
            for (const auto& s : o.strategies) {
                for (std::size_t r = 0; r <= o.rules.size(); ++r) {
                    const bool control = r == o.rules.size();
                    const std::string rule = control ? "none" : o.rules[r];
                    ++done;
                    auto progress = [&](const std::string& phase) {
                        if (!o.quiet) {
                            const double secs =
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                            std::fprintf(stderr, "\rkeyplace-fleet: arm %zu/%zu alpha %s seed %llu %s %s: %-6s %6.0f s",
                                         done, total_arms, alpha_name(alpha).c_str(),
                                         static_cast<unsigned long long>(seed), s.c_str(),
                                         control ? "control" : rule.c_str(), phase.c_str(), secs);
                            std::fflush(stderr);
                        }
                    };
                    arms.push_back(run_arm(o, f, u, weights, s, rule, alpha, seed, control, progress));
                }
            }
        }
    }
    if (!o.quiet) {
        std::fprintf(stderr, "\n");
    }
    kill_children();
    std::map<std::string, const arm_result*> controls;
    for (const auto& a : arms) {
        if (a.rule == "control") {
            controls[control_key(a)] = &a;
        }
    }
    if (o.json != "-") {
        write_file("-", text_report(arms, controls));
    }
    if (!o.json.empty()) {
        write_file(o.json, json_report(o, f.servers, arms, controls));
    }
    if (!o.svg.empty()) {
        std::vector<const arm_result*> lines;
        for (const auto& a : arms) {
            if (a.alpha == o.alphas.front() && a.seed == o.seeds.front() && a.rule == o.rules.front()) {
                lines.push_back(&a);
            }
        }
        for (const auto& a : arms) {
            if (a.alpha == o.alphas.front() && a.seed == o.seeds.front() && a.rule == "control") {
                lines.push_back(&a);  // every strategy's control is the same traffic; draw the first
                break;
            }
        }
        write_file(o.svg, timeline_svg(lines, "Hit rate per window, " + std::to_string(initial_servers) +
                                                  " -> 4 -> 3 -> 4 memcached servers, alpha " +
                                                  alpha_name(o.alphas.front()) + ", rule " + o.rules.front()));
    }
    return 0;
}

}  // namespace

auto main(int argc, char** argv) -> int {
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        ::sigaction(sig, &sa, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);
    int status = 1;
    try {
        const auto o = parse(argc, argv);
        if (!o) {
            write_file("-", usage());
            return 0;
        }
        status = run(*o);
    } catch (const failure& e) {
        kill_children();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return e.status;
    } catch (const std::bad_alloc&) {
        kill_children();
        std::fprintf(stderr, "keyplace-fleet: out of memory\n");
        return 1;
    } catch (const std::exception& e) {
        kill_children();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return 1;
    }
    kill_children();
    return status;
}
