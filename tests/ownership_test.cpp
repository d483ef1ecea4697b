// Tests of fleet/ownership.hpp: owned_since and admit on hand-built joins and leaves whose owners
// are read from the snapshots themselves, the bounded history's truncation, every bad input, and
// random histories (joins, leaves, weight changes, state changes, rollbacks, missed epochs)
// against a model that replays every adopted epoch.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/ownership.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using keyplace::admit_verdict;
using keyplace::node_state;
using keyplace::ownership_history;
using keyplace::snapshot;
using keyplace::snapshot_description;

namespace ownership_test {

auto ring_of(std::uint64_t epoch, std::vector<std::pair<std::string, node_state>> nodes, std::uint32_t copies = 1)
    -> std::shared_ptr<const snapshot> {
    snapshot_description d;
    d.cluster = "own";
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy.name = "ring";
    d.strategy.params["vnodes"] = std::uint64_t{40};
    d.replication.count = copies;
    for (auto& [id, state] : nodes) {
        d.nodes.push_back({id, "", 1.0});
        d.nodes.back().state = state;
    }
    return std::make_shared<const snapshot>(snapshot::build(d));
}

auto keys(std::size_t n) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back("key:" + std::to_string(i));
    }
    return out;
}

// Whether node id holds a copy of key under s.current() — read from the snapshot's own lookups,
// independently of the history.
auto holds(const snapshot& s, const std::string& id, const std::string& key) -> bool {
    std::vector<std::uint32_t> copies(s.current().width());
    copies.resize(s.current().copies_of(key, copies));
    return std::any_of(copies.begin(), copies.end(), [&](std::uint32_t i) { return s.nodes()[i].id == id; });
}

// The model: every adopted snapshot, unbounded; a run continues backwards while the node holds
// the key and each snapshot's parent is the one adopted before it.
auto model_since(const std::vector<std::shared_ptr<const snapshot>>& all, const std::string& id, const std::string& key)
    -> std::optional<std::uint64_t> {
    std::optional<std::uint64_t> since;
    for (std::size_t i = all.size(); i-- > 0;) {
        if (!holds(*all[i], id, key)) {
            break;
        }
        since = all[i]->epoch();
        if (i == 0 || all[i]->parent_epoch() != all[i - 1]->epoch()) {
            break;
        }
    }
    return since;
}

}  // namespace ownership_test

using namespace ownership_test;

TEST_CASE("ownership: a joining node holds nothing, becomes the owner of its keys when active, and fences requests "
          "placed before",
          "[ownership]") {
    const auto e1 = ring_of(1, {{"a", node_state::active}, {"b", node_state::active}, {"c", node_state::active}});
    const auto e2 = ring_of(2, {{"a", node_state::active}, {"b", node_state::active}, {"c", node_state::active},
                                {"d", node_state::joining}});
    const auto e3 = ring_of(3, {{"a", node_state::active}, {"b", node_state::active}, {"c", node_state::active},
                                {"d", node_state::active}});
    ownership_history d("d");
    ownership_history a("a");
    for (const auto& s : {e1, e2, e3}) {
        d.adopt(s);
        a.adopt(s);
    }
    std::size_t moved = 0;
    std::size_t stayed_on_a = 0;
    for (const auto& key : keys(2000)) {
        const std::string before = e1->owner(key).id;
        const std::string after = e3->owner(key).id;
        CHECK(e2->owner(key).id == before);  // a joining node owns nothing yet
        if (after == "d") {
            ++moved;
            CHECK(d.owned_since(key) == std::optional<std::uint64_t>{3});
            CHECK(d.admit(key, 2).verdict == admit_verdict::stale);  // placed while before owned it
            CHECK(d.admit(key, 2).since == 3);
            CHECK(d.admit(key, 3).verdict == admit_verdict::serve);
            if (before == "a") {
                const auto r = a.admit(key, 2);
                CHECK(r.verdict == admit_verdict::redirect);
                REQUIRE(r.owner != nullptr);
                CHECK(r.owner->id == "d");
                CHECK(r.epoch == 3);
                CHECK_FALSE(a.owned_since(key));
            }
        } else {
            CHECK_FALSE(d.owned_since(key));
            CHECK(d.admit(key, 3).verdict == admit_verdict::redirect);
            CHECK(d.admit(key, 3).owner->id == after);
            if (after == "a") {
                ++stayed_on_a;
                CHECK(a.owned_since(key) == std::optional<std::uint64_t>{1});
                CHECK(a.admit(key, 1).verdict == admit_verdict::serve);
            }
        }
        CHECK(d.admit(key, 4).verdict == admit_verdict::behind);
        CHECK(d.admit(key, 4).epoch == 3);
    }
    // A fourth node takes about a quarter of the keys: both branches ran many times.
    CHECK(moved > 300);
    CHECK(stayed_on_a > 300);
    // e1 and e2 place alike (a joining node is not in current()): one entry; e3 another.
    CHECK(d.size() == 2);
}

