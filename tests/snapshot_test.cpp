// Tests of snapshot.hpp, shadow.hpp and transfer_plan.hpp: what the fingerprint does and does not
// depend on, write sets during a transition, every bad description, the successor rules, shadow
// compare against analysis's exact figures, and transfer plans against exact movement.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/mpchash.hpp>
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using keyplace::errc;
using keyplace::node_state;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
using namespace keyplace_test;

namespace {

auto nodes_of(std::size_t n, const std::string& prefix = "n") -> std::vector<snapshot_node> {
    std::vector<snapshot_node> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back({prefix + std::to_string(i), "10.0.0." + std::to_string(i) + ":11211"});
    }
    return out;
}

auto description(const std::string& strategy, std::size_t n) -> snapshot_description {
    snapshot_description d;
    d.cluster = "cache-eu-1";
    d.epoch = 7;
    d.parent_epoch = 6;
    d.strategy.name = strategy;
    d.nodes = nodes_of(n);
    if (strategy == "cassandra") {
        for (std::size_t i = 0; i < n; ++i) {
            d.nodes[i].tokens = {static_cast<std::int64_t>(i * 1000003) - 4000000000000000000LL,
                                 static_cast<std::int64_t>(i * 7919) + 2000000000000000000LL};
        }
    }
    return d;
}

auto fp(const snapshot_description& d) -> std::string { return snapshot::build(d).fingerprint().hex(); }

// Strategies that take plain nodes (no tokens, no slots), with whole weights.
const std::vector<std::string> plain_strategies = {"ring",         "rendezvous", "jump",     "jump-guava",
                                                   "maglev",       "modulo",     "envoy-ring", "envoy-maglev",
                                                   "ketama",       "ketama-spy", "ketama-unweighted",
                                                   "libketama",    "hash-ring",  "redis"};

auto shared(const snapshot_description& d) -> std::shared_ptr<const snapshot> {
    return std::make_shared<const snapshot>(snapshot::build(d));
}

}  // namespace

TEST_CASE("snapshot: the built description lists every parameter and the stated digests", "[snapshot]") {
    const auto s = snapshot::build(description("envoy-ring", 3));
    CHECK(s.strategy().params.size() == 3);
    CHECK(std::get<std::uint64_t>(s.strategy().params.at("min-ring-size")) == 1024);
    CHECK(std::get<std::string>(s.strategy().params.at("hash")) == "xxh64");
    const auto d = s.describe();
    REQUIRE(d.fingerprint);
    CHECK(*d.fingerprint == s.fingerprint());
    // Rebuilt from what it describes, with the digests stated, it is the same snapshot.
    const auto again = snapshot::build(d);
    CHECK(again.fingerprint() == s.fingerprint());
    CHECK(again.describe() == d);
    CHECK(s.verify());
    CHECK(keyplace::digest128::from_hex(s.fingerprint().hex()) == s.fingerprint());
    CHECK_FALSE(keyplace::digest128::from_hex("xyz"));
    CHECK_FALSE(keyplace::digest128::from_hex(std::string(31, '0') + "g"));
}

TEST_CASE("snapshot: fingerprints do not depend on input order where nodes are sorted or carry their own tokens",
          "[snapshot]") {
    std::mt19937 gen(12);
    for (const auto* strategy : {"ring", "rendezvous", "maglev", "modulo", "envoy-ring", "envoy-maglev", "redis",
                                 "cassandra", "hash-ring", "ketama"}) {
        auto d = description(strategy, 12);
        const auto want = snapshot::build(d);
        for (int round = 0; round < 3; ++round) {
            std::shuffle(d.nodes.begin(), d.nodes.end(), gen);
            const auto s = snapshot::build(d);
            CHECK(s.fingerprint() == want.fingerprint());
            CHECK(s.probe_digest() == want.probe_digest());
        }
    }
    // Jump numbers buckets in the order given: the order is part of the function.
    auto j = description("jump", 5);
    const auto before = fp(j);
    std::swap(j.nodes[0], j.nodes[4]);
    CHECK(fp(j) != before);
}

TEST_CASE("snapshot: any change that changes an owner changes the fingerprint, addresses and metadata do not",
          "[snapshot]") {
    for (const auto& strategy : plain_strategies) {
        INFO(strategy);
        const auto base = description(strategy, 6);
        const auto want = fp(base);
        auto d = base;
        d.nodes[2].id = "n2x";  // an id
        CHECK(fp(d) != want);
        d = base;
        d.nodes.push_back({"n6"});  // a node
        CHECK(fp(d) != want);
        d = base;
        d.nodes[5].state = node_state::joining;  // a state (owns only after)
        CHECK(fp(d) != want);
        d = base;
        d.nodes[5].state = node_state::leaving;  // a state (owns only now)
        CHECK(fp(d) != want);
        d = base;
        d.nodes[1].address = "192.168.9.9:1";  // never hashed
        d.metadata = {1767225600000, "ops", "moved a rack"};
        d.epoch = 99;
        d.parent_epoch = 42;
        d.cluster = "cache-us-2";
        CHECK(fp(d) == want);
        // Not listing a default parameter is the same function as listing it.
        d = base;
        d.strategy.params = snapshot::build(base).strategy().params;
        CHECK(fp(d) == want);
    }
    // Weights where the strategy takes them.
    for (const auto* strategy : {"ring", "rendezvous", "maglev", "envoy-ring", "envoy-maglev", "ketama", "libketama"}) {
        INFO(strategy);
        auto d = description(strategy, 6);
        const auto want = fp(d);
        d.nodes[3].weight = 2;
        CHECK(fp(d) != want);
    }
    // Parameters.
    auto d = description("ring", 6);
    const auto ring_fp = fp(d);
    d.strategy.params["vnodes"] = std::uint64_t{161};
    CHECK(fp(d) != ring_fp);
    d = description("maglev", 6);
    const auto maglev_fp = fp(d);
    d.strategy.params["table-size"] = std::uint64_t{65519};
    CHECK(fp(d) != maglev_fp);
    d = description("ketama-unweighted", 6);
    const auto oaat = fp(d);
    d.strategy.params["hash"] = std::string("md5-ketama");
    CHECK(fp(d) != oaat);
    d = description("ring", 6);
    d.replication = {3, keyplace::failure_domain::node};
    CHECK(fp(d) != ring_fp);
    d.replication = {1, keyplace::failure_domain::zone};  // one owner, however it is written
    CHECK(fp(d) == ring_fp);
    CHECK(snapshot::build(d).replication() == keyplace::replication_spec{});
    // The same nodes under another strategy.
    CHECK(fp(description("ketama", 6)) != fp(description("libketama", 6)));
    // A left tombstone owns nothing: adding one changes no owner and no digest.
    d = description("ring", 6);
    d.nodes.push_back({"gone", "", 1, {}, node_state::left});
    CHECK(fp(d) == ring_fp);
}

TEST_CASE("snapshot: current and pending follow the states, and the write set is their union", "[snapshot]") {
    auto d = description("ring", 5);
    d.nodes[3].state = node_state::joining;
    d.nodes[4].state = node_state::leaving;
    const auto s = snapshot::build(d);
    REQUIRE(s.in_transition());
    CHECK(s.current().size() == 4);  // n0 n1 n2 n4
    CHECK(s.pending().size() == 4);  // n0 n1 n2 n3
    const auto now = keyplace::ring::build({{"n0"}, {"n1"}, {"n2"}, {"n4"}});
    const auto after = keyplace::ring::build({{"n0"}, {"n1"}, {"n2"}, {"n3"}});
    std::size_t doubled = 0;
    std::vector<std::uint32_t> out(2);
    for (std::size_t i = 0; i < 100000; ++i) {
        const std::string key = "key-" + std::to_string(i);
        const auto& o = s.owner(key);
        const auto& n = s.next_owner(key);
        REQUIRE(o.id == keyplace::locate(now, key).id);
        REQUIRE(n.id == keyplace::locate(after, key).id);
        const std::size_t w = s.write_set(key, out);
        REQUIRE(s.nodes()[out[0]].id == o.id);
        REQUIRE(w == (o.id == n.id ? 1U : 2U));
        if (w == 2) {
            REQUIRE(s.nodes()[out[1]].id == n.id);
            ++doubled;
        }
        CHECK(o.state != node_state::joining);
        CHECK(n.state != node_state::leaving);
    }
    // The keys with two destinations are those that move: the joiner's gain plus the leaver's
    // loss, exactly analysis's movement between the two rings (within 5 sigma of 10^5 keys).
    const double moved = keyplace::movement(now, after).moved;
    CHECK(std::abs(static_cast<double>(doubled) / 1e5 - moved) < 5 * std::sqrt(moved * (1 - moved) / 1e5));
    // Outside a transition the write set is the owner.
    const auto stable = snapshot::build(description("ring", 5));
    CHECK_FALSE(stable.in_transition());
    CHECK(&stable.current() == &stable.pending());
    CHECK(stable.write_set("user:42").size() == 1);
}

TEST_CASE("snapshot: with replication the write set holds every copy now and after", "[snapshot]") {
    auto d = description("ring", 6);
    for (std::size_t i = 0; i < d.nodes.size(); ++i) {
        d.nodes[i].where = {"eu", "z" + std::to_string(i % 3), ""};
    }
    d.replication = {2, keyplace::failure_domain::zone};
    d.nodes[5].state = node_state::joining;
    const auto s = snapshot::build(d);
    std::vector<std::uint32_t> now(2);
    std::vector<std::uint32_t> after(2);
    std::vector<std::uint32_t> ws(4);
    for (std::size_t i = 0; i < 20000; ++i) {
        const std::string key = "key-" + std::to_string(i);
        REQUIRE(s.current().copies(s.current().point_of(key), now) == 2);
        REQUIRE(s.pending().copies(s.pending().point_of(key), after) == 2);
        CHECK(s.nodes()[now[0]].where.zone != s.nodes()[now[1]].where.zone);
        const std::size_t w = s.write_set(key, ws);
        std::set<std::uint32_t> want(now.begin(), now.end());
        want.insert(after.begin(), after.end());
        REQUIRE(std::set<std::uint32_t>(ws.begin(), ws.begin() + static_cast<std::ptrdiff_t>(w)) == want);
        CHECK(ws[0] == now[0]);
    }
}

