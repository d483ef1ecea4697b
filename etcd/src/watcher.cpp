// keyplace — keyplace::etcd's watcher: it adopts the snapshots `current` names over any kv_store
// (adoption and refusals, never an older epoch), watches for the next, re-reads after a
// compaction, reports itself under a lease, backs off after failures, and keeps its last
// snapshot in a cache file to start from when etcd is down.
#include "protocol.hpp"

#include <keyplace/fleet/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {

using internal::parse_current;
using internal::stale_message;

namespace {

// Reconnect delays: each drawn uniformly from [min, cap] (jitter: clients that failed together do
// not return together), the cap doubling up to max after each failure, back to min on success.
class backoff {
public:
    backoff(std::chrono::milliseconds min, std::chrono::milliseconds max, std::uint64_t seed)
        : min_(min), max_(std::max(min, max)), cap_(min), rng_(seed) {}

    auto next() -> std::chrono::milliseconds {
        std::uniform_int_distribution<std::int64_t> pick(min_.count(), std::max(min_.count(), cap_.count()));
        const auto wait = std::chrono::milliseconds(pick(rng_));
        cap_ = std::min(max_, cap_ * 2);
        return wait;
    }
    void reset() { cap_ = min_; }

private:
    std::chrono::milliseconds min_;
    std::chrono::milliseconds max_;
    std::chrono::milliseconds cap_;
    std::mt19937_64 rng_;
};

auto seed(const std::string& what) -> std::uint64_t {
    return std::random_device{}() ^ static_cast<std::uint64_t>(std::hash<std::string>{}(what));
}

}  // namespace

struct watcher::impl {
    watcher_options options;
    // Three connections, each used from one thread (a gateway client is one per thread).
    std::shared_ptr<kv_store> reads;     // the watch thread's reads
    std::shared_ptr<kv_store> watching;  // the watch thread's watch stream
    std::shared_ptr<kv_store> reporting; // the report thread (and the destructor after joining it)

    std::atomic<bool> stop{false};
    std::mutex mu;  // guards the fields below and the condition variables
    std::condition_variable cv;           // stop, adoption (wait_for_snapshot, reporter)
    std::unique_ptr<publisher> local;     // created by the first adoption
    std::atomic<publisher*> local_ptr{nullptr};
    std::string last_refusal;
    std::uint64_t report_version = 0;     // bumped on every adoption

    std::atomic<std::uint64_t> epoch{0};
    std::atomic<std::uint64_t> adopted{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> reconnects{0};
    std::atomic<std::chrono::steady_clock::rep> contact{0};
    std::atomic<std::uint64_t> restored_epoch{0};
    std::atomic<std::uint64_t> cache_writes{0};
    std::atomic<std::uint64_t> cache_failures{0};

    // Only the watch thread touches these.
    digest128 fingerprint{};
    digest128 stated_fingerprint{};  // what current stated at the adoption (contract 1's for older values)
    std::int64_t handled_mod = -1;  // current's mod_revision last adopted or refused...
    std::string handled_value;      // ...and its value: a restored etcd may reuse a revision

    std::int64_t lease = 0;  // only the report thread (and the destructor after joining it)

    std::thread watch_thread;
    std::thread report_thread;

    impl(watcher_options o, const connector& connect)
        : options(std::move(o)), reads(connect()), watching(connect()), reporting(connect()) {
        if (!reads || !watching || !reporting) {
            detail::raise(detail::fail(errc::invalid_argument, "etcd watcher: the connector gave no kv_store"));
        }
    }

    void touch() {
        contact.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    }

    // Sleeps up to d; true when stop was requested.
    auto sleep_for(std::chrono::milliseconds d) -> bool {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, d, [&] { return stop.load(); });
    }

    void refuse(refusal why, const std::string& message, std::int64_t mod) {
        handled_mod = mod;
        refused.fetch_add(1, std::memory_order_relaxed);
        {
            const std::lock_guard lock(mu);
            last_refusal = message;
        }
        if (options.on_refuse) {
            try {
                options.on_refuse(why, message);
            } catch (...) {
            }
        }
    }

