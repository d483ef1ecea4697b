// Tests of partitions.hpp: worked tables checked by hand, quotas and exact minimal movement over
// random histories (against quotas computed here independently), replicas spread over racks,
// determinism, the table round trip, bad input, balance over keys.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/partitions.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using keyplace::node;
using keyplace::node_index;
using keyplace::partitions;
using keyplace::partitions_config;
using namespace keyplace_test;

namespace {

// The owners of every partition at rank r, as ids.
auto column(const partitions& s, std::uint32_t r = 0) -> std::string {
    std::string out;
    for (std::uint32_t p = 0; p < s.partition_count(); ++p) {
        out += (out.empty() ? "" : " ") + s.node(s.owner(p, r)).id;
    }
    return out;
}

auto slots_by_id(const partitions& s) -> std::map<std::string, std::uint64_t> {
    std::map<std::string, std::uint64_t> out;
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        out[s.node(node_index{i}).id] = s.slots(node_index{i});
    }
    return out;
}

// Integer weights (the tests use whole weights, so w / W is the quantized ratio exactly).
auto weight_of(const node& n) -> std::uint64_t { return static_cast<std::uint64_t>(n.weight); }

// Slot bounds computed here, independently: shares T * w / W, a share above Q capped at Q and the
// rest shared among the others (water-filling), each other node within floor .. ceil of its share.
struct bounds {
    std::uint64_t lo;
    std::uint64_t hi;
};
auto quota_bounds(const partitions& s) -> std::map<std::string, bounds> {
    const std::uint64_t q = s.partition_count();
    std::uint64_t slots = q * s.replica_count();
    std::set<std::string> capped;
    std::map<std::string, bounds> out;
    for (bool again = true; again;) {
        again = false;
        std::uint64_t w = 0;
        for (const auto& n : s.nodes()) {
            w += capped.count(n.id) != 0 ? 0 : weight_of(n);
        }
        for (const auto& n : s.nodes()) {
            if (capped.count(n.id) == 0 && slots * weight_of(n) > q * w) {
                capped.insert(n.id);
                slots -= q;
                again = true;
                break;
            }
        }
        if (!again) {
            for (const auto& n : s.nodes()) {
                if (capped.count(n.id) != 0) {
                    out[n.id] = {q, q};
                } else {
                    const std::uint64_t num = slots * weight_of(n);
                    out[n.id] = {num / w, (num + w - 1) / w};
                }
            }
        }
    }
    return out;
}

// Every partition names distinct nodes and every count lies within its bounds.
void check_table(const partitions& s) {
    std::size_t twice = 0;
    for (std::uint32_t p = 0; p < s.partition_count(); ++p) {
        std::set<std::uint32_t> seen;
        for (std::uint32_t r = 0; r < s.replica_count(); ++r) {
            twice += seen.insert(s.owner(p, r).value).second ? 0 : 1;
        }
    }
    CHECK(twice == 0);
    const auto b = quota_bounds(s);
    std::uint64_t total = 0;
    for (const auto& [id, have] : slots_by_id(s)) {
        INFO("node " << id << " holds " << have << " slots, bounds " << b.at(id).lo << ".." << b.at(id).hi);
        CHECK(have >= b.at(id).lo);
        CHECK(have <= b.at(id).hi);
        total += have;
    }
    CHECK(total == std::uint64_t{s.partition_count()} * s.replica_count());
    CHECK_FALSE(s.off_quota().has_value());  // the claim leaves every node at its quotas
}

// Σ max(0, before - after) over ids: the least any table with the after counts moves.
auto least_moves(const partitions& before, const partitions& after) -> std::size_t {
    const auto a = slots_by_id(after);
    std::size_t sum = 0;
    for (const auto& [id, had] : slots_by_id(before)) {
        const auto it = a.find(id);
        const std::uint64_t now = it == a.end() ? 0 : it->second;
        sum += had > now ? static_cast<std::size_t>(had - now) : 0;
    }
    return sum;
}

// One random step of a history: a join (40 %), a leave (30 %) or a weight change (weights 1 to 4),
// so the membership drifts from a few nodes to a few tens.
template <class Located>
auto random_step(const partitions& s, std::mt19937_64& gen, int& next_id, Located&& locate) -> partitions {
    const auto choice = gen() % 10;
    if (choice < 4 || s.size() <= s.replica_count() + 1) {
        node n{"n" + std::to_string(next_id++), static_cast<double>(1 + gen() % 4)};
        n.where = locate(gen);
        return s.with(n);
    }
    const auto& victim = s.nodes()[gen() % s.size()].id;
    if (choice < 7) {
        return s.without(victim);
    }
    return s.reweighted(victim, static_cast<double>(1 + gen() % 4));
}