TEST_CASE("snapshot: every bad description is refused with the value named", "[snapshot][errors]") {
    const auto base = description("ring", 3);
    const auto refuse = [](const snapshot_description& d, errc code, const std::string& fragment) {
        keyplace::error_info err;
        CHECK_FALSE(snapshot::try_build(d, err));
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
        expect_error([&] { return snapshot::build(d); }, code, fragment);
    };
    auto d = base;
    d.format = "keyplace.snapshot/2";
    refuse(d, errc::invalid_document, "format 'keyplace.snapshot/2'");
    d.format = "keyplace.snapshot/1.x";
    refuse(d, errc::invalid_document, "format 'keyplace.snapshot/1.x'");
    d.format = "keyplace.snapshot/1.3";  // a newer minor of the same major is read
    CHECK(snapshot::build(d).fingerprint().hex() == fp(base));
    d = base;
    d.cluster = "";
    refuse(d, errc::invalid_document, "cluster ''");
    d.cluster = std::string(256, 'c');
    refuse(d, errc::invalid_document, "is 256 bytes, not 1 to 255");
    d = base;
    d.epoch = 0;
    d.parent_epoch = 0;
    refuse(d, errc::invalid_document, "epoch 0");
    d = base;
    d.parent_epoch = 7;
    refuse(d, errc::invalid_document, "parent_epoch 7 is not below epoch 7");
    d = base;
    d.strategy.name = "consistent";
    refuse(d, errc::unknown_strategy, "strategy 'consistent' is not one of ring, rendezvous");
    d = base;
    d.strategy.contract = 2;
    refuse(d, errc::unknown_strategy, "at contract 2");
    d = base;
    d.strategy.params["vnode"] = std::uint64_t{10};
    refuse(d, errc::unknown_strategy, "has no parameter 'vnode'");
    d = base;
    d.strategy.params["vnodes"] = std::string("many");
    refuse(d, errc::unknown_strategy, "'many' is not a number");
    d = base;
    d.strategy.params["vnodes"] = std::uint64_t{0};
    refuse(d, errc::invalid_vnodes, "vnodes 0");
    d.strategy.params["vnodes"] = std::uint64_t{1} << 40;
    refuse(d, errc::invalid_vnodes, "vnodes 1099511627776");
    d = description("envoy-ring", 3);
    d.strategy.params["hash"] = std::string("md5");
    refuse(d, errc::unknown_strategy, "'md5' is not one of xxh64, murmur2-envoy");
    d.strategy.params["hash"] = std::uint64_t{5};
    refuse(d, errc::unknown_strategy, "5 is not a name");
    d = description("maglev", 3);
    d.strategy.params["table-size"] = std::uint64_t{65536};
    refuse(d, errc::table_size_not_prime, "65536");
    d = base;
    d.nodes[1].tokens = {5};
    refuse(d, errc::invalid_argument, "node 'n1': tokens apply only to strategy 'cassandra'");
    d = base;
    d.nodes[1].slots = {{0, 5}};
    refuse(d, errc::invalid_argument, "node 'n1': slots apply only to strategy 'redis'");
    d = base;
    d.nodes[2].id = "n0";
    d.nodes[2].state = node_state::left;  // a tombstone keeps its id: no one else may use it
    refuse(d, errc::duplicate_id, "node id 'n0' is also the id of nodes[0]");
    d = base;
    d.nodes[0].id = "";
    refuse(d, errc::empty_id, "node id is empty");
    d = base;
    d.nodes[0].weight = -1;
    refuse(d, errc::invalid_weight, "node 'n0': weight -1");
    d = base;
    d.nodes[0].weight = std::numeric_limits<double>::quiet_NaN();
    refuse(d, errc::invalid_weight, "weight nan");
    d = base;
    d.nodes[0].state = static_cast<node_state>(9);
    refuse(d, errc::invalid_state, "state 9");
    d = base;
    for (auto& n : d.nodes) {
        n.state = node_state::joining;
    }
    refuse(d, errc::no_owner, "no node owns keys now");
    for (auto& n : d.nodes) {
        n.state = node_state::leaving;
    }
    refuse(d, errc::no_owner, "no node owns keys after the transition");
    d = description("ketama", 3);
    d.nodes[1].weight = 1.5;
    refuse(d, errc::invalid_weight, "node 'n1': weight 1.5 is not a whole number");
    d = description("jump", 3);
    d.nodes[1].weight = 2;
    refuse(d, errc::invalid_weight, "jump places every node with weight 1");
    d = description("redis", 3);
    d.replication = {2, keyplace::failure_domain::node};
    refuse(d, errc::invalid_argument, "strategy 'redis' has no preference order: replication 2");
    d = base;
    d.replication = {4, keyplace::failure_domain::node};
    refuse(d, errc::invalid_replica_count, "4");
    d.replication = {65, keyplace::failure_domain::node};
    refuse(d, errc::invalid_replica_count, "replication count 65 is above 64");
    d = description("redis", 2);
    d.nodes[0].slots = {{0, 9000}};
    d.nodes[1].slots = {{9000, 16383}};
    refuse(d, errc::slot_overlap, "slot 9000");
    d = description("cassandra", 2);
    d.nodes[1].tokens = d.nodes[0].tokens;
    refuse(d, errc::duplicate_token, "");
    // Stated digests that differ from the computed ones.
    d = snapshot::build(base).describe();
    auto wrong = *d.fingerprint;
    wrong.low ^= 1;
    d.fingerprint = wrong;
    refuse(d, errc::fingerprint_mismatch, "the document states fingerprint " + wrong.hex());
    d = snapshot::build(base).describe();
    auto wrong_probe = *d.probe;
    wrong_probe.high ^= 1;
    d.probe = wrong_probe;
    refuse(d, errc::fingerprint_mismatch, "the document states probe digest " + wrong_probe.hex());
}

TEST_CASE("snapshot: check_successor refuses another cluster, an old epoch, a split brain and a returning tombstone",
          "[snapshot][errors]") {
    auto d = description("ring", 4);
    d.nodes[3].state = node_state::left;
    const auto cur = snapshot::build(d);
    CHECK_FALSE(keyplace::check_successor(cur, snapshot::build(cur.successor())));
    CHECK_FALSE(keyplace::check_successor(cur, cur));  // the same snapshot again: not an error

    auto other = cur.successor();
    other.cluster = "cache-us-2";
    auto e = keyplace::check_successor(cur, snapshot::build(other));
    CHECK(e.code() == errc::wrong_cluster);
    CHECK_THAT(e.message(), Catch::Matchers::Contains("'cache-us-2'") && Catch::Matchers::Contains("'cache-eu-1'"));

    auto old = d;
    old.epoch = 6;
    old.parent_epoch = 5;
    e = keyplace::check_successor(cur, snapshot::build(old));
    CHECK(e.code() == errc::stale_epoch);
    CHECK_THAT(e.message(), Catch::Matchers::Contains("epoch 6 is not newer than the current epoch 7"));

    auto brain = d;
    brain.nodes.push_back({"n9"});
    const auto split = snapshot::build(brain);
    e = keyplace::check_successor(cur, split);
    CHECK(e.code() == errc::split_brain);
    CHECK_THAT(e.message(), Catch::Matchers::Contains(split.fingerprint().hex()) &&
                                Catch::Matchers::Contains(cur.fingerprint().hex()));

    auto back = cur.successor();
    back.nodes[3].state = node_state::joining;
    e = keyplace::check_successor(cur, snapshot::build(back));
    CHECK(e.code() == errc::invalid_state);
    CHECK_THAT(e.message(), Catch::Matchers::Contains("node 'n3' left at epoch 7 and may not return as joining"));
}

