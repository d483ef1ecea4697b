// keyplace-fleet's workload: keys, popularity, the membership plan, the request stream (workload.hpp).
#include "workload.hpp"

#include "fleet_options.hpp"

#include <keyplace/bounded_load.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/rollback.hpp>

#include <libmemcached/memcached.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <string_view>
#include <variant>

namespace keyplace_fleet {

// All three hashed through SplitMix64's finalizer, so that seeds (and clients) are independent
// streams. A state of seed x the generator's increment, as before, made seed s + 1 replay seed s
// one draw later.
auto workload_seed(std::uint64_t seed, double alpha, std::uint64_t client) -> std::uint64_t {
    splitmix m{(seed * 0x9e3779b97f4a7c15ULL) ^ static_cast<std::uint64_t>(alpha * 1000) ^
               (client * 0xd1b54a32d192ed03ULL)};
    return m.next();
}

static auto pow_neg(double base, double alpha) -> double { return std::exp(-alpha * std::log(base)); }

universe::universe(std::uint64_t n, double alpha, std::uint64_t seed) {
    names.reserve(n);
    weight.resize(n);
    cdf.resize(n);
    double total = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        // The rank is the index; the salt makes another seed another set of names, hence other owners.
        names.push_back("s" + std::to_string(seed) + ":key:" + std::to_string(i));
        weight[i] = alpha == 0 ? 1.0 : pow_neg(static_cast<double>(i + 1), alpha);
        total += weight[i];
    }
    double run = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        weight[i] /= total;
        run += weight[i];
        cdf[i] = run;
    }
    cdf.back() = 1.0;
}

auto universe::draw(double u) const -> std::size_t {
    const auto it = std::lower_bound(cdf.begin(), cdf.end(), u);
    return std::min(static_cast<std::size_t>(it - cdf.begin()), cdf.size() - 1);
}

// ---------------------------------------------------------------------------------------------
// Membership.

// The strategy's row with its defaults (bounded is the ring's); a table of fixed capacity
// (AnchorHash) has room for every server the run starts.
static auto strategy_of(const std::string& s) -> kp::strategy_spec {
    kp::strategy_spec spec{.name = s == "bounded" ? "ring" : s, .params = {}};
    if (kp::find_strategy(spec.name)->param("capacity") != nullptr) {
        spec.params.emplace("capacity", std::uint64_t{initial_servers + 1});
    }
    return spec;
}

static auto server_of(const kp::snapshot_node& n) -> std::size_t {
    return static_cast<std::size_t>(std::stoul(n.id.substr(3)));
}

static auto events_for(const std::string& strategy) -> std::vector<event> {
    // A strategy of numbered buckets that only grows (jump) removes only the last node.
    const bool append_only = kp::find_strategy(strategy_of(strategy).name)->derives == kp::derivation::append_only;
    const std::size_t leaver = append_only ? 3 : 1;
    return {{"join", 3, true}, {"leave", leaver, false}, {"rejoin", leaver, true}};
}

auto request_weights(const universe& u) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> w(u.weight.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
        w[k] = static_cast<std::uint32_t>(std::max(1.0, std::round(u.weight[k] * 0x1.0p31)));
    }
    return w;
}

static auto owners(const kp::snapshot& s, const kp::placement& p, const universe& u, const std::string& strategy,
                   const std::vector<std::uint32_t>& request_weights) -> std::vector<std::uint8_t> {
    std::vector<std::uint8_t> out(u.names.size());
    if (strategy == "bounded") {
        // The batch form over the key universe with the expected request rates as weights: every
        // client computes the same table from the same snapshot and weights (a shard map). The
        // live form would have each client admit by its own in-flight counts, so clients would
        // disagree about owners: misses and stale copies on a cache.
        const auto& r = std::get<kp::ring>(p.strategy());
        std::vector<std::uint64_t> points(u.names.size());
        for (std::size_t k = 0; k < points.size(); ++k) {
            points[k] = p.point_of(u.names[k]);
        }
        const auto got = kp::bounded_assign(r, points, request_weights, {.load_factor = 1.25});
        for (std::size_t k = 0; k < out.size(); ++k) {
            out[k] = static_cast<std::uint8_t>(server_of(s.nodes()[p.member(got[k])]));
        }
        return out;
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
        out[k] = static_cast<std::uint8_t>(server_of(s.nodes()[p.owner(u.names[k])]));
    }
    return out;
}