// 200 random steps from 24 nodes in 8 racks (joins land in a random rack), 3 replicas, 256
// partitions: checks the table at every step and returns moved / minimum over the history.
auto replica_history(keyplace::failure_domain spread, std::uint64_t seed) -> double {
    std::mt19937_64 gen(seed);
    int next_id = 0;
    const auto rack_of = [](std::mt19937_64& g) {
        return keyplace::location{"r", "z", "rack-" + std::to_string(g() % 8)};
    };
    std::vector<node> start;
    for (int i = 0; i < 24; ++i) {
        start.push_back({"n" + std::to_string(next_id++), 1.0, {"r", "z", "rack-" + std::to_string(i % 8)}});
    }
    // Contract 1: its measured ratios below (contract 2 has its own history test).
    const partitions_config config{.partitions = 256, .replicas = 3, .spread = spread, .contract = 1};
    auto s = partitions::build(start, config);
    check_table(s);
    CHECK(s.crowded() == 0);
    std::size_t moved = 0;
    std::size_t least = 0;
    std::size_t spread_steps = 0;
    for (int step = 0; step < 200; ++step) {
        const auto next = random_step(s, gen, next_id, rack_of);
        INFO("step " << step << ", " << next.size() << " nodes");
        check_table(next);
        // Over racks the spread is attainable when there are at least 3 racks and every rack's
        // slots fit one a partition: then no partition has two replicas in a rack.
        std::map<std::string, std::uint64_t> rack_slots;
        for (std::uint32_t i = 0; i < next.size(); ++i) {
            rack_slots[next.node(node_index{i}).where.rack] += next.slots(node_index{i});
        }
        const bool attainable = rack_slots.size() >= 3 && std::all_of(rack_slots.begin(), rack_slots.end(),
                                                                      [](const auto& r) { return r.second <= 256; });
        std::size_t crowded = 0;
        for (std::uint32_t p = 0; p < 256; ++p) {
            std::set<std::string> racks;
            for (std::uint32_t r = 0; r < 3; ++r) {
                racks.insert(next.node(next.owner(p, r)).where.rack);
            }
            crowded += racks.size() < 3 ? 1 : 0;
        }
        if (spread == keyplace::failure_domain::rack) {
            CHECK(crowded == next.crowded());
            if (attainable) {
                ++spread_steps;
                CHECK(crowded == 0);
            }
        }
        // Owners (rank 0) hold their own quotas, Q * w / W rounded either way.
        std::uint64_t w = 0;
        for (const auto& n : next.nodes()) {
            w += weight_of(n);
        }
        std::vector<std::uint64_t> owned(next.size(), 0);
        for (std::uint32_t p = 0; p < 256; ++p) {
            ++owned[next.owner(p, 0).value];
        }
        for (std::uint32_t i = 0; i < next.size(); ++i) {
            const std::uint64_t share = 256 * weight_of(next.node(node_index{i}));
            INFO("node " << next.node(node_index{i}).id << " owns " << owned[i] << ", share " << share / w);
            CHECK(owned[i] >= share / w);
            CHECK(owned[i] <= (share + w - 1) / w);
        }
        const auto plan = keyplace::partition_moves(s, next);
        CHECK(plan.minimum == least_moves(s, next));
        CHECK(plan.moved >= plan.minimum);
        moved += plan.moved;
        least += plan.minimum;
        s = next;
    }
    if (spread == keyplace::failure_domain::rack) {
        CHECK(spread_steps >= 190);
    }
    return static_cast<double>(moved) / static_cast<double>(least);
}

// Contract 2's limits computed here from the table alone: per level (zone, rack), the most
// replicas of one partition a domain may hold, ceil(slots held / Q).
auto zone_limit_breaches(const partitions& s) -> std::uint32_t {
    const std::uint32_t q = s.partition_count();
    std::uint32_t over = 0;
    for (const bool racks : {false, true}) {
        std::map<std::string, std::uint64_t> held;
        const auto domain = [&](node_index i) {
            const auto& w = s.node(i).where;
            return w.zone + (racks ? "/" + w.rack : "");
        };
        for (std::uint32_t i = 0; i < s.size(); ++i) {
            held[domain(node_index{i})] += s.slots(node_index{i});
        }
        for (std::uint32_t p = 0; p < q; ++p) {
            std::map<std::string, std::uint64_t> in;
            for (std::uint32_t r = 0; r < s.replica_count(); ++r) {
                ++in[domain(s.owner(p, r))];
            }
            for (const auto& [d, c] : in) {
                over += c > (held[d] + q - 1) / q ? 1U : 0U;
            }
        }
    }
    return over;
}

