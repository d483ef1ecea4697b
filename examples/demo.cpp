// keyplace demo: what going from 10 to 11 nodes does to 200,000 keys under modulo placement
// and under the ring, and how evenly the ring spreads keys for a few vnode counts.
#include <keyplace/keyplace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr std::size_t key_count = 200'000;

auto make_nodes(std::size_t n) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> nodes;
    for (std::size_t i = 0; i < n; ++i) {
        nodes.push_back({"node-" + std::to_string(i)});
    }
    return nodes;
}

auto key_points() -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> points(key_count);
    for (std::size_t i = 0; i < key_count; ++i) {
        points[i] = keyplace::xxh3{}("key-" + std::to_string(i));
    }
    return points;
}

/// Owner ids of every key, so placements under different memberships compare by id.
template <class S>
auto owners(const S& s, const std::vector<std::uint64_t>& points) -> std::vector<std::string> {
    std::vector<std::string> ids(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        ids[i] = s.nodes()[s.pick(points[i]).value].id;
    }
    return ids;
}

struct movement {
    double moved;          // fraction of keys whose owner changed
    double between_old;    // fraction that moved between two nodes present before and after
};

auto compare(const std::vector<std::string>& before, const std::vector<std::string>& after,
             const std::string& joiner) -> movement {
    std::size_t moved = 0;
    std::size_t between_old = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
        if (before[i] != after[i]) {
            ++moved;
            between_old += after[i] != joiner ? 1 : 0;
        }
    }
    const auto n = static_cast<double>(before.size());
    return {static_cast<double>(moved) / n, static_cast<double>(between_old) / n};
}

}  // namespace

int main() {
    const auto points = key_points();
    const auto ten = make_nodes(10);
    const auto eleven = make_nodes(11);
    const std::string joiner = "node-10";

    std::printf("keyplace demo: 10 -> 11 nodes, %zu keys (\"key-0\" ... \"key-%zu\", XXH3-64)\n\n",
                key_count, key_count - 1);
    std::printf("  %-20s %8s %10s %14s %18s\n", "placement", "moved", "minimum", "joiner's share",
                "moved old->old");

    const auto m10 = keyplace::modulo::build(ten);
    const auto m11 = keyplace::modulo::build(eleven);
    const auto mm = compare(owners(m10, points), owners(m11, points), joiner);
    std::printf("  %-20s %7.2f%% %9.2f%% %13.2f%% %17.2f%%\n", "modulo (hash mod N)", 100 * mm.moved,
                100.0 / 11, 100.0 / 11, 100 * mm.between_old);

    const auto r10 = keyplace::ring::build(ten);
    const auto r11 = r10.with({joiner});
    const auto share = keyplace::ownership(r11).share[r11.find(joiner)->value];
    const auto rm = compare(owners(r10, points), owners(r11, points), joiner);
    std::printf("  %-20s %7.2f%% %9.2f%% %13.2f%% %17.2f%%\n", "ring (160 vnodes)", 100 * rm.moved,
                100.0 / 11, 100 * share, 100 * rm.between_old);
    std::printf("\n  minimum: what any scheme must move, the joiner's fair share 1/11.\n"
                "  joiner's share: the hash space the joiner actually owns; the ring moves exactly\n"
                "  the keys in it and nothing between old nodes.\n\n");

    std::printf("ring balance, 10 nodes, %zu keys:\n\n", key_count);
    std::printf("  %8s %14s %14s %16s %14s\n", "vnodes", "max/mean keys", "min/mean keys",
                "max/mean space", "~1+sqrt(2lnN/v)");
    for (const std::uint32_t v : {1U, 4U, 16U, 64U, 160U, 256U, 1024U}) {
        const auto r = keyplace::ring::build(ten, {.vnodes = v});
        std::vector<std::size_t> load(r.size());
        for (const auto p : points) {
            ++load[r.pick(p).value];
        }
        const double mean = static_cast<double>(key_count) / static_cast<double>(r.size());
        const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
        const auto shares = keyplace::ownership(r).share;
        const double max_share = *std::max_element(shares.begin(), shares.end());
        std::printf("  %8u %14.3f %14.3f %16.3f %14.3f\n", v, static_cast<double>(*hi) / mean,
                    static_cast<double>(*lo) / mean, max_share * 10.0,
                    1.0 + std::sqrt(2.0 * std::log(10.0) / v));
    }
    std::printf("\n  max/mean space: the largest exact share of the hash space over the mean share.\n"
                "  The last column is the large-v approximation for random points.\n");
    return 0;
}
