// keyplace — which node owns a key. Fencing at the owner: the snapshots one node adopted, kept as
// a bounded history, answer since which epoch the node has held a key without a break, and
// whether a request stamped with an epoch may be served, must be redirected, or is stale.
#ifndef KEYPLACE_FLEET_OWNERSHIP_HPP_INCLUDED
#define KEYPLACE_FLEET_OWNERSHIP_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/fleet/errors.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN

/// What a node does with a request for a key stamped with the epoch the caller placed it under.
enum class admit_verdict : std::uint8_t {
    serve,     ///< this node holds the key now and has since the request's epoch or before
    redirect,  ///< this node does not hold the key now: `owner` at `epoch` does
    stale,     ///< this node holds the key, but only since an epoch after the request's
    behind,    ///< the request's epoch is newer than any this node adopted: catch up first
};

[[nodiscard]] constexpr auto to_string(admit_verdict v) noexcept -> std::string_view {
    switch (v) {
        case admit_verdict::serve: return "serve";
        case admit_verdict::redirect: return "redirect";
        case admit_verdict::stale: return "stale";
        case admit_verdict::behind: return "behind";
    }
    return "?";
}

/// ownership_history::admit's answer.
struct admission {
    admit_verdict verdict = admit_verdict::redirect;
    /// The epoch the answer is made under: the newest this node adopted (0 before the first).
    std::uint64_t epoch = 0;
    /// The key's owner now (its first copy) under `epoch`; nullptr before the first adoption.
    /// Points into the history's newest snapshot, valid while that snapshot is kept.
    const snapshot_node* owner = nullptr;
    /// For serve and stale: the epoch since which this node has held the key.
    std::uint64_t since = 0;
};

/// How many admit() answers a node gave, by verdict, for its metrics (append_fencing_metrics in
/// fleet/metrics.hpp). record() is one relaxed atomic add, from any thread; the counts only grow.
class admission_counts {
public:
    void record(admit_verdict v) noexcept { counts_[static_cast<std::size_t>(v)].fetch_add(1, std::memory_order_relaxed); }
    void record(const admission& a) noexcept { record(a.verdict); }
    [[nodiscard]] auto count(admit_verdict v) const noexcept -> std::uint64_t {
        return counts_[static_cast<std::size_t>(v)].load(std::memory_order_relaxed);
    }
    /// f(verdict name, count) for serve, redirect, stale and behind, in that order.
    template <class F>
    void for_each(F&& f) const {
        for (const auto v : {admit_verdict::serve, admit_verdict::redirect, admit_verdict::stale, admit_verdict::behind}) {
            f(to_string(v), count(v));
        }
    }

private:
    std::array<std::atomic<std::uint64_t>, 4> counts_{};
};

/// The snapshots one node adopted, newest last, for fencing at the owner (doc/rollout.md,
/// "Fencing at the owner"). Adjacent adoptions whose current placement and overrides are equal
/// share one entry, so `capacity` bounds the distinct placements kept, not the epochs; the memory
/// is that of at most capacity + 1 snapshots (each entry keeps one alive, and so does the newest). Not synchronized: one writer, or a lock around it.
class ownership_history {
public:
    /// The history of node `node_id` (a node id by check_name; it need not be listed in any
    /// snapshot yet), keeping at most `capacity` placements (1 to 2^20). Throws (detail::raise)
    /// what try_create reports.
    ownership_history(std::string node_id, std::size_t capacity = 16) {
        error_info err;
        if (!check(node_id, capacity, err)) {
            detail::raise(err);
        }
        node_id_ = std::move(node_id);
        capacity_ = capacity;
    }
    /// invalid_name for an id outside the name grammar, invalid_argument for a capacity of 0 or
    /// above 2^20; each message names the value.
    [[nodiscard]] static auto try_create(std::string node_id, std::size_t capacity, error_info& err)
        -> std::optional<ownership_history> {
        if (!check(node_id, capacity, err)) {
            return std::nullopt;
        }
        return ownership_history(std::move(node_id), capacity, unchecked{});
    }

    /// Records a snapshot this node adopted. Its epoch must be above the newest's (stale_epoch)
    /// and its cluster the first's (wrong_cluster); nullptr is invalid_argument. On failure
    /// nothing changes. Continuity: the snapshot extends the run of the one before only when its
    /// parent_epoch is that one's epoch; otherwise epochs this node never saw lie between them,
    /// and no ownership is assumed across the gap.
    auto try_adopt(std::shared_ptr<const snapshot> s, error_info& err) -> bool {
        if (!s) {
            err = detail::fail(errc::invalid_argument, "ownership_history: no snapshot");
            return false;
        }
        if (!entries_.empty()) {
            const snapshot& last = *entries_.back().snap;
            if (s->cluster() != last.cluster()) {
                err = detail::fail(fleet_errc::wrong_cluster, "ownership_history: a snapshot of cluster " +
                                                                  detail::quote(s->cluster()) + ", not " +
                                                                  detail::quote(last.cluster()));
                return false;
            }
            if (s->epoch() <= entries_.back().last) {
                err = detail::fail(fleet_errc::stale_epoch,
                                   "ownership_history: epoch " + std::to_string(s->epoch()) +
                                       " is not newer than the adopted epoch " + std::to_string(entries_.back().last));
                return false;
            }
        }
        const bool continuous = !entries_.empty() && s->parent_epoch() == entries_.back().last;
        if (continuous && same_placement(*entries_.back().snap, *s)) {
            entries_.back().last = s->epoch();
            newest_ = std::move(s);
            return true;
        }
        const std::uint64_t epoch = s->epoch();
        entries_.push_back(entry{s, epoch, epoch, continuous});
        newest_ = std::move(s);
        if (entries_.size() > capacity_) {
            entries_.pop_front();  // a run that reaches the new front stops there
            dropped_ = true;
        }
        return true;
    }
    void adopt(std::shared_ptr<const snapshot> s) {
        error_info err;
        if (!try_adopt(std::move(s), err)) {
            detail::raise(err);
        }
    }

