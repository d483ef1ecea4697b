// Tests of strategy_table.hpp: every row is a strategy a snapshot builds, with its defaults; every
// parameter's range and kind is refused at the location the table names; per-node data goes only
// to the rows that take it; and the document reader and the C++ builder refuse each semantic
// error the same way (one check, two entry forms).
#include "keyplace_catch.hpp"

#include <keyplace/detail/splitmix.hpp>
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/strategy_table.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace table_test {

using keyplace::errc;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
using keyplace::strategy_table;

/// A description the row's strategy builds: three nodes with the per-node data it takes.
auto buildable(const keyplace::strategy_row& row) -> snapshot_description {
    snapshot_description d;
    d.cluster = "table";
    d.strategy.name = std::string(row.name);
    for (int i = 0; i < 3; ++i) {
        snapshot_node n{"10.0.0." + std::to_string(i + 1) + ":11211"};
        n.where = {"eu", "z" + std::to_string(i), "r1"};
        if (row.per_node == keyplace::node_data::tokens) {
            n.tokens = {std::int64_t{-4000000000000000000} + i * std::int64_t{3000000000000000000}};
        } else if (row.per_node == keyplace::node_data::points) {
            n.points = {std::uint64_t{1} << 60 | static_cast<std::uint64_t>(i) << 62};
        }
        d.nodes.push_back(std::move(n));
    }
    if (row.name == "maglev" || row.name == "envoy-maglev") {
        d.strategy.params["table-size"] = std::uint64_t{1009};  // a fast build; the default is tested below
    }
    return d;
}

/// A JSON document of a description (the library's own writer).
auto document(const snapshot_description& d) -> std::string { return keyplace::write_description_json(d); }

/// The reader refuses text as the builder refuses d: the same code, and the message is the
/// builder's where() and message.
void same_refusal(const snapshot_description& d, errc code, const std::string& where) {
    keyplace::error_info built;
    CHECK_FALSE(snapshot::try_build(d, built).has_value());
    CHECK(built.code() == code);
    CHECK(built.where() == where);
    INFO(built.message());
    keyplace::error_info read;
    CHECK_FALSE(keyplace::read_description_json(document(d), read).has_value());
    CHECK(read.code() == code);
    CHECK(read.message() == where + ": " + built.message());
}

}  // namespace table_test

using namespace table_test;

TEST_CASE("strategy table: every row builds a snapshot with its defaults filled in") {
    std::set<std::string_view> names;
    for (const auto& row : strategy_table) {
        INFO(row.name);
        CHECK(names.insert(row.name).second);  // one row per name
        CHECK(keyplace::find_strategy(row.name) == &row);
        const auto d = buildable(row);
        keyplace::error_info err;
        const auto s = snapshot::try_build(d, err);
        REQUIRE(s.has_value());
        // Every parameter of the row is listed, a default where the description left it out,
        // but an implicit default (partitions' contract: 1, what a document stating none means).
        std::size_t implicit = 0;
        for (const auto& p : row.params) {
            const auto it = s->strategy().params.find(p.name);
            if (p.implicit_default) {
                ++implicit;
                CHECK(it == s->strategy().params.end());
                continue;
            }
            REQUIRE(it != s->strategy().params.end());
            if (d.strategy.params.contains(p.name)) {
                continue;
            }
            if (p.kind == keyplace::param_kind::number) {
                CHECK(std::get<std::uint64_t>(it->second) == p.number_default);
            } else if (p.kind == keyplace::param_kind::name) {
                CHECK(std::get<std::string>(it->second) == p.name_default);
            } else {
                CHECK(std::get<std::vector<std::uint64_t>>(it->second).empty());
            }
        }
        CHECK(s->strategy().params.size() == row.params.size() - implicit);
        // Copies beyond the owner exactly where the row states a preference order.
        auto replicated = d;
        replicated.replication.count = 2;
        CHECK(snapshot::try_build(replicated, err).has_value() == row.preference_order);
        // Node order is part of the function exactly where the row says so: the same nodes in
        // another order give another fingerprint only then (a fact of these three nodes, whose
        // as-given strategies all number or rank them by position).
        auto reversed = d;
        std::swap(reversed.nodes.front(), reversed.nodes.back());
        const auto r = snapshot::try_build(reversed, err);
        REQUIRE(r.has_value());
        if (row.order == keyplace::node_order::by_id) {
            CHECK(r->fingerprint() == s->fingerprint());
        }
    }
    CHECK(names.size() == 22);  // 18 before jumpback, anchor, memento and mpchash
    CHECK(keyplace::find_strategy("consistent") == nullptr);
}

