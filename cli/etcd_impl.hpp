// keyplace-cli etcd commands' bodies: etcd publish / current / watch / status, over the optional
// keyplace::etcd component (etcd's v3 JSON gateway); etcd.cpp includes this, built when CMake
// finds that target.
#ifndef KEYPLACE_CLI_ETCD_IMPL_HPP_INCLUDED
#define KEYPLACE_CLI_ETCD_IMPL_HPP_INCLUDED

#include "args.hpp"
#include "etcd_commands.hpp"
#include "metrics_server.hpp"
#include "options.hpp"
#include "output.hpp"
#include "snapshot_impl.hpp"
#include "stream.hpp"

#include <keyplace/etcd.hpp>
#include <keyplace/fleet/metrics.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace keyplace_cli {

/// The endpoints of --endpoints (one URL or several, comma-separated).
inline auto etcd_endpoints(const parsed_args& a) -> std::vector<std::string> {
    keyplace::error_info err;
    auto list = keyplace::etcd::parse_endpoints(a.value(endpoints_option.spec), err);
    if (err) {
        usage_error("--endpoints: " + err.message());
    }
    return list;
}

/// --user's name and password: NAME:PASSWORD, or NAME with --password-file or the variable.
inline auto etcd_credentials(const parsed_args& a) -> keyplace::etcd::credentials {
    const auto user = a.get(user_option.spec);
    const auto file = a.get(password_file_option.spec);
    if (!user) {
        if (file) {
            usage_error("--password-file needs --user");
        }
        return {};
    }
    const auto colon = user->find(':');
    keyplace::etcd::credentials c{user->substr(0, colon), {}};
    if (c.user.empty()) {
        usage_error("--user " + quote(*user) + " has an empty user name");
    }
    if (colon != std::string::npos) {
        if (file) {
            usage_error("--user " + quote(c.user + ":...") + " carries a password and --password-file gives another");
        }
        c.password = user->substr(colon + 1);
    } else if (file) {
        const std::string text = read_file(*file, "password file");
        c.password = text.substr(0, text.find_first_of("\r\n"));
    } else if (const char* env = std::getenv(password_variable)) {
        c.password = env;
    } else {
        usage_error("--user " + quote(c.user) + " has no password: give --user NAME:PASSWORD, --password-file FILE or " +
                    password_variable);
    }
    return c;
}

/// How to reach etcd: --endpoints, TLS (--cacert, --cert, --key) and --user.
inline auto etcd_connection(const parsed_args& a) -> keyplace::etcd::client_options {
    keyplace::etcd::client_options o;
    o.endpoints = etcd_endpoints(a);
    o.endpoint = o.endpoints.front();
    if (a.has(cert_option.spec) != a.has(key_option.spec)) {
        usage_error(a.has(cert_option.spec) ? "--cert needs --key" : "--key needs --cert");
    }
    // A file that cannot be read fails here, naming it, rather than as a TLS error.
    for (const auto* option : {&cacert_option, &cert_option, &key_option}) {
        if (const auto path = a.get(option->spec)) {
            (void)read_file(*path, "--" + std::string(option->spec.name) + " file", std::size_t{1} << 20U);
        }
    }
    o.tls.ca_file = a.get(cacert_option.spec).value_or("");
    o.tls.cert_file = a.get(cert_option.spec).value_or("");
    o.tls.key_file = a.get(key_option.spec).value_or("");
    o.auth = etcd_credentials(a);
    return o;
}

/// --cluster, held to the library's name grammar before any request: else a usage error.
inline auto etcd_cluster(const parsed_args& a) -> std::string {
    auto v = a.value(etcd_cluster_option.spec);
    if (const auto f = keyplace::check_name(keyplace::name_kind::cluster, v)) {
        usage_error("--cluster: " + f.message());
    }
    return v;
}

inline auto etcd_client(const parsed_args& a) -> keyplace::etcd::client {
    return keyplace::etcd::client(etcd_connection(a));
}

/// A failure of etcd itself: the library's message names the endpoint.
[[noreturn]] inline void etcd_error(const keyplace::error_info& err) {
    input_error(err.message());
}

/// `current`, or nothing when nothing was published; transport errors fail.
inline auto current_of(keyplace::etcd::client& c, const std::string& cluster)
    -> std::optional<keyplace::etcd::current_pointer> {
    keyplace::error_info err;
    auto cur = keyplace::etcd::read_current(c, cluster, err);
    if (err) {
        etcd_error(err);
    }
    return cur;
}

