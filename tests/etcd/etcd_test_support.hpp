// The keyplace::etcd tests' shared helpers: the snapshots they publish, and polling for an outcome
// (a bound against hangs, never a timing assertion).
#ifndef KEYPLACE_TESTS_ETCD_ETCD_TEST_SUPPORT_HPP_INCLUDED
#define KEYPLACE_TESTS_ETCD_ETCD_TEST_SUPPORT_HPP_INCLUDED

#include <keyplace/fleet/snapshot.hpp>

#include <chrono>
#include <cstdint>
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

}  // namespace keyplace_etcd_test

#endif