    static auto refusal_of(const error_info& err) -> refusal {
        const auto code = fleet_code(err);
        if (!code) {
            return refusal::other;
        }
        switch (*code) {
            case fleet_errc::invalid_document: return refusal::malformed;
            case fleet_errc::wrong_cluster: return refusal::wrong_cluster;
            case fleet_errc::stale_epoch: return refusal::stale_epoch;
            case fleet_errc::fingerprint_mismatch:
            case fleet_errc::split_brain: return refusal::fingerprint_mismatch;
            default: return refusal::other;
        }
    }

    // The constructor's first step, before any thread: adopts the cache file's snapshot, or
    // refuses the file (a missing one is a first start).
    void restore() {
        if (options.cache_file.empty()) {
            return;
        }
        internal::cache_outcome found;
        if (!internal::read_cache(options.cache_file, options.cluster, found)) {
            if (!found.absent) {
                refuse(found.why, found.message, -1);
            }
            return;
        }
        auto shared = std::make_shared<const snapshot>(std::move(*found.snap));
        local = std::make_unique<publisher>(shared);
        local_ptr.store(local.get(), std::memory_order_release);
        fingerprint = shared->fingerprint();
        stated_fingerprint = found.stated;
        epoch.store(shared->epoch(), std::memory_order_release);
        restored_epoch.store(shared->epoch(), std::memory_order_relaxed);
        ++report_version;
        if (options.on_restore) {
            try {
                options.on_restore(*shared);
            } catch (...) {
            }
        }
    }

