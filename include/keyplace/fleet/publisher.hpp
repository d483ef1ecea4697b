// keyplace — which node owns a key. Publication: one process's current snapshot, replaced by
// a checked successor (same cluster, newer epoch, no returning tombstone), read on the request
// path by per-thread readers that revalidate with one atomic load.
#ifndef KEYPLACE_FLEET_PUBLISHER_HPP_INCLUDED
#define KEYPLACE_FLEET_PUBLISHER_HPP_INCLUDED

#include <keyplace/config.hpp>
#include <keyplace/error.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN

/// What a publish did: replaced the current snapshot, or found the same epoch with the same
/// fingerprint already current and published nothing.
enum class publish_result { published, unchanged };

/// How many publishes ended each way since the publisher was made (for a metric such as
/// keyplace_publish_total{result}). The refusals are named after their errc;
/// invalid_snapshot counts a null snapshot and a description that did not build.
struct publish_counts {
    std::uint64_t published = 0;
    std::uint64_t unchanged = 0;
    std::uint64_t stale_epoch = 0;
    std::uint64_t wrong_cluster = 0;
    std::uint64_t split_brain = 0;
    std::uint64_t invalid_state = 0;
    std::uint64_t invalid_snapshot = 0;

    friend auto operator==(const publish_counts&, const publish_counts&) -> bool = default;
};

/// The current snapshot of one cluster in one process, and the one way to replace it.
///
/// publish() checks the successor with check_successor() (wrong_cluster, split_brain,
/// stale_epoch, invalid_state: each message names both values) and then swaps it in; a refusal
/// leaves the current snapshot as it was. The same epoch with the same fingerprint is the same
/// snapshot again: publish_result::unchanged, nothing is published. Publishes may come from any
/// thread; they are serialized by the publisher's mutex, which a publish holds only to check
/// and swap: nothing is built and nothing is destroyed under it (the replaced snapshot is
/// released after unlocking, and only if no reader still pins it).
///
/// Readers (make_reader(), one per thread) never lock while nothing changes; see reader.
/// Neither copyable nor movable: readers point at it. It must outlive every reader.
class publisher {
public:
    class reader;

    /// Throws keyplace::error (errc::invalid_argument) if first is null.
    explicit publisher(std::shared_ptr<const snapshot> first) : cur_(std::move(first)) {
        if (!cur_) {
            detail::raise(detail::fail(errc::invalid_argument, "publisher: the first snapshot is null"));
        }
        epoch_.store(cur_->epoch(), std::memory_order_relaxed);
    }
    publisher(const publisher&) = delete;
    publisher(publisher&&) = delete;
    auto operator=(const publisher&) -> publisher& = delete;
    auto operator=(publisher&&) -> publisher& = delete;
    ~publisher() = default;

    /// Publishes next if it may follow the current snapshot; throws keyplace::error as
    /// try_publish reports.
    auto publish(std::shared_ptr<const snapshot> next) -> publish_result {
        error_info err;
        const auto r = try_publish(std::move(next), err);
        if (!r) {
            detail::raise(err);
        }
        return *r;
    }

    /// Publishes next if check_successor(current, next) allows it: published, or unchanged
    /// (same epoch, same fingerprint). On a refusal returns nullopt with err set (errc
    /// wrong_cluster, split_brain, stale_epoch or invalid_state; invalid_argument for a null
    /// snapshot) and the current snapshot stays. Readers see next from their first get() that
    /// starts after this returns.
    auto try_publish(std::shared_ptr<const snapshot> next, error_info& err) -> std::optional<publish_result> {
        err.clear();
        if (!next) {
            err = detail::fail(errc::invalid_argument, "publish: the snapshot is null; nothing was published");
            const std::lock_guard lock(mu_);
            ++counts_.invalid_snapshot;
            return std::nullopt;
        }
        {
            const std::lock_guard lock(mu_);
            err = check_successor(*cur_, *next);
            if (err) {
                ++refusal_count(err);
                return std::nullopt;  // next (never published) is released after the lock
            }
            if (next->epoch() == cur_->epoch()) {
                ++counts_.unchanged;  // check_successor passed: the fingerprints are equal
                return publish_result::unchanged;
            }
            cur_.swap(next);
            // The version first, then the epoch (release): whoever sees the new epoch() also sees
            // the new version, so its reader's next get() refreshes.
            version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
            epoch_.store(cur_->epoch(), std::memory_order_release);
            ++counts_.published;
        }
        next.reset();  // the replaced snapshot: destroyed here, unlocked, unless a reader pins it
        return publish_result::published;
    }

    /// Builds the description (snapshot::try_build: its errors, such as fingerprint_mismatch
    /// for a stated fingerprint other than the computed one, are reported as they are and
    /// counted as invalid_snapshot), then publishes it as try_publish(shared_ptr) does. The
    /// build runs before and outside the publisher's lock; a description that does not build
    /// publishes nothing.
    auto try_publish(const snapshot_description& d, error_info& err) -> std::optional<publish_result> {
        auto built = snapshot::try_build(d, err);
        if (!built) {
            const std::lock_guard lock(mu_);
            ++counts_.invalid_snapshot;
            return std::nullopt;
        }
        return try_publish(std::make_shared<const snapshot>(std::move(*built)), err);
    }

