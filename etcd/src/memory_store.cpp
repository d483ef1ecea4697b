// keyplace — keyplace::etcd's in-memory kv_store (memory_store.hpp): etcd's revisions, compares,
// leases, compaction and watch streams under one mutex, and the failures a test injects.
#include <keyplace/etcd/memory_store.hpp>

#include "protocol.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {

namespace {

constexpr std::size_t op_count = 8;
constexpr std::array<const char*, op_count> op_names = {"get",         "get_prefix",      "put",          "put_if",
                                                        "lease_grant", "lease_keepalive", "lease_revoke", "watch"};

auto index_of(memory_store::op which) -> std::size_t { return static_cast<std::size_t>(which); }

}  // namespace

struct memory_store::state {
    struct event {
        std::int64_t revision = 0;
        watch_event what;
    };

    mutable std::mutex mu;
    std::condition_variable changed;  // a write, a compaction, a break, going down
    std::int64_t revision = 1;        // etcd's empty store is at revision 1
    std::int64_t compacted = 0;       // the compact revision: history below it is gone
    std::map<std::string, key_value, std::less<>> keys;
    std::deque<event> history;  // every write from `compacted` on, by revision
    std::map<std::int64_t, std::set<std::string>> leases;  // lease -> its keys
    std::int64_t next_lease = 7587869000000000001;         // ids as etcd's look: large, never 0
    bool down = false;
    std::uint64_t breaks = 0;  // bumped by break_watches and by going down: open watches end
    std::size_t watching = 0;
    std::array<std::uint64_t, op_count> calls{};
    std::array<std::deque<std::optional<fault>>, op_count> faults{};  // per call to come; nullopt passes

    // Counts the call and says which failure it meets, if any. Holds mu.
    auto enter(op which) -> std::optional<fault> {
        const auto i = index_of(which);
        ++calls[i];
        if (down) {
            return fault::unreachable;
        }
        if (faults[i].empty()) {
            return std::nullopt;
        }
        const auto f = faults[i].front();
        faults[i].pop_front();
        return f;
    }

    static auto failure(op which, fault f) -> error_info {
        const std::string what = f == fault::timeout ? "timed out (the request may have been applied)" : "unreachable";
        return internal::fail_transport(std::string("etcd (memory): ") + op_names[index_of(which)] + ": " + what);
    }

    // One write at a new revision. Holds mu.
    void write(std::string_view key, std::string_view value, std::int64_t lease) {
        ++revision;
        auto it = keys.find(key);
        if (it == keys.end()) {
            key_value created;
            created.key = std::string(key);
            created.create_revision = revision;
            it = keys.emplace(std::string(key), std::move(created)).first;
        }
        key_value& kv = it->second;
        if (kv.lease != 0 && kv.lease != lease) {
            leases[kv.lease].erase(kv.key);
        }
        kv.value = std::string(value);
        kv.mod_revision = revision;
        kv.lease = lease;
        ++kv.version;
        if (lease != 0) {
            leases[lease].insert(kv.key);
        }
        history.push_back({revision, {.deleted = false, .kv = kv}});
        changed.notify_all();
    }

    // A lease revoked or expired: its keys deleted in one revision, as etcd does. Holds mu.
    void drop_lease(std::int64_t lease) {
        const auto it = leases.find(lease);
        if (it == leases.end()) {
            return;
        }
        const std::set<std::string> gone = std::move(it->second);
        leases.erase(it);
        if (gone.empty()) {
            return;
        }
        ++revision;
        for (const auto& key : gone) {
            keys.erase(key);
            event e{revision, {.deleted = true, .kv = {}}};
            e.what.kv.key = key;
            e.what.kv.mod_revision = revision;
            history.push_back(std::move(e));
        }
        changed.notify_all();
    }
};

memory_store::memory_store() : state_(std::make_unique<state>()) {}
memory_store::~memory_store() = default;