// Epoch 1 of every arm: mc-0 .. mc-2.
static auto first_epoch(const std::string& cluster, const std::string& strategy) -> kp::snapshot_description {
    kp::snapshot_description d;
    d.cluster = cluster;
    d.epoch = 1;
    d.strategy = strategy_of(strategy);
    for (std::size_t i = 0; i < initial_servers; ++i) {
        d.nodes.push_back({.id = "mc-" + std::to_string(i)});
    }
    return d;
}

auto make_plan(const std::string& cluster, const universe& u, const std::vector<std::uint32_t>& request_weights,
               const std::string& strategy, bool control) -> plan {
    plan p;
    p.events = events_for(strategy);
    p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(first_epoch(cluster, strategy))));
    for (const auto& e : control ? std::vector<event>{} : p.events) {
        auto nd = p.snaps.back()->successor();
        if (e.adds) {
            nd.nodes.push_back({.id = "mc-" + std::to_string(e.server), .state = kp::node_state::joining});
        } else {
            for (auto& n : nd.nodes) {
                n.state = server_of(n) == e.server ? kp::node_state::leaving : n.state;
            }
        }
        p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(nd)));
        auto done = p.snaps.back()->successor();
        std::erase_if(done.nodes, [](const kp::snapshot_node& n) { return n.state == kp::node_state::leaving; });
        for (auto& n : done.nodes) {
            n.state = kp::node_state::active;
        }
        p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(done)));
    }
    for (std::size_t e = 0; !control && e < p.events.size(); ++e) {
        p.steps.push_back({.name = p.events[e].name,
                           .epochs = {2 * e + 2, 2 * e + 3},
                           .joins = p.events[e].adds ? static_cast<int>(p.events[e].server) : -1});
    }
    for (const auto& s : p.snaps) {
        p.tables.push_back({owners(*s, s->current(), u, strategy, request_weights),
                            owners(*s, s->pending(), u, strategy, request_weights),
                            {}});
    }
    return p;
}

// The rollback's invalidations over the universe: the deletes to make before publishing its first
// epoch, (server, key index). The rule per key is plan_rollback's — back_to's copies outside now's
// write set —, read from its ranges where they are exact ring points, and checked key by key
// against the same rule computed from the two snapshots, so that the fleet applies the library's
// answer and a disagreement stops the run.
static auto invalidations(const kp::snapshot& now, const kp::snapshot& back_to, const universe& u)
    -> std::vector<std::pair<std::uint8_t, std::uint32_t>> {
    const auto rb = kp::plan_rollback(now, back_to);
    const bool ranges = rb.exact && rb.space == kp::plan_space::points64;
    std::vector<std::pair<std::uint8_t, std::uint32_t>> out;
    for (std::size_t k = 0; k < u.names.size(); ++k) {
        const auto& key = u.names[k];
        std::vector<std::string> rule;
        const auto& owner = back_to.owner(key).id;
        const auto ws = now.write_set(key);
        if (std::none_of(ws.begin(), ws.end(), [&](const kp::snapshot_node* n) { return n->id == owner; })) {
            rule.push_back(owner);
        }
        if (ranges) {
            const auto point = now.current().point_of(key);
            const auto it = std::upper_bound(rb.ranges.begin(), rb.ranges.end(), point,
                                             [](std::uint64_t x, const kp::rollback_range& r) { return x < r.first; });
            const std::vector<std::string> none;
            const auto& listed = it == rb.ranges.begin() || point > std::prev(it)->last ? none : std::prev(it)->invalidate;
            if (listed != rule) {
                throw failure("plan_rollback's ranges and the write sets disagree on " + key);
            }
        }
        for (const auto& id : rule) {
            out.emplace_back(static_cast<std::uint8_t>(std::stoul(id.substr(3))), static_cast<std::uint32_t>(k));
        }
    }
    return out;
}

