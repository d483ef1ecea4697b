// keyplace-fleet — a real cache fleet: memcached servers on 127.0.0.1 placed by keyplace, a
// look-aside workload with Zipf popularity, membership changes published as snapshot epochs,
// measured through a join, a leave and a rejoin against a control run (README, "A real cache
// fleet"). --cascade runs the ring-cascade simulation instead (no servers).
// keyplace-cli's argument helpers (numbers, lists, quoting) and its descriptor guard: one copy.
#include "args.hpp"
#include "descriptors.hpp"
#include "fleet_options.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/bounded_load.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <libmemcached/memcached.h>
#ifdef KEYPLACE_FLEET_ETCD
#include <keyplace/etcd.hpp>

#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <time.h>

#include <deque>
#include <filesystem>
#include <new>
#include <thread>
#endif

#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
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
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace kp = keyplace;
using namespace keyplace_fleet;

// Exit status when memcached (or, for --etcd start, etcd) is absent: ctest's conventional skip code.
constexpr int status_skipped = 77;

// ---------------------------------------------------------------------------------------------
// Servers. Children (memcached, etcd, client processes) are recorded in a fixed array the signal
// handler can read.
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

// The directory of an etcd this program started (--etcd start), removed at exit and on a signal.
std::array<char, 256> etcd_dir{};

extern "C" void on_signal(int sig) {
    kill_children();  // kill, waitpid, fork and execv are async-signal-safe
    if (etcd_dir[0] != '\0') {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const char* const argv[] = {"/bin/rm", "-rf", "--", etcd_dir.data(), nullptr};
            ::execv(argv[0], const_cast<char* const*>(argv));
            ::_exit(127);
        }
        if (pid > 0) {
            ::waitpid(pid, nullptr, 0);
        }
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

auto find_executable(const std::string& name) -> std::optional<std::string> {
    if (name.find('/') != std::string::npos) {
        return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        const std::string full = (dir.empty() ? "." : dir) + "/" + name;
        if (executable_file(full)) {
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

// Forks a child, recorded in children[slot], that becomes `argv` (after `as_child`, run in the
// child first), dying with this program even when that is killed with SIGKILL; then polls
// `ready` `tries` times, `pause` apart. Returns the pid once ready, or 0 when the child exited
// first (its port was taken meanwhile) or never got ready (it is killed then).
auto spawn_until_ready(std::size_t slot, const std::vector<const char*>& argv, const std::function<void()>& as_child,
                       const std::function<bool()>& ready, int tries, useconds_t pause) -> pid_t {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw failure(std::string("cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        as_child();
        // After any change of user, which clears the parent-death signal.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        ::execv(argv.front(), const_cast<char* const*>(argv.data()));
        ::_exit(127);
    }
    children[slot].store(pid);
    for (int i = 0; i < tries; ++i) {
        if (ready()) {
            return pid;
        }
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) {
            children[slot].store(0);
            return 0;
        }
        ::usleep(pause);
    }
    if (const pid_t p = children[slot].exchange(0); p > 0) {
        ::kill(p, SIGKILL);
        ::waitpid(p, nullptr, 0);
    }
    return 0;
}

// Starts memcached on a free loopback port and waits until it answers version (5 s at most).
auto start_server(const std::string& binary, std::size_t slot) -> server {
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::uint16_t port = free_port();
        const std::string port_s = std::to_string(port);
        // As root, the child drops to nobody itself rather than by memcached's -u: a change of
        // user clears the parent-death signal, which is set after it.
        const auto drop_root = [] {
            if (::geteuid() == 0) {
                const passwd* nobody = ::getpwnam("nobody");
                if (nobody == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(nobody->pw_gid) != 0 ||
                    ::setuid(nobody->pw_uid) != 0) {
                    ::_exit(126);
                }
            }
        };
        const pid_t pid = spawn_until_ready(
            slot, {binary.c_str(), "-l", "127.0.0.1", "-p", port_s.c_str(), "-U", "0", "-m", "64", "-t", "1", nullptr},
            drop_root, [&] { return answers_version(port); }, 500, 10000);
        if (pid != 0) {
            return {slot, port, pid};
        }
    }
    throw failure("memcached (" + binary + ") did not answer version on 127.0.0.1 after 5 attempts");
}

// One libmemcached connection per server; placement is keyplace's.
struct connection {
    memcached_st* mc = nullptr;
    // noreply: sets and deletes without a round trip, for one client alone. Several clients wait
    // for each reply, so that a delete has happened on the server before the write is over.
    connection(std::uint16_t port, bool noreply) : mc(memcached_create(nullptr)) {
        if (mc == nullptr || memcached_server_add(mc, "127.0.0.1", port) != MEMCACHED_SUCCESS) {
            throw failure("libmemcached: cannot add server 127.0.0.1:" + std::to_string(port));
        }
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NOREPLY, noreply ? 1 : 0);
    }
    connection(const connection&) = delete;
    auto operator=(const connection&) -> connection& = delete;
    ~connection() { memcached_free(mc); }
};

// ---------------------------------------------------------------------------------------------
// Workload: SplitMix64 (a fixed generator, not std::random), Zipf by inverse CDF.
struct splitmix {
    std::uint64_t s;
    auto next() noexcept -> std::uint64_t { return keyplace::detail::splitmix64(s); }
    auto unit() noexcept -> double { return keyplace::detail::splitmix64_unit(s); }
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

// The strategy's row with its defaults (bounded is the ring's); a table of fixed capacity
// (AnchorHash) has room for every server the run starts.
auto strategy_of(const std::string& s) -> kp::strategy_spec {
    kp::strategy_spec spec{.name = s == "bounded" ? "ring" : s, .params = {}};
    if (kp::find_strategy(spec.name)->param("capacity") != nullptr) {
        spec.params.emplace("capacity", std::uint64_t{initial_servers + 1});
    }
    return spec;
}

auto server_of(const kp::snapshot_node& n) -> std::size_t { return static_cast<std::size_t>(std::stoul(n.id.substr(3))); }

struct event {
    std::string name;  // join, leave, rejoin
    std::size_t server;
    bool adds;
};

auto events_for(const std::string& strategy) -> std::vector<event> {
    // A strategy of numbered buckets that only grows (jump) removes only the last node.
    const bool append_only = kp::find_strategy(strategy_of(strategy).name)->derives == kp::derivation::append_only;
    const std::size_t leaver = append_only ? 3 : 1;
    return {{"join", 3, true}, {"leave", leaver, false}, {"rejoin", leaver, true}};
}

// The expected request rates as bounded loads' integer weights.
auto request_weights(const universe& u) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> w(u.weight.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
        w[k] = static_cast<std::uint32_t>(std::max(1.0, std::round(u.weight[k] * 0x1.0p31)));
    }
    return w;
}

// The owners a client reads for one snapshot, per key index: now (the current placement, where
// reads and fills go) and next (the pending placement, which the write set adds).
struct table {
    std::vector<std::uint8_t> now;
    std::vector<std::uint8_t> next;
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

// The snapshots of one arm in publication order (index: epoch - 1): mc-0..mc-2 at epoch 1, then
// per event its transition epoch (the node joining or leaving) and its completing epoch. A leaver
// is removed from the list, not kept as a tombstone: a cache server that returns comes back under
// its own id (that return is what this experiment measures); a tombstone would make it a new node.
// Every process builds the same plan, so each knows the owners under every epoch; placement still
// reads only the snapshot a client has adopted, the other tables serve the measurement.
struct plan {
    std::vector<event> events;
    std::vector<std::shared_ptr<const kp::snapshot>> snaps;
    std::vector<table> tables;
    [[nodiscard]] auto snap(std::uint64_t epoch) const -> const kp::snapshot& { return *snaps.at(epoch - 1); }
    [[nodiscard]] auto at(std::uint64_t epoch) const -> const table& { return tables.at(epoch - 1); }
};

auto make_plan(const std::string& cluster, const universe& u, const std::vector<std::uint32_t>& request_weights,
               const std::string& strategy, bool control) -> plan {
    plan p;
    p.events = events_for(strategy);
    kp::snapshot_description d;
    d.cluster = cluster;
    d.epoch = 1;
    d.strategy = strategy_of(strategy);
    for (std::size_t i = 0; i < initial_servers; ++i) {
        d.nodes.push_back({.id = "mc-" + std::to_string(i)});
    }
    p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(d)));
    for (const auto& e : control ? std::vector<event>{} : p.events) {
        auto nd = p.snaps.back()->successor();
        if (e.adds) {
            nd.nodes.push_back({.id = "mc-" + std::to_string(e.server), .state = kp::node_state::joining});
        } else {
            for (auto& n : nd.nodes) {
                n.state = server_of(n) == e.server ? kp::node_state::leaving : n.state;
            }
        }
        p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(nd)));
        auto done = p.snaps.back()->successor();
        std::erase_if(done.nodes, [](const kp::snapshot_node& n) { return n.state == kp::node_state::leaving; });
        for (auto& n : done.nodes) {
            n.state = kp::node_state::active;
        }
        p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(done)));
    }
    for (const auto& s : p.snaps) {
        p.tables.push_back({owners(*s, s->current(), u, strategy, request_weights),
                            owners(*s, s->pending(), u, strategy, request_weights)});
    }
    return p;
}