// 150 random steps of a contract-2 table over 4 zones of 3 racks, one zone heavier (joins land
// in a random zone and rack, weights 1 to 4), 3 replicas, 256 partitions: checks every table
// and returns moved / minimum over the history.
auto zone_history(std::uint64_t seed) -> double {
    std::mt19937_64 gen(seed);
    int next_id = 0;
    const auto place = [](std::mt19937_64& g) {
        const auto z = g() % 4;
        return keyplace::location{"r", "z" + std::to_string(z), "k" + std::to_string(g() % 3)};
    };
    std::vector<node> start;
    for (int i = 0; i < 12; ++i) {
        start.push_back({"n" + std::to_string(next_id++), i < 6 ? 2.0 : 1.0,
                         {"r", "z" + std::to_string(i % 4), "k" + std::to_string(i % 3)}});
    }
    auto s = partitions::build(start, {.partitions = 256, .replicas = 3, .spread = keyplace::failure_domain::zone});
    std::size_t moved = 0;
    std::size_t least = 0;
    for (int step = 0; step <= 150; ++step) {
        const auto next = step == 0 ? s : random_step(s, gen, next_id, place);
        INFO("step " << step << ", " << next.size() << " nodes");
        CHECK(next.overcrowded() == 0);
        CHECK(zone_limit_breaches(next) == 0);
        CHECK_FALSE(next.off_quota().has_value());
        // Balance: three splits (zones, racks, nodes) each round once, an error below one slot
        // carried down scaled by a fraction <= 1: every node within 3 slots of Q n w / W, where
        // no share is capped (a node above W / 3, a zone above W m / 3 for its m nodes).
        std::uint64_t w = 0;
        std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> zones;  // weight, nodes
        for (const auto& n : next.nodes()) {
            w += weight_of(n);
            zones[n.where.zone].first += weight_of(n);
            ++zones[n.where.zone].second;
        }
        bool capped = false;
        for (const auto& n : next.nodes()) {
            capped = capped || 3 * weight_of(n) > w;
        }
        for (const auto& [z, wm] : zones) {
            capped = capped || 3 * wm.first > w * wm.second;
        }
        for (std::uint32_t i = 0; i < next.size() && !capped; ++i) {
            const double share = 768.0 * static_cast<double>(weight_of(next.node(node_index{i}))) / static_cast<double>(w);
            CHECK(std::abs(static_cast<double>(next.slots(node_index{i})) - share) < 3.0);
        }
        if (step > 0) {
            const auto plan = keyplace::partition_moves(s, next);
            CHECK(plan.moved >= plan.minimum);
            moved += plan.moved;
            least += least_moves(s, next);
        }
        s = next;
    }
    return static_cast<double>(moved) / static_cast<double>(least);
}

