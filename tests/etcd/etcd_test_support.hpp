// The keyplace::etcd tests' shared helpers: the snapshots they publish, a record of what a watcher
// did, and polling for an outcome (a bound against hangs, never a timing assertion).
#ifndef KEYPLACE_TESTS_ETCD_ETCD_TEST_SUPPORT_HPP_INCLUDED
#define KEYPLACE_TESTS_ETCD_ETCD_TEST_SUPPORT_HPP_INCLUDED

#include <keyplace/etcd.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include "../keyplace_catch.hpp"

#include <atomic>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace keyplace_etcd_test {

inline auto description(const std::string& cluster, std::uint64_t epoch, std::vector<std::string> ids)
    -> keyplace::snapshot_description {
    keyplace::snapshot_description d;
    d.cluster = cluster;
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{8}}}};
    for (auto& id : ids) {
        d.nodes.push_back({.id = std::move(id)});
    }
    return d;
}

// Epoch e of a cluster: nodes n0..n(e+1), so every epoch has its own fingerprint.
inline auto snap(const std::string& cluster, std::uint64_t epoch, const std::string& tag = "n")
    -> keyplace::snapshot {
    std::vector<std::string> ids;
    for (std::uint64_t i = 0; i < epoch + 2; ++i) {
        ids.push_back(tag + std::to_string(i));
    }
    return keyplace::snapshot::build(description(cluster, epoch, std::move(ids)));
}

template <class F>
auto eventually(F&& pred, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) -> bool {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pred();
}

// Records every adopted epoch and every refusal of one watcher (called on its thread).
struct recorder {
    std::mutex mu;
    std::vector<std::uint64_t> epochs;
    std::vector<std::pair<keyplace::etcd::refusal, std::string>> refusals;

    void attach(keyplace::etcd::watcher_options& o) {
        o.on_adopt = [this](const keyplace::snapshot& s) {
            const std::lock_guard lock(mu);
            epochs.push_back(s.epoch());
        };
        o.on_refuse = [this](keyplace::etcd::refusal r, const std::string& m) {
            const std::lock_guard lock(mu);
            refusals.emplace_back(r, m);
        };
    }
    auto increasing() -> bool {
        const std::lock_guard lock(mu);
        for (std::size_t i = 1; i < epochs.size(); ++i) {
            if (epochs[i] <= epochs[i - 1]) {
                return false;
            }
        }
        return true;
    }
    /// The epochs adopted so far (a copy under the lock: on_adopt runs on the watcher's thread,
    /// after stats() already shows the epoch).
    auto adopted() -> std::vector<std::uint64_t> {
        const std::lock_guard lock(mu);
        return epochs;
    }
    auto refusal_count() -> std::size_t {
        const std::lock_guard lock(mu);
        return refusals.size();
    }
    auto refusal_at(std::size_t i) -> std::pair<keyplace::etcd::refusal, std::string> {
        const std::lock_guard lock(mu);
        return refusals.at(i);
    }
};

// x and y (one epoch, two placements) published at once, each from its own thread through its own
// store: exactly one wins, the other is told why (stale_epoch or split_brain), and current, read
// through `reader`, holds the winner.
inline void check_one_of_two_wins(keyplace::etcd::kv_store& reader, keyplace::etcd::kv_store& a,
                                  keyplace::etcd::kv_store& b, const std::string& cluster, const keyplace::snapshot& x,
                                  const keyplace::snapshot& y) {
    REQUIRE(x.fingerprint() != y.fingerprint());
    bool ok[2] = {false, false};
    keyplace::error_info errs[2];
    std::atomic<bool> go{false};
    std::thread ta([&] {
        while (!go) {
        }
        ok[0] = keyplace::etcd::publish(a, x, errs[0]);
    });
    std::thread tb([&] {
        while (!go) {
        }
        ok[1] = keyplace::etcd::publish(b, y, errs[1]);
    });
    go = true;
    ta.join();
    tb.join();
    REQUIRE(ok[0] != ok[1]);
    const int loser = ok[0] ? 1 : 0;
    INFO(errs[loser].message());
    CHECK((errs[loser].code() == keyplace::errc::stale_epoch || errs[loser].code() == keyplace::errc::split_brain));
    keyplace::error_info err;
    const auto cur = keyplace::etcd::read_current(reader, cluster, err);
    REQUIRE(cur);
    CHECK(cur->epoch == x.epoch());
    CHECK(cur->fingerprint == (ok[0] ? x : y).fingerprint());
}

// A node that left in the current epoch may not return: the publish is refused before anything is
// stored, and the successor that keeps it left is published.
inline void check_left_node_cannot_return(keyplace::etcd::kv_store& c, const std::string& cluster) {
    keyplace::error_info err;
    auto d = description(cluster, 1, {"n1", "n2", "n3", "n4"});
    d.nodes[3].state = keyplace::node_state::left;
    const keyplace::snapshot first = keyplace::snapshot::build(d);
    REQUIRE(keyplace::etcd::publish(c, first, err));
    auto next = first.successor();
    next.nodes[3].state = keyplace::node_state::active;
    CHECK_FALSE(keyplace::etcd::publish(c, keyplace::snapshot::build(next), err));
    CHECK(err.code() == keyplace::errc::invalid_state);
    CHECK(err.message() == "epoch 2 not published: node 'n4' left at epoch 1 and may not return as active; give it "
                           "a new id");
    CHECK_FALSE(c.get(keyplace::etcd::snapshot_key(cluster, 2), err));
    CHECK_FALSE(err);
    next.nodes[3].state = keyplace::node_state::left;
    next.nodes[2].state = keyplace::node_state::leaving;
    CHECK(keyplace::etcd::publish(c, keyplace::snapshot::build(next), err));
}

// The golden table's encoding-1 case (tests/golden/snapshot_digests_v1.txt, ring_replicas3_zone) as
// a cluster's epoch 1: the snapshot, its description stating the encoding-1 fingerprint (as a
// document written before node locations were in the fingerprint), and that fingerprint.
struct encoding_1_case {
    keyplace::snapshot s;
    keyplace::snapshot_description old;
    keyplace::digest128 v1;
};

inline auto make_encoding_1_case(const std::string& cluster) -> encoding_1_case {
    keyplace::snapshot_description d;
    d.cluster = cluster;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{40}}}};
    d.replication = {.count = 3, .spread = keyplace::failure_domain::zone};
    for (int z = 0; z < 3; ++z) {
        for (int r = 0; r < 2; ++r) {
            for (int n = 0; n < 2; ++n) {
                const std::string zone = "zone-" + std::to_string(z);
                const std::string rack = "rack-" + std::to_string(r);
                d.nodes.push_back({.id = "z" + std::to_string(z) + "r" + std::to_string(r) + "n" + std::to_string(n),
                                   .where = {.region = "eu", .zone = zone, .rack = rack}});
            }
        }
    }
    const auto v1 = keyplace::digest128::from_hex("1575a07c735fef38657f2bdea7ebb9f7");
    REQUIRE(v1.has_value());
    auto s = keyplace::snapshot::build(d);
    REQUIRE(s.fingerprint() != *v1);
    REQUIRE(s.fingerprint_matches(*v1));
    auto old = s.describe();
    old.fingerprint = *v1;
    return {std::move(s), std::move(old), *v1};
}

}  // namespace keyplace_etcd_test

#endif
