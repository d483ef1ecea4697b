// keyplace-fleet's workload: the key universe and its popularity (Zipf by inverse CDF), the
// membership plan of an arm (its snapshot epochs and the owner tables under each), the simulated
// database, and the look-aside client whose requests are the measured stream.
#ifndef KEYPLACE_FLEET_PROGRAM_WORKLOAD_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_WORKLOAD_HPP_INCLUDED

#include "results.hpp"
#include "servers.hpp"

#include <keyplace/detail/splitmix.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/hot_keys.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace keyplace_fleet {

namespace kp = keyplace;

// SplitMix64: a fixed generator, not std::random.
struct splitmix {
    std::uint64_t s;
    auto next() noexcept -> std::uint64_t { return keyplace::detail::splitmix64(s); }
    auto unit() noexcept -> double { return keyplace::detail::splitmix64_unit(s); }
};

// The request generator's first state for a seed, a popularity and a client (0: the one client of
// a run without --clients; i + 1: client process i).
auto workload_seed(std::uint64_t seed, double alpha, std::uint64_t client = 0) -> std::uint64_t;

// N keys named by seed, key k requested with probability proportional to 1 / (k + 1)^alpha
// (alpha 0: uniform).
struct universe {
    std::vector<std::string> names;
    std::vector<double> weight;  // request probability, sums to 1
    std::vector<double> cdf;

    universe(std::uint64_t n, double alpha, std::uint64_t seed);
    // The key drawn by u in [0, 1).
    [[nodiscard]] auto draw(double u) const -> std::size_t;
};

// ---------------------------------------------------------------------------------------------
// Membership: snapshots of servers mc-0..mc-3 ("mc-<n>" is the id every strategy hashes; ketama
// places them as libmemcached places hosts named mc-0.. on port 11211, which it writes without
// ":port").
inline constexpr std::size_t initial_servers = 3;

struct event {
    std::string name;  // join, leave, rejoin
    std::size_t server;
    bool adds;
};

// The expected request rates as bounded loads' integer weights.
auto request_weights(const universe& u) -> std::vector<std::uint32_t>;

// The owners a client reads for one snapshot, per key index: now (the current placement, where
// reads and fills go) and next (the pending placement, which the write set adds); on the epochs
// of a ramp, target: the owners under the ramp's last epoch, which the write set adds as well
// (every epoch of a monotone ramp places a key on its first owner or on its target owner, so
// writes reach every copy a client on the epoch before or after can read; doc/fleet.md).
struct table {
    std::vector<std::uint8_t> now;
    std::vector<std::uint8_t> next;
    std::vector<std::uint8_t> target;
};

// One phase's publications: the epochs published in order when the phase begins (under a barrier,
// each once every client reports the one before), and the cache operations around them.
struct step {
    std::string name;
    std::vector<std::uint64_t> epochs;  // none: the phase publishes nothing (a recovery window)
    int joins = -1;                     // a server that joins at the first epoch (flushed under rule flush)
    // (server, key index) deleted before the first epoch: a rollback's invalidations.
    std::vector<std::pair<std::uint8_t, std::uint32_t>> invalidate{};
    int relinquish = -1;  // a server flushed once every client reports the last epoch
};

// The snapshots of one arm in publication order (index: epoch - 1): mc-0..mc-2 at epoch 1, then
// per event its transition epoch (the node joining or leaving) and its completing epoch. A leaver
// is removed from the list, not kept as a tombstone: a cache server that returns comes back under
// its own id (that return is what this experiment measures); a tombstone would make it a new node.
// Every process builds the same plan, so each knows the owners under every epoch; placement still
// reads only the snapshot a client has adopted, the other tables serve the measurement.
struct plan {
    std::vector<event> events;
    std::vector<step> steps;  // one per phase after the steady one
    // --rollout: a phase's first window begins once the client serves the step's last epoch (its
    // requests before then, while reads still follow the placement before, are added to it).
    bool windows_from_change = false;
    std::vector<std::shared_ptr<const kp::snapshot>> snaps;
    std::vector<table> tables;
    [[nodiscard]] auto snap(std::uint64_t epoch) const -> const kp::snapshot& { return *snaps.at(epoch - 1); }
    [[nodiscard]] auto at(std::uint64_t epoch) const -> const table& { return tables.at(epoch - 1); }
};

// The plan of cluster for strategy (a strategy-table name, or bounded); control: epoch 1 alone.
auto make_plan(const std::string& cluster, const universe& u, const std::vector<std::uint32_t>& request_weights,
               const std::string& strategy, bool control) -> plan;

// keyplace-fleet --rollout: the arms that measure a ramped join and its rollback (doc/fleet.md,
// "Ramped joins and rollback"), each five phases after the steady one. control: epoch 1 alone;
// one-shot: mc-3 joining, then active, in the first phase; ramp: mc-3 joining (its pending
// placement is the ramp's target), then the 5 epochs of the ramp to it, one per phase; rollback:
// the same with the ramp's first 3 epochs, then in the fourth phase mc-3 leaving at its weight and
// removed, the rollback's invalidations applied before and mc-3 flushed after; uninvalidated: the
// same rollback without the invalidations (what they prevent). Epochs 1 to 7.
inline constexpr std::size_t ramp_steps = 5;
inline constexpr std::size_t rollback_after = 3;
inline const std::vector<std::string> rollout_arms{"control", "one-shot", "ramp", "rollback", "uninvalidated"};
auto make_rollout_plan(const std::string& cluster, const universe& u, const std::string& strategy,
                       const std::string& arm) -> plan;

// What a client's hot-key summary found beside the exact counts of its requests (by key index).
auto hot_report_of(const kp::hot_keys& detected, const std::vector<std::uint64_t>& exact, const universe& u)
    -> hot_report;

// The kept fractions between two owner tables.
auto kept_between(const std::vector<std::uint8_t>& ta, const std::vector<std::uint8_t>& tb, const universe& u) -> kept;

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
    auto lock(std::size_t k) -> std::uint32_t;
    void unlock(std::size_t k, std::uint32_t version) { v[k].store(version, std::memory_order_release); }
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
    // Where set, every request's key is observed by the hot-key summary and counted exactly.
    kp::hot_keys* detect = nullptr;
    std::vector<std::uint64_t>* exact = nullptr;

    void set_value(std::size_t server, std::size_t k, std::uint32_t version);
    void del(std::size_t server, std::size_t k);
    // Sets every key of the fraction F spread over the ranks (key k when frac(k * phi) < F) on
    // its owner at epoch 1: with uniform popularity the cache then starts at hit rate F.
    void prefill(double fraction);
    // One request, placed by the snapshot of epoch `serving` while `published` is the newest.
    void request(window_stats& w, std::uint64_t serving, std::uint64_t published);
};

}  // namespace keyplace_fleet

#endif
