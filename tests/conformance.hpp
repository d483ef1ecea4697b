// The conformance suite every placement strategy must pass: determinism, independence from
// input order, minimal movement on join and leave, balance within the strategy's stated
// bound, weights, noexcept const queries, and concurrent reads.
#ifndef KEYPLACE_TESTS_CONFORMANCE_HPP_INCLUDED
#define KEYPLACE_TESTS_CONFORMANCE_HPP_INCLUDED

#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/keyplace.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace keyplace_test {

/// How to build a strategy, what it promises, and which membership changes it supports.
template <class S>
struct conformance_subject {
    std::function<S(std::span<const keyplace::node>)> build;
    /// The exact (or expected) share of the hash space a node owns.
    std::function<double(const S&, keyplace::node_index)> share;
    /// The strategy's stated bound on max/mean keys per node, 10 equal nodes, 10^5+ keys.
    double balance_bound;
    std::string joiner = "node-10";
    std::string leaver = "node-3";
    /// Whether placement must not depend on the order of the node list (jump: bucket order).
    bool order_independent = true;
    /// Whether nodes may have weights other than 1.
    bool weighted = true;
    /// 0: a join moves only keys to the joiner and a leave only the leaver's keys. Otherwise
    /// the strategy moves some keys between remaining nodes, and the moved fraction must stay
    /// within this factor of the minimum (the joiner's or leaver's share).
    double movement_factor = 0;
};

template <class S>
auto find_id(const S& s, const std::string& id) -> std::optional<keyplace::node_index> {
    const auto nodes = s.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].id == id) {
            return keyplace::node_index{static_cast<std::uint32_t>(i)};
        }
    }
    return std::nullopt;
}

inline constexpr std::size_t conformance_keys = 200'000;

template <keyplace::placement_strategy S>
void run_conformance(const conformance_subject<S>& subject) {
    static_assert(noexcept(std::declval<const S&>().pick(std::uint64_t{})));
    static_assert(noexcept(std::declval<const S&>().size()));
    static_assert(noexcept(std::declval<const S&>().nodes()));
    if constexpr (keyplace::ordered_placement_strategy<S>) {
        static_assert(noexcept(std::declval<const S&>().pick_n(
            std::uint64_t{}, std::declval<std::span<keyplace::node_index>>())));
    }

    const auto nodes = make_nodes(10);
    const auto points = key_points(conformance_keys);
    const S base = subject.build(nodes);
    const auto placed = owner_ids(base, points);

    SECTION("deterministic: rebuilding and copying give the same owners") {
        const S again = subject.build(nodes);
        const S copy = base;  // NOLINT(performance-unnecessary-copy-initialization)
        CHECK(owner_ids(again, points) == placed);
        CHECK(owner_ids(copy, points) == placed);
    }

    SECTION("independent of input order") {
        if (!subject.order_independent) {
            // Placement follows the node order by design: reversing it must change owners.
            auto reversed = nodes;
            std::reverse(reversed.begin(), reversed.end());
            CHECK(owner_ids(subject.build(reversed), points) != placed);
            return;
        }
        auto reversed = nodes;
        std::reverse(reversed.begin(), reversed.end());
        auto shuffled = nodes;
        std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(42));
        const S r = subject.build(reversed);
        const S s = subject.build(shuffled);
        CHECK(owner_ids(r, points) == placed);
        CHECK(owner_ids(s, points) == placed);
        CHECK(std::equal(r.nodes().begin(), r.nodes().end(), base.nodes().begin(), base.nodes().end()));
    }

    SECTION("a join moves only keys to the joiner, about its share") {
        auto grown_nodes = nodes;
        grown_nodes.push_back({subject.joiner});
        const S grown = subject.build(grown_nodes);
        const auto after = owner_ids(grown, points);
        std::size_t moved = 0;
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (after[i] != placed[i]) {
                ++moved;
                wrong += after[i] != subject.joiner ? 1 : 0;
            }
        }
        const double share = subject.share(grown, *find_id(grown, subject.joiner));
        const double fraction = static_cast<double>(moved) / static_cast<double>(points.size());
        if (subject.movement_factor == 0) {
            CHECK(wrong == 0);
            CHECK(std::abs(fraction - share) <= 5 * sigma(share, points.size()));
        } else {
            CHECK(fraction >= share - 5 * sigma(share, points.size()));
            CHECK(fraction <= subject.movement_factor * share);
        }
    }

    SECTION("a leave moves exactly the leaver's keys") {
        std::vector<keyplace::node> shrunk_nodes;
        for (const auto& n : nodes) {
            if (n.id != subject.leaver) {
                shrunk_nodes.push_back(n);
            }
        }
        const S shrunk = subject.build(shrunk_nodes);
        const auto after = owner_ids(shrunk, points);
        std::size_t bad = 0;
        std::size_t moved = 0;
        std::size_t leaver_keys = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            const bool was_leaver = placed[i] == subject.leaver;
            const bool changed = after[i] != placed[i];
            bad += (was_leaver && !changed) ? 1 : 0;  // a leaver's key always moves
            bad += (subject.movement_factor == 0 && changed && !was_leaver) ? 1 : 0;
            moved += changed ? 1 : 0;
            leaver_keys += was_leaver ? 1 : 0;
        }
        CHECK(bad == 0);
        CHECK(leaver_keys > 0);
        if (subject.movement_factor != 0) {
            CHECK(static_cast<double>(moved) <= subject.movement_factor * static_cast<double>(leaver_keys));
        }
    }

    SECTION("balance within the stated bound") {
        const auto counts = load(base, points);
        const double mean = static_cast<double>(points.size()) / static_cast<double>(base.size());
        const double max = static_cast<double>(*std::max_element(counts.begin(), counts.end()));
        CHECK(max / mean <= subject.balance_bound);
        CHECK(std::count(counts.begin(), counts.end(), 0U) == 0);
    }

    SECTION("a node of weight 3 gets about three times the keys") {
        if (!subject.weighted) {
            auto weighted = nodes;
            weighted[4].weight = 3.0;
            CHECK_THROWS_AS(subject.build(weighted), keyplace::error);
            return;
        }
        auto weighted = nodes;
        weighted[4].weight = 3.0;
        const S w = subject.build(weighted);
        const auto counts = load(w, points);
        const auto heavy = *find_id(w, weighted[4].id);
        const double expected = 3.0 / 12.0;
        const double got = static_cast<double>(counts[heavy.value]) / static_cast<double>(points.size());
        CHECK(got / expected <= subject.balance_bound);
        CHECK(expected / got <= subject.balance_bound);
        CHECK(std::abs(got - subject.share(w, heavy)) <= 5 * sigma(expected, points.size()));
    }

    SECTION("concurrent readers see the same placement") {
        std::atomic<std::size_t> mismatches{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; ++t) {
            readers.emplace_back([&] {
                std::size_t local = 0;
                for (std::size_t i = 0; i < points.size(); i += 3) {
                    local += base.nodes()[base.pick(points[i]).value].id != placed[i] ? 1 : 0;
                }
                mismatches += local;
            });
        }
        for (auto& r : readers) {
            r.join();
        }
        CHECK(mismatches.load() == 0);
    }
}

}  // namespace keyplace_test

#endif