TEST_CASE("ownership: a node that leaves and returns holds its keys only since its return", "[ownership]") {
    const auto abc = [](std::uint64_t e, node_state c) {
        return ring_of(e, {{"a", node_state::active}, {"b", node_state::active}, {"c", c}});
    };
    ownership_history c("c");
    c.adopt(abc(1, node_state::active));
    c.adopt(abc(2, node_state::leaving));  // still owns its keys
    c.adopt(abc(3, node_state::left));
    c.adopt(ring_of(4, {{"a", node_state::active}, {"b", node_state::active}}));  // the tombstone dropped
    c.adopt(abc(5, node_state::joining));
    c.adopt(abc(6, node_state::active));
    const auto first = abc(1, node_state::active);
    std::size_t checked = 0;
    for (const auto& key : keys(1000)) {
        if (first->owner(key).id != "c") {
            continue;
        }
        ++checked;
        CHECK(c.owned_since(key) == std::optional<std::uint64_t>{6});
        CHECK(c.admit(key, 2).verdict == admit_verdict::stale);  // held then, but not without a break
        CHECK(c.admit(key, 6).verdict == admit_verdict::serve);
    }
    CHECK(checked > 200);
}

TEST_CASE("ownership: a missed epoch breaks the run, and a full history reports its oldest epoch, never a later one",
          "[ownership]") {
    const std::vector<std::pair<std::string, node_state>> three = {
        {"a", node_state::active}, {"b", node_state::active}, {"c", node_state::active}};
    // Epoch 3's parent is 2, which this node never adopted: nothing is assumed across the gap.
    ownership_history gap("a");
    gap.adopt(ring_of(1, three));
    gap.adopt(ring_of(3, three));
    std::string key;
    const auto one = ring_of(1, three);
    for (const auto& k : keys(100)) {
        if (one->owner(k).id == "a") {
            key = k;
            break;
        }
    }
    REQUIRE_FALSE(key.empty());
    CHECK(gap.owned_since(key) == std::optional<std::uint64_t>{3});
    CHECK(gap.size() == 2);  // one placement, but not adjacent: two entries

    // Capacity 2, five distinct placements (a weight of b changes each time), a holding the key
    // throughout: the two kept say since 4; the truth is 1, earlier, so fencing only errs toward stale.
    ownership_history small("a", 2);
    std::vector<std::shared_ptr<const snapshot>> all;
    for (std::uint64_t e = 1; e <= 5; ++e) {
        snapshot_description d = ring_of(e, three)->describe();
        d.fingerprint = {};
        d.probe = {};
        d.nodes[1].weight = 1.0 + 0.25 * static_cast<double>(e);
        all.push_back(std::make_shared<const snapshot>(snapshot::build(d)));
        small.adopt(all.back());
    }
    CHECK(small.size() == 2);
    CHECK(small.truncated());
    CHECK(small.oldest_epoch() == 4);
    std::size_t throughout = 0;
    for (const auto& k : keys(3000)) {
        const bool held = std::all_of(all.begin(), all.end(), [&](const auto& s) { return holds(*s, "a", k); });
        if (!held) {
            continue;
        }
        ++throughout;
        CHECK(model_since(all, "a", k) == std::optional<std::uint64_t>{1});
        CHECK(small.owned_since(k) == std::optional<std::uint64_t>{4});
        CHECK(small.admit(k, 3).verdict == admit_verdict::stale);
        CHECK(small.admit(k, 4).verdict == admit_verdict::serve);
    }
    CHECK(throughout > 500);
}