    /// The current snapshot (the slow path: locks the mutex and copies a shared_ptr). Request
    /// paths use a reader.
    [[nodiscard]] auto current() const -> std::shared_ptr<const snapshot> {
        const std::lock_guard lock(mu_);
        return cur_;
    }
    /// The current snapshot's epoch (one atomic load, no lock).
    [[nodiscard]] auto epoch() const noexcept -> std::uint64_t { return epoch_.load(std::memory_order_acquire); }
    /// How many publishes ended each way.
    [[nodiscard]] auto counts() const -> publish_counts {
        const std::lock_guard lock(mu_);
        return counts_;
    }

    /// A reader for the calling thread (it pins nothing until its first get()).
    [[nodiscard]] auto make_reader() const noexcept -> reader;

private:
    auto refusal_count(const error_info& err) noexcept -> std::uint64_t& {
        const auto code = fleet_code(err);
        if (!code) {
            return counts_.invalid_snapshot;
        }
        switch (*code) {
            case fleet_errc::stale_epoch: return counts_.stale_epoch;
            case fleet_errc::wrong_cluster: return counts_.wrong_cluster;
            case fleet_errc::split_brain: return counts_.split_brain;
            case fleet_errc::invalid_state: return counts_.invalid_state;
            default: return counts_.invalid_snapshot;
        }
    }

    mutable std::mutex mu_;
    std::shared_ptr<const snapshot> cur_;  // guarded by mu_; never null
    publish_counts counts_{};              // guarded by mu_
    // Written only by publish (under mu_), read by every reader's get(): on a cache line of
    // their own, which no reader writes. version_ changes, with release ordering, after cur_.
    alignas(64) std::atomic<std::uint64_t> version_{1};
    std::atomic<std::uint64_t> epoch_{0};
};

/// One thread's view of a publisher: it pins the snapshot it last saw and revalidates it on
/// every get(). Movable, not copyable, not thread-safe: one per thread (or per event loop).
///
/// get() is one acquire load of the publisher's version counter and a compare with the
/// reader's own copy. When nothing was published since this reader's last get(), that is all:
/// no lock is taken and no shared cache line is written (the counter's line is written only by
/// publish). The first get() after a publish is the slow path: it locks the publisher's mutex
/// to copy one shared_ptr (an atomic increment of the new snapshot's count), and releases the
/// snapshot it pinned after unlocking. That mutex is held by publish only for its check and
/// swap, so a get() can wait for at most one of those.
///
/// A reader keeps the last snapshot it saw alive: an idle thread pins an old snapshot (one
/// built placement, maybe two) until its next get(); release() drops it.
///
/// The reference get() returns stays valid until this reader's next get(), release(), move or
/// destruction. A reader must not outlive its publisher.
class publisher::reader {
public:
    reader(reader&& other) noexcept
        : pub_(other.pub_), seen_(std::exchange(other.seen_, 0)), snap_(std::move(other.snap_)) {}
    auto operator=(reader&& other) noexcept -> reader& {
        if (this != &other) {
            pub_ = other.pub_;
            seen_ = std::exchange(other.seen_, 0);
            snap_ = std::move(other.snap_);
        }
        return *this;
    }
    reader(const reader&) = delete;
    auto operator=(const reader&) -> reader& = delete;
    ~reader() = default;

    /// The current snapshot. noexcept: a failure to lock the mutex (std::system_error, which
    /// std::mutex does not throw in practice) terminates.
    [[nodiscard]] auto get() noexcept -> const snapshot& {
        if (pub_->version_.load(std::memory_order_acquire) != seen_) [[unlikely]] {
            refresh();
        }
        return *snap_;
    }

    /// Drops the pinned snapshot (for a thread going idle); the next get() takes the current one.
    void release() noexcept {
        snap_.reset();
        seen_ = 0;
    }

private:
    friend class publisher;
    explicit reader(const publisher& p) noexcept : pub_(&p) {}

    KEYPLACE_COLD void refresh() noexcept {
        std::shared_ptr<const snapshot> old;
        {
            const std::lock_guard lock(pub_->mu_);
            old = std::exchange(snap_, pub_->cur_);
            seen_ = pub_->version_.load(std::memory_order_relaxed);  // cur_'s version: both change under mu_
        }
    }  // old, if it was the last reference, is destroyed here, after unlocking

    const publisher* pub_;
    std::uint64_t seen_ = 0;  // the version snap_ is; 0 (never a version): nothing pinned
    std::shared_ptr<const snapshot> snap_;
};

inline auto publisher::make_reader() const noexcept -> reader { return reader(*this); }

KEYPLACE_NAMESPACE_END

#endif