auto memory_store::get(std::string_view key, error_info& err, std::int64_t* revision) -> std::optional<key_value> {
    err.clear();
    const std::lock_guard lock(state_->mu);
    if (const auto f = state_->enter(op::get)) {
        err = state::failure(op::get, *f);
        return std::nullopt;
    }
    if (revision != nullptr) {
        *revision = state_->revision;
    }
    const auto it = state_->keys.find(key);
    if (it == state_->keys.end()) {
        return std::nullopt;
    }
    return it->second;
}

auto memory_store::get_prefix(std::string_view prefix, error_info& err) -> std::optional<std::vector<key_value>> {
    err.clear();
    const std::lock_guard lock(state_->mu);
    if (const auto f = state_->enter(op::get_prefix)) {
        err = state::failure(op::get_prefix, *f);
        return std::nullopt;
    }
    std::vector<key_value> out;
    for (auto it = state_->keys.lower_bound(prefix); it != state_->keys.end() && it->first.starts_with(prefix); ++it) {
        out.push_back(it->second);
    }
    return out;
}

auto memory_store::put(std::string_view key, std::string_view value, error_info& err, std::int64_t lease) -> bool {
    err.clear();
    const std::lock_guard lock(state_->mu);
    const auto f = state_->enter(op::put);
    if (f && *f != fault::timeout) {
        err = state::failure(op::put, *f);
        return false;
    }
    if (lease != 0 && !state_->leases.contains(lease)) {
        err = internal::fail_transport("etcd (memory): put: requested lease not found");
        return false;
    }
    state_->write(key, value, lease);
    if (f) {
        err = state::failure(op::put, *f);
        return false;
    }
    return true;
}

auto memory_store::put_if(std::string_view key, std::string_view value, std::int64_t expected, error_info& err)
    -> bool {
    err.clear();
    const std::lock_guard lock(state_->mu);
    const auto f = state_->enter(op::put_if);
    if (f && *f != fault::timeout) {
        err = state::failure(op::put_if, *f);
        return false;
    }
    const auto it = state_->keys.find(key);
    const bool holds = expected == 0 ? it == state_->keys.end()
                                     : it != state_->keys.end() && it->second.mod_revision == expected;
    if (holds) {
        state_->write(key, value, 0);
    }
    if (f) {
        err = state::failure(op::put_if, *f);
        return false;
    }
    return holds;
}

auto memory_store::lease_grant(std::chrono::seconds /*ttl*/, error_info& err) -> std::optional<std::int64_t> {
    err.clear();
    const std::lock_guard lock(state_->mu);
    const auto f = state_->enter(op::lease_grant);
    if (f && *f != fault::timeout) {
        err = state::failure(op::lease_grant, *f);
        return std::nullopt;
    }
    const std::int64_t id = state_->next_lease++;
    state_->leases.emplace(id, std::set<std::string>{});
    if (f) {
        err = state::failure(op::lease_grant, *f);  // granted, never known: it lingers, as in etcd
        return std::nullopt;
    }
    return id;
}

auto memory_store::lease_keepalive(std::int64_t lease, error_info& err) -> bool {
    err.clear();
    const std::lock_guard lock(state_->mu);
    if (const auto f = state_->enter(op::lease_keepalive)) {
        err = state::failure(op::lease_keepalive, *f);
        return false;
    }
    return state_->leases.contains(lease);
}

auto memory_store::lease_revoke(std::int64_t lease, error_info& err) -> bool {
    err.clear();
    const std::lock_guard lock(state_->mu);
    const auto f = state_->enter(op::lease_revoke);
    if (f && *f != fault::timeout) {
        err = state::failure(op::lease_revoke, *f);
        return false;
    }
    if (!state_->leases.contains(lease)) {
        err = internal::fail_transport("etcd (memory): lease_revoke: requested lease not found");
        return false;
    }
    state_->drop_lease(lease);
    if (f) {
        err = state::failure(op::lease_revoke, *f);
        return false;
    }
    return true;
}