// FNV-1a 64 of a table's ids, rank by rank.
auto table_digest(const partitions& s) -> std::uint64_t {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto i : s.table()) {
        for (const char c : s.node(i).id + ",") {
            h ^= static_cast<unsigned char>(c);
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

}  // namespace

TEST_CASE("partitions: 8 partitions by hand, two nodes, a join and a leave", "[partitions]") {
    const auto two = partitions::build({{"a"}, {"b"}}, {.partitions = 8});
    // A fresh claim stripes: the largest deficit first, ties by node index.
    CHECK(column(two) == "a b a b a b a b");
    const auto three = two.with({"c"});
    // 8/3 = 2.67: a and b hold more than their floor 2, so they keep the ceilings (3, 3, 2); each
    // gives its highest-numbered partition (6 and 7) to c.
    CHECK(column(three) == "a b a b a b c c");
    const auto plan = keyplace::partition_moves(two, three);
    CHECK(plan.moved == 2);
    CHECK(plan.minimum == 2);
    CHECK(plan.owner_changes == 2);
    REQUIRE(plan.changes.size() == 2);
    CHECK(plan.changes[0].partition == 6);
    CHECK(plan.changes[0].leaves == std::vector<std::string>{"a"});
    CHECK(plan.changes[0].joins == std::vector<std::string>{"c"});
    CHECK(plan.changes[1].partition == 7);
    CHECK(plan.changes[1].leaves == std::vector<std::string>{"b"});
    // a leaves: b and c each want 4; vacancies 0, 2, 4 in order go to the furthest under quota
    // (c: 2 short), then the tie b/c by index (b), then c.
    const auto left = three.without("a");
    CHECK(column(left) == "c b b b c b c c");
    CHECK(keyplace::partition_moves(three, left).moved == 3);
    // Doubling c's weight: shares 2.67 and 5.33; b holds more than its floor, so it keeps the
    // ceiling (3) and c gets 5: b gives its highest-numbered partition, 5.
    const auto heavy = left.reweighted("c", 2.0);
    CHECK(column(heavy) == "c b b b c c c c");
    CHECK(keyplace::partition_moves(left, heavy).moved == 1);
    // The original values are unchanged.
    CHECK(column(two) == "a b a b a b a b");
    CHECK(column(three) == "a b a b a b c c");
}

TEST_CASE("partitions: 200 random joins, leaves and weight changes keep quotas and move exactly the minimum",
          "[partitions]") {
    std::mt19937_64 gen(20240611);
    int next_id = 0;
    auto s = partitions::build(make_nodes(5, "n-"), {.partitions = 1024});
    check_table(s);
    std::size_t moved_total = 0;
    for (int step = 0; step < 200; ++step) {
        const auto next = random_step(s, gen, next_id, [](std::mt19937_64&) { return keyplace::location{}; });
        INFO("step " << step << ", " << next.size() << " nodes");
        check_table(next);
        const auto plan = keyplace::partition_moves(s, next);
        const std::size_t least = least_moves(s, next);
        CHECK(plan.moved == least);
        CHECK(plan.minimum == least);
        CHECK(plan.owner_changes == plan.moved);  // n = 1: a moved partition changes owner
        // Exact movement over the regions: the moved fraction is the moved partitions over Q, and
        // keys leave only nodes over quota, for nodes under it.
        const auto m = keyplace::movement(s, next);
        CHECK(m.exact);
        CHECK(std::abs(m.moved - static_cast<double>(least) / 1024.0) < 1e-12);
        CHECK(std::abs(m.moved - m.minimum) < 1e-12);
        const auto before = slots_by_id(s);
        const auto after = slots_by_id(next);
        for (const auto& f : m.flows) {
            const std::uint64_t had = before.count(f.id) != 0 ? before.at(f.id) : 0;
            const std::uint64_t has = after.count(f.id) != 0 ? after.at(f.id) : 0;
            INFO("node " << f.id);
            CHECK((f.outflow == 0 || had > has));
            CHECK((f.inflow == 0 || has > had));
        }
        moved_total += plan.moved;
        s = next;
    }
    CHECK(moved_total > 0);
}


TEST_CASE("partitions: 3 replicas through a random history, over nodes and over racks", "[partitions]") {
    // Measured moved / minimum (the swaps that keep replicas apart), seeds 1 to 20: over nodes
    // 1.002 .. 1.008 (1.006 at seed 7), over racks 1.017 .. 1.050 (1.032 at seed 7). Bounds:
    // about twice the largest excess.
    const double over_nodes = replica_history(keyplace::failure_domain::node, 7);
    const double over_racks = replica_history(keyplace::failure_domain::rack, 7);
    INFO("moved / minimum: " << over_nodes << " over nodes, " << over_racks << " over racks");
    CHECK(over_nodes <= 1.02);
    CHECK(over_racks <= 1.12);
}

TEST_CASE("partitions: the same history gives the same table, whatever the input order", "[partitions]") {
    auto nodes = make_nodes(7);
    nodes[2].weight = 3;
    auto reversed = nodes;
    std::reverse(reversed.begin(), reversed.end());
    const partitions_config config{.partitions = 512, .replicas = 2};
    const auto run = [&](const std::vector<node>& input) {
        return partitions::build(input, config).with({"x", 2.0}).without("node-4").reweighted("node-1", 4.0);
    };
    const auto a = run(nodes);
    const auto b = run(reversed);
    CHECK(a.table() == b.table());
    CHECK(a.nodes().size() == b.nodes().size());
    const auto fresh = partitions::build(a.nodes(), config);
    CHECK(fresh.table() != a.table());  // the table is the state: a history is not a fresh build
    check_table(fresh);
}

TEST_CASE("partitions: from_table carries a table and derives as the original does", "[partitions]") {
    const partitions_config config{.partitions = 128, .replicas = 3};
    const auto s = partitions::build(make_nodes(6), config).with({"node-9", 2.0}).without("node-0");
    const auto copy = partitions::from_table(s.nodes(), config, s.table());
    CHECK(copy.table() == s.table());
    CHECK(copy.config() == s.config());
    for (const auto p : random_points(1000, 3)) {
        CHECK(copy.pick(p) == s.pick(p));
        CHECK(first_n(copy, p, 3) == first_n(s, p, 3));
    }
    CHECK(copy.with({"node-7"}).table() == s.with({"node-7"}).table());
    // An explicit table that is off quota is accepted, and the next derivation restores quotas.
    std::vector<node_index> lopsided(128, node_index{0});
    const auto one = partitions::from_table(make_nodes(3), {.partitions = 128}, lopsided);
    CHECK(one.slots(node_index{0}) == 128);
    const auto fixed = one.reweighted("node-1", 1.0);
    check_table(fixed);
    CHECK(keyplace::partition_moves(one, fixed).moved == 85);  // 128 - 43
    // off_quota() names the first node off quota: node 0 holds 128 where 128 / 3 gives it 43.
    const auto gap = one.off_quota();
    REQUIRE(gap.has_value());
    CHECK(gap->node == node_index{0});
    CHECK_FALSE(gap->owners);
    CHECK(gap->held == 128);
    CHECK(gap->quota == 43);
    // Ranks swapped in one partition: the same slot counts, but a node at its owner ceiling now
    // owns one partition more (25.6 owners a node here: 25 or 26).
    const auto two = partitions::build(make_nodes(5), {.partitions = 128, .replicas = 2});
    REQUIRE_FALSE(two.off_quota().has_value());
    std::vector<std::uint32_t> owned(5, 0);
    for (std::uint32_t p = 0; p < 128; ++p) {
        ++owned[two.owner(p, 0).value];
    }
    auto table = two.table();
    for (std::uint32_t p = 0; p < 128; ++p) {
        if (owned[table[p * 2 + 1].value] == 26) {
            std::swap(table[p * 2], table[p * 2 + 1]);
            break;
        }
    }
    const auto swapped = partitions::from_table(two.nodes(), two.config(), table);
    const auto owners_gap = swapped.off_quota();
    REQUIRE(owners_gap.has_value());
    CHECK(owners_gap->owners);
    CHECK(owners_gap->held != owners_gap->quota);
}

TEST_CASE("partitions: from_table refuses a bad table, naming the partition", "[partitions]") {
    const auto nodes = make_nodes(3);
    const partitions_config config{.partitions = 4, .replicas = 2};
    const auto check = [&](const std::vector<std::uint32_t>& raw, const std::string& message) {
        std::vector<node_index> table;
        for (const auto v : raw) {
            table.push_back(node_index{v});
        }
        keyplace::error_info err;
        CHECK_FALSE(partitions::try_from_table(nodes, config, table, err).has_value());
        CHECK(err == keyplace::errc::invalid_partition_table);
        CHECK(err.message() == message);
        expect_error([&] { return partitions::from_table(nodes, config, table); }, keyplace::errc::invalid_partition_table,
                     message);
    };
    check({0, 1, 1, 2, 2, 0}, "the table has 6 entries; 4 partitions x 2 replicas need 8");
    check({0, 1, 1, 2, 2, 3, 0, 1}, "partition 2 rank 1 names node index 3; there are 3 nodes");
    check({0, 1, 1, 2, 2, 0, 1, 1}, "partition 3 rank 1 names 'node-1', already at rank 0");
    keyplace::error_info err;
    CHECK(keyplace::make_error_code(keyplace::errc::invalid_partition_table).message() == "invalid partition table");
    CHECK(keyplace::make_error_code(keyplace::errc::invalid_partition_count).message() == "invalid partition count");
    const std::vector<node_index> good{node_index{0}, node_index{1}, node_index{1}, node_index{2},
                                       node_index{2}, node_index{0}, node_index{1}, node_index{0}};
    CHECK(partitions::try_from_table(nodes, config, good, err).has_value());
    CHECK_FALSE(err);
}

TEST_CASE("partitions: the partition count is a power of two from 1 to 2^20", "[partitions]") {
    const auto nodes = make_nodes(3);
    for (const std::uint32_t bad : {0U, 3U, 1000U, (1U << 20) + 1, 1U << 21}) {
        keyplace::error_info err;
        CHECK_FALSE(partitions::try_build(nodes, {.partitions = bad}, err).has_value());
        CHECK(err == keyplace::errc::invalid_partition_count);
        const std::string message = bad == 0 || bad > keyplace::max_partitions
                                        ? "partition count " + std::to_string(bad) + " is outside 1..1048576"
                                        : "partition count " + std::to_string(bad) + " is not a power of two";
        CHECK(err.message() == message);
        expect_error([&] { return partitions::build(nodes, {.partitions = bad}); }, keyplace::errc::invalid_partition_count,
                     message);
    }
    const auto one = partitions::build(nodes, {.partitions = 1});
    CHECK(one.partition(0) == 0);
    CHECK(one.partition(~std::uint64_t{0}) == 0);
    CHECK(one.holders() == 1);
    CHECK(keyplace::ownership(one).share[one.pick(0).value] == 1.0);
    const auto big = partitions::build(nodes, {.partitions = keyplace::max_partitions});
    CHECK(big.partition(~std::uint64_t{0}) == keyplace::max_partitions - 1);
    CHECK(big.partition(std::uint64_t{1} << 44) == 1);
    CHECK(big.partition((std::uint64_t{1} << 44) - 1) == 0);
    check_table(big);
}

TEST_CASE("partitions: bad replicas, spread, weights and derivations leave the value unchanged", "[partitions]") {
    const auto nodes = make_nodes(3);
    const auto s = partitions::build(nodes, {.partitions = 16, .replicas = 3});
    const auto before = s.table();
    const auto refused = [](auto&& f, keyplace::errc code, const std::string& message) {
        expect_error(f, code, message);
    };
    refused([&] { return partitions::build(nodes, {.replicas = 0}); }, keyplace::errc::invalid_replica_count,
            "replica count 0 is outside 1..64");
    refused([&] { return partitions::build(nodes, {.replicas = 65}); }, keyplace::errc::invalid_replica_count,
            "replica count 65 is outside 1..64");
    refused([&] { return partitions::build(nodes, {.replicas = 4}); }, keyplace::errc::invalid_replica_count,
            "replica count 4 is more than the 3 nodes");
    refused([&] { return s.without("node-1"); }, keyplace::errc::invalid_replica_count,
            "replica count 3 is more than the 2 nodes");
    refused([&] { return partitions::build(nodes, {.spread = keyplace::failure_domain::rack}); },
            keyplace::errc::missing_location, "node 'node-0' has no rack; spreading over racks needs every node's");
    refused([&] { return partitions::build(nodes, {.spread = static_cast<keyplace::failure_domain>(9)}); },
            keyplace::errc::invalid_argument, "unknown failure-domain level 9");
    refused([&] { return s.reweighted("ghost", 2.0); }, keyplace::errc::unknown_id, "node id 'ghost' is not a member");
    refused([&] { return s.reweighted("node-2", 0.0); }, keyplace::errc::invalid_weight,
            "node 'node-2': weight 0 is not finite and > 0");
    refused([&] { return s.reweighted("node-2", 1e-9); }, keyplace::errc::invalid_weight,
            "node 'node-2': weight 1e-09 is below the weight resolution, 2^-16");
    refused([&] { return s.with({"node-1"}); }, keyplace::errc::duplicate_id, "node id 'node-1' is already a member");
    refused([&] { return s.with({"x", std::nan("")}); }, keyplace::errc::invalid_weight, "is not finite and > 0");
    std::vector<node> huge;
    for (int i = 0; i < 4096; ++i) {
        huge.push_back({"h" + std::to_string(i), 68719476736.0});  // 2^36 each: 2^48 in all
    }
    refused([&] { return partitions::build(huge); }, keyplace::errc::invalid_weight, "the node weights sum to 2^48 or more");
    keyplace::error_info err;
    CHECK_FALSE(s.try_reweighted("node-2", -1.0, err).has_value());
    CHECK(err == keyplace::errc::invalid_weight);
    CHECK(err.message() == "node 'node-2': weight -1 is not finite and > 0");
    CHECK(s.table() == before);
    CHECK(s.size() == 3);
    const auto other = partitions::build(nodes, {.partitions = 32, .replicas = 3});
    refused([&] { return keyplace::partition_moves(s, other); }, keyplace::errc::invalid_argument,
            "tables of 16x3 and 32x3 slots cannot be compared");
}

TEST_CASE("partitions: a weight above W / n is capped at one slot a partition", "[partitions]") {
    // Weights 10, 1, 1, 1 and 2 replicas: 10/13 of 2Q is more than Q, so the heavy node holds
    // every partition once and the others share the other Q slots equally.
    const auto s = partitions::build({{"big", 10.0}, {"a"}, {"b"}, {"c"}}, {.partitions = 64, .replicas = 2});
    check_table(s);
    CHECK(s.slots(*s.find("big")) == 64);
    CHECK(s.slots(*s.find("a")) + s.slots(*s.find("b")) + s.slots(*s.find("c")) == 64);
    CHECK(s.slots(*s.find("a")) >= 21);
    CHECK(s.slots(*s.find("a")) <= 22);
}

TEST_CASE("partitions: keys follow the partitions, 2 * 10^5 keys", "[partitions]") {
    auto nodes = make_nodes(10);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].weight = static_cast<double>(1 + i % 4);
    }
    const auto s = partitions::build(nodes, {.partitions = 1024}).without("node-3").with({"node-11", 3.0});
    const auto points = key_points(200'000);
    const auto counts = load(s, points);
    const auto exact = keyplace::ownership(s);
    CHECK(exact.method == keyplace::share_method::exact);
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        const double share = static_cast<double>(s.slots(node_index{i})) / 1024.0;
        CHECK(exact.share[i] == share);  // exact: a partition is 2^54 points
        const double got = static_cast<double>(counts[i]) / static_cast<double>(points.size());
        INFO("node " << s.node(node_index{i}).id << ": " << got << " of keys, share " << share);
        CHECK(std::abs(got - share) <= 5 * sigma(share, points.size()));
    }
    // Replicas: pick_n lists the partition's replicas in rank order.
    const auto r = partitions::build(nodes, {.partitions = 1024, .replicas = 3});
    std::vector<node_index> out(5);
    for (const auto p : random_points(500, 9)) {
        REQUIRE(r.pick_n(p, out) == 5);
        for (std::uint32_t k = 0; k < 3; ++k) {
            CHECK(out[k] == r.owner(r.partition(p), k));
        }
        CHECK(out[0] == r.pick(p));
    }
}