auto make_rollout_plan(const std::string& cluster, const universe& u, const std::string& strategy,
                       const std::string& arm) -> plan {
    plan p;
    p.windows_from_change = true;
    auto add = [&](const kp::snapshot_description& d) {
        p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(d)));
    };
    add(first_epoch(cluster, strategy));
    const auto first = p.snaps.front();
    const std::string joiner = "mc-" + std::to_string(initial_servers);
    auto to = first->successor();
    to.nodes.push_back({.id = joiner});
    const auto target = kp::snapshot::build(to);
    p.steps.resize(ramp_steps);
    for (std::size_t i = 0; i < ramp_steps; ++i) {
        p.steps[i].name = "step " + std::to_string(i + 1);
    }
    std::size_t ramped = 0;  // the ramp's epochs published: 3 .. ramped + 2
    if (arm == "one-shot") {
        // A join through a transition: mc-3 joining (reads stay, writes reach its pending copies
        // too), then once every client has it, mc-3 active.
        auto joining = first->successor();
        joining.nodes.push_back({.id = joiner, .state = kp::node_state::joining});
        add(joining);
        auto done = p.snaps.back()->successor();
        done.nodes.back().state = kp::node_state::active;
        add(done);
        p.steps[0].epochs = {2, 3};
    } else if (arm != "control") {
        // The ramp announced (epoch 2: mc-3 joining, its pending placement the ramp's last), then
        // its epochs. Steps of equal movement, each at most 1.02 / ramp_steps of the one-epoch move
        // (a ring's steps of equal weight move unequal shares, and the largest sets the peak).
        const double one_epoch = kp::plan_ramp(*first, target, {.steps = 1}).one_shot_moved;
        const auto r =
            kp::plan_ramp(*first, target, {.max_moved = one_epoch * 1.02 / ramp_steps, .announce = true});
        if (r.epochs.size() != ramp_steps + 1) {
            throw failure("the ramp of " + strategy + " has " + std::to_string(r.epochs.size() - 1) +
                          " epochs, not " + std::to_string(ramp_steps));
        }
        ramped = arm == "ramp" ? ramp_steps : rollback_after;
        for (std::size_t i = 0; i <= ramped; ++i) {
            add(r.epochs[i]);
        }
        p.steps[0].epochs = {2, 3};
        for (std::size_t i = 1; i < ramped; ++i) {
            p.steps[i].epochs = {i + 3};
        }
        if (arm != "ramp") {
            const auto now = p.snaps.back();
            auto leaving = now->successor();
            for (auto& n : leaving.nodes) {
                n.state = n.id == joiner ? kp::node_state::leaving : n.state;
            }
            add(leaving);
            auto back = p.snaps.back()->successor();
            std::erase_if(back.nodes, [&](const kp::snapshot_node& n) { return n.id == joiner; });
            add(back);
            auto& st = p.steps[rollback_after];
            st.epochs = {ramped + 3, ramped + 4};
            st.relinquish = static_cast<int>(initial_servers);
            if (arm == "rollback") {
                st.invalidate = invalidations(*now, *first, u);
            }
        }
    }
    if (arm != "control") {
        p.steps[0].joins = static_cast<int>(initial_servers);
    }
    if (p.snaps.size() > max_epochs) {
        throw failure("the " + arm + " arm has " + std::to_string(p.snaps.size()) + " epochs, more than " +
                      std::to_string(max_epochs));
    }
    const auto target_owners = owners(target, target.current(), u, strategy, {});
    for (std::size_t e = 0; e < p.snaps.size(); ++e) {
        const auto& s = *p.snaps[e];
        p.tables.push_back({owners(s, s.current(), u, strategy, {}), owners(s, s.pending(), u, strategy, {}),
                            e >= 2 && e <= ramped + 1 ? target_owners : std::vector<std::uint8_t>{}});
    }
    // The rollback returns to epoch 1's placement exactly.
    if (arm == "rollback" || arm == "uninvalidated") {
        if (p.tables.back().now != p.tables.front().now) {
            throw failure("the rollback of " + strategy + " does not return to epoch 1's placement");
        }
    }
    return p;
}

auto kept_between(const std::vector<std::uint8_t>& ta, const std::vector<std::uint8_t>& tb, const universe& u) -> kept {
    kept k;
    std::size_t same = 0;
    for (std::size_t i = 0; i < ta.size(); ++i) {
        k.requests += ta[i] == tb[i] ? u.weight[i] : 0.0;
        same += ta[i] == tb[i] ? 1 : 0;
    }
    k.keys = static_cast<double>(same) / static_cast<double>(ta.size());
    return k;
}

auto hot_report_of(const kp::hot_keys& detected, const std::vector<std::uint64_t>& exact, const universe& u)
    -> hot_report {
    hot_report r;
    r.requests = detected.total();
    r.error_bound = detected.error_bound();
    r.failure_probability = detected.failure_probability();
    std::map<std::string_view, std::size_t> index;
    for (std::size_t k = 0; k < u.names.size(); ++k) {
        index.emplace(u.names[k], k);
    }
    for (const auto& h : detected.top(hot_top)) {
        r.detected.push_back({h.key, exact[index.at(h.key)], h.lower, h.upper});
    }
    // The true top: the largest exact counts, ties by key index (the generator's rank).
    std::vector<std::size_t> order(exact.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const std::size_t n = std::min(hot_top, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](std::size_t a, std::size_t b) { return exact[a] != exact[b] ? exact[a] > exact[b] : a < b; });
    const auto candidates = detected.top(detected.size());
    for (std::size_t i = 0; i < n; ++i) {
        detected_key t{u.names[order[i]], exact[order[i]], 0, detected.estimate(u.names[order[i]])};
        for (const auto& c : candidates) {
            t.lower = c.key == t.key ? c.lower : t.lower;
        }
        for (const auto& d : r.detected) {
            r.found += d.key == t.key ? 1 : 0;
        }
        r.truth.push_back(std::move(t));
    }
    return r;
}

