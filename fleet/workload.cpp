// keyplace-fleet's workload: keys, popularity, the membership plan, the request stream (workload.hpp).
#include "workload.hpp"

#include "fleet_options.hpp"

#include <keyplace/bounded_load.hpp>

#include <libmemcached/memcached.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
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

auto make_plan(const std::string& cluster, const universe& u, const std::vector<std::uint32_t>& request_weights,
               const std::string& strategy, bool control) -> plan {
    plan p;
    p.events = events_for(strategy);
    kp::snapshot_description d;
    d.cluster = cluster;
    d.epoch = 1;
    d.strategy = strategy_of(strategy);
    for (std::size_t i = 0; i < initial_servers; ++i) {
        d.nodes.push_back({.id = "mc-" + std::to_string(i)});
    }
    p.snaps.push_back(std::make_shared<const kp::snapshot>(kp::snapshot::build(d)));
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
    for (const auto& s : p.snaps) {
        p.tables.push_back({owners(*s, s->current(), u, strategy, request_weights),
                            owners(*s, s->pending(), u, strategy, request_weights)});
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

void cache_client::del(std::size_t server, std::size_t k) {
    const auto& key = u.names[k];
    const auto rc = memcached_delete(conns[server]->mc, key.data(), key.size(), 0);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED && rc != MEMCACHED_NOTFOUND) {
        throw failure("memcached: delete failed on mc-" + std::to_string(server) + ": " +
                      memcached_strerror(conns[server]->mc, rc));
    }
}

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
    const std::size_t owner = tab.now[k];
    if (serving < published) {
        ++w.old_epoch;
        w.old_owner += owner != p.at(published).now[k] ? 1 : 0;
    }
    if (rng.unit() < writes) {
        std::array<std::size_t, 4> targets{owner, owner, owner, owner};
        if (rule == "write-set") {
            // The write set of the snapshot (owners now and after), and the owner under the
            // completed epoch before the latest change: it may hold the key and take it back.
            targets[1] = tab.next[k];
            targets[2] = p.at(completed_before).now[k];
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