TEST_CASE("partitions: transitioned makes several changes with one claim, moving exactly the minimum",
          "[partitions]") {
    std::mt19937_64 gen(20261201);
    int next_id = 100;
    auto s = partitions::build(make_nodes(8, "n-"), {.partitions = 1024});
    CHECK(keyplace::partition_moves(s, s.transitioned(s.nodes())).moved == 0);  // the same members: nothing
    for (int step = 0; step < 100; ++step) {
        // Up to two leaves, two joins and two weight changes at once.
        std::vector<node> members(s.nodes().begin(), s.nodes().end());
        for (std::uint64_t k = gen() % 3; k > 0 && members.size() > 2; --k) {
            members.erase(members.begin() + static_cast<std::ptrdiff_t>(gen() % members.size()));
        }
        for (std::uint64_t k = gen() % 3; k > 0; --k) {
            members[gen() % members.size()].weight = static_cast<double>(1 + gen() % 4);
        }
        for (std::uint64_t k = gen() % 3; k > 0; --k) {
            members.push_back(node{"n" + std::to_string(next_id++), static_cast<double>(1 + gen() % 4)});
        }
        const auto next = s.transitioned(members);
        INFO("step " << step << ", " << next.size() << " nodes");
        check_table(next);
        const auto plan = keyplace::partition_moves(s, next);
        CHECK(plan.moved == least_moves(s, next));
        // Exactly the minimum over the keys too: a leaver's partition goes straight to a joiner,
        // never through a third node.
        const auto m = keyplace::movement(s, next);
        CHECK(std::abs(m.moved - m.minimum) < 1e-12);
        s = next;
    }
    // Refusals leave the value as it was.
    keyplace::error_info err;
    CHECK_FALSE(s.try_transitioned(std::vector<node>{}, err).has_value());
    CHECK(err.code() == keyplace::errc::empty_membership);
    const std::vector<node> twice{node{"x"}, node{"x"}};
    CHECK_FALSE(s.try_transitioned(twice, err).has_value());
    CHECK(err.code() == keyplace::errc::duplicate_id);
    check_table(s);
}