auto memory_store::watch(std::string_view key, std::int64_t start_revision,
                         const std::function<bool(const watch_event&)>& on_event, const std::atomic<bool>& stop,
                         error_info& err) -> watch_end {
    err.clear();
    std::unique_lock lock(state_->mu);
    if (const auto f = state_->enter(op::watch)) {
        if (*f == fault::compacted) {
            err = internal::compacted_error(key, start_revision, std::max(state_->compacted, state_->revision));
            return watch_end::compacted;
        }
        err = state::failure(op::watch, *f);
        return watch_end::failed;
    }
    std::int64_t next = start_revision > 0 ? start_revision : state_->revision + 1;
    const std::uint64_t breaks = state_->breaks;
    ++state_->watching;
    struct leave {
        state& s;
        std::unique_lock<std::mutex>& held;
        leave(state& of, std::unique_lock<std::mutex>& lock_of) : s(of), held(lock_of) {}
        leave(const leave&) = delete;
        auto operator=(const leave&) -> leave& = delete;
        ~leave() {
            if (!held.owns_lock()) {
                held.lock();
            }
            --s.watching;
        }
    } guard{*state_, lock};
    for (;;) {
        // A watch whose next revision is compacted away cannot be served: etcd cancels it.
        if (next < state_->compacted) {
            err = internal::compacted_error(key, start_revision, state_->compacted);
            return watch_end::compacted;
        }
        std::vector<state::event> pending;
        const auto from = std::lower_bound(state_->history.begin(), state_->history.end(), next,
                                           [](const state::event& e, std::int64_t r) { return e.revision < r; });
        std::copy_if(from, state_->history.end(), std::back_inserter(pending),
                     [&](const state::event& e) { return e.what.kv.key == key; });
        if (pending.empty()) {
            if (stop.load()) {
                return watch_end::stopped;
            }
            if (state_->breaks != breaks) {
                err = internal::fail_transport("etcd (memory) watch of '" + std::string(key) + "': " +
                                               (state_->down ? "unreachable" : "the stream ended"));
                return watch_end::failed;
            }
            next = std::max(next, state_->revision + 1);  // nothing of this key up to here
            state_->changed.wait_for(lock, std::chrono::milliseconds(10));  // stop is polled
            continue;
        }
        lock.unlock();
        for (const auto& e : pending) {
            next = e.revision + 1;
            if (!on_event(e.what) || stop.load()) {
                return watch_end::stopped;
            }
        }
        lock.lock();
    }
}

void memory_store::inject(op which, fault f, std::size_t count, std::size_t after) {
    const std::lock_guard lock(state_->mu);
    auto& queue = state_->faults[index_of(which)];
    queue.clear();
    queue.insert(queue.end(), after, std::nullopt);
    queue.insert(queue.end(), count, f);
}

void memory_store::set_down(bool down) {
    const std::lock_guard lock(state_->mu);
    if (down && !state_->down) {
        ++state_->breaks;
    }
    state_->down = down;
    state_->changed.notify_all();
}

void memory_store::break_watches() {
    const std::lock_guard lock(state_->mu);
    ++state_->breaks;
    state_->changed.notify_all();
}

auto memory_store::compact(std::int64_t revision, error_info& err) -> bool {
    err.clear();
    const std::lock_guard lock(state_->mu);
    if (revision > state_->revision || revision <= state_->compacted) {
        err = detail::fail(errc::invalid_argument, "compaction revision " + std::to_string(revision) +
                                                       " is not above the compact revision " +
                                                       std::to_string(state_->compacted) + " and at most the store's " +
                                                       std::to_string(state_->revision));
        return false;
    }
    state_->compacted = revision;
    while (!state_->history.empty() && state_->history.front().revision < revision) {
        state_->history.pop_front();
    }
    state_->changed.notify_all();
    return true;
}

void memory_store::expire_lease(std::int64_t lease) {
    const std::lock_guard lock(state_->mu);
    state_->drop_lease(lease);
}

auto memory_store::revision() const -> std::int64_t {
    const std::lock_guard lock(state_->mu);
    return state_->revision;
}

auto memory_store::calls(op which) const -> std::uint64_t {
    const std::lock_guard lock(state_->mu);
    return state_->calls[index_of(which)];
}

auto memory_store::open_watches() const -> std::size_t {
    const std::lock_guard lock(state_->mu);
    return state_->watching;
}

}  // namespace etcd
KEYPLACE_NAMESPACE_END