TEST_CASE("ownership: bad input is refused with its value and changes nothing", "[ownership]") {
    keyplace::error_info err;
    CHECK_FALSE(ownership_history::try_create("a", 0, err));
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK(err.message() == "ownership_history: capacity 0 is not from 1 to 1048576");
    CHECK_FALSE(ownership_history::try_create("a b", 4, err));
    CHECK(err.code() == keyplace::errc::invalid_name);
    CHECK(err.message().find("'a b'") != std::string::npos);
    CHECK_THROWS_AS(ownership_history("", 4), keyplace::error);

    const std::vector<std::pair<std::string, node_state>> two = {{"a", node_state::active}, {"b", node_state::active}};
    auto h = ownership_history::try_create("a", 4, err);
    REQUIRE(h);
    h->adopt(ring_of(5, two));
    const auto before = h->owned_since("key:1");
    CHECK_FALSE(h->try_adopt(ring_of(5, two), err));
    CHECK(err.code() == keyplace::errc::stale_epoch);
    CHECK(err.message() == "ownership_history: epoch 5 is not newer than the adopted epoch 5");
    CHECK_FALSE(h->try_adopt(ring_of(3, two), err));
    CHECK(err.message() == "ownership_history: epoch 3 is not newer than the adopted epoch 5");
    snapshot_description other = ring_of(6, two)->describe();
    other.cluster = "elsewhere";
    other.fingerprint = {};
    other.probe = {};
    CHECK_FALSE(h->try_adopt(std::make_shared<const snapshot>(snapshot::build(other)), err));
    CHECK(err.code() == keyplace::errc::wrong_cluster);
    CHECK(err.message() == "ownership_history: a snapshot of cluster 'elsewhere', not 'own'");
    CHECK_FALSE(h->try_adopt(nullptr, err));
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK(h->size() == 1);
    CHECK(h->newest()->epoch() == 5);
    CHECK(h->owned_since("key:1") == before);

    ownership_history empty("a");
    const auto r = empty.admit("key:1", 1);
    CHECK(r.verdict == admit_verdict::behind);
    CHECK(r.owner == nullptr);
    CHECK(r.epoch == 0);
}

