// keyplace-fleet --clients N: the client processes, the coordinator and its barrier (clients.hpp).
#include "clients.hpp"

#include "delay_relay.hpp"
#include "fleet_options.hpp"
#include "reports.hpp"
#include "servers.hpp"
#include "workload.hpp"

#include <keyplace/etcd.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace keyplace_fleet {

namespace {

// Where etcd and the client processes are recorded in children (servers.hpp).
constexpr std::size_t etcd_slot = max_servers - max_clients - 1;  // after the four servers
constexpr std::size_t first_client_slot = max_servers - max_clients;

// The plan of an arm: the events of the default run, or a --rollout arm's.
auto plan_of(const arm_spec& arm, const universe& u) -> plan {
    return arm.rollout.empty() ? make_plan(arm.cluster, u, request_weights(u), arm.strategy, false)
                               : make_rollout_plan(arm.cluster, u, arm.strategy, arm.rollout);
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
// at exit (the directory too, remove_etcd_dir); like the servers it dies with this program.
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
    std::atomic<std::uint32_t> hot_size;  // bytes of its serialized hot-key summary, once written
};

// Room for one client's serialized hot-key summary: the default shape's 28 + 4 x 4096 x 8 bytes,
// the candidate count, and 64 candidates of 12 bytes and a key of up to 116 bytes.
constexpr std::size_t hot_summary_room = 28 + 4 * 4096 * 8 + 4 + 64 * (12 + 116);

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
        const std::size_t exact_at = versions_at + round(keys * sizeof(std::atomic<std::uint32_t>));
        const std::size_t hot_at = exact_at + round(keys * sizeof(std::atomic<std::uint64_t>));
        size_ = hot_at + clients * hot_summary_room;
        base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (base_ == MAP_FAILED) {
            throw failure("cannot map " + std::to_string(size_) + " bytes of shared memory: " + std::strerror(errno));
        }
        char* const b = static_cast<char*>(base_);
        control_ = reinterpret_cast<control_block*>(b);
        slots_ = reinterpret_cast<client_slot*>(b + slots_at);
        records_ = reinterpret_cast<window_record*>(b + records_at);
        versions_ = reinterpret_cast<std::atomic<std::uint32_t>*>(b + versions_at);
        exact_ = reinterpret_cast<std::atomic<std::uint64_t>*>(b + exact_at);
        hot_ = b + hot_at;
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
            ::new (exact_ + i) std::atomic<std::uint64_t>{0};
        }
    }
    auto control() -> control_block& { return *control_; }
    auto slot(std::size_t c) -> client_slot& { return slots_[c]; }
    auto record(std::size_t c, std::size_t w) -> window_record& { return records_[c * windows_ + w]; }
    auto versions() -> std::atomic<std::uint32_t>* { return versions_; }
    // Every client's requests by key index, added up once each client ends.
    auto exact() -> std::atomic<std::uint64_t>* { return exact_; }
    // Client c's room for its serialized hot-key summary (hot_summary_room bytes).
    auto hot(std::size_t c) -> char* { return hot_ + c * hot_summary_room; }

private:
    std::size_t clients_, windows_, keys_;
    std::size_t size_ = 0;
    void* base_ = nullptr;
    control_block* control_ = nullptr;
    client_slot* slots_ = nullptr;
    window_record* records_ = nullptr;
    std::atomic<std::uint32_t>* versions_ = nullptr;
    std::atomic<std::uint64_t>* exact_ = nullptr;
    char* hot_ = nullptr;
};