TEST_CASE("strategy table: a range-checked parameter is refused just outside its range, at its location") {
    std::size_t checked = 0;
    for (const auto& row : strategy_table) {
        for (const auto& p : row.params) {
            if (p.kind != keyplace::param_kind::number || !p.range_checked) {
                continue;
            }
            INFO(row.name << " " << p.name);
            for (const std::uint64_t bad : {p.min - 1, p.max + 1}) {
                auto d = buildable(row);
                d.strategy.params[std::string(p.name)] = bad;
                same_refusal(d, p.range_error, "strategy.params." + std::string(p.name));
                keyplace::error_info err;
                (void)snapshot::try_build(d, err);
                // A strategy's own contract names the ones it implements.
                CHECK(err.message() == (p.name == "contract" ? std::string(row.name) + " implements contract " +
                                                                   std::to_string(p.min) + " to " +
                                                                   std::to_string(p.max) + ", not " +
                                                                   std::to_string(bad)
                                                             : std::string(p.noun) + " " + std::to_string(bad) +
                                                                   " is outside " + std::to_string(p.min) + ".." +
                                                                   std::to_string(p.max)));
            }
            ++checked;
        }
    }
    CHECK(checked == 7);  // ring's vnodes, multiprobe's and mpchash's probes, partitions' Q, n and contract, anchor's capacity
}

TEST_CASE("strategy table: unknown names, contracts, parameters and kinds, once for both entry forms") {
    auto d = buildable(*keyplace::find_strategy("ring"));
    d.strategy.name = "consistent";
    same_refusal(d, errc::unknown_strategy, "strategy.name");
    d = buildable(*keyplace::find_strategy("ring"));
    d.strategy.contract = 2;
    same_refusal(d, errc::unknown_strategy, "strategy.contract");
    d.strategy.contract = 1;
    d.strategy.params["vnode"] = std::uint64_t{4};
    same_refusal(d, errc::unknown_strategy, "strategy.params.vnode");
    keyplace::error_info err;
    (void)snapshot::try_build(d, err);
    CHECK(err.message() == "strategy 'ring' has no parameter 'vnode' (it takes vnodes)");
    d = buildable(*keyplace::find_strategy("rendezvous"));
    d.strategy.params["vnodes"] = std::uint64_t{4};
    (void)snapshot::try_build(d, err);
    CHECK(err.message() == "strategy 'rendezvous' has no parameter 'vnodes' (it takes none)");
    d = buildable(*keyplace::find_strategy("ring"));
    d.strategy.params["vnodes"] = std::string("many");
    same_refusal(d, errc::unknown_strategy, "strategy.params.vnodes");
    d = buildable(*keyplace::find_strategy("partitions"));
    d.strategy.params["spread"] = std::string("shelf");
    same_refusal(d, errc::unknown_strategy, "strategy.params.spread");
    (void)snapshot::try_build(d, err);
    CHECK(err.message() == "parameter 'spread' of 'partitions': 'shelf' is not one of node, rack, zone, region");
    d.strategy.params["spread"] = std::uint64_t{2};
    same_refusal(d, errc::unknown_strategy, "strategy.params.spread");
    // A parameter name that is not a plain key is shown as the reader's paths show it.
    d = buildable(*keyplace::find_strategy("ring"));
    d.strategy.params["v nodes"] = std::uint64_t{4};
    same_refusal(d, errc::unknown_strategy, "strategy.params['v nodes']");
}

TEST_CASE("strategy table: per-node data goes only to the rows that take it") {
    std::size_t refused = 0;
    for (const auto& row : strategy_table) {
        for (const auto data : {keyplace::node_data::tokens, keyplace::node_data::slots, keyplace::node_data::points,
                                keyplace::node_data::partition_spans}) {
            if (data == row.per_node) {
                continue;
            }
            INFO(row.name << " " << keyplace::to_string(data));
            auto d = buildable(row);
            auto& n = d.nodes[1];
            switch (data) {
                case keyplace::node_data::tokens: n.tokens = {5}; break;
                case keyplace::node_data::slots: n.slots = {{0, 10}}; break;
                case keyplace::node_data::points: n.points = {5}; break;
                default: n.partitions = {{0, 0, 0}}; break;
            }
            same_refusal(d, errc::invalid_argument, "nodes[1]." + std::string(keyplace::to_string(data)));
            ++refused;
        }
    }
    CHECK(refused == std::size(strategy_table) * 4 - 4);  // one row takes each kind of data
    // Also a tombstone's: a left node keeps its id, never data its strategy does not read.
    auto d = buildable(*keyplace::find_strategy("ring"));
    d.nodes.push_back({"gone"});
    d.nodes.back().state = keyplace::node_state::left;
    d.nodes.back().tokens = {1};
    same_refusal(d, errc::invalid_argument, "nodes[3].tokens");
}

