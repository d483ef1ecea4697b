// The conformance suite every placement strategy must pass, native and compat alike:
// determinism, input order (where the contract has it), movement on join and leave within the
// strategy's bound, balance within its stated bound, weights, derivation equal to rebuild,
// holders and the walk, exact regions against sampling, the try_ forms' messages, noexcept
// const queries, and concurrent reads.
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
#include <set>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace_test {

/// What the contract says about the order of the input list.
enum class input_order {
    sorted,     ///< nodes() is sorted by id and placement ignores the input order
    kept,       ///< nodes() keeps the input order, placement by id ignores it (compat rings)
    placement,  ///< placement follows the input order (jump's buckets)
};

/// What a strategy does with node weights.
enum class weights {
    proportional,  ///< a node of weight 3 owns about three times the share
    refused,       ///< a weight other than 1 is an error
    ignored,       ///< a weight changes nothing (modulo; Cassandra: tokens decide)
};

/// How to build a strategy and what it promises.
template <class S>
struct conformance_subject {
    /// Builds from nodes (an adapter for strategies whose members are not nodes).
    std::function<S(std::span<const keyplace::node>)> build;
    /// The member a node stands for (identity for strategies built from nodes).
    std::function<typename S::member_type(const keyplace::node&)> member = nullptr;
    /// A node's id in the strategy (libmemcached writes "host:port").
    std::function<std::string(const std::string&)> id = [](const std::string& s) { return s; };
    /// The strategy's stated bound on max/mean keys per node, 10 equal nodes, 2 * 10^5 keys.
    double balance_bound;
    std::string joiner = "node-10";
    std::string leaver = "node-3";
    input_order order = input_order::sorted;
    weights weighting = weights::proportional;
    /// 0: a join moves only keys to the joiner and a leave only the leaver's keys. Otherwise
    /// the strategy moves some keys between remaining nodes, and the moved fraction must stay
    /// within this factor of the minimum (the joiner's or leaver's share).
    double movement_factor = 0;
    /// Placement depends on the derivation history (a partition table): joins and leaves derive
    /// the value (with, without) instead of building the new membership, and a derivation is
    /// checked against the same derivation repeated, not against a fresh build.
    bool history = false;
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

/// The exact share of a node where the strategy has regions, else its weight share.
template <class S>
auto stated_share(const S& s, keyplace::node_index i) -> double {
    const auto o = keyplace::ownership(s);
    if (o.method != keyplace::share_method::sampled) {
        return o.share[i.value];
    }
    double total = 0;
    for (const auto& n : s.nodes()) {
        total += n.weight;
    }
    return s.node(i).weight / total;
}

template <class S>
auto same_placement(const S& a, const S& b, const std::vector<std::uint64_t>& points) -> bool {
    return std::equal(a.nodes().begin(), a.nodes().end(), b.nodes().begin(), b.nodes().end()) &&
           owner_ids(a, points) == owner_ids(b, points);
}

template <keyplace::placement_strategy S>
void run_conformance(const conformance_subject<S>& subject) {
    static_assert(noexcept(std::declval<const S&>().pick(std::uint64_t{})));
    static_assert(noexcept(std::declval<const S&>().size()));
    static_assert(noexcept(std::declval<const S&>().nodes()));
    static_assert(noexcept(std::declval<const S&>().holders()));
    if constexpr (keyplace::ordered_placement_strategy<S>) {
        static_assert(noexcept(std::declval<const S&>().pick_n(
            std::uint64_t{}, std::declval<std::span<keyplace::node_index>>())));
    }
    using member = typename S::member_type;
    const auto to_member = [&](const keyplace::node& n) -> member {
        if constexpr (std::is_same_v<member, keyplace::node>) {
            return n;
        } else {
            return subject.member(n);
        }
    };

    const auto nodes = make_nodes(10);
    const auto points = key_points(conformance_keys);
    const S base = subject.build(nodes);
    const auto placed = owner_ids(base, points);
    const std::string joiner = subject.id(subject.joiner);
    const std::string leaver = subject.id(subject.leaver);
    auto grown_nodes = nodes;
    grown_nodes.push_back({subject.joiner});
    std::vector<keyplace::node> shrunk_nodes;
    for (const auto& n : nodes) {
        if (n.id != subject.leaver) {
            shrunk_nodes.push_back(n);
        }
    }

    // The membership after the join and after the leave: built anew, or derived from base.
    const auto after_change = [&](bool join) -> S {
        if constexpr (requires { base.with(to_member(grown_nodes.back())); }) {
            if (subject.history) {
                return join ? base.with(to_member(grown_nodes.back())) : base.without(leaver);
            }
        }
        return subject.build(join ? grown_nodes : shrunk_nodes);
    };

    SECTION("deterministic: rebuilding and copying give the same owners") {
        const S again = subject.build(nodes);
        const S copy = base;  // NOLINT(performance-unnecessary-copy-initialization)
        CHECK(owner_ids(again, points) == placed);
        CHECK(owner_ids(copy, points) == placed);
    }

    SECTION("input order: as the contract states") {
        auto reversed = nodes;
        std::reverse(reversed.begin(), reversed.end());
        auto shuffled = nodes;
        std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(42));
        const S r = subject.build(reversed);
        const S s = subject.build(shuffled);
        switch (subject.order) {
            case input_order::placement:  // placement follows the node order by design
                CHECK(owner_ids(r, points) != placed);
                break;
            case input_order::kept:
                CHECK(owner_ids(r, points) == placed);
                CHECK(owner_ids(s, points) == placed);
                CHECK(r.nodes().front().id == subject.id(reversed.front().id));
                break;
            case input_order::sorted:
                CHECK(owner_ids(r, points) == placed);
                CHECK(owner_ids(s, points) == placed);
                CHECK(std::equal(r.nodes().begin(), r.nodes().end(), base.nodes().begin(), base.nodes().end()));
                break;
        }
    }