// ---------------------------------------------------------------------------------------------
// The database and the look-aside client.

auto database::lock(std::size_t k) -> std::uint32_t {
    for (;;) {
        std::uint32_t x = v[k].load(std::memory_order_relaxed);
        if ((x & lock_bit) == 0 && v[k].compare_exchange_weak(x, x | lock_bit, std::memory_order_acquire)) {
            return x;
        }
        ::sched_yield();
    }
}

void cache_client::set_value(std::size_t server, std::size_t k, std::uint32_t version) {
    const std::string prefix = "v" + std::to_string(version) + ":";
    std::copy(prefix.begin(), prefix.end(), value.begin());
    const auto& key = u.names[k];
    const auto rc = memcached_set(conns[server]->mc, key.data(), key.size(), value.data(), value.size(), 0, 0);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED) {
        throw failure("memcached: set failed on mc-" + std::to_string(server) + ": " +
                      memcached_strerror(conns[server]->mc, rc));
    }
}

void cache_client::del(std::size_t server, std::size_t k) { delete_key(*conns[server], server, u.names[k]); }

void cache_client::prefill(double fraction) {
    for (std::size_t k = 0; k < u.names.size(); ++k) {
        if (static_cast<double>(static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ULL) * 0x1.0p-64 < fraction) {
            set_value(p.at(1).now[k], k, db.version(k));
        }
    }
}

void cache_client::request(window_stats& w, std::uint64_t serving, std::uint64_t published) {
    if (serving != in_use) {
        if (!p.snap(in_use).in_transition()) {
            completed_before = in_use;
        }
        in_use = serving;
    }
    const table& tab = p.at(serving);
    const std::size_t k = u.draw(rng.unit());
    if (detect != nullptr) {
        detect->observe(u.names[k]);
        ++(*exact)[k];
    }
    const std::size_t owner = tab.now[k];
    if (serving < published) {
        ++w.old_epoch;
        w.old_owner += owner != p.at(published).now[k] ? 1 : 0;
    }
    if (rng.unit() < writes) {
        std::array<std::size_t, 4> targets{owner, owner, owner, owner};
        if (rule == "write-set") {
            // The write set of the snapshot (owners now and after), the owner under the completed
            // epoch before the latest change (it may hold the key and take it back), and on a
            // ramp's epoch the owner under its last.
            targets[1] = tab.next[k];
            targets[2] = p.at(completed_before).now[k];
            targets[3] = tab.target.empty() ? owner : tab.target[k];
        }
        std::sort(targets.begin(), targets.end());
        const std::uint32_t v = db.lock(k);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            if (i == 0 || targets[i] != targets[i - 1]) {
                del(targets[i], k);
            }
        }
        db.unlock(k, v + 1);
        return;
    }
    ++w.gets;
    const std::uint32_t before = db.version(k);
    const auto& key = u.names[k];
    std::size_t len = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc{};
    char* got = memcached_get(conns[owner]->mc, key.data(), key.size(), &len, &flags, &rc);
    if (got != nullptr) {
        ++w.hits;
        std::uint32_t version = 0;
        const char* colon = static_cast<const char*>(std::memchr(got, ':', len));
        if (len < 2 || got[0] != 'v' || colon == nullptr || std::from_chars(got + 1, colon, version).ptr != colon) {
            std::free(got);
            throw failure("memcached returned a value this program did not write for " + key);
        }
        std::free(got);
        w.stale += version < before ? 1 : 0;
        return;
    }
    if (rc != MEMCACHED_NOTFOUND) {
        throw failure("memcached: get failed on mc-" + std::to_string(owner) + ": " +
                      memcached_strerror(conns[owner]->mc, rc));
    }
    ++w.db_reads;
    const std::uint32_t v = db.lock(k);
    set_value(owner, k, v);
    db.unlock(k, v);
}

}  // namespace keyplace_fleet