TEST_CASE("strategy table: whole weights where the row needs them") {
    for (const auto& row : strategy_table) {
        INFO(row.name);
        auto d = buildable(row);
        d.nodes[2].weight = 1.5;
        keyplace::error_info err;
        const bool built = snapshot::try_build(d, err).has_value();
        if (row.whole_weights) {
            CHECK_FALSE(built);
            same_refusal(d, errc::invalid_weight, "nodes[2].weight");
        } else if (!built) {
            // Other rows that refuse 1.5 do so in their engine's words (jump's buckets), after the
            // document reads; the engine names the node.
            CHECK(err.where() == "nodes[2]");
        }
    }
}

// The compatibility rings (ketama and its dialects) once built their nodes from addresses and
// weights alone, so a snapshot spreading their copies over zones refused nodes that had zones.
TEST_CASE("strategy table: every row with a preference order spreads its copies over zones") {
    for (const auto& row : strategy_table) {
        if (!row.preference_order) {
            continue;
        }
        INFO(row.name);
        auto d = buildable(row);
        d.replication.count = 3;
        d.replication.spread = keyplace::failure_domain::zone;
        keyplace::error_info err;
        const auto s = snapshot::try_build(d, err);
        REQUIRE(s.has_value());
        INFO(err.message());
        std::size_t short_of_zones = 0;
        for (int i = 0; i < 1000; ++i) {
            const auto copies = s->write_set("key:" + std::to_string(i));
            std::set<std::string> zones;
            for (const auto* n : copies) {
                zones.insert(n->where.zone);
            }
            short_of_zones += copies.size() == 3 && zones.size() == 3 ? 0 : 1;
        }
        CHECK(short_of_zones == 0);
    }
}

TEST_CASE("strategy table: partitions' contract is left out at 1 and kept at 2") {
    const auto* row = keyplace::find_strategy("partitions");
    REQUIRE(row != nullptr);
    auto d = buildable(*row);
    const auto none = snapshot::build(d);
    d.strategy.params["contract"] = std::uint64_t{1};
    const auto one = snapshot::build(d);
    // Stated 1 is the document that states none: the same parameters, the same fingerprint.
    CHECK_FALSE(one.strategy().params.contains("contract"));
    CHECK(one.fingerprint() == none.fingerprint());
    d.strategy.params["contract"] = std::uint64_t{2};
    const auto two = snapshot::build(d);
    CHECK(std::get<std::uint64_t>(two.strategy().params.at("contract")) == 2);
    CHECK(two.fingerprint() != none.fingerprint());
    CHECK(std::get<keyplace::partitions>(two.current().strategy()).config().contract == 2);
    CHECK(std::get<keyplace::partitions>(none.current().strategy()).config().contract == 1);
}

// ---- every row keeps the placement contract, derived from the table -----------------------------
// A strategy that enters the table is tested here without a line of its own: each row is built
// through a snapshot (its defaults, eight nodes of weight 1 with the per-node data it takes), and
// 10^5 keys are placed now, with a node joining and with one leaving.

namespace table_contract {

using keyplace::node_state;
using keyplace::strategy_row;

constexpr std::size_t node_count = 8;
constexpr std::size_t key_count = 100000;

/// Node i of a row: id n<i>, weight 1, and eight tokens or points from SplitMix64 where it takes them.
auto member(const strategy_row& row, std::size_t i, node_state state = node_state::active) -> snapshot_node {
    snapshot_node n{"n" + std::to_string(i)};
    n.state = state;
    std::uint64_t rng = 0x5eed0000 + i;
    for (int t = 0; t < 8; ++t) {
        const std::uint64_t v = keyplace::detail::splitmix64(rng);
        if (row.per_node == keyplace::node_data::tokens) {
            n.tokens.push_back(static_cast<std::int64_t>(v));
        } else if (row.per_node == keyplace::node_data::points) {
            n.points.push_back(v);
        }
    }
    return n;
}

/// The row with its defaults, except that a table of fixed capacity (AnchorHash) has room for
/// twice the nodes, so that a node can join.
auto described(const strategy_row& row, std::vector<snapshot_node> nodes) -> snapshot_description {
    snapshot_description d;
    d.cluster = "table";
    d.strategy.name = std::string(row.name);
    if (row.param("capacity") != nullptr) {
        d.strategy.params["capacity"] = std::uint64_t{2 * node_count};
    }
    d.nodes = std::move(nodes);
    return d;
}

/// How many keys two owner lists place differently.
auto differences(const std::vector<std::string>& a, const std::vector<std::string>& b) -> std::size_t {
    std::size_t out = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        out += a[i] != b[i] ? 1 : 0;
    }
    return out;
}