TEST_CASE("partitions: contract 1 claims as before contract 2 existed", "[partitions]") {
    // Digests of a history over zones printed by keyplace 0.2.0 before contract 2 (commit 6c11435,
    // whose only claim this was): contract 1 must reproduce them bit for bit.
    std::vector<node> nodes;
    for (int i = 0; i < 12; ++i) {
        nodes.push_back({"n" + std::to_string(i), 1.0 + (i % 3),
                         {"r", "z" + std::to_string(i % 3 == 0 ? 0 : i % 4), "k" + std::to_string(i % 5)}});
    }
    auto t = partitions::build(nodes, {.partitions = 256, .replicas = 3, .spread = keyplace::failure_domain::zone,
                                       .contract = 1});
    CHECK(table_digest(t) == 0x429c6debcde66973ULL);
    CHECK(t.crowded() == 16);
    t = t.with({"j0", 2.0, {"r", "z1", "k9"}});
    CHECK(table_digest(t) == 0xf87dbbcbf181a87dULL);
    t = t.without("n4");
    CHECK(table_digest(t) == 0x401b7cfd48ea7a1dULL);
    t = t.reweighted("n7", 4.0);
    CHECK(table_digest(t) == 0x1e698606aa6312f4ULL);
}

TEST_CASE("partitions: contract 2, a zone with half the weight holds at most two replicas of a partition",
          "[partitions]") {
    // Zones a (4 nodes), b and c (2 each), weight 1: a's slots are 3 * 256 / 2 = 384, so 128
    // partitions at least hold two replicas in a (384 - 256), and ceil(384 / 256) = 2 is a's
    // limit, b's and c's ceil(192 / 256) = 1.
    std::vector<node> nodes;
    for (int i = 0; i < 8; ++i) {
        const std::string z = i < 4 ? "a" : i < 6 ? "b" : "c";
        nodes.push_back({z + std::to_string(i), 1.0, {"r", z, "k" + std::to_string(i)}});
    }
    const partitions_config two{.partitions = 256, .replicas = 3, .spread = keyplace::failure_domain::zone};
    const auto t = partitions::build(nodes, two);
    CHECK(t.overcrowded() == 0);
    CHECK(zone_limit_breaches(t) == 0);
    CHECK(t.crowded() == 128);  // the least possible
    // Contract 1 (README, Limitations before contract 2): 64 partitions with all three in a.
    auto one = two;
    one.contract = 1;
    const auto t1 = partitions::build(nodes, one);
    CHECK(t1.overcrowded() == 64);
    CHECK(zone_limit_breaches(t1) == 64);
    // 2 * 10^5 keys: a key's copies (its partition's replicas, pick_n) never hold more than a
    // zone's limit; the table fixes this for every key, so no statistical bound is needed.
    std::vector<node_index> out(3);
    const std::map<std::string, std::size_t> limit{{"a", 2}, {"b", 1}, {"c", 1}};
    std::size_t breaches = 0;
    for (std::uint64_t k = 0; k < 200000; ++k) {
        REQUIRE(t.pick_n(keyplace::xxh3{}("key-" + std::to_string(k)), out) == 3);
        std::map<std::string, std::size_t> in;
        for (const auto i : out) {
            ++in[t.node(i).where.zone];
        }
        for (const auto& [z, c] : in) {
            breaches += c > limit.at(z) ? 1U : 0U;
        }
    }
    CHECK(breaches == 0);
}