    SECTION("a join moves only keys to the joiner, about its share") {
        const S grown = after_change(true);
        const auto after = owner_ids(grown, points);
        std::size_t moved = 0;
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (after[i] != placed[i]) {
                ++moved;
                wrong += after[i] != joiner ? 1 : 0;
            }
        }
        const double share = stated_share(grown, *find_id(grown, joiner));
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
        const S shrunk = after_change(false);
        const auto after = owner_ids(shrunk, points);
        std::size_t bad = 0;
        std::size_t moved = 0;
        std::size_t leaver_keys = 0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            const bool was_leaver = placed[i] == leaver;
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

    SECTION("derivation equals rebuild, and leaves the original alone") {
        if constexpr (requires { base.with(to_member(grown_nodes.back())); }) {
            const S grown = base.with(to_member(grown_nodes.back()));
            const S shrunk = base.without(leaver);
            if (subject.history) {
                const S copy = base;  // NOLINT(performance-unnecessary-copy-initialization)
                CHECK(same_placement(grown, copy.with(to_member(grown_nodes.back())), points));
                CHECK(same_placement(shrunk, copy.without(leaver), points));
                CHECK(grown.size() == grown_nodes.size());
                CHECK(shrunk.size() == shrunk_nodes.size());
            } else {
                CHECK(same_placement(grown, subject.build(grown_nodes), points));
                CHECK(same_placement(shrunk, subject.build(shrunk_nodes), points));
            }
            keyplace::error_info err;
            CHECK(base.try_with(to_member(grown_nodes.back()), err).has_value());
            CHECK_FALSE(err);
            CHECK(base.try_without(leaver, err).has_value());
            // The join and leave checks, once for every strategy, with the throwing form's message.
            CHECK_FALSE(base.try_without("ghost", err).has_value());
            CHECK(err == keyplace::errc::unknown_id);
            CHECK(err.message() == "node id 'ghost' is not a member");
            expect_error([&] { return base.without("ghost"); }, keyplace::errc::unknown_id, err.message());
            CHECK(owner_ids(base, points) == placed);
        } else if constexpr (requires { base.push_back(to_member(grown_nodes.back())); }) {
            const S grown = base.push_back(to_member(grown_nodes.back()));
            CHECK(same_placement(grown, subject.build(grown_nodes), points));
            const S popped = grown.pop_back();
            CHECK(same_placement(popped, base, points));
            keyplace::error_info err;
            const auto solo = subject.build(std::vector<keyplace::node>{nodes.front()});
            CHECK_FALSE(solo.try_pop_back(err).has_value());
            CHECK(err == keyplace::errc::empty_membership);
            expect_error([&] { return solo.pop_back(); }, keyplace::errc::empty_membership, err.message());
            CHECK_FALSE(base.try_push_back(to_member(nodes[2]), err).has_value());
            CHECK(err == keyplace::errc::duplicate_id);
            CHECK(owner_ids(base, points) == placed);
        } else {
            SUCCEED("this strategy does not derive: build the new value");
        }
    }