    /// The epoch since which this node has held a copy of the key without a break (its copies
    /// under current(), overrides included), or nullopt when it holds none now. A run that
    /// reaches the oldest placement kept reports that placement's first epoch: once the history
    /// dropped older entries (truncated()), the true epoch may be earlier, never later, so
    /// admit errs toward refusing. O(placements in the run) lookups.
    [[nodiscard]] auto owned_since(std::string_view key) const noexcept -> std::optional<std::uint64_t> {
        std::optional<std::uint64_t> since;
        for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
            if (!holds(*it->snap, key)) {
                break;
            }
            since = it->first;
            if (!it->continuous) {
                break;
            }
        }
        return since;
    }

    /// The fencing rule, under the newest adopted epoch E: a request stamped with an epoch above
    /// E is `behind`; a key this node holds no copy of now is `redirect` (to its owner under E);
    /// a key it holds since an epoch above the request's is `stale` (the caller placed it before
    /// this node had it, so its view predates the hand-over); else `serve`. Before the first
    /// adoption every request is `behind`.
    [[nodiscard]] auto admit(std::string_view key, std::uint64_t request_epoch) const noexcept -> admission {
        admission a;
        if (entries_.empty()) {
            a.verdict = admit_verdict::behind;
            return a;
        }
        const snapshot& now = *newest_;
        a.epoch = entries_.back().last;
        a.owner = &now.owner(key);
        if (request_epoch > a.epoch) {
            a.verdict = admit_verdict::behind;
            return a;
        }
        const auto since = owned_since(key);
        if (!since) {
            a.verdict = admit_verdict::redirect;
            return a;
        }
        a.since = *since;
        a.verdict = request_epoch < *since ? admit_verdict::stale : admit_verdict::serve;
        return a;
    }

    [[nodiscard]] auto node_id() const noexcept -> const std::string& { return node_id_; }
    [[nodiscard]] auto capacity() const noexcept -> std::size_t { return capacity_; }
    /// Placements kept (adjacent adoptions of one placement count once).
    [[nodiscard]] auto size() const noexcept -> std::size_t { return entries_.size(); }
    [[nodiscard]] auto empty() const noexcept -> bool { return entries_.empty(); }
    /// The newest adopted snapshot, or nullptr.
    [[nodiscard]] auto newest() const noexcept -> const snapshot* {
        return newest_.get();
    }
    /// The first epoch of the oldest placement kept (0 when empty).
    [[nodiscard]] auto oldest_epoch() const noexcept -> std::uint64_t {
        return entries_.empty() ? 0 : entries_.front().first;
    }
    /// Whether placements were dropped for the capacity.
    [[nodiscard]] auto truncated() const noexcept -> bool { return dropped_; }

private:
    struct unchecked {};
    ownership_history(std::string node_id, std::size_t capacity, unchecked)
        : node_id_(std::move(node_id)), capacity_(capacity) {}

    static constexpr std::size_t max_capacity = std::size_t{1} << 20;

    static auto check(const std::string& node_id, std::size_t capacity, error_info& err) -> bool {
        if (auto bad = check_name(name_kind::node_id, node_id)) {
            err = std::move(bad);
            return false;
        }
        if (capacity == 0 || capacity > max_capacity) {
            err = detail::fail(errc::invalid_argument, "ownership_history: capacity " + std::to_string(capacity) +
                                                           " is not from 1 to " + std::to_string(max_capacity));
            return false;
        }
        return true;
    }

    // One placement over a run of adjacent epochs [first, last].
    struct entry {
        std::shared_ptr<const snapshot> snap;  // the run's first snapshot (lookups: every one places alike)
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        bool continuous = false;  // adjacent to the entry before it (parent_epoch), which is kept
    };

    static auto same_placement(const snapshot& a, const snapshot& b) noexcept -> bool {
        return a.current().fingerprint() == b.current().fingerprint() &&
               std::equal(a.overrides().begin(), a.overrides().end(), b.overrides().begin(), b.overrides().end());
    }

    // Whether this node holds a copy of key under s.current().
    auto holds(const snapshot& s, std::string_view key) const noexcept -> bool {
        const snapshot_node* me = s.find(node_id_);
        if (me == nullptr) {
            return false;
        }
        const auto index = static_cast<std::uint32_t>(me - s.nodes().data());
        std::array<std::uint32_t, max_snapshot_copies> copies{};
        const std::size_t n = s.current().copies_of(
            key, std::span<std::uint32_t>(copies.data(), std::min(copies.size(), s.current().width())));
        return std::find(copies.begin(), copies.begin() + static_cast<std::ptrdiff_t>(n), index) !=
               copies.begin() + static_cast<std::ptrdiff_t>(n);
    }

    std::string node_id_;
    std::size_t capacity_ = 16;
    std::deque<entry> entries_;
    std::shared_ptr<const snapshot> newest_;  // the newest adopted (owners and addresses under it)
    bool dropped_ = false;
};

KEYPLACE_NAMESPACE_END

#endif