auto key(std::size_t i) -> std::string { return "key:" + std::to_string(i); }

/// The id of each key's owner in a placement of s.
auto owner_ids(const snapshot& s, const keyplace::placement& p) -> std::vector<std::string> {
    std::vector<std::string> out(key_count);
    for (std::size_t i = 0; i < key_count; ++i) {
        out[i] = s.nodes()[p.strategy_owner(key(i))].id;
    }
    return out;
}

}  // namespace table_contract

// A join moves keys only to the joiner and a leave only the leaver's keys, for the rows that
// promise it (strategy_row::minimal_change: the placement contract of each, doc/contract.md, "Guarantees");
// every row gives the joiner keys and takes all of them from the leaver.
// Balance bound: each node's share of 10^5 keys lies within a quarter and four times the fair
// 1/8. The loosest rows are the rings of eight random tokens a node (Cassandra's, the chosen
// points'), whose shares are Gamma(8)/8-distributed: a share below a quarter of the mean has
// probability about 10^-3 per node, above four times about 10^-8; the key sampling noise
// (0.1% of a share) does not count beside that. The test is deterministic (fixed seeds).
TEST_CASE("strategy table: every row, built through a snapshot, keeps the placement contract", "[table][conformance]") {
    using namespace table_contract;
    for (const auto& row : strategy_table) {
        INFO(row.name);
        std::vector<snapshot_node> nodes;
        for (std::size_t i = 0; i < node_count; ++i) {
            nodes.push_back(member(row, i));
        }
        const auto s = snapshot::build(described(row, nodes));
        const auto now = owner_ids(s, s.current());

        // Deterministic: a second build, the same fingerprint and owners.
        const auto again = snapshot::build(described(row, nodes));
        CHECK(again.fingerprint() == s.fingerprint());
        CHECK(differences(owner_ids(again, again.current()), now) == 0);

        // Every node owns keys, within the balance bound.
        std::map<std::string, std::size_t> held;
        for (const auto& id : now) {
            ++held[id];
        }
        CHECK(held.size() == node_count);
        for (const auto& [id, count] : held) {
            INFO(id << " holds " << count);
            CHECK(count * 4 * node_count >= key_count);
            CHECK(count * node_count <= 4 * key_count);
        }

        // Node order is part of the function only where the row says so.
        if (row.order == keyplace::node_order::by_id) {
            auto reversed = nodes;
            std::reverse(reversed.begin(), reversed.end());
            const auto r = snapshot::build(described(row, reversed));
            CHECK(differences(owner_ids(r, r.current()), now) == 0);
        }

        // A join, in the next epoch: the placement now is unchanged; after it, keys move to the
        // joiner (only to it where the row promises minimal change).
        auto joined = s.successor();
        joined.nodes.push_back(member(row, node_count, node_state::joining));
        const auto j = snapshot::build(joined);
        CHECK(differences(owner_ids(j, j.current()), now) == 0);
        const auto after_join = owner_ids(j, j.pending());
        std::size_t to_joiner = 0;
        std::size_t elsewhere = 0;
        for (std::size_t i = 0; i < key_count; ++i) {
            if (after_join[i] != now[i]) {
                (after_join[i] == joined.nodes.back().id ? to_joiner : elsewhere) += 1;
            }
        }
        CHECK(to_joiner > 0);
        if (row.minimal_change) {
            CHECK(elsewhere == 0);
        }

        // A leave (jump's kind, which only grows and shrinks at its end, loses its last node).
        const std::size_t leaver = row.derives == keyplace::derivation::append_only ? node_count - 1 : 3;
        auto left = s.successor();
        for (auto& n : left.nodes) {
            n.state = n.id == nodes[leaver].id ? node_state::leaving : n.state;
        }
        const auto l = snapshot::build(left);
        CHECK(differences(owner_ids(l, l.current()), now) == 0);
        const auto after_leave = owner_ids(l, l.pending());
        std::size_t others_moved = 0;
        std::size_t still_on_leaver = 0;
        for (std::size_t i = 0; i < key_count; ++i) {
            still_on_leaver += after_leave[i] == nodes[leaver].id ? 1 : 0;
            others_moved += after_leave[i] != now[i] && now[i] != nodes[leaver].id ? 1 : 0;
        }
        CHECK(still_on_leaver == 0);
        if (row.minimal_change) {
            CHECK(others_moved == 0);
        }
    }
}