/// Now, as 2024-05-01T12:34:56.789Z.
inline auto utc_now() -> std::string {
    const auto now = std::chrono::system_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::string out(buf, n);
    const auto frac = std::to_string(ms);
    return out + "." + std::string(3 - frac.size(), '0') + frac + "Z";
}

inline auto etcd_publish(const parsed_args& a) -> std::string {
    const auto path = a.value(file_option.spec);
    const auto cluster = etcd_cluster(a);
    const auto s = load_snapshot_file(path);
    if (s->cluster() != cluster) {
        input_error(quote(path) + " is a snapshot of cluster " + quote(s->cluster()) + ", not of " + quote(cluster));
    }
    auto c = etcd_client(a);
    keyplace::error_info err;
    if (!keyplace::etcd::publish(c, *s, err)) {
        if (err == keyplace::fleet_errc::stale_epoch) {
            keyplace::error_info read_err;
            const auto cur = keyplace::etcd::read_current(c, cluster, read_err);
            if (cur) {
                input_error("epoch " + std::to_string(s->epoch()) + " not published: cluster " + quote(cluster) +
                            " is at epoch " + std::to_string(cur->epoch) + " (fingerprint " + cur->fingerprint.hex() +
                            ")");
            }
            input_error(err.message());  // the library's message names both epochs too
        }
        if (err == keyplace::fleet_errc::split_brain) {
            input_error("epoch " + std::to_string(s->epoch()) + " not published: " + err.message());
        }
        etcd_error(err);  // invalid_state too: a node left in the current epoch returns, named
    }
    return "published epoch " + std::to_string(s->epoch()) + " (fingerprint " + s->fingerprint().hex() +
           ") to cluster " + cluster + "\n";
}

inline auto etcd_current(const parsed_args& a) -> std::string {
    const auto cluster = etcd_cluster(a);
    auto c = etcd_client(a);
    const auto cur = current_of(c, cluster);
    if (!cur) {
        input_error("nothing is published to cluster " + quote(cluster));
    }
    if (a.has(json_flag.spec)) {
        json_writer w;
        w.begin_object().member("cluster", cluster).member("epoch", cur->epoch);
        w.member("fingerprint", cur->fingerprint.hex()).member("mod_revision", cur->mod_revision).end_object();
        return std::move(w).str() + "\n";
    }
    return "epoch " + std::to_string(cur->epoch) + " fingerprint " + cur->fingerprint.hex() + "\n";
}

inline auto etcd_status(const parsed_args& a) -> std::string {
    const auto cluster = etcd_cluster(a);
    auto c = etcd_client(a);
    const auto cur = current_of(c, cluster);
    keyplace::error_info err;
    const auto reports = keyplace::etcd::read_reports(c, cluster, err);
    if (!reports) {
        etcd_error(err);
    }
    // Two clients on one epoch with different fingerprints: the fleet does not agree.
    std::map<std::uint64_t, const keyplace::etcd::client_report*> first_of_epoch;
    std::string disagreement;
    std::size_t on_current = 0;
    for (const auto& r : *reports) {
        const auto [it, fresh] = first_of_epoch.emplace(r.epoch, &r);
        if (!fresh && it->second->fingerprint != r.fingerprint && disagreement.empty()) {
            disagreement = "clients " + quote(it->second->id) + " and " + quote(r.id) + " report epoch " +
                           std::to_string(r.epoch) + " with different fingerprints (" +
                           it->second->fingerprint.hex() + ", " + r.fingerprint.hex() + ")";
        }
        on_current += cur && r.epoch == cur->epoch && r.fingerprint == cur->fingerprint ? 1 : 0;
    }
    const std::string epoch_text = cur ? std::to_string(cur->epoch) : "none";
    std::string out;
    if (a.has(json_flag.spec)) {
        json_writer w;
        w.begin_object().member("cluster", cluster).key("current");
        if (cur) {
            w.begin_object().member("epoch", cur->epoch).member("fingerprint", cur->fingerprint.hex()).end_object();
        } else {
            w.raw("null");
        }
        w.key("clients").begin_array();
        for (const auto& r : *reports) {
            w.begin_object().member("id", r.id).member("epoch", r.epoch).member("fingerprint", r.fingerprint.hex());
            w.member("library", r.library).member("contract", r.contract).end_object();
        }
        w.end_array().member("on_current", on_current).member("agree", disagreement.empty()).end_object();
        out = std::move(w).str() + "\n";
    } else {
        out = "cluster " + cluster + ": current epoch " + epoch_text +
              (cur ? ", fingerprint " + cur->fingerprint.hex() : std::string()) + "\n";
        if (!reports->empty()) {
            std::vector<std::vector<std::string>> rows{{"client", "epoch", "fingerprint", "library", "contract"}};
            for (const auto& r : *reports) {
                rows.push_back({r.id, std::to_string(r.epoch), r.fingerprint.hex(), r.library,
                                std::to_string(r.contract)});
            }
            out += text_table(rows);
        }
        out += std::to_string(on_current) + " of " + std::to_string(reports->size()) +
               " clients on the current epoch " + epoch_text + "\n";
    }
    if (!disagreement.empty()) {
        throw cli_error(exit_disagreement, disagreement, out);
    }
    return out;
}