    SECTION("try_build reports the throwing form's code and message") {
        if constexpr (requires(keyplace::error_info& e) {
                          S::try_build(std::span<const member>{}, e);
                          base.config();  // builds from members alone (not a slot map or given points)
                      }) {
            keyplace::error_info err;
            CHECK_FALSE(S::try_build(std::span<const member>{}, err).has_value());
            CHECK(err == keyplace::errc::empty_membership);
            CHECK_FALSE(err.message().empty());
            expect_error([&] { return S::build(std::span<const member>{}); }, err.code(), err.message());
            const std::vector<member> good{to_member(nodes[0]), to_member(nodes[1])};
            CHECK(S::try_build(good, err).has_value());
            CHECK_FALSE(err);
        } else {
            SUCCEED("this strategy's try_build takes input of its own (covered in its tests)");
        }
    }

    SECTION("holders, the walk and pick_n") {
        CHECK(base.holders() == base.size());  // every one of 10 equal nodes holds keys
        for (std::uint32_t i = 0; i < base.size(); ++i) {
            CHECK(base.holds(keyplace::node_index{i}));
            CHECK(&base.node(keyplace::node_index{i}) == &base.nodes()[i]);
        }
        if constexpr (keyplace::ordered_placement_strategy<S>) {
            std::vector<keyplace::node_index> out(base.size() + 2);
            for (std::size_t k = 0; k < 200; ++k) {
                const auto p = points[k];
                std::set<std::uint32_t> visited;
                base.walk(p, [&](keyplace::node_index v) noexcept {
                    visited.insert(v.value);
                    return true;
                });
                REQUIRE(visited.size() == base.holders());
                const auto got = base.pick_n(p, out);
                REQUIRE(got == base.holders());
                CHECK(out[0] == base.pick(p));
                CHECK(std::set<keyplace::node_index>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(got))
                          .size() == got);
            }
        }
    }

    SECTION("exact regions agree with sampled keys") {
        if constexpr (keyplace::region_strategy<S>) {
            const auto exact = keyplace::ownership(base);
            CHECK(exact.method == keyplace::share_method::exact);
            const auto counts = load(base, points);
            double sum = 0;
            for (std::size_t i = 0; i < base.size(); ++i) {
                const double got = static_cast<double>(counts[i]) / static_cast<double>(points.size());
                CHECK(std::abs(got - exact.share[i]) <= 5 * sigma(exact.share[i], points.size()));
                sum += exact.share[i];
            }
            CHECK(std::abs(sum - 1.0) < 1e-12);
            // Exact movement on a join, against the same change counted over keys.
            const S grown = after_change(true);
            const auto m = keyplace::movement(base, grown);
            CHECK(m.exact);
            const auto keyed = keyplace::movement(base, grown, points);
            CHECK(std::abs(m.moved - keyed.moved) <= 5 * sigma(m.moved, points.size()));
            if (subject.movement_factor == 0) {
                CHECK(m.violations == 0);
                CHECK(std::abs(m.moved - m.minimum) < 1e-12);
            }
        } else {
            SUCCEED("no regions: ownership is sampled or defined");
        }
    }

    SECTION("balance within the stated bound") {
        const auto counts = load(base, points);
        const double mean = static_cast<double>(points.size()) / static_cast<double>(base.size());
        const double max = static_cast<double>(*std::max_element(counts.begin(), counts.end()));
        CHECK(max / mean <= subject.balance_bound);
        CHECK(std::count(counts.begin(), counts.end(), 0U) == 0);
    }

    SECTION("a node of weight 3: about three times the keys, refused, or ignored") {
        auto weighted = nodes;
        weighted[4].weight = 3.0;
        switch (subject.weighting) {
            case weights::refused:
                CHECK_THROWS_AS(subject.build(weighted), keyplace::error);
                break;
            case weights::ignored:
                CHECK(owner_ids(subject.build(weighted), points) == placed);
                break;
            case weights::proportional: {
                const S w = subject.build(weighted);
                const auto counts = load(w, points);
                const auto heavy = *find_id(w, subject.id(weighted[4].id));
                const double expected = 3.0 / 12.0;
                const double got = static_cast<double>(counts[heavy.value]) / static_cast<double>(points.size());
                CHECK(got / expected <= subject.balance_bound);
                CHECK(expected / got <= subject.balance_bound);
                CHECK(std::abs(got - stated_share(w, heavy)) <= 5 * sigma(expected, points.size()));
                break;
            }
        }
    }

    SECTION("concurrent readers see the same placement") {
        std::atomic<std::size_t> mismatches{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; ++t) {
            readers.emplace_back([&] {
                std::size_t local = 0;
                for (std::size_t i = 0; i < points.size(); i += 3) {
                    local += base.node(base.pick(points[i])).id != placed[i] ? 1 : 0;
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