// The kept fractions of one change, exact over the universe: request-weighted and key-weighted,
// from the owner tables of the two placements (every strategy alike, bounded loads included).
struct kept {
    double requests = 0;
    double keys = 0;
};

auto kept_between(const std::vector<std::uint8_t>& ta, const std::vector<std::uint8_t>& tb, const universe& u) -> kept {
    kept k;
    std::size_t same = 0;
    for (std::size_t i = 0; i < ta.size(); ++i) {
        k.requests += ta[i] == tb[i] ? u.weight[i] : 0.0;
        same += ta[i] == tb[i] ? 1 : 0;
    }
    k.keys = static_cast<double>(same) / static_cast<double>(ta.size());
    return k;
}

// ---------------------------------------------------------------------------------------------
// The simulated database: one version per key, the top bit a lock. A key's read-and-fill and its
// write-and-invalidate hold the lock (in shared memory when several client processes run), so the
// classic look-aside fill race — a fill of a version that a concurrent write has just replaced,
// which memcache leases address — never happens, and every stale hit counted is a placement
// disagreement. A write deletes first and bumps the version last: a reader that sees the new
// version knows every delete of that write has been done.
struct database {
    static constexpr std::uint32_t lock_bit = 0x80000000U;
    std::atomic<std::uint32_t>* v = nullptr;

    [[nodiscard]] auto version(std::size_t k) const -> std::uint32_t {
        return v[k].load(std::memory_order_acquire) & ~lock_bit;
    }
    auto lock(std::size_t k) -> std::uint32_t {
        for (;;) {
            std::uint32_t x = v[k].load(std::memory_order_relaxed);
            if ((x & lock_bit) == 0 && v[k].compare_exchange_weak(x, x | lock_bit, std::memory_order_acquire)) {
                return x;
            }
            ::sched_yield();
        }
    }
    void unlock(std::size_t k, std::uint32_t version) { v[k].store(version, std::memory_order_release); }
};

// One window of requests of one client.
struct window_stats {
    std::string phase;
    std::uint64_t epoch = 0;
    std::uint64_t gets = 0;
    std::uint64_t hits = 0;
    std::uint64_t db_reads = 0;
    std::uint64_t stale = 0;
    std::uint64_t old_epoch = 0;  // requests served from an epoch older than the one published
    std::uint64_t old_owner = 0;  // of those, requests sent to another server than that epoch names
    [[nodiscard]] auto hit_rate() const -> double {
        return gets == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(gets);
    }
};

// A look-aside cache client: its own connections, the plan's tables, the shared database.
struct cache_client {
    std::vector<std::unique_ptr<connection>>& conns;
    const universe& u;
    const plan& p;
    database db;
    std::string rule;
    double writes = 0;
    std::string value;
    splitmix rng;
    std::uint64_t in_use = 1;            // the epoch of the last request
    std::uint64_t completed_before = 1;  // the completed epoch before the latest change seen

    void set_value(std::size_t server, std::size_t k, std::uint32_t version) {
        const std::string prefix = "v" + std::to_string(version) + ":";
        std::copy(prefix.begin(), prefix.end(), value.begin());
        const auto& key = u.names[k];
        const auto rc = memcached_set(conns[server]->mc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED) {
            throw failure("memcached: set failed on mc-" + std::to_string(server) + ": " +
                          memcached_strerror(conns[server]->mc, rc));
        }
    }
    void del(std::size_t server, std::size_t k) {
        const auto& key = u.names[k];
        const auto rc = memcached_delete(conns[server]->mc, key.data(), key.size(), 0);
        if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED && rc != MEMCACHED_NOTFOUND) {
            throw failure("memcached: delete failed on mc-" + std::to_string(server) + ": " +
                          memcached_strerror(conns[server]->mc, rc));
        }
    }
    // Sets every key of the fraction F spread over the ranks (key k when frac(k * phi) < F) on
    // its owner at epoch 1: with uniform popularity the cache then starts at hit rate F.
    void prefill(double fraction) {
        for (std::size_t k = 0; k < u.names.size(); ++k) {
            if (static_cast<double>(static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ULL) * 0x1.0p-64 < fraction) {
                set_value(p.at(1).now[k], k, db.version(k));
            }
        }
    }

    // One request, placed by the snapshot of epoch `serving` while `published` is the newest.
    void request(window_stats& w, std::uint64_t serving, std::uint64_t published) {
        if (serving != in_use) {
            if (!p.snap(in_use).in_transition()) {
                completed_before = in_use;
            }
            in_use = serving;
        }
        const table& tab = p.at(serving);
        const std::size_t k = u.draw(rng.unit());
        const std::size_t owner = tab.now[k];
        if (serving < published) {
            ++w.old_epoch;
            w.old_owner += owner != p.at(published).now[k] ? 1 : 0;
        }
        if (rng.unit() < writes) {
            std::array<std::size_t, 4> targets{owner, owner, owner, owner};
            if (rule == "write-set") {
                // The write set of the snapshot (owners now and after), and the owner under the
                // completed epoch before the latest change: it may hold the key and take it back.
                targets[1] = tab.next[k];
                targets[2] = p.at(completed_before).now[k];
            }
            std::sort(targets.begin(), targets.end());
            const std::uint32_t v = db.lock(k);
            for (std::size_t i = 0; i < targets.size(); ++i) {
                if (i == 0 || targets[i] != targets[i - 1]) {
                    del(targets[i], k);
                }
            }
            db.unlock(k, v + 1);
            return;
        }
        ++w.gets;
        const std::uint32_t before = db.version(k);
        const auto& key = u.names[k];
        std::size_t len = 0;
        std::uint32_t flags = 0;
        memcached_return_t rc{};
        char* got = memcached_get(conns[owner]->mc, key.data(), key.size(), &len, &flags, &rc);
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
            w.stale += version < before ? 1 : 0;
            return;
        }
        if (rc != MEMCACHED_NOTFOUND) {
            throw failure("memcached: get failed on mc-" + std::to_string(owner) + ": " +
                          memcached_strerror(conns[owner]->mc, rc));
        }
        ++w.db_reads;
        const std::uint32_t v = db.lock(k);
        set_value(owner, k, v);
        db.unlock(k, v);
    }
};