// One client process: adopts the cluster's snapshots through its own etcd watcher, places every
// request by the snapshot adopted (checked against the plan's fingerprint), and records its
// windows in the shared area. The last client, when --late-ms D > 0, talks to etcd through a
// relay that delays everything etcd sends it by D. A step's phase (an event's, or a --rollout
// step's) ends after its windows and once the client has served the step's last epoch: the last
// window runs on until then, so a client never ends its run (and revokes its report) before the
// coordinator is done with it. Under --rollout the first window also begins only then.
void client_run(const options& o, shared_area& sh, std::size_t index, const std::string& endpoint,
                const std::vector<server>& servers, const arm_spec& arm) {
    auto& slot = sh.slot(index);
    const universe u(o.keys, arm.alpha, arm.seed);
    const plan p = plan_of(arm, u);
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
    // Every request's key, observed by this process's own hot-key summary and counted exactly; the
    // coordinator merges the summaries from their bytes (as processes of a service would).
    auto detect = kp::hot_keys::make();
    std::vector<std::uint64_t> exact(u.names.size(), 0);
    c.detect = &detect;
    c.exact = &exact;
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
    std::uint64_t completing = 1;
    for (std::uint32_t phase = 0; phase <= p.steps.size(); ++phase) {
        while (sh.control().go.load(std::memory_order_acquire) <= phase) {
            ::usleep(200);
        }
        window_stats warm;
        for (std::uint64_t r = 0; phase == 0 && r < o.warm; ++r) {
            request(warm);
        }
        const std::uint64_t windows = phase == 0 ? o.steady : o.phase;
        if (phase > 0 && !p.steps[phase - 1].epochs.empty()) {
            completing = p.steps[phase - 1].epochs.back();
        }
        for (std::uint64_t i = 0; i < windows; ++i) {
            window_stats win;
            for (std::uint64_t r = 0; r < o.window || (i + 1 == windows && seen < completing);) {
                request(win);
                r += i == 0 && p.windows_from_change && seen < completing ? 0 : 1;
            }
            sh.record(index, n++) = {phase, seen, win.gets, win.hits, win.db_reads, win.stale, win.old_epoch,
                                     win.old_owner};
        }
        slot.phases_done.store(phase + 1, std::memory_order_release);
    }
    const std::string summary = detect.serialize();
    if (summary.size() > hot_summary_room) {
        throw failure("its hot-key summary takes " + std::to_string(summary.size()) + " bytes, above the " +
                      std::to_string(hot_summary_room) + " shared for it");
    }
    std::memcpy(sh.hot(index), summary.data(), summary.size());
    for (std::size_t k = 0; k < exact.size(); ++k) {
        sh.exact()[k].fetch_add(exact[k], std::memory_order_relaxed);
    }
    slot.hot_size.store(static_cast<std::uint32_t>(summary.size()), std::memory_order_release);
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

// The coordinator's side of one arm: publishes the plan to etcd step by step (an event's
// transition and completing epochs, or a --rollout step's epochs) while the clients run. Under
// write-set and flush (unless --no-barrier) each epoch is published only after every client
// reports the one before; under none they follow one another at once. A rollback step's
// invalidations are deleted before its first epoch, and the server it relinquishes flushed once
// every client reports its last.
auto run_clients_arm(const options& o, fleet& f, shared_area& sh, kp::etcd::client& ec, const std::string& endpoint,
                     const arm_spec& arm, const std::function<void(const std::string&)>& progress) -> clients_arm {
    for (std::size_t i = 0; i < f.conns.size(); ++i) {
        f.flush(i);
    }
    sh.reset();
    const universe u(o.keys, arm.alpha, arm.seed);
    const plan p = plan_of(arm, u);
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
    clients_arm res{arm, {}, {}, {}};
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
    for (std::size_t e = 0; e < p.steps.size(); ++e) {
        const auto& st = p.steps[e];
        const auto phases = static_cast<std::uint32_t>(e + 1);
        wait_until("the clients to end the phase before " + st.name,
                   [&] { return every_client([&](std::size_t i) { return sh.slot(i).phases_done.load() >= phases; }); });
        progress(st.name);
        for (const auto& [server, k] : st.invalidate) {
            f.remove(server, u.names[k]);
        }
        for (std::size_t j = 0; j < st.epochs.size(); ++j) {
            if (barrier) {
                reported(st.epochs[j] - 1);
            }
            // Under flush, a joining server is flushed once every client has its transition epoch.
            if (j == 1 && st.joins >= 0 && arm.rule == "flush") {
                f.flush(static_cast<std::size_t>(st.joins));
            }
            publish(st.epochs[j]);
            if (j == 0) {
                ctl.go.store(phases + 1, std::memory_order_release);
            }
        }
        if (st.epochs.empty()) {
            ctl.go.store(phases + 1, std::memory_order_release);
        }
        if (st.relinquish >= 0 && !st.epochs.empty()) {
            reported(st.epochs.back());
            f.flush(static_cast<std::size_t>(st.relinquish));
        }
    }
    wait_until("the clients to end", [&] {
        return every_client([&](std::size_t i) { return children[first_client_slot + i].load() == 0; });
    });
    for (std::size_t i = 0; i < o.clients; ++i) {
        client_result r{client_id(i), i + 1 == o.clients && o.late_ms > 0, {}, {}};
        const auto total = static_cast<std::size_t>(o.steady + p.steps.size() * o.phase);
        for (std::size_t w = 0; w < total; ++w) {
            const auto& x = sh.record(i, w);
            r.windows.push_back({x.phase == 0 ? std::string("steady") : p.steps.at(x.phase - 1).name, x.epoch, x.gets, x.hits, x.db_reads, x.stale, x.old_epoch,
                                 x.old_owner});
        }
        for (std::size_t e = 1; e <= p.snaps.size(); ++e) {
            const auto first = sh.slot(i).first_use_ns[e].load();
            const auto after = std::max<std::int64_t>(0, first - ctl.published_ns[e].load());
            r.adoption_ms[e] = first == 0 ? -1.0 : static_cast<double>(after) / 1e6;
        }
        res.clients.push_back(std::move(r));
    }
    // The clients' hot-key summaries, parsed from their bytes and merged, beside their exact counts.
    auto merged = kp::hot_keys::make();
    for (std::size_t i = 0; i < o.clients; ++i) {
        const std::uint32_t size = sh.slot(i).hot_size.load(std::memory_order_acquire);
        kp::error_info err;
        const auto summary = kp::hot_keys::try_parse(std::string_view(sh.hot(i), size), err);
        if (!summary) {
            throw failure(client_id(i) + "'s hot-key summary: " + err.message());
        }
        merged.merge(*summary);
    }
    std::vector<std::uint64_t> exact(u.names.size());
    for (std::size_t k = 0; k < exact.size(); ++k) {
        exact[k] = sh.exact()[k].load(std::memory_order_relaxed);
    }
    res.hot = hot_report_of(merged, exact, u);
    return res;
}

}  // namespace