    // After an adoption, on the watch thread: the document as etcd held it, and what current stated.
    void persist(std::string_view document, const digest128& stated) {
        if (options.cache_file.empty()) {
            return;
        }
        std::string failure;
        try {
            failure = internal::write_cache(options.cache_file, document, stated);
        } catch (const std::exception& e) {
            failure = "cache " + detail::quote(options.cache_file) + ": " + e.what();
        }
        if (failure.empty()) {
            cache_writes.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        cache_failures.fetch_add(1, std::memory_order_relaxed);
        if (options.on_cache_error) {
            try {
                options.on_cache_error(failure);
            } catch (...) {
            }
        }
    }

    // Reads current and adopts what it names if it is new. Returns false on a transport error;
    // revision receives the store's revision at the read.
    auto sync(std::int64_t& revision, error_info& err) -> bool {
        const std::string ckey = current_key(options.cluster);
        const auto kv = reads->get(ckey, err, &revision);
        if (err) {
            return false;
        }
        touch();
        if (!kv) {
            return true;  // nothing published yet
        }
        if (kv->mod_revision == handled_mod && kv->value == handled_value) {
            return true;
        }
        handled_value = kv->value;  // whatever follows adopts or refuses this value
        error_info perr;
        const auto cur = parse_current(ckey, kv->value, perr);
        if (!cur) {
            refuse(refusal::malformed, perr.message(), kv->mod_revision);
            return true;
        }
        const std::uint64_t have = epoch.load(std::memory_order_relaxed);
        if (have != 0 && cur->epoch == have) {
            if (cur->fingerprint != fingerprint && cur->fingerprint != stated_fingerprint) {
                refuse(refusal::fingerprint_mismatch,
                       ckey + " states fingerprint " + cur->fingerprint.hex() + " for epoch " +
                           std::to_string(cur->epoch) + ", but the adopted snapshot of that epoch has " +
                           fingerprint.hex(),
                       kv->mod_revision);
            } else {
                handled_mod = kv->mod_revision;
            }
            return true;
        }
        if (cur->epoch < have) {
            refuse(refusal::stale_epoch, ckey + ": " + stale_message(cur->epoch, have, options.cluster) + " adopted here",
                   kv->mod_revision);
            return true;
        }
        const std::string skey = snapshot_key(options.cluster, cur->epoch);
        const auto doc = reads->get(skey, err);
        if (err) {
            return false;
        }
        if (!doc) {
            refuse(refusal::malformed, skey + ": missing, though current names epoch " + std::to_string(cur->epoch),
                   kv->mod_revision);
            return true;
        }
        error_info lerr;
        auto s = try_load_snapshot_json(doc->value, lerr);
        if (!s) {
            refuse(refusal_of(lerr), skey + ": " + lerr.message(), kv->mod_revision);
            return true;
        }
        if (s->cluster() != options.cluster) {
            refuse(refusal::wrong_cluster,
                   skey + ": the snapshot is of cluster " + detail::quote(s->cluster()) + ", not " +
                       detail::quote(options.cluster),
                   kv->mod_revision);
            return true;
        }
        if (!s->fingerprint_matches(cur->fingerprint)) {
            refuse(refusal::fingerprint_mismatch,
                   skey + ": the snapshot's fingerprint " + s->fingerprint().hex() + " is not " +
                       cur->fingerprint.hex() + ", which current states",
                   kv->mod_revision);
            return true;
        }
        if (s->epoch() <= have || s->epoch() != cur->epoch) {
            refuse(refusal::stale_epoch,
                   skey + ": the snapshot has epoch " + std::to_string(s->epoch()) + " (current names " +
                       std::to_string(cur->epoch) + ", adopted " + std::to_string(have) + ")",
                   kv->mod_revision);
            return true;
        }
        auto shared = std::make_shared<const snapshot>(std::move(*s));
        if (local_ptr.load(std::memory_order_relaxed) == nullptr) {
            auto p = std::make_unique<publisher>(shared);
            const std::lock_guard lock(mu);
            local = std::move(p);
            local_ptr.store(local.get(), std::memory_order_release);
        } else {
            error_info pub;
            if (!local_ptr.load(std::memory_order_relaxed)->try_publish(shared, pub)) {
                refuse(refusal_of(pub), skey + ": " + pub.message(), kv->mod_revision);
                return true;
            }
        }
        handled_mod = kv->mod_revision;
        fingerprint = shared->fingerprint();
        stated_fingerprint = cur->fingerprint;
        {
            const std::lock_guard lock(mu);
            epoch.store(shared->epoch(), std::memory_order_release);
            adopted.fetch_add(1, std::memory_order_relaxed);
            ++report_version;
        }
        cv.notify_all();
        persist(doc->value, cur->fingerprint);
        if (options.on_adopt) {
            try {
                options.on_adopt(*shared);
            } catch (...) {
            }
        }
        return true;
    }

    void watch_loop() {
        backoff wait(options.backoff_min, options.backoff_max, seed(options.client_id));
        bool failed_before = false;
        while (!stop.load()) {
            error_info err;
            std::int64_t revision = 0;
            watch_end end = watch_end::failed;
            try {
                if (sync(revision, err)) {
                    if (failed_before) {
                        reconnects.fetch_add(1, std::memory_order_relaxed);
                        failed_before = false;
                    }
                    wait.reset();
                    const std::string ckey = current_key(options.cluster);
                    bool resync_failed = false;
                    end = watching->watch(
                        ckey, revision + 1,
                        [&](const watch_event&) {
                            touch();
                            std::int64_t r = 0;
                            error_info e;
                            if (!sync(r, e)) {
                                resync_failed = true;
                                return false;
                            }
                            return true;
                        },
                        stop, err);
                    if (end == watch_end::stopped && !resync_failed) {
                        continue;  // stop requested (the loop ends), or nothing to do
                    }
                    if (end == watch_end::compacted) {
                        continue;  // re-read current, watch from the new revision
                    }
                }
            } catch (...) {
            }
            if (stop.load()) {
                break;
            }
            failed_before = true;
            if (sleep_for(wait.next())) {
                break;
            }
        }
    }

    void report_loop() {
        const auto ttl = std::max(options.lease_ttl, std::chrono::seconds(1));
        const auto interval = std::max(std::chrono::milliseconds(200),
                                       std::chrono::duration_cast<std::chrono::milliseconds>(ttl) / 3);
        const std::string key = clients_prefix(options.cluster) + options.client_id;
        std::uint64_t reported = ~std::uint64_t{0};
        auto next_keepalive = std::chrono::steady_clock::now();
        backoff after_failure(options.backoff_min, options.backoff_max, seed(options.client_id + "/report"));
        while (!stop.load()) {
            bool ok = true;
            try {
                // The epoch and fingerprint of one snapshot, and nothing before the first adoption.
                std::uint64_t want = 0;
                std::shared_ptr<const snapshot> cur;
                {
                    const std::lock_guard lock(mu);
                    want = report_version;
                    if (local) {
                        cur = local->current();
                    }
                }
                error_info err;
                if (lease == 0) {
                    const auto id = reporting->lease_grant(ttl, err);
                    ok = id.has_value();
                    if (ok) {
                        lease = *id;
                        reported = ~std::uint64_t{0};
                        next_keepalive = std::chrono::steady_clock::now() + interval;
                    }
                } else if (std::chrono::steady_clock::now() >= next_keepalive) {
                    const bool alive = reporting->lease_keepalive(lease, err);
                    ok = !err;
                    if (ok && !alive) {
                        lease = 0;  // gone: grant a new one and report again
                        continue;
                    }
                    if (ok) {
                        next_keepalive = std::chrono::steady_clock::now() + interval;
                    }
                }
                if (ok && lease != 0 && cur && reported != want) {
                    ok = reporting->put(key, internal::report_value(options.client_id, cur->epoch(), cur->fingerprint()), err, lease);
                    if (ok) {
                        reported = want;
                    } else {
                        lease = 0;  // perhaps expired on the server: grant a new one before retrying
                    }
                }
            } catch (...) {
                ok = false;
            }
            if (ok) {
                touch();
                after_failure.reset();
                std::unique_lock lock(mu);
                const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                    next_keepalive - std::chrono::steady_clock::now());
                cv.wait_for(lock, std::max(wait, std::chrono::milliseconds(1)),
                            [&] { return stop.load() || (local && report_version != reported); });
            } else {
                // A failure waits its backoff (doubled up to backoff_max, jittered) whatever is
                // owed: only stop cuts it short.
                const auto wait = after_failure.next();
                std::unique_lock lock(mu);
                cv.wait_for(lock, wait, [&] { return stop.load(); });
            }
        }
    }
};