// ---------------------------------------------------------------------------------------------
// One arm: a strategy, a rule, a popularity, a seed; events or none (the control).
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
    void flush(std::size_t server) {
        if (memcached_flush(conns[server]->mc, 0) != MEMCACHED_SUCCESS) {
            throw failure("memcached: flush_all failed on mc-" + std::to_string(server) + ": " +
                          memcached_last_error_message(conns[server]->mc));
        }
    }
};

// The request generator's first state for a seed, a popularity and a client: all three hashed
// through SplitMix64's finalizer, so that seeds (and clients) are independent streams. A state of
// seed x the generator's increment, as before, made seed s + 1 replay seed s one draw later.
auto workload_seed(std::uint64_t seed, double alpha, std::uint64_t client = 0) -> std::uint64_t {
    splitmix m{(seed * 0x9e3779b97f4a7c15ULL) ^ static_cast<std::uint64_t>(alpha * 1000) ^
               (client * 0xd1b54a32d192ed03ULL)};
    return m.next();
}

// One client in this process, reading its placement from a local publisher: the snapshots are
// published here, and with --lag N the client adopts each one N requests late.
auto run_arm(const options& o, fleet& f, const universe& u, const std::vector<std::uint32_t>& request_weights,
             const std::string& strategy, const std::string& rule, double alpha, std::uint64_t seed, bool control,
             const std::function<void(const std::string&)>& progress) -> arm_result {
    arm_result res{strategy, control ? "control" : rule, alpha, seed, {}, {}};
    for (std::size_t i = 0; i < f.conns.size(); ++i) {
        f.flush(i);
    }
    const plan p = make_plan("fleet", u, request_weights, strategy, control);
    kp::publisher pub(p.snaps.front());
    auto reader = pub.make_reader();
    const auto versions = std::make_unique<std::atomic<std::uint32_t>[]>(u.names.size());
    cache_client c{f.conns, u, p, {versions.get()}, rule, o.writes, std::string(o.value_size, 'x'),
                   {workload_seed(seed, alpha)}};
    const kp::snapshot* snap = &reader.get();
    std::uint64_t behind = 0;
    auto request = [&](window_stats& w) {
        if (snap->epoch() != pub.epoch()) {
            if (behind >= o.lag) {
                snap = &reader.get();
                behind = 0;
            } else {
                ++behind;
            }
        }
        c.request(w, snap->epoch(), pub.epoch());
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
    c.prefill(o.prefill);
    {
        window_stats w;
        for (std::uint64_t r = 0; r < o.warm; ++r) {
            request(w);
        }
    }
    run_windows("steady", o.steady);
    for (std::size_t e = 0; e < p.events.size(); ++e) {
        const auto& ev = p.events[e];
        progress(ev.name);
        if (!control) {
            (void)pub.publish(p.snaps[2 * e + 1]);  // the transition epoch
            if (ev.adds && rule == "flush") {
                f.flush(ev.server);
            }
            (void)pub.publish(p.snaps[2 * e + 2]);  // the transition completes
            res.predicted[ev.name] = kept_between(p.tables[2 * e].now, p.tables[2 * e + 2].now, u);
        }
        run_windows(ev.name, o.phase);
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

// A figure for JSON: fixed precision, or null where it is not finite (a ratio over a control
// that missed nothing), which printf would write as "inf" or "nan".
auto json_fixed(const char* f, double v) -> std::string { return std::isfinite(v) ? fmt(f, v) : "null"; }

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

using keyplace::detail::json_writer;

// "servers":[{"port":P,"pid":N},...]
void servers_json(json_writer& w, const std::vector<server>& servers) {
    w.key("servers").begin_array();
    for (const auto& s : servers) {
        w.begin_object().member("port", s.port).member("pid", s.pid).end_object();
    }
    w.end_array();
}

void windows_json(json_writer& w, const std::vector<window_stats>& windows) {
    w.begin_array();
    for (const auto& x : windows) {
        w.begin_object()
            .member("phase", x.phase)
            .member("epoch", x.epoch)
            .member("gets", x.gets)
            .key("hit_rate")
            .raw(json_fixed("%.4f", x.hit_rate()))
            .member("db_reads", x.db_reads)
            .member("stale_hits", x.stale)
            .member("old_epoch_requests", x.old_epoch)
            .member("old_owner_requests", x.old_owner)
            .end_object();
    }
    w.end_array();
}

// A figure written with fixed precision.
struct fixed {
    std::string_view name;
    const char* format;
    double value;
};

auto json_report(const options& o, const std::vector<server>& servers, const std::vector<arm_result>& arms,
                 const std::map<std::string, const arm_result*>& controls) -> std::string {
    json_writer w;
    w.begin_object().member("format", "keyplace.fleet/1");
    servers_json(w, servers);
    w.member("keys", o.keys).member("window", o.window);
    w.key("writes").raw(json_fixed("%.4f", o.writes)).key("prefill").raw(json_fixed("%.3f", o.prefill));
    w.key("arms").begin_array();
    for (const auto& a : arms) {
        w.begin_object()
            .member("strategy", a.strategy)
            .member("rule", a.rule)
            .member("alpha", alpha_name(a.alpha))
            .member("seed", a.seed)
            .key("windows");
        windows_json(w, a.windows);
        if (a.rule != "control") {
            const auto& c = *controls.at(control_key(a));
            w.key("events").begin_object();
            for (const auto& event : event_names) {
                const auto f = figures(a, c, event);
                w.key(event).begin_object();
                for (const auto& [name, format, value] :
                     {fixed{"kept_requests_predicted", "%.4f", f.predicted_requests},
                      fixed{"kept_keys_predicted", "%.4f", f.predicted_keys}, fixed{"kept_measured", "%.4f", f.measured},
                      fixed{"first_window_hit_rate", "%.4f", f.first_hit},
                      fixed{"control_first_window_hit_rate", "%.4f", f.control_first_hit},
                      fixed{"first_window_miss_ratio", "%.3f", f.first_miss_ratio},
                      fixed{"db_load_multiple", "%.3f", f.db_multiple}}) {
                    w.key(name).raw(json_fixed(format, value));
                }
                w.member("extra_db_reads", f.extra_db)
                    .member("windows_to_recover", f.recovery)
                    .member("stale_hits", f.stale)
                    .member("old_epoch_requests", f.old_epoch)
                    .end_object();
            }
            w.end_object();
        }
        w.end_object();
    }
    w.end_array().end_object();
    return std::move(w).str() + "\n";
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

// The progress line on stderr (one line, rewritten in place), unless --quiet.
void print_progress(const options& o, std::chrono::steady_clock::time_point t0, std::size_t arm, std::size_t total,
                    double alpha, std::uint64_t seed, const std::string& strategy, const std::string& rule,
                    const std::string& phase) {
    if (o.quiet) {
        return;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\rkeyplace-fleet: arm %zu/%zu alpha %s seed %llu %s %s: %-6s %6.0f s", arm, total,
                 alpha_name(alpha).c_str(), static_cast<unsigned long long>(seed), strategy.c_str(), rule.c_str(),
                 phase.c_str(), secs);
    std::fflush(stderr);
}

// ---------------------------------------------------------------------------------------------
// Several client processes following membership through etcd (--clients N --etcd URL|start).
#ifdef KEYPLACE_FLEET_ETCD

constexpr std::size_t etcd_slot = max_servers - max_clients - 1;  // after the four servers
constexpr std::size_t first_client_slot = max_servers - max_clients;
constexpr std::size_t max_epochs = 7;  // 1, then two per event
const std::array<std::string, 4> phase_names{"steady", "join", "leave", "rejoin"};

auto now_ns() -> std::int64_t {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);  // one clock for every process of this machine
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

auto loopback(std::uint16_t port) -> sockaddr_in {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

// The address of an endpoint http://A.B.C.D:PORT (its form checked by the option parser, or one
// start_etcd made).
auto endpoint_address(const std::string& endpoint) -> sockaddr_in {
    const auto colon = endpoint.rfind(':');
    constexpr std::size_t scheme = 7;  // "http://"
    sockaddr_in a = loopback(static_cast<std::uint16_t>(std::stoul(endpoint.substr(colon + 1))));
    if (::inet_pton(AF_INET, endpoint.substr(scheme, colon - scheme).c_str(), &a.sin_addr) != 1) {
        throw failure("not an endpoint http://IPV4:PORT: " + endpoint.substr(0, 60));
    }
    return a;
}

// etcd on free loopback ports with its data in a temporary directory, for --etcd start. Removed
// at exit (the directory too); like the servers it dies with this program.
void remove_etcd_dir() noexcept {
    if (etcd_dir[0] != '\0') {
        std::error_code ec;
        std::filesystem::remove_all(etcd_dir.data(), ec);
        etcd_dir[0] = '\0';
    }
}

auto start_etcd() -> std::string {
    const auto binary = find_executable("etcd");
    if (!binary) {
        throw failure("etcd not found (not an executable on PATH); install etcd-server or pass --etcd URL",
                      status_skipped);
    }
    std::string tmpl = "/tmp/keyplace-fleet-etcd-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
        throw failure(std::string("cannot create a directory for etcd: ") + std::strerror(errno));
    }
    std::snprintf(etcd_dir.data(), etcd_dir.size(), "%s", tmpl.c_str());
    const std::string log = tmpl + "/etcd.log";
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::uint16_t client_port = free_port();
        const std::uint16_t peer_port = free_port();
        if (client_port == peer_port) {
            continue;
        }
        const std::string client_url = "http://127.0.0.1:" + std::to_string(client_port);
        const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port);
        const std::string data = tmpl + "/data" + std::to_string(attempt);
        const std::string cluster = "kp=" + peer_url;
        const auto to_log = [&] {
            const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                ::dup2(fd, 1);
                ::dup2(fd, 2);
            }
        };
        kp::etcd::client c({.endpoint = client_url, .timeout = std::chrono::milliseconds(500)});
        const auto answers = [&] {
            kp::error_info err;
            (void)c.get("/keyplace-fleet/ready", err);
            return !err;
        };
        // 15 s: etcd was healthy here in 0.42-1.0 s.
        if (spawn_until_ready(etcd_slot,
                              {binary->c_str(), "--name", "kp", "--data-dir", data.c_str(), "--listen-client-urls",
                               client_url.c_str(), "--advertise-client-urls", client_url.c_str(),
                               "--listen-peer-urls", peer_url.c_str(), "--initial-advertise-peer-urls",
                               peer_url.c_str(), "--initial-cluster", cluster.c_str(), "--initial-cluster-state",
                               "new", "--log-level", "warn", nullptr},
                              to_log, answers, 300, 50000) != 0) {
            return client_url;
        }
    }
    throw failure("etcd (" + *binary + ") did not answer on 127.0.0.1 after 5 attempts (its log: " + log + ")");
}

// A loopback relay to etcd that holds every byte etcd sends for `delay` before passing it on: the
// late client's path to etcd. Everything that client hears from etcd (reads, watch events, the
// replies to its reports) arrives `delay` late; what it sends arrives at once.
class delay_relay {
public:
    delay_relay(const sockaddr_in& upstream, std::chrono::milliseconds delay)
        : upstream_(upstream), delay_ns_(static_cast<std::int64_t>(delay.count()) * 1000000) {
        listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a = loopback(0);
        socklen_t len = sizeof a;
        if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::listen(listen_, 16) != 0 || ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            const std::string why = std::strerror(errno);
            if (listen_ >= 0) {
                ::close(listen_);
            }
            throw failure("the late client's relay cannot listen on 127.0.0.1: " + why);
        }
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { loop(); });
    }
    delay_relay(const delay_relay&) = delete;
    auto operator=(const delay_relay&) -> delay_relay& = delete;
    ~delay_relay() {
        stop_.store(true);
        thread_.join();
        ::close(listen_);
    }
    [[nodiscard]] auto port() const -> std::uint16_t { return port_; }