TEST_CASE("partitions: contract 2 through a random history over zones keeps every limit and quota",
          "[partitions]") {
    // Moved / minimum is above 1 where a change lowers a domain's limit (the replicas above it
    // move off) and where a swap keeps a limit: measured 1.07 to 1.15 over seeds 1 to 10
    // (1.08 at seed 9); bound about twice the largest excess.
    const double ratio = zone_history(9);
    INFO("moved / minimum: " << ratio);
    CHECK(ratio <= 1.3);
}

TEST_CASE("partitions: the contract is 1 or 2, and a bad one is refused by value", "[partitions]") {
    const auto nodes = make_nodes(4);
    for (const std::uint32_t c : {0U, 3U}) {
        INFO("contract " << c);
        keyplace::error_info err;
        CHECK_FALSE(partitions::try_build(nodes, {.partitions = 16, .contract = c}, err).has_value());
        CHECK(err.code() == keyplace::errc::invalid_argument);
        CHECK(err.message() == "partitions implements contract 1 to 2, not " + std::to_string(c));
    }
    // With spread node the two contracts claim the same table.
    const auto a = partitions::build(nodes, {.partitions = 64, .replicas = 2, .contract = 1});
    const auto b = partitions::build(nodes, {.partitions = 64, .replicas = 2, .contract = 2});
    CHECK(a.table() == b.table());
}