auto run_clients(const options& o, const std::string& memcached) -> int {
    const auto t0 = std::chrono::steady_clock::now();
    fleet f = start_fleet(memcached, initial_servers + 1, false);
    const std::string endpoint = o.etcd == "start" ? start_etcd() : o.etcd;
    const pid_t etcd_pid = o.etcd == "start" ? children[etcd_slot].load() : 0;
    // Forked clients copy this process: it holds no thread then (the etcd client below has none).
    const std::size_t steps = o.rollout ? ramp_steps : event_names.size();
    shared_area sh(o.clients, o.steady + steps * o.phase, o.keys);
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
    const std::size_t total =
        o.alphas.size() * o.seeds.size() * o.strategies.size() * (o.rollout ? rollout_arms.size() : o.rules.size());
    for (const double alpha : o.alphas) {
        for (const auto seed : o.seeds) {
            for (const auto& s : o.strategies) {
                // --rollout: its arms under write-set; else each rule.
                for (const auto& variant : o.rollout ? rollout_arms : o.rules) {
                    const std::string rule = o.rollout ? "write-set" : variant;
                    const arm_spec arm{s, rule, alpha, seed, run_id + "-" + std::to_string(arms.size()),
                                       o.rollout ? variant : std::string()};
                    auto progress = [&](const std::string& phase) {
                        print_progress(o, t0, arms.size() + 1, total, alpha, seed, s, variant, phase);
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
        write_file("-", o.rollout ? rollout_text(o, arms) : clients_text(o, endpoint, arms));
    }
    if (!o.json.empty()) {
        write_file(o.json, o.rollout ? rollout_json(o, endpoint, etcd_pid, f.servers, arms)
                                     : clients_json(o, endpoint, etcd_pid, f.servers, arms));
    }
    return 0;
}


}  // namespace keyplace_fleet
