// What keyplace-fleet measures: one window of requests, the kept fractions of a change, the
// windows of an arm, and with --clients each client's windows and adoption times.
#ifndef KEYPLACE_FLEET_PROGRAM_RESULTS_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_RESULTS_HPP_INCLUDED

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace keyplace_fleet {

// The events of every arm, in order (the control runs the same phases without them).
inline const std::array<std::string, 3> event_names{"join", "leave", "rejoin"};

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

// The kept fractions of one change, exact over the universe: request-weighted and key-weighted,
// from the owner tables of the two placements (every strategy alike, bounded loads included).
struct kept {
    double requests = 0;
    double keys = 0;
};

// The hot keys a client detected (keyplace::hot_keys over every request it made) beside the true
// ones (its exact count of every key).
struct detected_key {
    std::string key;
    std::uint64_t truth = 0;  // the exact count
    std::uint64_t lower = 0;  // the summary's bounds on it
    std::uint64_t upper = 0;
};

inline constexpr std::size_t hot_top = 10;

struct hot_report {
    std::uint64_t requests = 0;
    std::uint64_t error_bound = 0;          // ceil(e * requests / width)
    double failure_probability = 0;         // of one estimate exceeding its truth by more
    std::vector<detected_key> detected;     // the summary's top hot_top, the largest estimate first
    std::vector<detected_key> truth;        // the true top hot_top; upper: the estimate, lower: 0 if not a candidate
    std::size_t found = 0;                  // of the true top hot_top, how many are among the detected
};

// One arm: a strategy, a rule, a popularity, a seed; events or none (the control).
struct arm_result {
    std::string strategy;
    std::string rule;  // "control" for the control arm
    double alpha = 0;
    std::uint64_t seed = 0;
    std::vector<window_stats> windows;
    std::map<std::string, kept> predicted;  // by event
    hot_report hot{};
};

// With --clients: the epochs of an arm, 1, then two per event.
inline constexpr std::size_t max_epochs = 7;

struct arm_spec {
    std::string strategy;
    std::string rule;
    double alpha = 0;
    std::uint64_t seed = 0;
    std::string cluster;
    std::string rollout;  // with --rollout: the arm (workload.hpp, rollout_arms); else empty
};

// The name a client process reports under (clients/<id> in etcd).
inline auto client_id(std::size_t i) -> std::string { return "client-" + std::to_string(i); }

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
    hot_report hot{};  // the clients' summaries merged, beside the exact counts of all their requests
};

}  // namespace keyplace_fleet

#endif