// ---- etcd watch -----------------------------------------------------------------------------------

/// Set by SIGINT and SIGTERM while etcd watch runs.
inline std::atomic<bool> watch_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" inline void on_watch_signal(int) {
    watch_interrupted.store(true);
}

/// SIGINT and SIGTERM set watch_interrupted while this lives; the old handlers come back after.
class signal_scope {
public:
    signal_scope() : old_int_(std::signal(SIGINT, on_watch_signal)), old_term_(std::signal(SIGTERM, on_watch_signal)) {
        watch_interrupted.store(false);
    }
    ~signal_scope() {
        std::signal(SIGINT, old_int_);
        std::signal(SIGTERM, old_term_);
    }
    signal_scope(const signal_scope&) = delete;
    auto operator=(const signal_scope&) -> signal_scope& = delete;

private:
    void (*old_int_)(int);
    void (*old_term_)(int);
};

inline auto default_client_id() -> std::string {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) {
        host[0] = '\0';
    }
    return "keyplace-cli-" + std::string(host[0] != '\0' ? host : "host") + "-" + std::to_string(getpid());
}

/// What the watcher's thread hands the printing thread: an adoption line or a refusal line.
// ---- etcd ramp ------------------------------------------------------------------------------------

/// The ramp's documents in DIR (epoch-E.json), in epoch order.
inline auto ramp_files(const std::string& dir) -> std::vector<std::pair<std::uint64_t, std::string>> {
    std::error_code ec;
    std::vector<std::pair<std::uint64_t, std::string>> out;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) {
        input_error("--dir " + quote(dir) + ": " + ec.message());
    }
    for (const auto& entry : it) {
        const std::string name = entry.path().filename().string();
        if (name.size() > 11 && name.rfind("epoch-", 0) == 0 && name.substr(name.size() - 5) == ".json") {
            if (const auto e = parse_unsigned<std::uint64_t>(name.substr(6, name.size() - 11))) {
                out.emplace_back(*e, entry.path().string());
            }
        }
    }
    std::sort(out.begin(), out.end());
    if (out.empty()) {
        input_error("--dir " + quote(dir) + " holds no epoch-E.json");
    }
    return out;
}