TEST_CASE("shadow: a join reports analysis's exact movement within sampling error", "[snapshot][shadow]") {
    // 4 -> 5 nodes; 10^6 keys sampled at 20%: ~2x10^5 sampled keys. The tolerance is four binomial
    // standard deviations at the exact expected rate (about 0.0037 here) plus one key.
    const auto before = shared(description("ring", 4));
    auto next = before->successor();
    next.nodes.push_back({"n4"});
    const auto after = shared(next);
    keyplace::shadow_compare cmp(before, after, {.sample_per_million = 200'000});
    for (std::size_t i = 0; i < 1'000'000; ++i) {
        cmp.observe("key-" + std::to_string(i), 1 + i % 4);
    }
    const auto r = cmp.report();
    const auto exact = keyplace::movement(std::get<keyplace::ring>(before->current().strategy()),
                                          std::get<keyplace::ring>(after->current().strategy()));
    REQUIRE(exact.exact);
    CHECK(r.expected_exact);
    CHECK(r.expected_moved == exact.moved);
    CHECK(r.minimum == exact.minimum);
    CHECK(r.requests_seen == 2'500'000);  // (1 + 2 + 3 + 4) / 4 per key
    CHECK(std::abs(static_cast<double>(r.keys_sampled) - 2e5) < 5 * std::sqrt(1e6 * 0.2 * 0.8));
    CHECK(std::abs(r.moved_fraction - exact.moved) <= r.tolerance);
    CHECK(r.as_predicted);
    CHECK(r.survivor_keys_moved == 0);
    CHECK(r.verdict == keyplace::shadow_verdict::minimal);
    // Every move is to the joiner, and the flows add up.
    std::uint64_t keys = 0;
    for (const auto& f : r.flows) {
        CHECK(f.to == "n4");
        keys += f.keys;
    }
    CHECK(keys == r.keys_moved);
    // The same keys sampled in another process: the sample is a function of the key alone.
    keyplace::shadow_compare again(before, after, {.sample_per_million = 200'000});
    for (std::size_t i = 0; i < 1000; ++i) {
        const std::string key = "key-" + std::to_string(i);
        CHECK(again.sampled(key) == cmp.sampled(key));
    }
    CHECK(r.to_text().find("verdict          minimal") != std::string::npos);
    CHECK(r.to_json().find("\"verdict\":\"minimal\"") != std::string::npos);
}

TEST_CASE("shadow: a changed key hash or point derivation is flagged as a remap", "[snapshot][shadow]") {
    const auto before = shared(description("ring", 10));
    // A rollout that switched the ring to another derivation (Python hash_ring's MD5 points and
    // keys) over the same ids: the placement is unrelated, about 1 - 1/10 of keys move.
    auto changed = before->successor();
    changed.strategy = {.name = "hash-ring"};
    const auto after = shared(changed);
    keyplace::shadow_compare cmp(before, after);
    for (std::size_t i = 0; i < 5'000'000; ++i) {
        cmp.observe("key-" + std::to_string(i));
    }
    const auto r = cmp.report();
    CHECK(r.keys_sampled > 40000);
    CHECK(r.moved_fraction > 0.85);
    CHECK(r.minimum < 0.1);
    CHECK(r.verdict == keyplace::shadow_verdict::remap);
    CHECK_FALSE(r.expected_exact);
    CHECK(r.as_predicted);
    // Renaming every node remaps too, under the same strategy.
    auto renamed = before->successor();
    for (auto& n : renamed.nodes) {
        n.id += "-v2";
    }
    keyplace::shadow_compare ids(before, shared(renamed), {.sample_per_million = 100'000});
    for (std::size_t i = 0; i < 500'000; ++i) {
        ids.observe("key-" + std::to_string(i));
    }
    CHECK(ids.report().verdict == keyplace::shadow_verdict::remap);
}

TEST_CASE("shadow: modulo is a remap, Maglev's small disruption is excess", "[snapshot][shadow]") {
    const auto mod = shared(description("modulo", 3));
    auto mod4 = mod->successor();
    mod4.nodes.push_back({"n3"});
    keyplace::shadow_compare m(mod, shared(mod4), {.sample_per_million = 100'000});
    const auto maglev = shared(description("maglev", 10));
    auto maglev11 = maglev->successor();
    maglev11.nodes.push_back({"n10"});
    keyplace::shadow_compare g(maglev, shared(maglev11), {.sample_per_million = 1'000'000});
    for (std::size_t i = 0; i < 1'000'000; ++i) {
        const std::string key = "key-" + std::to_string(i);
        m.observe(key);
        g.observe(key);
    }
    const auto rm = m.report();
    CHECK(std::abs(rm.expected_moved - 0.75) < 1e-12);  // 9 of 12 residues modulo lcm(3, 4)
    CHECK(rm.verdict == keyplace::shadow_verdict::remap);
    const auto rg = g.report();
    CHECK(rg.expected_exact);
    CHECK(rg.expected_survivor > 0);
    CHECK(rg.survivor_keys_moved > 0);
    CHECK(rg.verdict == keyplace::shadow_verdict::excess);
    CHECK(rg.as_predicted);
}

TEST_CASE("shadow: accumulators merge as one, and bad options are refused", "[snapshot][shadow][errors]") {
    const auto before = shared(description("ring", 4));
    auto next = before->successor();
    next.nodes.push_back({"n4"});
    const auto after = shared(next);
    keyplace::shadow_compare one(before, after, {.sample_per_million = 500'000});
    keyplace::shadow_compare a(before, after, {.sample_per_million = 500'000});
    keyplace::shadow_compare b(before, after, {.sample_per_million = 500'000});
    for (std::size_t i = 0; i < 20000; ++i) {
        const std::string key = "key-" + std::to_string(i % 15000);  // some keys twice
        one.observe(key, 2);
        (i % 2 == 0 ? a : b).observe(key, 2);
    }
    a.merge(b);
    const auto ra = a.report();
    const auto ro = one.report();
    CHECK(ra.keys_sampled == ro.keys_sampled);
    CHECK(ra.keys_moved == ro.keys_moved);
    CHECK(ra.requests_moved == ro.requests_moved);
    CHECK(ra.requests_seen == 40000);
    CHECK(ra.flows.size() == ro.flows.size());
    keyplace::shadow_compare few(before, after);
    few.observe("key-1");
    CHECK(few.report().verdict == keyplace::shadow_verdict::insufficient);
    expect_error([&] { return keyplace::shadow_compare(before, after, {.sample_per_million = 1'000'001}); },
                 errc::invalid_argument, "sample_per_million 1000001 is above 1000000");
    expect_error([&] { return keyplace::shadow_compare(nullptr, after); }, errc::invalid_argument, "two snapshots");
    keyplace::shadow_compare elsewhere(after, before);
    expect_error([&] {
        a.merge(elsewhere);
        return 0;
    }, errc::invalid_argument, "other snapshots");
}

TEST_CASE("plan: the changed ranges sum to analysis's exact movement, sorted and disjoint", "[snapshot][plan]") {
    for (const auto* strategy : {"ring", "maglev", "modulo", "redis", "cassandra", "hash-ring", "ketama",
                                 "envoy-ring", "envoy-maglev"}) {
        INFO(strategy);
        auto d = description(strategy, 5);
        const auto before = snapshot::build(d);
        auto next = before.successor();
        next.nodes.erase(next.nodes.begin() + 2);  // n2 leaves
        next.nodes.push_back({"n9", "10.0.0.9:11211"});
        if (std::string(strategy) == "cassandra") {
            next.nodes.back().tokens = {17, 1'000'000'000'000'000'000LL};
        }
        const auto after = snapshot::build(next);
        const auto plan = keyplace::plan_transfer(before, after);
        REQUIRE(plan.exact);
        const double exact = keyplace::detail::snapshot_movement(before, after).moved;
        CHECK(std::abs(plan.moved - exact) < 1e-9);
        double sum = 0;
        for (std::size_t i = 0; i < plan.ranges.size(); ++i) {
            const auto& r = plan.ranges[i];
            sum += r.fraction;
            CHECK_FALSE(r.gaining.empty());
            CHECK(r.copies.size() == r.gaining.size());
            for (const auto& c : r.copies) {
                CHECK(std::find(r.before.begin(), r.before.end(), c.from) != r.before.end());
            }
            if (i > 0) {
                const auto& p = plan.ranges[i - 1];
                if (plan.space == keyplace::plan_space::tokens) {
                    CHECK(static_cast<std::int64_t>(p.last) < static_cast<std::int64_t>(r.first));
                } else {
                    CHECK(p.last < r.first);
                }
            }
        }
        CHECK(std::abs(sum - plan.moved) < 1e-9);
        double totals = 0;
        for (const auto& t : plan.totals) {
            totals += t.fraction;
        }
        CHECK(std::abs(totals - plan.moved) < 1e-9);
    }
    // Rendezvous has no ranges: sampled, and said so.
    const auto before = snapshot::build(description("rendezvous", 4));
    auto next = before.successor();
    next.nodes.push_back({"n4"});
    const auto plan = keyplace::plan_transfer(before, snapshot::build(next));
    CHECK_FALSE(plan.exact);
    CHECK(plan.space == keyplace::plan_space::sampled);
    CHECK(plan.ranges.empty());
    CHECK(std::abs(plan.moved - 0.2) < 4 * std::sqrt(0.2 * 0.8 / 131072.0));  // the joiner's 1/5
    CHECK(plan.to_text().find("sampled") != std::string::npos);
}

namespace transition_test {
/// A stable epoch of n nodes of strategy (param = value), and its successor in which node "n<n>" joins.
auto stable_and_joining(const std::string& strategy, std::size_t n, const std::string& param, std::uint64_t value)
    -> std::pair<snapshot, snapshot> {
    auto d = description(strategy, n);
    d.strategy.params[param] = value;
    auto stable = snapshot::build(d);
    auto next = stable.successor();
    next.nodes.push_back({"n" + std::to_string(n), "", 1, {}, node_state::joining});
    return {std::move(stable), snapshot::build(next)};
}
}  // namespace transition_test

TEST_CASE("transition: a joining epoch moves nothing now and prepares the joiner's share, completion finishes it",
          "[snapshot][plan][transition]") {
    const auto [stable, joining] = transition_test::stable_and_joining("ring", 4, "vnodes", 32);
    // The trap: against the epoch before, nothing moves (a joining node owns nothing yet).
    CHECK(keyplace::detail::snapshot_movement(stable, joining).moved == 0);
    // What the transition prepares: exactly n4's share of its pending ring (the ring moves the
    // minimum: every key n4 takes comes from another node, and no other key moves).
    const auto prepared = keyplace::transition_movement(joining);
    CHECK(prepared.exact);
    const auto& pending = std::get<keyplace::ring>(joining.pending().strategy());
    const auto share = keyplace::ownership(pending).share;
    std::size_t n4 = 0;
    while (pending.node(keyplace::node_index{static_cast<std::uint32_t>(n4)}).id != "n4") {
        ++n4;
    }
    CHECK(std::fabs(prepared.moved - (share[n4])) < 1e-12);
    CHECK(std::fabs(prepared.moved - (prepared.minimum)) < 1e-12);
    CHECK(prepared.violations == 0);
    // completion(): the next epoch, every joining node active, placing keys as pending() does.
    const auto done_d = keyplace::completion(joining);
    CHECK(done_d.epoch == joining.epoch() + 1);
    CHECK(done_d.parent_epoch == joining.epoch());
    CHECK(std::all_of(done_d.nodes.begin(), done_d.nodes.end(),
                      [](const snapshot_node& n) { return n.state == node_state::active; }));
    const auto done = snapshot::build(done_d);
    CHECK_FALSE(done.in_transition());
    for (int i = 0; i < 2000; ++i) {
        const std::string key = "user:" + std::to_string(i);
        CHECK(done.owner(key).id == joining.nodes()[joining.pending().owner(key)].id);
    }
    CHECK(std::fabs(keyplace::detail::snapshot_movement(stable, done).moved - (prepared.moved)) < 1e-12);
    // A stable epoch prepares nothing; a leaving node's epoch prepares its share, and completes to left.
    CHECK(keyplace::transition_movement(stable).moved == 0);
    auto leave = stable.successor();
    leave.nodes[1].state = node_state::leaving;
    const auto leaving = snapshot::build(leave);
    const auto& now = std::get<keyplace::ring>(leaving.current().strategy());
    CHECK(std::fabs(keyplace::transition_movement(leaving).moved - (keyplace::ownership(now).share[1])) < 1e-12);
    CHECK(keyplace::completion(leaving).nodes[1].state == node_state::left);
}

TEST_CASE("transition: a partition table's joining epoch prepares the claimed slots' movement", "[snapshot][transition]") {
    const auto [stable, joining] = transition_test::stable_and_joining("partitions", 3, "partitions", 256);
    CHECK(keyplace::detail::snapshot_movement(stable, joining).moved == 0);
    const auto prepared = keyplace::transition_movement(joining);
    const auto done = snapshot::build(keyplace::completion(joining));
    // The completed epoch carries the pending table: the same movement measured both ways,
    // and the partitions the joiner claims (64 of 256: a quarter, the minimum) are what moves.
    CHECK(std::fabs(prepared.moved - (keyplace::detail::snapshot_movement(stable, done).moved)) < 1e-12);
    CHECK(std::fabs(prepared.moved - (0.25)) < 1e-12);
}

TEST_CASE("plan: a ring join's ranges are the joiner's arcs, and replicas copy from the same zone",
          "[snapshot][plan]") {
    auto d = description("ring", 3);
    d.strategy.params["vnodes"] = std::uint64_t{8};
    const auto before = snapshot::build(d);
    auto next = before.successor();
    next.nodes.push_back({"n3"});
    const auto after = snapshot::build(next);
    const auto plan = keyplace::plan_transfer(before, after);
    const auto& ring = std::get<keyplace::ring>(after.current().strategy());
    // Each range ends at one of n3's points (its arcs, merged where adjacent) and only n3 gains.
    std::set<std::uint64_t> n3_points;
    for (std::size_t i = 0; i < ring.points().size(); ++i) {
        if (ring.node(ring.owners()[i]).id == "n3") {
            n3_points.insert(ring.points()[i]);
        }
    }
    for (const auto& r : plan.ranges) {
        CHECK(r.gaining == std::vector<std::string>{"n3"});
        CHECK(r.losing.size() == 1);
        CHECK((n3_points.count(r.last) == 1 || r.last == ~std::uint64_t{0}));
    }
    // The same as plan_transition over one snapshot with n3 joining.
    auto joining = d;
    joining.nodes.push_back({"n3", "", 1, {}, node_state::joining});
    const auto t = keyplace::plan_transition(snapshot::build(joining));
    REQUIRE(t.ranges.size() == plan.ranges.size());
    for (std::size_t i = 0; i < t.ranges.size(); ++i) {
        CHECK(t.ranges[i].first == plan.ranges[i].first);
        CHECK(t.ranges[i].last == plan.ranges[i].last);
        CHECK(t.ranges[i].copies == plan.ranges[i].copies);
    }
    // Replicas over zones: a new copy comes from a holder in the gaining node's zone when one
    // holds it.
    auto z = description("ring", 6);
    for (std::size_t i = 0; i < z.nodes.size(); ++i) {
        z.nodes[i].where = {"eu", "z" + std::to_string(i % 2), ""};
    }
    z.replication = {2, keyplace::failure_domain::zone};
    const auto zb = snapshot::build(z);
    auto zn = zb.successor();
    zn.nodes.push_back({"n6", "", 1, {"eu", "z0", ""}});
    const auto za = snapshot::build(zn);
    const auto zp = keyplace::plan_transfer(zb, za);
    REQUIRE_FALSE(zp.ranges.empty());
    for (const auto& r : zp.ranges) {
        for (const auto& c : r.copies) {
            CHECK(c.to == "n6");
            CHECK(za.find(c.from)->where.zone == "z0");  // one copy of every key is in z0
        }
    }
}

// ---- partition tables in snapshots ---------------------------------------------------------

namespace {
auto partition_description(std::size_t n, std::uint64_t q, std::uint64_t replicas) -> snapshot_description {
    auto d = description("partitions", n);
    d.strategy.params = {{"partitions", q}, {"replicas", replicas}};
    for (std::size_t i = 0; i < n; ++i) {
        d.nodes[i].where.rack = "r" + std::to_string(i % 3);
    }
    return d;
}

auto table_of(const keyplace::placement& p) -> std::vector<std::string> {
    const auto& t = std::get<keyplace::partitions>(p.strategy());
    std::vector<std::string> out;
    for (const auto i : t.table()) {
        out.push_back(t.node(i).id);
    }
    return out;
}
}  // namespace

TEST_CASE("snapshot: a partition table is state the snapshot carries, and a join derives the next one",
          "[snapshot][partitions]") {
    auto d = partition_description(4, 64, 2);
    const auto fresh = snapshot::build(d);
    // No node lists partitions: a fresh claim, the same as partitions::build of the nodes.
    std::vector<keyplace::node> plain;
    for (const auto& n : d.nodes) {
        plain.push_back({n.id, n.weight, n.where});
    }
    const auto direct = keyplace::partitions::build(plain, {64, 2, keyplace::failure_domain::node});
    std::vector<std::string> direct_ids;
    for (const auto i : direct.table()) {
        direct_ids.push_back(direct.node(i).id);
    }
    CHECK(table_of(fresh.current()) == direct_ids);
    CHECK(fresh.strategy().params.at("spread") == keyplace::strategy_param{std::string("node")});

    // successor() lists the table; building it gives the same placement and fingerprint.
    auto next = fresh.successor();
    std::size_t spans = 0;
    for (const auto& n : next.nodes) {
        spans += n.partitions.size();
        for (const auto& s : n.partitions) {
            CHECK(s.rank < 2);
        }
    }
    CHECK(spans > 0);
    const auto listed = snapshot::build(next);
    CHECK(listed.current().fingerprint() == fresh.current().fingerprint());
    CHECK(table_of(listed.current()) == direct_ids);

    // A join: pending() is the listed table with the joiner claimed in, as with() derives it.
    auto join = listed.successor();
    join.nodes.push_back({"n9", "10.0.0.9:11211", 1.0, {"", "", "r1"}, node_state::joining});
    const auto joining = snapshot::build(join);
    REQUIRE(joining.in_transition());
    const auto derived = direct.with(keyplace::node{"n9", 1.0, {"", "", "r1"}});
    std::vector<std::string> derived_ids;
    for (const auto i : derived.table()) {
        derived_ids.push_back(derived.node(i).id);
    }
    CHECK(table_of(joining.current()) == direct_ids);
    CHECK(table_of(joining.pending()) == derived_ids);
    // The transfer plan between the tables moves exactly the joiner's quota: 128 slots / 5 nodes.
    const auto plan = keyplace::partition_moves(std::get<keyplace::partitions>(joining.current().strategy()),
                                                std::get<keyplace::partitions>(joining.pending().strategy()));
    CHECK(plan.moved == plan.minimum);
    CHECK((plan.minimum == 25 || plan.minimum == 26));

    // Completing it: the successor lists pending()'s table, the joiner active holds it now.
    auto done = joining.successor();
    for (auto& n : done.nodes) {
        n.state = n.id == "n9" ? node_state::active : n.state;
    }
    const auto active = snapshot::build(done);
    CHECK_FALSE(active.in_transition());
    CHECK(table_of(active.current()) == derived_ids);
    CHECK(active.current().fingerprint() == joining.pending().fingerprint());
}

TEST_CASE("snapshot: every rank of the table is in the fingerprint", "[snapshot][partitions]") {
    // Two partitions, two replicas: the same owners, the rank-1 holders swapped. The regions
    // (owners only) cannot tell them apart; the fingerprint encodes every rank. (Four nodes, one
    // slot each and two owners: both tables are at their weights' quotas.)
    auto d = partition_description(4, 2, 2);
    d.nodes[0].partitions = {{0, 0, 0}};
    d.nodes[1].partitions = {{1, 1, 0}};
    d.nodes[2].partitions = {{0, 0, 1}};
    d.nodes[3].partitions = {{1, 1, 1}};
    auto e = d;
    e.nodes[2].partitions = {{1, 1, 1}};
    e.nodes[3].partitions = {{0, 0, 1}};
    const auto a = snapshot::build(d);
    const auto b = snapshot::build(e);
    CHECK(a.fingerprint() != b.fingerprint());
    CHECK(a.probe_digest() == b.probe_digest());
    CHECK(table_of(a.current()) == std::vector<std::string>{"n0", "n2", "n1", "n3"});
}

TEST_CASE("snapshot: a weight change in a partition table is refused by hand and claimed by successor(weights)",
          "[snapshot][partitions][errors]") {
    // 5 nodes, 128 partitions x 2: 256 slots, 51 or 52 a node.
    const auto s = snapshot::build(partition_description(5, 128, 2));
    const auto& before = std::get<keyplace::partitions>(s.current().strategy());
    const std::uint32_t had = before.slots(*before.find("n2"));
    REQUIRE((had == 51 || had == 52));
    // By hand (a document or a description): the listed table no longer fits the weights.
    auto edited = s.successor();
    edited.nodes[2].weight = 3.0;
    keyplace::error_info err;
    CHECK_FALSE(snapshot::try_build(edited, err).has_value());
    CHECK(err.code() == errc::invalid_partition_table);
    // Its quota is 256 * 3 / 7 = 109.7 slots, rounded either way.
    const std::string prefix = "node 'n2' holds " + std::to_string(had) + " partition slots where its weight 3 gives it ";
    CHECK((err.message().find(prefix + "109:") == 0 || err.message().find(prefix + "110:") == 0));
    CHECK_THROWS_AS(snapshot::build(edited), keyplace::error);

    // successor(weights) claims the table again, as partitions::reweighted does.
    const auto next = s.successor(std::vector<std::pair<std::string, double>>{{"n2", 3.0}});
    CHECK(next.nodes[2].weight == 3.0);
    const auto built = snapshot::build(next);
    CHECK_FALSE(built.in_transition());
    const auto& after = std::get<keyplace::partitions>(built.current().strategy());
    const auto direct = before.reweighted("n2", 3.0);
    CHECK(after.table() == direct.table());
    for (std::uint32_t i = 0; i < after.size(); ++i) {
        const std::uint32_t have = after.slots(keyplace::node_index{i});
        INFO(after.node(keyplace::node_index{i}).id << " holds " << have);
        if (after.node(keyplace::node_index{i}).id == "n2") {
            CHECK((have == 109 || have == 110));
        } else {
            CHECK((have == 36 || have == 37));  // 256 / 7 = 36.6
        }
    }
    const auto plan = keyplace::partition_moves(before, after);
    CHECK(plan.minimum == after.slots(*after.find("n2")) - had);
    // Every slot n2 gains is a copy made on it; a partition that holds n2 already takes it by a
    // swap (claim rules, "Spread": one move more), so moved may exceed the minimum.
    std::size_t to_n2 = 0;
    for (const auto& c : plan.changes) {
        to_n2 += static_cast<std::size_t>(std::count(c.joins.begin(), c.joins.end(), "n2"));
    }
    CHECK(to_n2 == plan.minimum);
    CHECK(plan.moved >= plan.minimum);
    CHECK(snapshot::build(built.successor()).current().fingerprint() == built.current().fingerprint());

    // Bad weights are refused by name and change nothing.
    const auto unchanged = s.successor();
    const auto refused = [&](std::vector<std::pair<std::string, double>> w, errc code, const std::string& fragment) {
        CHECK_FALSE(s.try_successor(w, err).has_value());
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
    };
    refused({{"zz", 2.0}}, errc::unknown_id, "node id 'zz' is not a node of the snapshot");
    refused({{"n1", 2.0}, {"n1", 3.0}}, errc::duplicate_id, "node id 'n1' is named twice");
    refused({{"n1", 0.0}}, errc::invalid_weight, "'n1'");
    refused({{"n1", std::numeric_limits<double>::quiet_NaN()}}, errc::invalid_weight, "'n1'");
    CHECK(s.successor() == unchanged);

    // Another strategy takes the weight as it is.
    const auto ring = snapshot::build(description("ring", 3));
    const auto r = snapshot::build(ring.successor(std::vector<std::pair<std::string, double>>{{"n1", 2.5}}));
    CHECK(r.find("n1")->weight == 2.5);
}

TEST_CASE("snapshot: bad partition tables are refused naming the partition", "[snapshot][partitions][errors]") {
    const auto s = snapshot::build(partition_description(3, 8, 1));
    const auto listed = s.successor();
    const auto fails = [](const snapshot_description& d, errc code, const std::string& fragment) {
        keyplace::error_info err;
        CHECK_FALSE(snapshot::try_build(d, err).has_value());
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
    };
    auto gap = listed;
    gap.nodes[0].partitions.clear();
    fails(gap, errc::invalid_partition_table, "is held by no node");
    auto twice = listed;
    twice.nodes[0].partitions.push_back(listed.nodes[1].partitions.front());
    fails(twice, errc::invalid_partition_table, "is held by both");
    auto outside = listed;
    outside.nodes[0].partitions.push_back({8, 9, 0});
    fails(outside, errc::invalid_partition_table, "are not within 0-7 at ranks 0-0");
    auto rank = listed;
    rank.nodes[0].partitions.push_back({0, 0, 1});
    fails(rank, errc::invalid_partition_table, "at ranks 0-0");
    auto joiner = listed;
    joiner.nodes.push_back({"j", "", 1.0, {}, node_state::joining, {}, {}, {{0, 0, 0}}});
    fails(joiner, errc::invalid_partition_table, "node 'j' is joining and so holds no partition now");
    auto ring = description("ring", 3);
    ring.nodes[0].partitions = {{0, 0, 0}};
    fails(ring, errc::invalid_argument, "partitions apply only to strategy 'partitions'");
    auto q = partition_description(3, 12, 1);
    fails(q, errc::invalid_partition_count, "12");
    // Values wider than the table's fields are refused before they are narrowed.
    fails(partition_description(3, (std::uint64_t{1} << 32) + 8, 1), errc::invalid_partition_count,
          "partition count 4294967304 is outside 1..1048576");
    fails(partition_description(3, 8, (std::uint64_t{1} << 32) + 1), errc::invalid_replica_count,
          "replica count 4294967297 is outside 1..64");
    fails(partition_description(3, 8, 4), errc::invalid_replica_count, "replica count 4 is more than the 3 nodes");
    auto spread = partition_description(3, 8, 1);
    spread.strategy.params["spread"] = std::string("shelf");
    fails(spread, errc::unknown_strategy, "'shelf' is not one of node, rack, zone, region");
    // The description built from is untouched by a failure.
    CHECK(snapshot::build(listed).fingerprint() == s.fingerprint());
}

TEST_CASE("snapshot: chosen tokens (strategy tokens) are carried as points and place as the token ring",
          "[snapshot][tokens]") {
    auto d = description("tokens", 3);
    d.nodes[0].points = {100, 9000000000000000000ULL};
    d.nodes[1].points = {5000000000000000000ULL};
    d.nodes[2].points = {15000000000000000000ULL};
    const auto s = snapshot::build(d);
    std::vector<keyplace::node> plain;
    std::vector<keyplace::ring_point<std::uint64_t>> pts;
    for (std::uint32_t i = 0; i < 3; ++i) {
        plain.push_back({d.nodes[i].id});
        for (const auto p : d.nodes[i].points) {
            pts.push_back({p, i});
        }
    }
    const auto ring = keyplace::compat::point_ring<std::uint64_t, keyplace::xxh3>::build(
        plain, keyplace::compat::given_points<std::uint64_t>(pts));
    for (const std::uint64_t p : {std::uint64_t{0}, std::uint64_t{100}, std::uint64_t{101}, std::uint64_t{5000000000000000000ULL},
                                  std::uint64_t{16000000000000000000ULL}}) {
        CHECK(s.current().member(s.current().pick(p)) == ring.pick(p).value);
    }
    // The points are placement: moving one changes the fingerprint.
    auto moved = d;
    moved.nodes[1].points = {5000000000000000001ULL};
    CHECK(fp(moved) != fp(d));
    auto wrong = description("ring", 2);
    wrong.nodes[0].points = {1};
    keyplace::error_info err;
    CHECK_FALSE(snapshot::try_build(wrong, err).has_value());
    CHECK(err.code() == errc::invalid_argument);
    CHECK_THAT(err.message(), Catch::Matchers::Contains("points apply only to strategy 'tokens'"));
    // A node that places keys lists its points (issue 35: a node without any was a member that
    // held nothing); no points at all is refused too.
    auto some = description("tokens", 2);
    some.nodes[0].points = {1};
    CHECK_FALSE(snapshot::try_build(some, err).has_value());
    CHECK(err.code() == errc::no_points);
    CHECK(err.message() == "node 'n1' has no tokens");
    CHECK_FALSE(snapshot::try_build(description("tokens", 2), err).has_value());
    CHECK(err.code() == errc::no_points);
}

// ---- overrides ------------------------------------------------------------------------------

namespace {

/// A key whose strategy owner (now) is not `id`, from "hot:0", "hot:1", ...
auto key_not_owned_by(const snapshot& s, const std::string& id) -> std::string {
    for (std::size_t i = 0;; ++i) {
        std::string key = "hot:" + std::to_string(i);
        if (s.nodes()[s.current().strategy_owner(key)].id != id) {
            return key;
        }
    }
}

}  // namespace

TEST_CASE("overrides: an overridden key goes to its node, every other key stays where the strategy puts it",
          "[snapshot][overrides]") {
    const auto plain = description("ring", 5);
    const auto base = snapshot::build(plain);
    const std::string hot = key_not_owned_by(base, "n3");
    auto d = plain;
    d.overrides = {{hot, "n3"}, {"user:celebrity", "n0"}};
    const auto s = snapshot::build(d);
    CHECK(s.owner(hot).id == "n3");
    CHECK(s.next_owner(hot).id == "n3");
    CHECK(s.owner("user:celebrity").id == "n0");
    CHECK(s.nodes()[s.current().owner(hot)].id == "n3");
    CHECK(s.nodes()[s.current().strategy_owner(hot)].id == base.owner(hot).id);
    // A pre-hashed lookup is the strategy's: overrides are keyed by the key string.
    CHECK(s.current().pick(s.current().point_of(hot)) == base.current().pick(base.current().point_of(hot)));
    const auto ws = s.write_set(hot);
    REQUIRE(ws.size() == 1);
    CHECK(ws[0]->id == "n3");
    // 10^5 other keys: not one moves (the table is consulted by exact key only).
    for (std::size_t i = 0; i < 100'000; ++i) {
        const std::string key = "key-" + std::to_string(i);
        REQUIRE(&s.owner(key) - s.nodes().data() == &base.owner(key) - base.nodes().data());
    }
    // The built description lists them in key order; successor() carries them on.
    REQUIRE(s.overrides().size() == 2);
    CHECK(s.overrides()[0].key < s.overrides()[1].key);
    CHECK(s.describe().overrides == std::vector<keyplace::key_override>(s.overrides().begin(), s.overrides().end()));
    CHECK(snapshot::build(s.successor()).owner(hot).id == "n3");
    CHECK(snapshot::build(s.describe()).fingerprint() == s.fingerprint());
    CHECK(s.verify());
    // The fingerprint includes them; the probe digest does not; without them nothing changes.
    CHECK(s.fingerprint() != base.fingerprint());
    CHECK(s.probe_digest() == base.probe_digest());
    auto other_node = d;
    other_node.overrides[0].node = "n4";
    CHECK(fp(other_node) != fp(d));
}

TEST_CASE("overrides: with copies the override node is first, then the strategy's copies without it",
          "[snapshot][overrides]") {
    auto d = description("rendezvous", 6);
    d.replication = {3, keyplace::failure_domain::node};
    const auto base = snapshot::build(d);
    const auto plain_copies = base.write_set("hot:copies");
    REQUIRE(plain_copies.size() == 3);
    std::string outside;  // a node that holds no copy of the key
    for (const auto& n : base.nodes()) {
        if (std::none_of(plain_copies.begin(), plain_copies.end(), [&](const auto* c) { return c->id == n.id; })) {
            outside = n.id;
        }
    }
    // Its owner (nothing changes), its third copy (moves to the front), a node holding none.
    for (const std::string& target : {plain_copies[0]->id, plain_copies[2]->id, outside}) {
        INFO("override to " << target);
        auto o = d;
        o.overrides = {{"hot:copies", target}};
        const auto s = snapshot::build(o);
        const auto copies = s.write_set("hot:copies");
        REQUIRE(copies.size() == 3);
        CHECK(copies[0]->id == target);
        // The rest: the strategy's copies in order, the target left out, cut at the width.
        std::vector<std::string> expected{target};
        for (const auto* c : plain_copies) {
            if (c->id != target && expected.size() < 3) {
                expected.push_back(c->id);
            }
        }
        for (std::size_t k = 0; k < 3; ++k) {
            CHECK(copies[k]->id == expected[k]);
        }
    }
}

TEST_CASE("overrides: during a transition both placements honor them, a joiner or leaver may not be named",
          "[snapshot][overrides][errors]") {
    auto d = description("ring", 4);
    d.nodes[3].state = node_state::joining;
    d.nodes[2].state = node_state::leaving;
    d.overrides = {{"hot:t", "n1"}};
    const auto s = snapshot::build(d);
    REQUIRE(s.in_transition());
    CHECK(s.owner("hot:t").id == "n1");
    CHECK(s.next_owner("hot:t").id == "n1");
    const auto ws = s.write_set("hot:t");
    REQUIRE(ws.size() == 1);
    CHECK(ws[0]->id == "n1");
    for (const auto& [id, state] : {std::pair<std::string, std::string>{"n3", "joining"}, {"n2", "leaving"}}) {
        auto bad = d;
        bad.overrides = {{"hot:t", id}};
        expect_error([&] { return snapshot::build(bad); }, errc::invalid_state,
                     "override of key 'hot:t': node '" + id + "' is " + state + "; an override names an active node");
    }
    auto left = description("ring", 3);
    left.nodes[2].state = node_state::left;
    left.overrides = {{"k", "n2"}};
    expect_error([&] { return snapshot::build(left); }, errc::invalid_state, "node 'n2' is left");
}

TEST_CASE("overrides: every bad override is refused with the value named, and nothing is built",
          "[snapshot][overrides][errors]") {
    const auto base = description("ring", 3);
    const auto refuse = [](const snapshot_description& d, errc code, const std::string& fragment) {
        keyplace::error_info err;
        CHECK_FALSE(snapshot::try_build(d, err));
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
        expect_error([&] { return snapshot::build(d); }, code, fragment);
    };
    const auto good = snapshot::build(base);
    const auto before = good.fingerprint();
    auto d = base;
    d.overrides = {{"k", "nobody"}};
    refuse(d, errc::unknown_id, "override of key 'k': node 'nobody' is not in the snapshot");
    d.overrides = {{"", "n1"}};
    refuse(d, errc::invalid_override, "override of node 'n1': the key is empty");
    d.overrides = {{std::string(1025, 'k'), "n1"}};
    refuse(d, errc::invalid_override, "the key is 1025 bytes, above 1024");
    d.overrides = {{std::string(1024, 'k'), "n1"}};
    CHECK(snapshot::build(d).owner(std::string(1024, 'k')).id == "n1");  // the bound itself is allowed
    // Found by the snapshot_next fuzz target: a key that is not UTF-8 was built, then written
    // with U+FFFD in its place, so the document held another key and another fingerprint.
    d.overrides = {{std::string("k\xff\x7f\x01", 4), "n1"}};
    refuse(d, errc::invalid_override, "override of key 'k\\xff\\x7f\\x01': the key is not UTF-8 (byte 1)");
    d.overrides = {{"k", "n1"}, {"j", "n0"}, {"k", "n2"}};
    refuse(d, errc::invalid_override, "override key 'k' is also the key of overrides[0]");
    // The first repeat in the list's order, naming the earlier one (one check, reader and builder).
    d.overrides = {{"b", "n1"}, {"a", "n0"}, {"a", "n2"}, {"b", "n2"}};
    refuse(d, errc::invalid_override, "override key 'a' is also the key of overrides[1]");
    d.overrides.clear();
    for (std::size_t i = 0; i <= keyplace::max_overrides; ++i) {
        d.overrides.push_back({"k" + std::to_string(i), "n0"});
    }
    refuse(d, errc::invalid_override, "4097 overrides; a snapshot holds at most 4096");
    d.overrides.pop_back();
    CHECK(snapshot::build(d).overrides().size() == 4096);
    CHECK(good.fingerprint() == before);  // values are immutable: a refused build changes nothing
    CHECK(keyplace::make_error_code(errc::invalid_override).message() == "invalid key override");
    CHECK(static_cast<int>(errc::invalid_override) == 47);
}

TEST_CASE("overrides: shadow compare counts an overridden key that moves, as one survivor move",
          "[snapshot][overrides][shadow]") {
    const auto before = shared(description("ring", 4));
    const std::string hot = key_not_owned_by(*before, "n2");
    const std::string from = before->owner(hot).id;
    auto next = before->successor();
    next.overrides = {{hot, "n2"}};
    const auto after = shared(next);
    keyplace::shadow_compare cmp(before, after, {.sample_per_million = 1'000'000});
    for (std::size_t i = 0; i < 100'000; ++i) {
        cmp.observe("key-" + std::to_string(i));
    }
    cmp.observe(hot, 50);
    const auto r = cmp.report();
    CHECK(r.keys_sampled == 100'001);
    CHECK(r.keys_moved == 1);
    CHECK(r.requests_moved == 50);
    CHECK(r.survivor_keys_moved == 1);
    REQUIRE(r.flows.size() == 1);
    CHECK(r.flows[0].from == from);
    CHECK(r.flows[0].to == "n2");
    CHECK(r.expected_moved == 0);  // the analysis sees the strategies, which are equal
    CHECK(r.verdict == keyplace::shadow_verdict::excess);  // a survivor's key moved
}

TEST_CASE("overrides: a transfer plan lists each overridden key whose copies change, outside the ranges",
          "[snapshot][overrides][plan]") {
    auto d = description("ring", 4);
    d.nodes[0].where = {"eu", "z1", ""};
    d.nodes[1].where = {"eu", "z1", ""};
    d.nodes[2].where = {"eu", "z2", ""};
    d.nodes[3].where = {"eu", "z2", ""};
    const auto before = shared(d);
    const std::string hot = key_not_owned_by(*before, "n2");
    const std::string from = before->owner(hot).id;
    const std::string kept = before->owner("hot:kept").id;
    auto next = before->successor();
    next.overrides = {{hot, "n2"}, {"hot:kept", kept}};  // the second agrees with the strategy
    const auto after = shared(next);
    const auto p = keyplace::plan_transfer(*before, *after);
    CHECK(p.exact);
    CHECK(p.ranges.empty());
    CHECK(p.moved == 0);
    REQUIRE(p.keys.size() == 1);
    CHECK(p.keys[0].key == hot);
    CHECK(p.keys[0].before == std::vector<std::string>{from});
    CHECK(p.keys[0].after == std::vector<std::string>{"n2"});
    REQUIRE(p.keys[0].copies.size() == 1);
    CHECK(p.keys[0].copies[0].from == from);
    CHECK(p.keys[0].copies[0].to == "n2");
    CHECK(p.to_json().find(",\"keys\":[{\"key\":\"" + hot + "\",\"before\":[\"" + from + "\"],\"after\":[\"n2\"]") !=
          std::string::npos);
    CHECK(p.to_text().find("overridden keys whose copies change: 1\n'" + hot + "': " + from + " -> n2 (" + from +
                           ">n2)\n") != std::string::npos);
    // Dropping it again is the reverse move; a plan without overrides has no "keys" field.
    const auto back = keyplace::plan_transfer(*after, *before);
    REQUIRE(back.keys.size() == 1);
    CHECK(back.keys[0].after == std::vector<std::string>{from});
    CHECK(keyplace::plan_transfer(*before, *before).to_json().find("\"keys\"") == std::string::npos);
}

TEST_CASE("snapshot: one name grammar for ids, location parts, override nodes, clusters and client ids",
          "[snapshot][names]") {
    using keyplace::check_name;
    using keyplace::name_kind;
    const auto refused = [](name_kind kind, const std::string& name, errc code, const std::string& fragment) {
        INFO(name);
        const auto f = check_name(kind, name);
        CHECK(f.code() == code);
        CHECK_THAT(f.message(), Catch::Matchers::Contains(fragment));
        CHECK(f.message().size() < 300);
        CHECK(f.message().find('\n') == std::string::npos);
    };
    for (const auto kind : {name_kind::node_id, name_kind::location_part, name_kind::cluster, name_kind::client_id}) {
        for (const std::string& bad : std::vector<std::string>{"n\n1", "a,b", "a b", "a=1", "a@b", "a*2", "a~b", "a#b",
                                                               "a$b", "a%b", "a^b", "a\tb", std::string("a\0b", 3),
                                                               "a\x7f", "\xff", "\xc0\xaf"}) {
            CHECK(check_name(kind, bad).code() == errc::invalid_name);
        }
        for (const std::string good : {"10.0.1.1:11211", "node-a", "cache_1.eu", "n\xc5\x93ud"}) {
            CHECK_FALSE(check_name(kind, good));
        }
    }
    refused(name_kind::node_id, "a,b", errc::invalid_name, "node id 'a,b' contains ','");
    refused(name_kind::node_id, "n\n1", errc::invalid_name, "node id 'n\\x0a1' contains '\\x0a'");
    refused(name_kind::node_id, "", errc::empty_id, "node id is empty");
    refused(name_kind::node_id, std::string(keyplace::max_id_length + 1, 'x'), errc::id_too_long, "65535");
    refused(name_kind::node_id, "...", errc::invalid_name, "only dots");
    refused(name_kind::node_id, std::string(1000, 'x') + ",", errc::invalid_name, "contains ','");
    CHECK_FALSE(check_name(name_kind::node_id, "a/b"));  // an id is not a path segment
    CHECK_FALSE(check_name(name_kind::location_part, ""));  // absent
    refused(name_kind::location_part, "eu/1", errc::invalid_name, "contains '/'");
    refused(name_kind::cluster, "bar/clients", errc::invalid_name, "cluster 'bar/clients' contains '/'");
    refused(name_kind::cluster, "", errc::invalid_name, "cluster '' is 0 bytes, not 1 to 255");
    refused(name_kind::cluster, std::string(300, 'c'), errc::invalid_name, "is 300 bytes, not 1 to 255");
    refused(name_kind::cluster, "..", errc::invalid_name, "only dots");
    refused(name_kind::client_id, "a/b", errc::invalid_name, "client id 'a/b' contains '/'");
    refused(name_kind::client_id, "", errc::invalid_name, "client id '' is 0 bytes");
}

TEST_CASE("snapshot: the builder holds ids, locations, override nodes and the cluster to the name grammar",
          "[snapshot][names]") {
    const auto base = description("ring", 3);
    const auto refused = [&](const snapshot_description& d, errc code, const std::string& fragment) {
        keyplace::error_info err;
        CHECK_FALSE(snapshot::try_build(d, err));
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
    };
    auto d = base;
    d.nodes[1].id = "n\n1";
    refused(d, errc::invalid_name, "node id 'n\\x0a1' contains '\\x0a'");
    d = base;
    d.nodes[1].id = "a,b";
    d.nodes[1].state = node_state::left;  // a tombstone's id is printed too
    refused(d, errc::invalid_name, "node id 'a,b' contains ','");
    d = base;
    d.nodes[0].where.zone = "z 1";
    refused(d, errc::invalid_name, "node 'n0': zone 'z 1' contains ' '");
    d = base;
    d.overrides = {{"user:1", "n1,n2"}};
    refused(d, errc::invalid_name, "override of key 'user:1': node id 'n1,n2' contains ','");
    d = base;
    d.cluster = "eu/clients";
    refused(d, errc::invalid_document, "cluster 'eu/clients' contains '/'");
    d = base;
    d.nodes[0].id = "10.0.1.1:11211";
    d.nodes[0].where = {"eu-west", "eu-west-1a", "r1"};
    CHECK(snapshot::build(d).find("10.0.1.1:11211") != nullptr);
}

TEST_CASE("snapshot: strategy tokens refuses a node without tokens and a token listed twice", "[snapshot][names]") {
    auto d = description("tokens", 3);
    d.nodes[0].points = {1, 100};
    d.nodes[1].points = {200};
    d.nodes[2].points = {300};
    CHECK(snapshot::build(d).nodes().size() == 3);
    auto bad = d;
    bad.nodes[1].points = {100};
    expect_error([&] { return snapshot::build(bad); }, errc::duplicate_token, "token 100 is owned by both 'n0' and 'n1'");
    bad = d;
    bad.nodes[2].points = {300, 300};
    expect_error([&] { return snapshot::build(bad); }, errc::duplicate_token, "node 'n2' lists token 300 twice");
    bad = d;
    bad.nodes[1].points = {};
    expect_error([&] { return snapshot::build(bad); }, errc::no_points, "node 'n1' has no tokens");
    bad.nodes[1].state = node_state::left;  // a tombstone places nothing and needs no token
    CHECK(snapshot::build(bad).nodes().size() == 3);
}

TEST_CASE("snapshot: the successor of the last epoch says that the epoch would overflow", "[snapshot][names]") {
    auto d = description("ring", 3);
    d.epoch = std::numeric_limits<std::uint64_t>::max();
    d.parent_epoch = d.epoch - 1;
    const auto last = snapshot::build(d);
    expect_error([&] { return snapshot::build(last.successor()); }, errc::invalid_document,
                 "epoch 0 after parent_epoch 18446744073709551615: the epoch would overflow");
    d.epoch = 0;
    d.parent_epoch = 0;
    expect_error([&] { return snapshot::build(d); }, errc::invalid_document, "epoch 0: epochs start at 1");
}

namespace bucket_tables {

auto bucket_description(const std::string& strategy, const std::string& ids) -> snapshot_description {
    snapshot_description d;
    d.cluster = "buckets";
    d.strategy.name = strategy;
    std::size_t at = 0;
    while (at <= ids.size()) {
        const auto comma = std::min(ids.find(',', at), ids.size());
        d.nodes.push_back({ids.substr(at, comma - at)});
        at = comma + 1;
    }
    return d;
}

auto plain_of(const snapshot_description& d, node_state skip) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> out;
    for (const auto& n : d.nodes) {
        if (n.state != skip && n.state != node_state::left) {
            out.push_back({n.id, n.weight, n.where});
        }
    }
    return out;
}

// Owners of 10^5 keys under a snapshot placement and under an engine, by id.
template <class S>
auto same_owners(const keyplace::placement& p, const snapshot& s, const S& engine) -> bool {
    for (int i = 0; i < 100000; ++i) {
        const auto key = "user:" + std::to_string(i);
        if (s.nodes()[p.owner(key)].id != keyplace::locate(engine, key).id) {
            return false;
        }
    }
    return true;
}

}  // namespace bucket_tables

TEST_CASE("snapshot: an AnchorHash table carries its capacity and removed stack, and a transition derives the next",
          "[snapshot][anchor]") {
    using namespace bucket_tables;
    auto d = bucket_description("anchor", "a,b,c,d,e");
    d.strategy.params["capacity"] = std::uint64_t{8};
    d.nodes[1].state = node_state::leaving;  // b at bucket 1
    d.nodes.push_back({"f", "", 1.0, {}, node_state::joining});
    const auto s = snapshot::build(d);
    REQUIRE(s.in_transition());
    // Now: the engine over the nodes that own keys now, in the document's order (bucket order).
    const auto now = keyplace::anchor::build(plain_of(d, node_state::joining), {8, {}});
    CHECK(same_owners(s.current(), s, now));
    // After: that table without the leaver, then with the joiner, which takes the leaver's bucket
    // back (the top of the removed stack): only b's keys move, and all of them to f.
    const auto after = now.without("b").with(keyplace::node{"f"});
    CHECK(after.bucket_of(*after.find("f")) == 1);
    CHECK(same_owners(s.pending(), s, after));
    for (int i = 0; i < 100000; ++i) {
        const auto key = "user:" + std::to_string(i);
        const auto& was = s.nodes()[s.current().owner(key)].id;
        const auto& is = s.nodes()[s.pending().owner(key)].id;
        CHECK((was == is || (was == "b" && is == "f")));
    }
    // The successor states pending's table: capacity, removed stack, nodes in bucket order.
    auto next = s.successor();
    CHECK(next.strategy.params.at("capacity") == keyplace::strategy_param{std::uint64_t{8}});
    CHECK(next.strategy.params.at("removed") == keyplace::strategy_param{std::vector<std::uint64_t>{7, 6, 5}});
    std::vector<std::string> order;
    for (auto& n : next.nodes) {
        order.push_back(n.id);
        n.state = n.state == node_state::leaving ? node_state::left : node_state::active;
    }
    CHECK(order == std::vector<std::string>{"a", "f", "c", "d", "e", "b"});
    const auto done = snapshot::build(next);
    CHECK_FALSE(done.in_transition());
    CHECK(done.current().fingerprint() == s.pending().fingerprint());
    CHECK(same_owners(done.current(), done, after));
    // A removal order is part of the function: the same nodes with another stack differ.
    auto other = bucket_description("anchor", "a,c,d,e");
    other.strategy.params["capacity"] = std::uint64_t{8};
    other.strategy.params["removed"] = std::vector<std::uint64_t>{7, 6, 1, 5};
    auto same_set = other;
    same_set.strategy.params["removed"] = std::vector<std::uint64_t>{7, 6, 5, 1};
    CHECK(fp(other) != fp(same_set));
}

TEST_CASE("snapshot: a MementoHash table carries its removal order, and a transition derives the next",
          "[snapshot][memento]") {
    using namespace bucket_tables;
    auto d = bucket_description("memento", "m0,m1,m2,m3,m4");
    d.strategy.params["removed"] = std::vector<std::uint64_t>{};
    d.nodes[2].state = node_state::leaving;
    const auto s = snapshot::build(d);
    const auto now = keyplace::memento::build(plain_of(d, node_state::joining));
    CHECK(same_owners(s.current(), s, now));
    const auto after = now.without("m2");
    CHECK(same_owners(s.pending(), s, after));
    auto next = s.successor();
    CHECK(next.strategy.params.at("removed") == keyplace::strategy_param{std::vector<std::uint64_t>{2}});
    for (auto& n : next.nodes) {
        n.state = n.state == node_state::leaving ? node_state::left : n.state;
    }
    // A join next restores bucket 2 (LIFO): m2's old keys go to the joiner, no other key moves.
    next.nodes.push_back({"m9", "", 1.0, {}, node_state::joining});
    const auto joining = snapshot::build(next);
    const auto back = after.with(keyplace::node{"m9"});
    CHECK(back.bucket_of(*back.find("m9")) == 2);
    CHECK(same_owners(joining.pending(), joining, back));
    CHECK(same_owners(joining.current(), joining, after));
}

TEST_CASE("snapshot: bad AnchorHash and MementoHash parameters are refused naming the value and where it is",
          "[snapshot][anchor][errors]") {
    using namespace bucket_tables;
    const auto refuse = [](const snapshot_description& d, errc code, const std::string& fragment,
                           const std::string& where) {
        keyplace::error_info err;
        CHECK_FALSE(snapshot::try_build(d, err));
        CHECK(err.code() == code);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(fragment));
        CHECK(err.where() == where);
    };
    auto d = bucket_description("anchor", "a,b,c");
    d.strategy.params["capacity"] = std::uint64_t{2};
    refuse(d, errc::invalid_table_size, "anchor capacity 2 for 3 nodes", "strategy.params.capacity");
    d.strategy.params["capacity"] = std::uint64_t{1} << 27;
    refuse(d, errc::invalid_table_size, "anchor capacity 134217728 is outside 0..67108864", "strategy.params.capacity");
    d.strategy.params["capacity"] = std::uint64_t{6};
    d.strategy.params["removed"] = std::vector<std::uint64_t>{5, 4, 5};
    refuse(d, errc::invalid_argument, "anchor removed bucket 5 is listed twice", "strategy.params.removed");
    d.strategy.params["removed"] = std::vector<std::uint64_t>{5, 4};
    refuse(d, errc::invalid_argument, "lists 2 buckets; capacity 6 with 3 nodes needs 3", "strategy.params.removed");
    d.strategy.params["removed"] = std::vector<std::uint64_t>{5, 4, std::uint64_t{1} << 40};
    refuse(d, errc::invalid_argument, "anchor removed bucket 1099511627776 is outside 0..67108863",
           "strategy.params.removed[2]");
    d.strategy.params["removed"] = std::uint64_t{5};
    refuse(d, errc::unknown_strategy, "5 is not a list of numbers", "strategy.params.removed");
    d.strategy.params["removed"] = std::vector<std::uint64_t>{5, 4, 3};
    d.strategy.params["capacity"] = std::vector<std::uint64_t>{6};
    refuse(d, errc::unknown_strategy, "a list is not a number", "strategy.params.capacity");
    // A join when every bucket is working: AnchorHash's capacity is fixed.
    auto full = bucket_description("anchor", "a,b,c");
    full.strategy.params["capacity"] = std::uint64_t{3};
    full.nodes.push_back({"d", "", 1.0, {}, node_state::joining});
    refuse(full, errc::too_many_nodes, "", "nodes[3]");  // adding d
    auto m = bucket_description("memento", "m0,m1,m2");
    m.strategy.params["removed"] = std::vector<std::uint64_t>{3};
    refuse(m, errc::invalid_argument, "memento removed bucket 3 is the last of an unshrunk table",
           "strategy.params.removed");
    m.strategy.params["removed"] = std::vector<std::uint64_t>{1, 1};
    refuse(m, errc::invalid_argument, "memento removed bucket 1 is listed twice", "strategy.params.removed");
    // Weights other than 1 are refused for both (neither has weights).
    auto w = bucket_description("memento", "m0,m1");
    w.nodes[1].weight = 2.0;
    keyplace::error_info err;
    CHECK_FALSE(snapshot::try_build(w, err));
    CHECK(err.code() == errc::invalid_weight);
    CHECK_THAT(err.message(), Catch::Matchers::Contains("m1"));
}

namespace mpchash_snapshots {
auto go_buckets(std::size_t n) -> snapshot_description {
    snapshot_description d;
    d.cluster = "go-fleet";
    d.epoch = 1;
    d.strategy.name = "mpchash";
    for (std::size_t i = 1; i <= n; ++i) {
        d.nodes.push_back({"shard-" + std::to_string(i)});
        d.nodes.back().where.zone = "z" + std::to_string(i % 3);
    }
    return d;
}
}  // namespace mpchash_snapshots

TEST_CASE("snapshot: go-mpchash's owners, through a document, are compat.out's, and its copies start with them",
          "[snapshot][mpchash]") {
    using namespace mpchash_snapshots;
    // go-mpchash's compat.out: line i is the owner of "shard-(i+1)" over shard-1 .. shard-6000.
    const auto want = golden_lines("mpchash/compat.out");
    REQUIRE(want.size() == 6000);
    auto d = go_buckets(6000);
    d.replication.count = 2;
    d.replication.spread = keyplace::failure_domain::zone;
    // Written as a document and loaded back: the placement go-mpchash's own test pins.
    const auto s = keyplace::load_snapshot_json(keyplace::write_snapshot_json(snapshot::build(d)));
    CHECK(s.current().by_key_bytes());
    std::size_t owners = 0;
    std::size_t first_copies = 0;
    std::size_t two_zones = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const std::string key = "shard-" + std::to_string(i + 1);
        owners += s.owner(key).id == want[i] ? 1U : 0U;
        std::array<std::uint32_t, 4> out{};
        REQUIRE(s.write_set(key, out) == 2);
        first_copies += s.nodes()[out[0]].id == want[i] ? 1U : 0U;
        two_zones += s.nodes()[out[0]].where.zone != s.nodes()[out[1]].where.zone ? 1U : 0U;
    }
    CHECK(owners == 6000);
    CHECK(first_copies == 6000);
    CHECK(two_zones == 6000);
    // Not multiprobe under another name: the same nodes place keys otherwise there.
    auto native = go_buckets(6000);
    native.strategy.name = "multiprobe";
    const auto m = snapshot::build(native);
    std::size_t same = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        same += m.owner("shard-" + std::to_string(i + 1)).id == want[i] ? 1U : 0U;
    }
    CHECK(same < 10);  // expected 1 (6000 keys, 1/6000 each)
}

TEST_CASE("snapshot: go-mpchash movement and plans count the sample keys by their bytes: a leave moves only its keys",
          "[snapshot][mpchash][plan]") {
    using namespace mpchash_snapshots;
    const auto before = shared(go_buckets(50));
    auto next = before->successor();
    next.nodes[17].state = node_state::left;  // shard-18 leaves
    const auto after = shared(next);
    // What leaves: the sample keys shard-18 owns, counted on the engine itself (go-exact: the
    // multiprobe tests check it against compat.out).
    std::vector<keyplace::node> plain;
    for (std::size_t i = 1; i <= 50; ++i) {
        plain.push_back({"shard-" + std::to_string(i)});
    }
    const auto engine = keyplace::compat::mpchash::build(plain);
    std::size_t owned = 0;
    for (std::size_t i = 0; i < keyplace::analysis_sample_size; ++i) {
        owned += keyplace::locate(engine, keyplace::sample_key(i)).id == "shard-18" ? 1U : 0U;
    }
    const double share = static_cast<double>(owned) / static_cast<double>(keyplace::analysis_sample_size);
    REQUIRE(owned > 0);
    const auto plan = keyplace::plan_transfer(*before, *after);
    CHECK_FALSE(plan.exact);
    CHECK(plan.space == keyplace::plan_space::sampled);
    CHECK(plan.moved == share);
    double from_leaver = 0;
    for (const auto& t : plan.totals) {
        CHECK(t.from == "shard-18");
        from_leaver += t.fraction;
    }
    CHECK(std::abs(from_leaver - share) < 1e-12);
    // A shadow compare over real keys: every sampled key that moves was shard-18's.
    keyplace::shadow_compare cmp(before, after, {.sample_per_million = 1'000'000});
    for (std::size_t i = 0; i < 20'000; ++i) {
        cmp.observe("user:" + std::to_string(i));
    }
    const auto r = cmp.report();
    // The expectation: the same sample keys, by their bytes.
    CHECK_FALSE(r.expected_exact);
    CHECK(r.expected_moved == share);
    REQUIRE(r.keys_moved > 0);
    for (const auto& f : r.flows) {
        CHECK(f.from == "shard-18");
    }
    CHECK(r.survivor_keys_moved == 0);
}

TEST_CASE("read_only: a draining node places as a leaving one, takes invalidations only, and has its own "
          "fingerprint",
          "[snapshot][read_only]") {
    auto drain = description("ring", 3);
    drain.nodes[2].state = node_state::read_only;
    auto leave = description("ring", 3);
    leave.nodes[2].state = node_state::leaving;
    const snapshot r = snapshot::build(drain);
    const snapshot l = snapshot::build(leave);
    CHECK(r.in_transition());
    CHECK(r.current().fingerprint() == l.current().fingerprint());
    CHECK(r.pending().fingerprint() == l.pending().fingerprint());
    CHECK(r.fingerprint() != l.fingerprint());  // the write rules differ: so does the proof
    CHECK(r.probe_digest() == l.probe_digest());
    CHECK_FALSE(keyplace::takes_values(node_state::read_only));
    const std::string drained = r.nodes()[2].id;
    std::size_t on_drained = 0;
    std::size_t wrong = 0;  // keys whose sets differ from the rule: counted, then checked once
    std::string first_wrong;
    for (int i = 0; i < 100000; ++i) {
        const std::string key = "k" + std::to_string(i);
        const std::string now = r.owner(key).id;
        const std::string after = r.next_owner(key).id;
        std::vector<std::string> ws;
        for (const auto* n : r.write_set(key)) {
            ws.push_back(n->id);
        }
        // A write reaches the drained node (as an invalidation) and the node after it (the value).
        const bool on = now == drained;
        on_drained += on ? 1 : 0;
        const bool ok = now == l.owner(key).id && (on ? ws == std::vector<std::string>{drained, after}
                                                      : after == now && ws == std::vector<std::string>{now});
        if (!ok && wrong++ == 0) {
            first_wrong = key;
        }
    }
    INFO("first key whose sets differ: " << first_wrong);
    CHECK(wrong == 0);
    // The drained node held about a third of the keys (3 nodes, 160 points each: within 10%).
    CHECK(on_drained > 23000);
    CHECK(on_drained < 43000);

    // JSON keeps the state; completing the transition leaves the node; the movement it prepares
    // is a leave's.
    const auto text = keyplace::write_snapshot_json(r);
    CHECK(text.find("\"state\": \"read_only\"") != std::string::npos);
    CHECK(keyplace::load_snapshot_json(text).fingerprint() == r.fingerprint());
    const auto done = keyplace::completion(r);
    CHECK(done.nodes[2].state == node_state::left);
    CHECK(std::fabs(keyplace::transition_movement(r).moved - keyplace::transition_movement(l).moved) < 1e-15);
}

TEST_CASE("read_only: successor rules: active and read_only go both ways, a joining node may not drain, a left one "
          "may not return",
          "[snapshot][read_only]") {
    auto base = description("ring", 4);
    base.nodes[3].state = node_state::joining;
    const snapshot s = snapshot::build(base);
    const auto with_state = [&](const snapshot& from, std::size_t i, node_state st) {
        auto d = from.successor();
        d.nodes[i].state = st;
        return snapshot::build(d);
    };
    const snapshot drained = with_state(s, 1, node_state::read_only);
    CHECK_FALSE(keyplace::check_successor(s, drained));
    CHECK_FALSE(keyplace::check_successor(drained, with_state(drained, 1, node_state::active)));
    const auto refused = keyplace::check_successor(s, with_state(s, 3, node_state::read_only));
    CHECK(refused == keyplace::fleet_errc::invalid_state);
    CHECK(refused.message() == "node 'n3' is joining at epoch 7 and holds nothing to serve reads from: it may not "
                               "become read_only");
    // Nor may a node that was not listed at all arrive read_only.
    auto arriving = s.successor();
    arriving.nodes.push_back({"n9", "", 1.0});
    arriving.nodes.back().state = node_state::read_only;
    const auto fresh = keyplace::check_successor(s, snapshot::build(arriving));
    CHECK(fresh == keyplace::fleet_errc::invalid_state);
    CHECK(fresh.message() == "node 'n9' is not listed at epoch 7 and holds nothing to serve reads from: it may not "
                             "become read_only");
    const snapshot gone = with_state(drained, 1, node_state::left);
    const auto back = keyplace::check_successor(gone, with_state(gone, 1, node_state::read_only));
    CHECK(back == keyplace::fleet_errc::invalid_state);
    CHECK(back.message().find("may not return as read_only") != std::string::npos);

    // A state outside the enumeration, as code may build it, is refused naming the states.
    auto bad = description("ring", 3);
    bad.nodes[0].state = static_cast<node_state>(9);
    keyplace::error_info err;
    CHECK_FALSE(snapshot::try_build(bad, err));
    CHECK(err.message() == "node 'n0': state 9 is not joining, active, leaving, read_only or left");
    // Every node read_only: nobody owns keys after.
    auto all = description("ring", 2);
    for (auto& n : all.nodes) {
        n.state = node_state::read_only;
    }
    CHECK_FALSE(snapshot::try_build(all, err));
    CHECK(err == keyplace::fleet_errc::no_owner);
}