private:
    struct chunk {
        std::int64_t due;
        std::string bytes;
    };
    struct link {
        int down = -1;  // the client's side
        int up = -1;    // etcd's side
        bool up_closed = false;
        bool dead = false;
        std::deque<chunk> held;
    };

    static auto write_all(int fd, const char* p, std::size_t n) -> bool {
        while (n > 0) {
            const ssize_t w = ::write(fd, p, n);
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                return false;
            }
            p += w;
            n -= static_cast<std::size_t>(w);
        }
        return true;
    }

    void loop() {
        std::vector<link> links;
        std::vector<char> buf(1 << 16);
        while (!stop_.load()) {
            std::vector<pollfd> fds{{listen_, POLLIN, 0}};
            std::int64_t wake = now_ns() + 20000000;  // checks stop_ every 20 ms
            for (const auto& l : links) {
                fds.push_back({l.down, POLLIN, 0});
                fds.push_back({l.up_closed ? -1 : l.up, POLLIN, 0});
                if (!l.held.empty()) {
                    wake = std::min(wake, l.held.front().due);
                }
            }
            const auto wait_ms = std::max<std::int64_t>(0, (wake - now_ns() + 999999) / 1000000);
            if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR) {
                return;
            }
            for (std::size_t j = 0; j < links.size(); ++j) {
                auto& l = links[j];
                if ((fds[1 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                    const ssize_t n = ::read(l.down, buf.data(), buf.size());
                    l.dead = n <= 0 || l.up_closed || !write_all(l.up, buf.data(), static_cast<std::size_t>(n));
                }
                if (!l.dead && !l.up_closed && (fds[2 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                    const ssize_t n = ::read(l.up, buf.data(), buf.size());
                    if (n <= 0) {
                        l.up_closed = true;
                    } else {
                        l.held.push_back({now_ns() + delay_ns_, std::string(buf.data(), static_cast<std::size_t>(n))});
                    }
                }
                const std::int64_t t = now_ns();
                while (!l.dead && !l.held.empty() && l.held.front().due <= t) {
                    l.dead = !write_all(l.down, l.held.front().bytes.data(), l.held.front().bytes.size());
                    l.held.pop_front();
                }
                l.dead = l.dead || (l.up_closed && l.held.empty());
            }
            std::erase_if(links, [](const link& l) {
                if (l.dead) {
                    ::close(l.down);
                    ::close(l.up);
                }
                return l.dead;
            });
            if ((fds[0].revents & POLLIN) != 0) {
                const int down = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
                if (down >= 0) {
                    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                    if (up >= 0 && ::connect(up, reinterpret_cast<const sockaddr*>(&upstream_), sizeof upstream_) == 0) {
                        const int one = 1;
                        ::setsockopt(down, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                        ::setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                        links.push_back({down, up, false, false, {}});
                    } else {
                        ::close(down);
                        if (up >= 0) {
                            ::close(up);
                        }
                    }
                }
            }
        }
        for (const auto& l : links) {
            ::close(l.down);
            ::close(l.up);
        }
    }

    sockaddr_in upstream_;
    std::int64_t delay_ns_;
    int listen_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// What the client processes and the coordinator share (an anonymous shared mapping made before the
// clients fork): the run's control block, one slot per client, its windows, the database.
struct window_record {
    std::uint32_t phase;
    std::uint64_t epoch, gets, hits, db_reads, stale, old_epoch, old_owner;
};

enum client_state : int { starting = 0, ready = 1, finished = 2, failed = 3 };

struct client_slot {
    std::atomic<int> state;
    std::atomic<std::uint32_t> phases_done;
    std::array<std::atomic<std::int64_t>, max_epochs + 1> first_use_ns;  // by epoch: its first request
    std::array<char, 256> error;
};

struct control_block {
    std::atomic<std::uint32_t> go;  // how many phases the clients may run
    std::atomic<std::uint64_t> published;
    std::array<std::atomic<std::int64_t>, max_epochs + 1> published_ns;  // by epoch: when its publish began
};

// Atomics shared between processes must not hide a lock inside this process.
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::int64_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

class shared_area {
public:
    shared_area(std::size_t clients, std::size_t windows, std::size_t keys)
        : clients_(clients), windows_(windows), keys_(keys) {
        const auto round = [](std::size_t n) { return (n + 63) / 64 * 64; };
        const std::size_t slots_at = round(sizeof(control_block));
        const std::size_t records_at = slots_at + round(clients * sizeof(client_slot));
        const std::size_t versions_at = records_at + round(clients * windows * sizeof(window_record));
        size_ = versions_at + round(keys * sizeof(std::atomic<std::uint32_t>));
        base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (base_ == MAP_FAILED) {
            throw failure("cannot map " + std::to_string(size_) + " bytes of shared memory: " + std::strerror(errno));
        }
        char* const b = static_cast<char*>(base_);
        control_ = reinterpret_cast<control_block*>(b);
        slots_ = reinterpret_cast<client_slot*>(b + slots_at);
        records_ = reinterpret_cast<window_record*>(b + records_at);
        versions_ = reinterpret_cast<std::atomic<std::uint32_t>*>(b + versions_at);
        reset();
    }
    shared_area(const shared_area&) = delete;
    auto operator=(const shared_area&) -> shared_area& = delete;
    ~shared_area() { ::munmap(base_, size_); }

    // Every object (re)made, zeroed, for the next arm (no client process is running).
    void reset() {
        ::new (control_) control_block{};
        for (std::size_t i = 0; i < clients_; ++i) {
            ::new (slots_ + i) client_slot{};
        }
        for (std::size_t i = 0; i < clients_ * windows_; ++i) {
            ::new (records_ + i) window_record{};
        }
        for (std::size_t i = 0; i < keys_; ++i) {
            ::new (versions_ + i) std::atomic<std::uint32_t>{0};
        }
    }
    auto control() -> control_block& { return *control_; }
    auto slot(std::size_t c) -> client_slot& { return slots_[c]; }
    auto record(std::size_t c, std::size_t w) -> window_record& { return records_[c * windows_ + w]; }
    auto versions() -> std::atomic<std::uint32_t>* { return versions_; }

private:
    std::size_t clients_, windows_, keys_;
    std::size_t size_ = 0;
    void* base_ = nullptr;
    control_block* control_ = nullptr;
    client_slot* slots_ = nullptr;
    window_record* records_ = nullptr;
    std::atomic<std::uint32_t>* versions_ = nullptr;
};

auto client_id(std::size_t i) -> std::string { return "client-" + std::to_string(i); }

struct arm_spec {
    std::string strategy;
    std::string rule;
    double alpha = 0;
    std::uint64_t seed = 0;
    std::string cluster;
};

// One client process: adopts the cluster's snapshots through its own etcd watcher, places every
// request by the snapshot adopted (checked against the plan's fingerprint), and records its
// windows in the shared area. The last client, when --late-ms D > 0, talks to etcd through a
// relay that delays everything etcd sends it by D. An event's phase ends after its windows and
// once the client has served the event's completing epoch: the last window runs on until then,
// so a client never ends its run (and revokes its report) before the coordinator is done with it.
void client_run(const options& o, shared_area& sh, std::size_t index, const std::string& endpoint,
                const std::vector<server>& servers, const arm_spec& arm) {
    auto& slot = sh.slot(index);
    const universe u(o.keys, arm.alpha, arm.seed);
    const plan p = make_plan(arm.cluster, u, request_weights(u), arm.strategy, false);
    std::vector<std::unique_ptr<connection>> conns;
    for (const auto& s : servers) {
        conns.push_back(std::make_unique<connection>(s.port, false));
    }
    const bool late = index + 1 == o.clients && o.late_ms > 0;
    const std::chrono::milliseconds delay(late ? o.late_ms : 0);
    std::optional<delay_relay> relay;
    std::string via = endpoint;
    if (late) {
        relay.emplace(endpoint_address(endpoint), delay);
        via = "http://127.0.0.1:" + std::to_string(relay->port());
    }
    // Each of its requests to etcd is answered `delay` late: the timeout allows for that.
    kp::etcd::watcher w({.connection = {.endpoint = via, .timeout = std::chrono::milliseconds(2000) + delay},
                         .cluster = arm.cluster,
                         .client_id = client_id(index)});
    if (!w.wait_for_snapshot(std::chrono::seconds(30))) {
        throw failure("no snapshot adopted from etcd at " + endpoint + " within 30 s" +
                      (w.last_refusal().empty() ? std::string() : " (" + w.last_refusal() + ")"));
    }
    auto reader = w.local()->make_reader();
    cache_client c{conns, u, p, {sh.versions()}, arm.rule, o.writes, std::string(o.value_size, 'x'),
                   {workload_seed(arm.seed, arm.alpha, index + 1)}};
    if (index == 0) {
        c.prefill(o.prefill);
    }
    std::uint64_t seen = 0;
    auto request = [&](window_stats& win) {
        const kp::snapshot& s = reader.get();
        const std::uint64_t e = s.epoch();
        if (e != seen) {
            if (e < 1 || e > p.snaps.size() || s.fingerprint() != p.snap(e).fingerprint()) {
                throw failure("adopted epoch " + std::to_string(e) + " (fingerprint " + s.fingerprint().hex() +
                              "), which is not the plan's");
            }
            // Requests are sequential: once this is set, every request on an older epoch is over.
            slot.first_use_ns[e].store(now_ns());
            seen = e;
        }
        c.request(win, e, std::max(e, sh.control().published.load(std::memory_order_acquire)));
    };
    slot.state.store(ready);
    std::size_t n = 0;
    for (std::uint32_t phase = 0; phase < phase_names.size(); ++phase) {
        while (sh.control().go.load(std::memory_order_acquire) <= phase) {
            ::usleep(200);
        }
        window_stats warm;
        for (std::uint64_t r = 0; phase == 0 && r < o.warm; ++r) {
            request(warm);
        }
        const std::uint64_t windows = phase == 0 ? o.steady : o.phase;
        const std::uint64_t completing = phase == 0 ? 1 : 2 * phase + 1;
        for (std::uint64_t i = 0; i < windows; ++i) {
            window_stats win;
            for (std::uint64_t r = 0; r < o.window || (i + 1 == windows && seen < completing); ++r) {
                request(win);
            }
            sh.record(index, n++) = {phase, seen, win.gets, win.hits, win.db_reads, win.stale, win.old_epoch,
                                     win.old_owner};
        }
        slot.phases_done.store(phase + 1, std::memory_order_release);
    }
}

[[noreturn]] void client_main(const options& o, shared_area& sh, std::size_t index, const std::string& endpoint,
                              const std::vector<server>& servers, const arm_spec& arm, pid_t parent) {
    for (auto& c : children) {
        c.store(0);  // this process's copy: the servers are the coordinator's to stop
    }
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        std::signal(sig, SIG_DFL);
    }
    etcd_dir[0] = '\0';  // the coordinator's to remove
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
        ::_exit(1);  // the coordinator is gone already
    }
    auto& slot = sh.slot(index);
    auto fail = [&](const char* what) {
        std::snprintf(slot.error.data(), slot.error.size(), "%s: %s", client_id(index).c_str(), what);
        slot.state.store(failed);
    };
    int status = 0;
    try {
        client_run(o, sh, index, endpoint, servers, arm);
        slot.state.store(finished);
    } catch (const std::exception& e) {
        fail(e.what());
        status = 1;
    } catch (...) {
        fail("an exception that is not a std::exception");
        status = 1;
    }
    ::_exit(status);
}

struct client_result {
    std::string id;
    bool late = false;
    std::vector<window_stats> windows;
    // By epoch: from the start of its publish to the client's first request on it; -1: skipped.
    std::array<double, max_epochs + 1> adoption_ms{};
};

struct clients_arm {
    arm_spec spec;
    std::vector<client_result> clients;
    std::vector<pid_t> pids;
};

// The coordinator's side of one arm: publishes the plan to etcd event by event while the clients
// run. Under write-set and flush (unless --no-barrier) the completing epoch of an event is
// published only after every client reports the transition epoch, and the next event begins only
// after every client reports the completing one; under none they follow one another at once.
auto run_clients_arm(const options& o, fleet& f, shared_area& sh, kp::etcd::client& ec, const std::string& endpoint,
                     const arm_spec& arm, const std::function<void(const std::string&)>& progress) -> clients_arm {
    for (std::size_t i = 0; i < f.conns.size(); ++i) {
        f.flush(i);
    }
    sh.reset();
    const universe u(o.keys, arm.alpha, arm.seed);
    const plan p = make_plan(arm.cluster, u, request_weights(u), arm.strategy, false);
    auto& ctl = sh.control();
    auto publish = [&](std::uint64_t epoch) {
        ctl.published_ns[epoch].store(now_ns());
        kp::error_info err;
        if (!kp::etcd::publish(ec, p.snap(epoch), err)) {
            throw failure("etcd at " + endpoint + ": publishing epoch " + std::to_string(epoch) + " of " + arm.cluster +
                          " failed: " + err.message());
        }
        ctl.published.store(epoch, std::memory_order_release);
    };
    publish(1);
    clients_arm res{arm, {}, {}};
    const pid_t parent = ::getpid();
    for (std::size_t i = 0; i < o.clients; ++i) {
        const pid_t pid = ::fork();
        if (pid < 0) {
            throw failure(std::string("cannot fork: ") + std::strerror(errno));
        }
        if (pid == 0) {
            client_main(o, sh, i, endpoint, f.servers, arm, parent);
        }
        children[first_client_slot + i].store(pid);
        res.pids.push_back(pid);
    }
    // A client that fails or exits early ends the run with its message.
    auto check = [&] {
        for (std::size_t i = 0; i < o.clients; ++i) {
            if (sh.slot(i).state.load() == failed) {
                throw failure(std::string(sh.slot(i).error.data()));
            }
            int st = 0;
            if (children[first_client_slot + i].load() != 0 && ::waitpid(res.pids[i], &st, WNOHANG) == res.pids[i]) {
                children[first_client_slot + i].store(0);
                if (sh.slot(i).state.load() != finished) {
                    throw failure(sh.slot(i).state.load() == failed ? std::string(sh.slot(i).error.data())
                                                                     : client_id(i) + " exited before its end");
                }
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {  // a sanitizer's report, for one
                    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                    throw failure(client_id(i) + " ended with status " + std::to_string(code));
                }
            }
        }
    };
    auto wait_until = [&](const std::string& what, const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (!done()) {
            check();
            if (std::chrono::steady_clock::now() > deadline) {
                throw failure("gave up after 120 s waiting for " + what);
            }
            ::usleep(1000);
        }
    };
    auto every_client = [&](const std::function<bool(std::size_t)>& f_) {
        for (std::size_t i = 0; i < o.clients; ++i) {
            if (!f_(i)) {
                return false;
            }
        }
        return true;
    };
    // Every client reports (under clients/<id>, from its watcher) an epoch at least `epoch`, and
    // has served it. A report says the watcher adopted the epoch; a request that read the older
    // snapshot just before may still be under way, so the barrier also waits (in shared memory)
    // for each client's first request on it, which begins only once its earlier requests are over.
    auto reported = [&](std::uint64_t epoch) {
        wait_until("every client to report epoch " + std::to_string(epoch), [&] {
            if (!every_client([&](std::size_t i) { return sh.slot(i).first_use_ns[epoch].load() != 0; })) {
                return false;
            }
            kp::error_info err;
            const auto reports = kp::etcd::read_reports(ec, arm.cluster, err);
            if (!reports) {
                throw failure("etcd at " + endpoint + ": reading the clients' reports failed: " + err.message());
            }
            return every_client([&](std::size_t i) {
                return std::any_of(reports->begin(), reports->end(), [&](const kp::etcd::client_report& r) {
                    return r.id == client_id(i) && r.epoch >= epoch;
                });
            });
        });
    };
    wait_until("the clients to start",
               [&] { return every_client([&](std::size_t i) { return sh.slot(i).state.load() == ready; }); });
    const bool barrier = arm.rule != "none" && !o.no_barrier;
    progress("steady");
    ctl.go.store(1, std::memory_order_release);
    for (std::size_t e = 0; e < p.events.size(); ++e) {
        const auto phases = static_cast<std::uint32_t>(e + 1);
        wait_until("the clients to end the phase before " + p.events[e].name,
                   [&] { return every_client([&](std::size_t i) { return sh.slot(i).phases_done.load() >= phases; }); });
        progress(p.events[e].name);
        const std::uint64_t transition = 2 * e + 2;
        if (barrier) {
            reported(transition - 1);
        }
        publish(transition);
        ctl.go.store(phases + 1, std::memory_order_release);
        if (barrier) {
            reported(transition);
        }
        if (p.events[e].adds && arm.rule == "flush") {
            f.flush(p.events[e].server);
        }
        publish(transition + 1);
    }
    wait_until("the clients to end", [&] {
        return every_client([&](std::size_t i) { return children[first_client_slot + i].load() == 0; });
    });
    for (std::size_t i = 0; i < o.clients; ++i) {
        client_result r{client_id(i), i + 1 == o.clients && o.late_ms > 0, {}, {}};
        const auto total = static_cast<std::size_t>(o.steady + 3 * o.phase);
        for (std::size_t w = 0; w < total; ++w) {
            const auto& x = sh.record(i, w);
            r.windows.push_back({phase_names.at(x.phase), x.epoch, x.gets, x.hits, x.db_reads, x.stale, x.old_epoch,
                                 x.old_owner});
        }
        for (std::size_t e = 1; e <= p.snaps.size(); ++e) {
            const auto first = sh.slot(i).first_use_ns[e].load();
            const auto after = std::max<std::int64_t>(0, first - ctl.published_ns[e].load());
            r.adoption_ms[e] = first == 0 ? -1.0 : static_cast<double>(after) / 1e6;
        }
        res.clients.push_back(std::move(r));
    }
    return res;
}

// Per client and event: requests on an old epoch, those sent to an old owner, stale hits.
struct client_event {
    std::uint64_t gets = 0, old_epoch = 0, old_owner = 0, stale = 0;
};

auto client_event_of(const client_result& c, const std::string& ev) -> client_event {
    client_event x;
    for (const auto& w : c.windows) {
        if (w.phase == ev) {
            x.gets += w.gets;
            x.old_epoch += w.old_epoch;
            x.old_owner += w.old_owner;
            x.stale += w.stale;
        }
    }
    return x;
}

auto stale_total(const clients_arm& a) -> std::uint64_t {
    std::uint64_t n = 0;
    for (const auto& c : a.clients) {
        for (const auto& w : c.windows) {
            n += w.stale;
        }
    }
    return n;
}

auto clients_text(const options& o, const std::string& endpoint, const std::vector<clients_arm>& arms) -> std::string {
    std::string out = std::to_string(o.clients) + " client processes following membership through etcd at " +
                      endpoint + "; " +
                      (o.late_ms > 0 ? client_id(o.clients - 1) + " is late (everything etcd sends it arrives " +
                                           std::to_string(o.late_ms) + " ms late)"
                                     : std::string("no client is late")) +
                      "; " +
                      (o.no_barrier ? std::string("no barrier: each completing epoch follows its transition at once")
                                    : std::string("write-set and flush publish an event's completing epoch after every "
                                                  "client reports its transition epoch")) +
                      "\nadopt ms: from the publish of the transition / completing epoch to the client's first request "
                      "on it (- : skipped); old epoch: requests served from an epoch older than the newest published; "
                      "old owner: those sent to another server than the newest epoch names\n";
    std::string last_group;
    for (const auto& a : arms) {
        const std::string group = "alpha " + alpha_name(a.spec.alpha) + ", seed " + std::to_string(a.spec.seed);
        if (group != last_group) {
            out += "\n" + group + "\nstrategy    rule       client           |";
            for (const auto& ev : event_names) {
                char h[96];
                std::snprintf(h, sizeof h, " %-6s adopt ms  old epoch  old owner  stale |", ev.c_str());
                out += h;
            }
            out += "\n";
            last_group = group;
        }
        for (const auto& c : a.clients) {
            char line[128];
            std::snprintf(line, sizeof line, "%-11s %-10s %-16s |", a.spec.strategy.c_str(), a.spec.rule.c_str(),
                          (c.id + (c.late ? " (late)" : "")).c_str());
            out += line;
            for (std::size_t e = 0; e < event_names.size(); ++e) {
                const auto x = client_event_of(c, event_names[e]);
                auto ms = [&](std::size_t epoch) {
                    return c.adoption_ms[epoch] < 0 ? std::string("-") : fmt("%.0f", c.adoption_ms[epoch]);
                };
                const std::string adopt = ms(2 * e + 2) + "/" + ms(2 * e + 3);
                std::snprintf(line, sizeof line, " %15s %10llu %10llu %6llu |", adopt.c_str(),
                              static_cast<unsigned long long>(x.old_epoch), static_cast<unsigned long long>(x.old_owner),
                              static_cast<unsigned long long>(x.stale));
                out += line;
            }
            out += "\n";
        }
    }
    return out;
}

auto clients_json(const options& o, const std::string& endpoint, pid_t etcd_pid, const std::vector<server>& servers,
                  const std::vector<clients_arm>& arms) -> std::string {
    json_writer w;
    w.begin_object().member("format", "keyplace.fleet.clients/1").member("endpoint", endpoint).member("etcd_pid", etcd_pid);
    servers_json(w, servers);
    w.member("clients", o.clients)
        .member("late_ms", o.late_ms)
        .member("barrier", !o.no_barrier)
        .member("keys", o.keys)
        .member("window", o.window);
    w.key("arms").begin_array();
    for (const auto& a : arms) {
        w.begin_object()
            .member("strategy", a.spec.strategy)
            .member("rule", a.spec.rule)
            .member("alpha", alpha_name(a.spec.alpha))
            .member("seed", a.spec.seed)
            .member("stale_hits", stale_total(a))
            .key("clients")
            .begin_array();
        for (std::size_t k = 0; k < a.clients.size(); ++k) {
            const auto& c = a.clients[k];
            w.begin_object().member("id", c.id).member("pid", a.pids[k]).member("late", c.late);
            w.key("adoption_ms").begin_object();
            for (std::size_t e = 2; e <= 1 + 2 * event_names.size(); ++e) {  // epoch 1 precedes the clients
                w.key(std::to_string(e)).raw(c.adoption_ms[e] < 0 ? std::string("null") : json_fixed("%.2f", c.adoption_ms[e]));
            }
            w.end_object().key("events").begin_object();
            for (const auto& event : event_names) {
                const auto x = client_event_of(c, event);
                w.key(event)
                    .begin_object()
                    .member("gets", x.gets)
                    .member("old_epoch_requests", x.old_epoch)
                    .member("old_owner_requests", x.old_owner)
                    .member("stale_hits", x.stale)
                    .end_object();
            }
            w.end_object().key("windows");
            windows_json(w, c.windows);
            w.end_object();
        }
        w.end_array().end_object();
    }
    w.end_array().end_object();
    return std::move(w).str() + "\n";
}

auto run_clients(const options& o, const std::string& memcached) -> int {
    const auto t0 = std::chrono::steady_clock::now();
    fleet f;
    for (std::size_t i = 0; i <= initial_servers; ++i) {
        f.servers.push_back(start_server(memcached, i));
        f.conns.push_back(std::make_unique<connection>(f.servers.back().port, false));
    }
    const std::string endpoint = o.etcd == "start" ? start_etcd() : o.etcd;
    const pid_t etcd_pid = o.etcd == "start" ? children[etcd_slot].load() : 0;
    // Forked clients copy this process: it holds no thread then (the etcd client below has none).
    shared_area sh(o.clients, o.steady + 3 * o.phase, o.keys);
    kp::etcd::client ec({.endpoint = endpoint});
    {
        kp::error_info err;
        (void)ec.get("/keyplace-fleet/ready", err);
        if (err) {
            throw failure("etcd at " + endpoint + " does not answer: " + err.message());
        }
    }
    // Each arm is a cluster of its own, named so that no earlier run on the same etcd collides.
    char nonce[16];
    std::snprintf(nonce, sizeof nonce, "%08x", std::random_device{}());
    const std::string run_id = "fleet-" + std::to_string(::getpid()) + "-" + nonce;
    std::vector<clients_arm> arms;
    const std::size_t total = o.alphas.size() * o.seeds.size() * o.strategies.size() * o.rules.size();
    for (const double alpha : o.alphas) {
        for (const auto seed : o.seeds) {
            for (const auto& s : o.strategies) {
                for (const auto& rule : o.rules) {
                    const arm_spec arm{s, rule, alpha, seed, run_id + "-" + std::to_string(arms.size())};
                    auto progress = [&](const std::string& phase) {
                        print_progress(o, t0, arms.size() + 1, total, alpha, seed, s, rule, phase);
                    };
                    arms.push_back(run_clients_arm(o, f, sh, ec, endpoint, arm, progress));
                }
            }
        }
    }
    if (!o.quiet) {
        std::fprintf(stderr, "\n");
    }
    kill_children();
    remove_etcd_dir();
    if (o.json != "-") {
        write_file("-", clients_text(o, endpoint, arms));
    }
    if (!o.json.empty()) {
        write_file(o.json, clients_json(o, endpoint, etcd_pid, f.servers, arms));
    }
    return 0;
}

#endif  // KEYPLACE_FLEET_ETCD

// ---------------------------------------------------------------------------------------------
// Every child stopped by pid, and etcd's directory removed (--etcd start).
void cleanup() noexcept {
    kill_children();
#ifdef KEYPLACE_FLEET_ETCD
    remove_etcd_dir();
#endif
}

// The options that only make sense together, checked before any server starts.
void check_combinations(const options& o) {
    if (!o.json.empty() && o.json == o.svg) {
        throw failure("--json and --svg name the same file " + keyplace_cli::quote(o.json), 2);
    }
    const std::string n = std::to_string(o.clients);
    if (o.clients == 1) {
        if (!o.etcd.empty() || o.late_ms_given || o.no_barrier) {
            throw failure("--etcd, --late-ms and --no-barrier are for several clients: add --clients N (2..8)", 2);
        }
        return;
    }
#ifndef KEYPLACE_FLEET_ETCD
    throw failure("--clients " + n + ": this keyplace-fleet is built without keyplace::etcd (libcurl and "
                  "nlohmann_json), which several clients need", 2);
#endif
    if (o.etcd.empty()) {
        throw failure("--clients " + n + " needs --etcd URL or --etcd start", 2);
    }
    if (o.lag != 0) {
        throw failure("--lag is for one client; with --clients the last client is late by --late-ms", 2);
    }
    if (!o.svg.empty()) {
        throw failure("--svg draws the one-client run, not --clients", 2);
    }
}

// An output FILE is opened for writing before any server starts, so that a path that cannot be
// written fails in a second, not after the run; it is not truncated, and removed again if this
// made it (the run writes it at the end).
void check_output_file(const std::string& opt, const std::string& path) {
    if (path.empty() || path == "-") {
        return;
    }
    const bool existed = ::access(path.c_str(), F_OK) == 0;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        throw bad(opt, path, std::string("cannot write: ") + std::strerror(errno));
    }
    ::close(fd);
    if (!existed) {
        ::unlink(path.c_str());
    }
}

auto run(const options& o) -> int {
    if (o.cascade) {
        write_file("-", cascade_report());
        return 0;
    }
    check_combinations(o);
    check_output_file("json", o.json);
    check_output_file("svg", o.svg);
    const auto binary = find_executable(o.memcached);
    if (!binary) {
        std::fprintf(stderr, "keyplace-fleet: memcached not found (%s is not an executable on PATH); install "
                             "memcached or pass --memcached PATH\n", keyplace_cli::quote(o.memcached).c_str());
        return status_skipped;
    }
#ifdef KEYPLACE_FLEET_ETCD
    if (o.clients > 1) {
        return run_clients(o, *binary);
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    fleet f;
    for (std::size_t i = 0; i <= initial_servers; ++i) {
        f.servers.push_back(start_server(*binary, i));
        f.conns.push_back(std::make_unique<connection>(f.servers.back().port, true));
    }
    std::vector<arm_result> arms;
    const std::size_t total_arms = o.alphas.size() * o.seeds.size() * o.strategies.size() * (o.rules.size() + 1);
    std::size_t done = 0;
    for (const double alpha : o.alphas) {
        for (const auto seed : o.seeds) {
            const universe u(o.keys, alpha, seed);
            const auto weights = request_weights(u);
            for (const auto& s : o.strategies) {
                for (std::size_t r = 0; r <= o.rules.size(); ++r) {
                    const bool control = r == o.rules.size();
                    const std::string rule = control ? "none" : o.rules[r];
                    ++done;
                    auto progress = [&](const std::string& phase) {
                        print_progress(o, t0, done, total_arms, alpha, seed, s, control ? "control" : rule, phase);
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
    // Before any server's socket can take descriptor 1: every run writes stdout (the report, the
    // JSON with --json -, --cascade, --help), so a closed stdout is refused before it starts.
    const auto fds = keyplace_cli::hold_standard_descriptors();
    if (!fds.held || fds.closed[1]) {
        std::fprintf(stderr, "keyplace-fleet: %s\n",
                     fds.held ? "cannot write the output: stdout is closed"
                              : "cannot open /dev/null to hold a closed standard descriptor");
        return 1;
    }
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
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return e.status;
    } catch (const std::bad_alloc&) {
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: out of memory\n");
        return 1;
    } catch (const std::exception& e) {
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return 1;
    }
    cleanup();
    return status;
}