inline auto etcd_ramp(const parsed_args& a, std::ostream& out) -> std::string {
    const auto cluster = etcd_cluster(a);
    const auto files = ramp_files(a.value(ramp_dir_option.spec));
    const std::size_t clients = ramp_clients_option.get(a);
    const auto timeout = std::chrono::seconds(ramp_timeout_option.get(a));
    const auto hold = std::chrono::seconds(ramp_hold_option.get(a));
    const auto check = a.get(ramp_check_option.spec);
    // Every document loads, is of this cluster, and follows the one before, before anything is published.
    std::vector<std::shared_ptr<const keyplace::snapshot>> chain;
    for (const auto& [epoch, path] : files) {
        chain.push_back(load_snapshot_file(path));
        const auto& s = *chain.back();
        if (s.cluster() != cluster) {
            input_error(quote(path) + " is a snapshot of cluster " + quote(s.cluster()) + ", not of " + quote(cluster));
        }
        if (s.epoch() != epoch || (chain.size() > 1 && s.parent_epoch() != chain[chain.size() - 2]->epoch())) {
            input_error(quote(path) + " holds epoch " + std::to_string(s.epoch()) + " (parent " +
                        std::to_string(s.parent_epoch()) + "): not the chain's next");
        }
    }
    auto c = etcd_client(a);
    const signal_scope signals;
    const auto say = [&](const std::string& line) {
        out << line << '\n';
        out.flush();
        if (!out) {
            input_error("cannot write the output");
        }
    };
    for (const auto& s : chain) {
        if (watch_interrupted.load()) {
            input_error("interrupted before epoch " + std::to_string(s->epoch()));
        }
        const auto cur = current_of(c, cluster);
        if (cur && cur->epoch >= s->epoch()) {
            // Published before (a rerun resumes): only if it is this ramp's epoch.
            keyplace::error_info err;
            const auto stored = c.get(keyplace::etcd::snapshot_key(cluster, s->epoch()), err);
            if (err) {
                etcd_error(err);
            }
            keyplace::error_info load_err;
            const auto theirs = stored ? keyplace::try_load_snapshot_json(stored->value, load_err) : std::nullopt;
            if (!theirs || theirs->fingerprint() != s->fingerprint()) {
                input_error("epoch " + std::to_string(s->epoch()) + " is already published" +
                            (theirs ? " with fingerprint " + theirs->fingerprint().hex() + ", not this ramp's " +
                                          s->fingerprint().hex()
                                    : std::string(", and its document is not in etcd to compare")) +
                            ": this is not the ramp that was published");
            }
            say("epoch " + std::to_string(s->epoch()) + " already published");
            if (cur->epoch > s->epoch()) {
                continue;
            }
        } else {
            keyplace::error_info err;
            if (!keyplace::etcd::publish(c, *s, err)) {
                etcd_error(err);
            }
        }
        // The barrier: every live report on this epoch with its fingerprint, and enough of them.
        const auto start = std::chrono::steady_clock::now();
        std::size_t on = 0;
        std::size_t live = 0;
        std::string behind;
        while (true) {
            keyplace::error_info err;
            const auto reports = keyplace::etcd::read_reports(c, cluster, err);
            if (!reports) {
                etcd_error(err);
            }
            on = 0;
            behind.clear();
            for (const auto& r : *reports) {
                if (r.epoch == s->epoch() && r.fingerprint == s->fingerprint()) {
                    ++on;
                } else if (behind.size() < 200) {
                    behind += (behind.empty() ? "" : ", ") + quote(r.id) + " on " + std::to_string(r.epoch);
                }
            }
            live = reports->size();
            if (on == live && on >= clients) {
                break;
            }
            if (watch_interrupted.load()) {
                input_error("interrupted at epoch " + std::to_string(s->epoch()));
            }
            if (std::chrono::steady_clock::now() - start >= timeout) {
                input_error("epoch " + std::to_string(s->epoch()) + ": " + std::to_string(on) + " of " +
                            std::to_string(live) + " clients adopted it within " +
                            std::to_string(timeout.count()) + " s (at least " + std::to_string(clients) +
                            " wanted" + (behind.empty() ? std::string() : "; not on it: " + behind) +
                            "): the ramp stops here");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        say("epoch " + std::to_string(s->epoch()) + " adopted by " + std::to_string(on) + " clients in " +
            fixed(took, 1) + " s");
        const auto until = std::chrono::steady_clock::now() + hold;
        while (std::chrono::steady_clock::now() < until && !watch_interrupted.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (check && s != chain.back() && !watch_interrupted.load()) {
            ::setenv("KEYPLACE_EPOCH", std::to_string(s->epoch()).c_str(), 1);
            ::setenv("KEYPLACE_CLUSTER", cluster.c_str(), 1);
            const int status = std::system(check->c_str());
            if (status != 0) {
                const std::string how = status > 0 && WIFEXITED(status)     ? "exited " + std::to_string(WEXITSTATUS(status))
                                        : status > 0 && WIFSIGNALED(status) ? "was killed by signal " +
                                                                                  std::to_string(WTERMSIG(status))
                                                                            : "could not run";
                throw cli_error(exit_check_stopped,
                                "--check " + how + " after epoch " + std::to_string(s->epoch()) +
                                    ": the ramp stops here",
                                "");
            }
        }
    }
    return "";
}

struct watch_line {
    enum class kind : std::uint8_t { adopted, restored, message };
    kind what = kind::message;
    std::string text;
};

// One line of etcd watch: "epoch N fingerprint F at T" (and " restored from 'FILE'"), or JSON.
inline auto watch_text(const keyplace::snapshot& s, bool json, const std::string* restored_from) -> std::string {
    const auto at = utc_now();
    if (json) {
        json_writer w;
        w.begin_object().member("epoch", s.epoch()).member("fingerprint", s.fingerprint().hex()).member("at", at);
        if (restored_from != nullptr) {
            w.member("restored_from", *restored_from);
        }
        return w.end_object().str() + "\n";
    }
    std::string text = "epoch " + std::to_string(s.epoch()) + " fingerprint " + s.fingerprint().hex() + " at " + at;
    if (restored_from != nullptr) {
        text += " restored from " + keyplace::detail::quote(*restored_from);
    }
    return text + "\n";
}

// A message for stderr on one line.
inline auto one_line(std::string text) -> std::string {
    for (auto& ch : text) {
        ch = ch == '\n' || ch == '\r' ? ' ' : ch;
    }
    return text + "\n";
}

inline auto etcd_watch(const parsed_args& a, std::ostream& out, std::ostream& err) -> std::string {
    const auto cluster = etcd_cluster(a);
    auto connection = etcd_connection(a);
    const auto count = watch_count_option.find(a);
    const bool json = a.has(json_flag.spec);
    std::mutex m;
    std::condition_variable cv;
    std::deque<watch_line> lines;

    keyplace::etcd::watcher_options o;
    o.connection = std::move(connection);
    o.cluster = cluster;
    o.client_id = a.get(client_id_option.spec).value_or(default_client_id());
    if (const auto f = keyplace::etcd::check_watcher_options(o)) {
        usage_error("--client-id: " + f.message());  // --cluster was checked above
    }
    o.lease_ttl = std::chrono::seconds(lease_ttl_option.get(a));
    const auto push = [&](watch_line::kind what, std::string text) {
        const std::lock_guard lock(m);
        lines.push_back({what, std::move(text)});
        cv.notify_one();
    };
    o.on_adopt = [&](const keyplace::snapshot& s) { push(watch_line::kind::adopted, watch_text(s, json, nullptr)); };
    o.on_refuse = [&](keyplace::etcd::refusal, const std::string& message) {
        push(watch_line::kind::message, one_line("keyplace-cli: refused: " + message));
    };
    const auto cache = a.get(cache_option.spec);
    if (cache) {
        if (cache->empty()) {
            usage_error("--cache: an empty file name");
        }
        o.cache_file = *cache;
        o.on_restore = [&](const keyplace::snapshot& s) {
            push(watch_line::kind::restored, watch_text(s, json, &*cache));
        };
        o.on_cache_error = [&](const std::string& message) {
            push(watch_line::kind::message, one_line("keyplace-cli: " + message));
        };
    }

    std::optional<metrics_address> metrics_at;
    if (const auto text = a.get(metrics_address_option.spec)) {
        if (!metrics_server_built) {
            usage_error("--metrics: this keyplace-cli is built without cpp-httplib (Debian: libcpp-httplib-dev)");
        }
        metrics_at = parse_metrics_address(*text);  // before any connection
    }

    const signal_scope signals;
    std::uint64_t adopted = 0;
    {
        keyplace::etcd::watcher w(std::move(o));  // its destructor stops the thread, revokes the lease
        // GET /metrics, on the server's threads: the snapshot's families (computed once an epoch),
        // the local publisher's counts and the watcher's counters; stopped before the watcher.
        std::mutex families_mu;
        std::shared_ptr<const keyplace::snapshot> families_of;
        std::string families;
        const auto body = [&]() -> std::string {
            keyplace::metrics_text text;
            if (const keyplace::publisher* pub = w.local()) {
                const auto s = pub->current();
                {
                    const std::lock_guard lock(families_mu);
                    if (s != families_of) {
                        keyplace::metrics_text f;
                        keyplace::append_snapshot_metrics(f, *s);
                        families = std::move(f).str();
                        families_of = s;
                    }
                }
                keyplace::append_publisher_metrics(text, cluster, pub->counts());
            }
            keyplace::append_watcher_metrics(text, cluster, w.stats());
            const std::lock_guard lock(families_mu);
            return families + std::move(text).str();
        };
        std::optional<metrics_server> server;
        if (metrics_at) {
            server.emplace(*metrics_at, body);
            err << "keyplace-cli: serving metrics on http://" + metrics_at->host + ":" + std::to_string(server->port()) +
                       "/metrics\n";
            err.flush();
        }
        while (!watch_interrupted.load() && (!count || adopted < *count)) {
            std::deque<watch_line> ready;
            {
                std::unique_lock lock(m);
                cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return !lines.empty(); });
                ready.swap(lines);
            }
            for (auto& line : ready) {
                if (line.what == watch_line::kind::message) {
                    err << line.text;
                    err.flush();
                    continue;
                }
                if (count && adopted == *count) {
                    break;  // adopted after the last one asked for: not printed
                }
                out << line.text;
                out.flush();
                if (!out) {
                    input_error("cannot write the output");
                }
                // --count counts adoptions from etcd: a restored snapshot is printed, not counted.
                adopted += line.what == watch_line::kind::adopted ? 1 : 0;
            }
        }
    }
    return "";
}

}  // namespace keyplace_cli

#endif