namespace {
auto checked(watcher_options&& options) -> watcher_options&& {
    if (auto f = check_watcher_options(options)) {
        detail::raise(f);
    }
    return std::move(options);
}
}  // namespace

watcher::watcher(watcher_options options)
    : watcher(options, [connection = options.connection] { return std::make_shared<client>(connection); }) {}

watcher::watcher(watcher_options options, const connector& connect)
    : impl_(std::make_unique<impl>(checked(std::move(options)), connect)) {
    impl_->touch();
    impl_->restore();
    try {
        impl_->watch_thread = std::thread([this] { impl_->watch_loop(); });
        impl_->report_thread = std::thread([this] { impl_->report_loop(); });
    } catch (...) {
        impl_->stop.store(true);
        impl_->cv.notify_all();
        if (impl_->watch_thread.joinable()) {
            impl_->watch_thread.join();
        }
        throw;  // a watcher without its threads would never adopt anything: say so
    }
}

watcher::~watcher() {
    {
        const std::lock_guard lock(impl_->mu);
        impl_->stop.store(true);
    }
    impl_->cv.notify_all();
    if (impl_->watch_thread.joinable()) {
        impl_->watch_thread.join();
    }
    if (impl_->report_thread.joinable()) {
        impl_->report_thread.join();
    }
    if (impl_->options.revoke_on_exit && impl_->lease != 0) {
        error_info err;
        (void)impl_->reporting->lease_revoke(impl_->lease, err);
    }
}

auto watcher::wait_for_snapshot(std::chrono::milliseconds timeout) -> bool {
    std::unique_lock lock(impl_->mu);
    return impl_->cv.wait_for(lock, timeout,
                              [&] { return impl_->local_ptr.load() != nullptr || impl_->stop.load(); }) &&
           impl_->local_ptr.load() != nullptr;
}

auto watcher::local() const -> publisher* { return impl_->local_ptr.load(std::memory_order_acquire); }

auto watcher::stats() const -> watcher_stats {
    watcher_stats s;
    s.epoch = impl_->epoch.load(std::memory_order_acquire);
    s.adopted = impl_->adopted.load(std::memory_order_relaxed);
    s.refused = impl_->refused.load(std::memory_order_relaxed);
    s.reconnects = impl_->reconnects.load(std::memory_order_relaxed);
    const auto then =
        std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(impl_->contact.load()));
    s.since_contact = std::chrono::steady_clock::now() - then;
    s.restored_epoch = impl_->restored_epoch.load(std::memory_order_relaxed);
    s.cache_writes = impl_->cache_writes.load(std::memory_order_relaxed);
    s.cache_failures = impl_->cache_failures.load(std::memory_order_relaxed);
    return s;
}

auto watcher::last_refusal() const -> std::string {
    const std::lock_guard lock(impl_->mu);
    return impl_->last_refusal;
}

}  // namespace etcd
KEYPLACE_NAMESPACE_END
