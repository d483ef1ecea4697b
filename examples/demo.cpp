// keyplace demo: every placement family side by side on one join (10 -> 11 nodes) and one leave
// (10 -> 9), over 200,000 keys: what moved against the minimum any scheme must move, what
// moved between nodes that stayed, and how evenly keys spread; then the ring's balance
// against its number of points per node.
#include <keyplace/keyplace.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
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

template <class S>
void row(const char* name, const char* lookup, const S& ten, const S& eleven, const S& nine,
         const std::vector<std::uint64_t>& points) {
    const auto join = keyplace::movement(ten, eleven, points);
    const auto leave = keyplace::movement(ten, nine, points);
    const auto balance = keyplace::load(ten, points);
    std::printf("  %-18s %7.2f%% %7.2f%% %7.2f%%   %7.2f%% %7.2f%% %7.2f%%   %7.3f   %s\n", name, 100 * join.moved,
                100 * join.minimum, 100 * join.violations, 100 * leave.moved, 100 * leave.minimum,
                100 * leave.violations, balance.max_over_mean, lookup);
}

// Allocated tokens: each node in turn is given 16 tokens chosen to balance the ring so far
// (Cassandra's allocation, native form), seed 1.
auto allocated(const std::vector<keyplace::node>& nodes) -> keyplace::token_ring {
    std::vector<keyplace::token_holder> holders;
    for (const auto& n : nodes) {
        holders.push_back({n, keyplace::allocate_tokens(holders, n, 16, {.factor = 1}, 1)});
    }
    std::vector<keyplace::compat::ring_point<std::uint64_t>> tokens;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        for (const auto t : holders[i].tokens) {
            tokens.push_back({t, static_cast<std::uint32_t>(i)});
        }
    }
    return keyplace::token_ring::build(nodes, keyplace::compat::given_points<std::uint64_t>(std::move(tokens)));
}

}  // namespace

int main() {
    const auto points = key_points();
    const auto ten = make_nodes(10);
    const auto eleven = make_nodes(11);
    const auto nine = make_nodes(9);

    std::printf("keyplace demo: one join (10 -> 11 nodes, node-10 added) and one leave (10 -> 9, node-9\n"
                "removed), %zu keys \"key-0\" ... \"key-%zu\" hashed with XXH3-64\n\n",
                key_count, key_count - 1);
    std::printf("  %-18s %-28s   %-28s   %-7s   %s\n", "", "join", "leave", "balance", "");
    std::printf("  %-18s %8s %8s %8s   %8s %8s %8s   %7s   %s\n", "strategy", "moved", "minimum", "old->old", "moved",
                "minimum", "old->old", "max/mean", "lookup");
    row("modulo (hash % N)", "O(1)", keyplace::modulo::build(ten), keyplace::modulo::build(eleven),
        keyplace::modulo::build(nine), points);
    row("ring (160 vnodes)", "O(1) expected", keyplace::ring::build(ten), keyplace::ring::build(eleven),
        keyplace::ring::build(nine), points);
    row("rendezvous", "O(nodes)", keyplace::rendezvous::build(ten), keyplace::rendezvous::build(eleven),
        keyplace::rendezvous::build(nine), points);
    row("jump", "O(log nodes)", keyplace::jump::build(ten), keyplace::jump::build(eleven), keyplace::jump::build(nine),
        points);
    row("jumpback", "O(1) expected", keyplace::jumpback::build(ten), keyplace::jumpback::build(eleven),
        keyplace::jumpback::build(nine), points);
    row("maglev (65537)", "O(1)", keyplace::maglev::build(ten), keyplace::maglev::build(eleven),
        keyplace::maglev::build(nine), points);
    row("multiprobe (21)", "O(probes)", keyplace::multiprobe::build(ten), keyplace::multiprobe::build(eleven),
        keyplace::multiprobe::build(nine), points);
    // AnchorHash, MementoHash and partitions are histories: the join and the leave derive from
    // the same ten-node value (a fresh build of other nodes is another history).
    const auto anchor = keyplace::anchor::build(ten, {.capacity = 20, .removed = {}});
    row("anchor (a = 20)", "O(1) expected", anchor, anchor.with(eleven.back()), anchor.without("node-9"), points);
    const auto memento = keyplace::memento::build(ten);
    row("memento", "O(log nodes)", memento, memento.with(eleven.back()), memento.without("node-9"), points);
    const auto partitions = keyplace::partitions::build(ten);
    row("partitions (1024)", "O(1)", partitions, partitions.with(eleven.back()), partitions.without("node-9"),
        points);
    row("tokens (16 each)", "O(1) expected", allocated(ten), allocated(eleven), allocated(nine), points);
    std::printf("\n  moved: keys whose owner changed. minimum: the least any placement must move to reach\n"
                "  the new shares (half the L1 distance between ownerships; the fair 1/11 = 9.09%% and 1/10\n"
                "  for an ideally balanced scheme). old->old: keys moved between two nodes present before\n"
                "  and after, which a consistent scheme never moves. max/mean: the busiest node at 10 nodes.\n\n");

    std::printf("ring balance, 10 nodes, %zu keys:\n\n", key_count);
    std::printf("  %8s %14s %14s %16s %16s\n", "vnodes", "max/mean keys", "min/mean keys", "max/mean space",
                "1+sqrt(2lnN/v)");
    for (const std::uint32_t v : {1U, 4U, 16U, 64U, 160U, 256U, 1024U}) {
        const auto r = keyplace::ring::build(ten, {.vnodes = v});
        const auto l = keyplace::load(r, points);
        const auto shares = keyplace::ownership(r).share;
        const double max_share = *std::max_element(shares.begin(), shares.end());
        std::printf("  %8u %14.3f %14.3f %16.3f %16.3f\n", v, l.max_over_mean, l.min_over_mean, max_share * 10.0,
                    1.0 + std::sqrt(2.0 * std::log(10.0) / v));
    }
    std::printf("\n  max/mean space: the largest exact share of the hash space over the mean share. The last\n"
                "  column is the large-v approximation for random points.\n");
    return 0;
}