TEST_CASE("ownership: random histories agree with a model replaying every adopted epoch", "[ownership]") {
    // 120 histories of 24 adoptions over ring (one copy or two) and rendezvous: joins (joining,
    // then active), leaves (leaving, left, dropped), weight changes, rollbacks to an earlier
    // membership under a new epoch, and missed epochs; capacity 3 or 64. After every adoption,
    // owned_since and admit for every node ever named and 60 keys equal the model's.
    std::mt19937_64 rng(20261206);
    const auto ks = keys(60);
    std::size_t checks = 0;
    std::size_t stale = 0;
    std::size_t served = 0;
    std::size_t truncated = 0;
    std::size_t mismatches = 0;  // counted, not CHECKed one by one: 4.8 million calls
    std::string first_mismatch;
    for (int history = 0; history < 120; ++history) {
        const bool rendezvous = history % 3 == 2;
        const std::uint32_t copies = history % 3 == 1 ? 2 : 1;
        const std::size_t capacity = history % 2 == 0 ? 3 : 64;
        snapshot_description d;
        d.cluster = "own";
        d.epoch = 1;
        d.strategy.name = rendezvous ? "rendezvous" : "ring";
        if (!rendezvous) {
            d.strategy.params["vnodes"] = std::uint64_t{16};
        }
        d.replication.count = copies;
        std::vector<std::string> ids;
        int next_id = 0;
        for (int i = 0; i < 4; ++i) {
            ids.push_back("n" + std::to_string(next_id++));
            d.nodes.push_back({ids.back(), "", 1.0});
        }
        std::vector<snapshot_description> published{d};
        std::vector<std::shared_ptr<const snapshot>> adopted{std::make_shared<const snapshot>(snapshot::build(d))};
        std::vector<ownership_history> hs;
        for (const auto& id : {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}) {
            hs.emplace_back(id, capacity);
            hs.back().adopt(adopted.back());
        }
        for (int step = 0; step < 24; ++step) {
            snapshot_description next = published.back();
            next.fingerprint = {};
            next.probe = {};
            next.parent_epoch = next.epoch;
            next.epoch += 1;
            const auto count = [&](node_state s) {
                return std::count_if(next.nodes.begin(), next.nodes.end(),
                                     [&](const auto& n) { return n.state == s; });
            };
            const int op = static_cast<int>(rng() % 6);
            if (op == 0 && next_id < 8) {  // a join
                next.nodes.push_back({"n" + std::to_string(next_id++), "", 1.0});
                next.nodes.back().state = node_state::joining;
            } else if (op == 1) {  // transitions complete
                for (auto& n : next.nodes) {
                    n.state = n.state == node_state::joining   ? node_state::active
                              : n.state == node_state::leaving ? node_state::left
                                                               : n.state;
                }
                std::erase_if(next.nodes, [&](const auto& n) { return n.state == node_state::left && rng() % 2 == 0; });
            } else if (op == 2 && count(node_state::active) > static_cast<std::ptrdiff_t>(copies) + 1) {  // a leave
                std::vector<std::size_t> active;
                for (std::size_t i = 0; i < next.nodes.size(); ++i) {
                    if (next.nodes[i].state == node_state::active) {
                        active.push_back(i);
                    }
                }
                next.nodes[active[rng() % active.size()]].state = node_state::leaving;
            } else if (op == 3) {  // a weight change
                auto& n = next.nodes[rng() % next.nodes.size()];
                n.weight = 0.5 + static_cast<double>(rng() % 8) * 0.25;
            } else if (op == 4 && published.size() > 2) {  // a rollback to an earlier membership
                const auto& back = published[published.size() - 2 - rng() % (published.size() - 2)];
                next.nodes = back.nodes;
            }
            // else: an epoch that changes nothing placement-wise (op 5, or an op that did not apply)
            keyplace::error_info err;
            auto built = snapshot::try_build(next, err);
            if (!built) {
                continue;  // e.g. no node owning keys after: not published
            }
            published.push_back(next);
            auto s = std::make_shared<const snapshot>(std::move(*built));
            if (rng() % 8 == 0) {
                continue;  // published, but this fleet missed it: the next one's parent is unseen
            }
            adopted.push_back(s);
            for (auto& h : hs) {
                h.adopt(s);
            }
            for (const auto& h : hs) {
                for (const auto& key : ks) {
                    auto want = model_since(adopted, h.node_id(), key);
                    if (want && *want < h.oldest_epoch()) {
                        want = h.oldest_epoch();  // the bounded history's documented answer
                        ++truncated;
                    }
                    const auto note = [&](const std::string& what) {
                        if (mismatches++ == 0) {
                            first_mismatch = "history " + std::to_string(history) + ", node " + h.node_id() +
                                             ", key " + key + ", epoch " + std::to_string(s->epoch()) + ": " + what;
                        }
                    };
                    if (h.owned_since(key) != want) {
                        note("owned_since");
                    }
                    const std::uint64_t e = s->epoch();
                    for (const std::uint64_t req : {e - std::min<std::uint64_t>(e - 1, 3), e - 1, e, e + 1}) {
                        const auto r = h.admit(key, req);
                        const admit_verdict expect = req > e   ? admit_verdict::behind
                                                     : !want   ? admit_verdict::redirect
                                                     : req < *want ? admit_verdict::stale
                                                                   : admit_verdict::serve;
                        if (r.verdict != expect || r.epoch != e || r.owner->id != s->owner(key).id) {
                            note("admit at request epoch " + std::to_string(req));
                        }
                        stale += expect == admit_verdict::stale ? 1 : 0;
                        served += expect == admit_verdict::serve ? 1 : 0;
                        ++checks;
                    }
                }
            }
        }
    }
    INFO(first_mismatch);
    CHECK(mismatches == 0);
    // Every verdict and the truncation rule were exercised often.
    CHECK(checks > 100000);
    CHECK(stale > 1000);
    CHECK(served > 1000);
    CHECK(truncated > 100);
}

// The counts a node keeps beside its history for its metrics (fleet/metrics.hpp): record() from
// several threads at once loses nothing (run under ThreadSanitizer by the tsan preset).
TEST_CASE("ownership: admission counts from four threads add up", "[ownership][concurrency]") {
    keyplace::admission_counts counts;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&counts, t] {
            for (int i = 0; i < 25000; ++i) {
                counts.record(static_cast<keyplace::admit_verdict>((i + t) % 4));
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    CHECK(counts.count(keyplace::admit_verdict::serve) == 25000);
    CHECK(counts.count(keyplace::admit_verdict::redirect) == 25000);
    CHECK(counts.count(keyplace::admit_verdict::stale) == 25000);
    CHECK(counts.count(keyplace::admit_verdict::behind) == 25000);
}
