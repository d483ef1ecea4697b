// Tests of snapshot.hpp's two digests against golden values from an independent Python
// reference (tests/golden/generate_snapshot_digests.py, written from the README's contract
// text): every case line of tests/golden/snapshot_digests_v2.txt describes a snapshot whole,
// and the library must build it to the stated fingerprint and probe digest.
// snapshot_digests_v1.txt holds the fingerprints of encoding 1, which documents may still state.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/fleet/snapshot.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

using keyplace::digest128;
using keyplace::errc;
using keyplace::error_info;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
using keyplace::failure_domain;
using keyplace::max_snapshot_copies;
using keyplace::node_state;
using keyplace::placement;
using namespace keyplace_test;

namespace {

struct golden_case {
    std::string name;
    snapshot_description description;
    std::string fingerprint;
    std::string probe;
};

auto split(std::string_view s, char sep) -> std::vector<std::string> {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t at = s.find(sep, start);
        out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) {
            return out;
        }
        start = at + 1;
    }
}

template <class T>
auto parse_number(const std::string& s, const char* what) -> T {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) {
        throw std::runtime_error(std::string("bad ") + what + ": '" + s + "'");
    }
    return v;
}

auto is_digits(const std::string& s) -> bool {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

auto parse_spread(const std::string& s) -> keyplace::failure_domain {
    using keyplace::failure_domain;
    if (s == "node") {
        return failure_domain::node;
    }
    if (s == "rack") {
        return failure_domain::rack;
    }
    if (s == "zone") {
        return failure_domain::zone;
    }
    if (s == "region") {
        return failure_domain::region;
    }
    throw std::runtime_error("bad spread level: '" + s + "'");
}

/// ID[*WEIGHT][@STATE][~REGION/ZONE/RACK][#TOKEN;...][$FIRST-LAST;...][%POINT;...][^FIRST-LAST[:RANK];...]
auto parse_node(const std::string& entry) -> snapshot_node {
    constexpr std::string_view sigils = "*@~#$%^";
    std::size_t at = entry.find_first_of(sigils);
    snapshot_node n;
    n.id = entry.substr(0, at);
    while (at != std::string::npos) {
        const char sigil = entry[at];
        const std::size_t next = entry.find_first_of(sigils, at + 1);
        const std::string part = entry.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
        switch (sigil) {
            case '*': n.weight = parse_number<double>(part, "weight"); break;
            case '@': {
                const auto state = keyplace::parse_node_state(part);
                if (!state) {
                    throw std::runtime_error("bad state: '" + part + "'");
                }
                n.state = *state;
                break;
            }
            case '~': {
                const auto parts = split(part, '/');
                n.where.region = parts.at(0);
                n.where.zone = parts.size() > 1 ? parts[1] : "";
                n.where.rack = parts.size() > 2 ? parts[2] : "";
                break;
            }
            case '#':
                for (const auto& t : split(part, ';')) {
                    n.tokens.push_back(parse_number<std::int64_t>(t, "token"));
                }
                break;
            case '%':
                for (const auto& t : split(part, ';')) {
                    n.points.push_back(parse_number<std::uint64_t>(t, "point"));
                }
                break;
            case '^':
                for (const auto& r : split(part, ';')) {
                    const auto ranked = split(r, ':');
                    const auto ends = split(ranked.at(0), '-');
                    if (ends.size() != 2 || ranked.size() > 2) {
                        throw std::runtime_error("bad partition span: '" + r + "'");
                    }
                    n.partitions.push_back({parse_number<std::uint32_t>(ends[0], "partition"),
                                            parse_number<std::uint32_t>(ends[1], "partition"),
                                            ranked.size() == 2 ? parse_number<std::uint32_t>(ranked[1], "rank") : 0U});
                }
                break;
            default:  // '$'
                for (const auto& r : split(part, ';')) {
                    const auto ends = split(r, '-');
                    if (ends.size() != 2) {
                        throw std::runtime_error("bad slot range: '" + r + "'");
                    }
                    n.slots.push_back({parse_number<std::uint16_t>(ends[0], "slot"),
                                       parse_number<std::uint16_t>(ends[1], "slot")});
                }
                break;
        }
        at = next;
    }
    return n;
}

/// One "case NAME key=value ..." record (the format is documented at the top of the file).
auto parse_case(const std::vector<std::string>& f) -> golden_case {
    golden_case c;
    c.name = f.at(1);
    auto& d = c.description;
    d.cluster = "golden";
    d.epoch = 1;
    d.parent_epoch = 0;
    for (std::size_t i = 2; i < f.size(); ++i) {
        const std::size_t eq = f[i].find('=');
        if (eq == std::string::npos) {
            throw std::runtime_error(c.name + ": field without '=': " + f[i]);
        }
        const std::string key = f[i].substr(0, eq);
        const std::string value = f[i].substr(eq + 1);
        if (key == "strategy") {
            d.strategy.name = value;
        } else if (key == "params") {
            if (value != "-") {
                for (const auto& p : split(value, ',')) {
                    const std::size_t colon = p.find(':');
                    const std::string name = p.substr(0, colon);
                    const std::string v = p.substr(colon + 1);
                    if (is_digits(v)) {
                        d.strategy.params[name] = parse_number<std::uint64_t>(v, "parameter");
                    } else if (!v.empty() && v.front() == '[' && v.back() == ']') {
                        std::vector<std::uint64_t> items;
                        if (v.size() > 2) {
                            for (const auto& x : split(v.substr(1, v.size() - 2), ';')) {
                                items.push_back(parse_number<std::uint64_t>(x, "list item"));
                            }
                        }
                        d.strategy.params[name] = std::move(items);
                    } else {
                        d.strategy.params[name] = v;
                    }
                }
            }
        } else if (key == "replication") {
            const auto parts = split(value, '/');
            d.replication.count = parse_number<std::size_t>(parts.at(0), "replication count");
            d.replication.spread = parse_spread(parts.at(1));
        } else if (key == "nodes") {
            for (const auto& e : split(value, ',')) {
                d.nodes.push_back(parse_node(e));
            }
        } else if (key == "overrides") {
            for (const auto& o : split(value, ';')) {
                const auto parts = split(o, '>');
                if (parts.size() != 2) {
                    throw std::runtime_error(c.name + ": bad override: " + o);
                }
                d.overrides.push_back({parts[0], parts[1]});
            }
        } else if (key == "fingerprint") {
            c.fingerprint = value;
        } else if (key == "probe") {
            c.probe = value;
        } else {
            throw std::runtime_error(c.name + ": unknown field " + key);
        }
    }
    return c;
}

/// The cases of the table of fingerprint encoding 2 (the current one), or of encoding 1 (the
/// values documents written before the location block state).
auto golden_cases(int encoding = 2) -> std::vector<golden_case> {
    std::vector<golden_case> cases;
    bool header = false;
    for (const auto& f : golden_records("snapshot_digests_v" + std::to_string(encoding) + ".txt")) {
        if (f.at(0) == "keyplace-snapshot-digests") {
            REQUIRE(f.size() == 2);
            REQUIRE(f[1] == std::to_string(encoding));
            header = true;
        } else if (f[0] == "case") {
            cases.push_back(parse_case(f));
        } else {
            FAIL("unknown record " << f[0]);
        }
    }
    REQUIRE(header);
    return cases;
}

auto digest_of(const std::string& hex) -> digest128 {
    const auto d = digest128::from_hex(hex);
    REQUIRE(d.has_value());
    return *d;
}

/// hex with digit i replaced by another digit.
auto one_digit_changed(std::string hex, std::size_t i) -> std::string {
    hex.at(i) = hex[i] == '0' ? '1' : '0';
    return hex;
}

}  // namespace

TEST_CASE("snapshot: golden fingerprints and probe digests from the independent reference generator",
          "[snapshot][golden]") {
    const auto cases = golden_cases();
    CHECK(cases.size() >= 30);
    std::vector<std::string> strategies;
    for (const auto& c : cases) {
        INFO("case " << c.name);
        strategies.push_back(c.description.strategy.name);
        error_info err;
        const auto s = snapshot::try_build(c.description, err);
        INFO(err.message());
        REQUIRE(s.has_value());
        CHECK(s->fingerprint().hex() == c.fingerprint);
        CHECK(s->probe_digest().hex() == c.probe);
        CHECK(s->verify());
        CHECK(digest128::from_hex(s->fingerprint().hex()) == s->fingerprint());
    }
    // Every strategy a snapshot can hold has at least one golden case.
    std::sort(strategies.begin(), strategies.end());
    strategies.erase(std::unique(strategies.begin(), strategies.end()), strategies.end());
    CHECK(strategies.size() == std::size(keyplace::strategy_table));
}

TEST_CASE("snapshot: a description stating the golden digests builds, one changed digit is a fingerprint_mismatch",
          "[snapshot][golden]") {
    std::size_t digit = 0;
    for (const auto& c : golden_cases()) {
        INFO("case " << c.name);
        snapshot_description d = c.description;
        d.fingerprint = digest_of(c.fingerprint);
        d.probe = digest_of(c.probe);
        error_info err;
        const auto s = snapshot::try_build(d, err);
        INFO(err.message());
        REQUIRE(s.has_value());
        CHECK(s->describe().fingerprint == d.fingerprint);
        CHECK(s->describe().probe == d.probe);

        digit = (digit + 7) % 32;  // walk both halves of the digest over the cases
        INFO("digit " << digit);
        snapshot_description bad_fingerprint = d;
        bad_fingerprint.fingerprint = digest_of(one_digit_changed(c.fingerprint, digit));
        err.clear();
        CHECK_FALSE(snapshot::try_build(bad_fingerprint, err).has_value());
        CHECK(err == errc::fingerprint_mismatch);

        snapshot_description bad_probe = d;
        bad_probe.probe = digest_of(one_digit_changed(c.probe, digit));
        err.clear();
        CHECK_FALSE(snapshot::try_build(bad_probe, err).has_value());
        CHECK(err == errc::fingerprint_mismatch);
    }
}

TEST_CASE("snapshot: cluster, epoch, addresses, metadata and the input order of id-sorted strategies are not in the digests",
          "[snapshot][golden]") {
    const std::vector<std::string> sorted_by_id{"ring", "rendezvous", "maglev", "modulo", "envoy-maglev", "redis"};
    for (const auto& c : golden_cases()) {
        INFO("case " << c.name);
        snapshot_description d = c.description;
        d.cluster = "another-cluster";
        d.epoch = 42;
        d.parent_epoch = 41;
        d.metadata = {.created_ms = 1700000000000, .author = "golden", .reason = "test"};
        for (std::size_t i = 0; i < d.nodes.size(); ++i) {
            d.nodes[i].address = "10.9.9." + std::to_string(i) + ":1234";
        }
        if (std::find(sorted_by_id.begin(), sorted_by_id.end(), d.strategy.name) != sorted_by_id.end()) {
            std::reverse(d.nodes.begin(), d.nodes.end());
        }
        const auto s = snapshot::build(d);
        CHECK(s.fingerprint().hex() == c.fingerprint);
        CHECK(s.probe_digest().hex() == c.probe);
    }
}

TEST_CASE("snapshot: overrides change the fingerprint, not the probe digest, and their order does not matter",
          "[snapshot][golden][overrides]") {
    std::size_t with_overrides = 0;
    for (const auto& c : golden_cases()) {
        if (c.description.overrides.empty()) {
            continue;
        }
        INFO("case " << c.name);
        ++with_overrides;
        snapshot_description plain = c.description;
        plain.overrides.clear();
        const auto s = snapshot::build(plain);
        CHECK(s.fingerprint().hex() != c.fingerprint);
        CHECK(s.probe_digest().hex() == c.probe);
        snapshot_description reversed = c.description;
        std::reverse(reversed.overrides.begin(), reversed.overrides.end());
        CHECK(snapshot::build(reversed).fingerprint().hex() == c.fingerprint);
    }
    CHECK(with_overrides == 5);
}

TEST_CASE("snapshot: documents stating a fingerprint of encoding 1 still build, and encoding 2 differs only where copies spread",
          "[snapshot][golden][fingerprint]") {
    const auto v1 = golden_cases(1);
    const auto v2 = golden_cases(2);
    std::size_t differ = 0;
    for (const auto& old : v1) {
        INFO("case " << old.name);
        const auto now = std::find_if(v2.begin(), v2.end(), [&](const golden_case& c) { return c.name == old.name; });
        REQUIRE(now != v2.end());
        CHECK(now->probe == old.probe);
        const auto& rep = old.description.replication;
        const bool spread = rep.count > 1 && rep.spread != failure_domain::node;
        CHECK((now->fingerprint != old.fingerprint) == spread);
        differ += spread ? 1 : 0;
        snapshot_description d = old.description;
        d.fingerprint = digest_of(old.fingerprint);
        error_info err;
        const auto s = snapshot::try_build(d, err);
        INFO(err.message());
        REQUIRE(s.has_value());
        CHECK(s->fingerprint().hex() == now->fingerprint);
        CHECK(s->fingerprint_matches(digest_of(old.fingerprint)));
        CHECK(s->fingerprint_matches(digest_of(now->fingerprint)));
        CHECK_FALSE(s->fingerprint_matches(digest_of(one_digit_changed(old.fingerprint, 3))));
    }
    CHECK(differ == 3);  // ring_replicas3_zone, partitions_q4_n2_rack, maglev_override_replicated
}

namespace {

/// Two descriptions' placements compared on probe keys: the owner now and after, the copies
/// now and after, and the write set, each as node ids.
auto behaviour(const snapshot& s) -> std::vector<std::string> {
    std::vector<std::string> out;
    std::array<std::uint32_t, 2 * max_snapshot_copies> idx{};
    for (int i = 0; i < 1500; ++i) {
        const std::string key = "key:" + std::to_string(i);
        std::string line = s.owner(key).id + "|" + s.next_owner(key).id + "|";
        for (const placement* p : {&s.current(), &s.pending()}) {
            const std::size_t n = p->copies_of(key, std::span<std::uint32_t>(idx.data(), p->width()));
            for (std::size_t k = 0; k < n; ++k) {
                line += s.nodes()[idx[k]].id + ",";
            }
            line += "|";
        }
        for (const auto* node : s.write_set(key)) {
            line += node->id + ",";
        }
        out.push_back(std::move(line));
    }
    return out;
}

}  // namespace

// Issue: two snapshots that differed only in one node's zone shared a fingerprint but placed
// copies differently (encoding 1 left locations out).
TEST_CASE("snapshot: a node's zone is in the fingerprint when copies spread over zones", "[snapshot][fingerprint]") {
    const auto make = [](const std::string& zone_of_d) {
        snapshot_description d;
        d.cluster = "eu";
        d.replication = {.count = 3, .spread = failure_domain::zone};
        for (const auto& [id, zone] : std::vector<std::pair<std::string, std::string>>{
                 {"a", "z1"}, {"b", "z2"}, {"c", "z3"}, {"d", zone_of_d}}) {
            d.nodes.push_back({.id = id, .where = {.region = "eu", .zone = zone, .rack = ""}});
        }
        return snapshot::build(d);
    };
    const auto z1 = make("z1");
    const auto z2 = make("z2");
    CHECK(behaviour(z1) != behaviour(z2));
    CHECK(z1.fingerprint() != z2.fingerprint());
    // Renaming every zone keeps which nodes share one, so every copy and the fingerprint.
    snapshot_description renamed = z1.describe();
    renamed.fingerprint.reset();
    for (auto& n : renamed.nodes) {
        n.where.zone = "zone-" + n.where.zone;
    }
    const auto r = snapshot::build(renamed);
    CHECK(behaviour(r) == behaviour(z1));
    CHECK(r.fingerprint() == z1.fingerprint());
}

// With on_shortfall relax, copies that find too few zones spread over racks, so a rack is in
// the fingerprint there (and only there: under fail a rack change that moves no copy keeps it).
TEST_CASE("snapshot: a relaxed replication's racks are in the fingerprint where zones run short",
          "[snapshot][fingerprint]") {
    const auto make = [](const std::string& rack_of_c, keyplace::shortfall rule, std::size_t zones_of_d) {
        snapshot_description d;
        d.cluster = "eu";
        d.replication = {.count = 3, .spread = failure_domain::zone, .on_shortfall = rule};
        d.nodes = {{.id = "a", .where = {.region = "eu", .zone = "z1", .rack = "r1"}},
                   {.id = "b", .where = {.region = "eu", .zone = "z1", .rack = "r2"}},
                   {.id = "c", .where = {.region = "eu", .zone = "z2", .rack = rack_of_c}},
                   {.id = "d", .where = {.region = "eu", .zone = zones_of_d == 2 ? "z2" : "z3", .rack = "r1"}}};
        return snapshot::build(d);
    };
    // Two zones for three copies: the third copy is spread by rack.
    const auto r1 = make("r1", keyplace::shortfall::relax, 2);
    const auto r2 = make("r2", keyplace::shortfall::relax, 2);
    CHECK(behaviour(r1) != behaviour(r2));
    CHECK(r1.fingerprint() != r2.fingerprint());
    // Three zones suffice: racks decide nothing, whatever the rule.
    const auto f1 = make("r1", keyplace::shortfall::fail, 3);
    const auto f2 = make("r2", keyplace::shortfall::fail, 3);
    CHECK(behaviour(f1) == behaviour(f2));
    CHECK(f1.fingerprint() == f2.fingerprint());
    CHECK(make("r1", keyplace::shortfall::relax, 3).fingerprint() == f1.fingerprint());
}

// Property: random pairs of descriptions that differ in one field. Where the field changes an
// owner, a copy or a write set on the probe keys, the fingerprints differ; an address, the
// metadata, the cluster and the epoch never change it. The counts asserted at the end make sure
// each kind of field was exercised with an effect; at this seed the pairs with an effect were
// region 20, zone 31, rack 15, weight 36, state 51, id 55, count 36, spread 25, parameter 17 and
// override 37 (out of 31 to 77 pairs per field). With encoding 1, 36 of them shared a
// fingerprint.
TEST_CASE("snapshot: descriptions differing in one field differ in fingerprint wherever placement differs",
          "[snapshot][fingerprint][property]") {
    std::uint64_t rng = 0x6b657970'6c616365ULL;
    const auto below = [&](std::size_t n) { return static_cast<std::size_t>(keyplace::detail::splitmix64(rng) % n); };
    const std::vector<std::string> strategies{"ring", "rendezvous", "maglev", "partitions", "modulo", "jump", "redis"};
    const std::vector<std::string> regions{"eu", "us"};
    const std::vector<std::string> zones{"z1", "z2", "z3"};
    const std::vector<std::string> racks{"r1", "r2"};
    const std::vector<failure_domain> levels{failure_domain::node, failure_domain::rack, failure_domain::zone,
                                             failure_domain::region};
    enum field { region, zone, rack, weight, state, id, count, spread, param, override_node, address, metadata,
                 cluster_epoch, fields };
    std::array<std::size_t, fields> effective{};
    std::array<std::size_t, fields> tried{};
    for (int trial = 0; trial < 1000; ++trial) {
        snapshot_description a;
        a.cluster = "prop";
        a.strategy.name = strategies[below(strategies.size())];
        const bool weighted = a.strategy.name == "ring" || a.strategy.name == "rendezvous" ||
                              a.strategy.name == "maglev" || a.strategy.name == "partitions";
        if (a.strategy.name == "ring") {
            a.strategy.params["vnodes"] = std::uint64_t{16 + below(32)};
        } else if (a.strategy.name == "maglev") {
            a.strategy.params["table-size"] = std::uint64_t{below(2) == 0 ? 251U : 509U};
        } else if (a.strategy.name == "partitions") {
            a.strategy.params["partitions"] = std::uint64_t{64};
            a.strategy.params["replicas"] = std::uint64_t{1 + below(2)};
        }
        const std::size_t n = 4 + below(5);
        for (std::size_t i = 0; i < n; ++i) {
            snapshot_node node{.id = "n" + std::to_string(i)};
            node.weight = weighted ? std::vector<double>{1.0, 2.0, 0.5}[below(3)] : 1.0;
            node.where = {regions[below(2)], zones[below(3)], racks[below(2)]};
            a.nodes.push_back(std::move(node));
        }
        if (below(3) == 0) {
            a.nodes[below(n)].state = std::vector<node_state>{node_state::joining, node_state::leaving,
                                                              node_state::left}[below(3)];
        }
        a.replication = {.count = std::vector<std::size_t>{0, 2, 3}[below(3)], .spread = levels[below(4)]};
        // Half the location changes are made where copies spread over that very level.
        const auto f = static_cast<field>(below(fields));
        if ((f == region || f == zone || f == rack) && below(2) == 0) {
            a.replication = {.count = 2 + below(2), .spread = f == region ? failure_domain::region
                                                          : f == zone   ? failure_domain::zone
                                                                        : failure_domain::rack};
        }
        if (below(4) == 0) {
            a.overrides.push_back({.key = "key:" + std::to_string(below(1500)), .node = "n0"});
        }
        error_info err;
        const auto sa = snapshot::try_build(a, err);
        if (!sa) {
            continue;
        }
        snapshot_description b = a;
        auto& victim = b.nodes[below(n)];
        switch (f) {
            case region: victim.where.region = victim.where.region == "eu" ? "us" : "eu"; break;
            case zone: victim.where.zone = zones[(below(2) + 1 + static_cast<std::size_t>(victim.where.zone[1] - '1')) % 3]; break;
            case rack: victim.where.rack = victim.where.rack == "r1" ? "r2" : "r1"; break;
            case weight: victim.weight = victim.weight == 2.0 ? 1.0 : 2.0; break;
            case state: victim.state = victim.state == node_state::active ? node_state::leaving : node_state::active; break;
            case id: victim.id = "m" + victim.id.substr(1); break;
            case count: b.replication.count = b.replication.count == 2 ? 3 : 2; break;
            case spread: b.replication.spread = levels[(static_cast<std::size_t>(b.replication.spread) + 1 + below(3)) % 4]; break;
            case param:
                if (a.strategy.name == "ring") {
                    b.strategy.params["vnodes"] = std::get<std::uint64_t>(a.strategy.params["vnodes"]) + 1;
                } else if (a.strategy.name == "maglev") {
                    b.strategy.params["table-size"] = std::uint64_t{1021};
                }
                break;
            case override_node:
                b.overrides = {{.key = "key:7", .node = b.nodes[below(n)].id}};
                break;
            case address: victim.address = "10.0.0." + std::to_string(below(250)) + ":11211"; break;
            case metadata: b.metadata = {.created_ms = 1 + below(1000), .author = "prop", .reason = "test"}; break;
            case cluster_epoch:
                b.cluster = "other";
                b.epoch = 7;
                b.parent_epoch = 6;
                break;
            case fields: break;
        }
        const auto sb = snapshot::try_build(b, err);
        if (!sb) {
            continue;
        }
        INFO("trial " << trial << ", strategy " << a.strategy.name << ", field " << static_cast<int>(f));
        ++tried[f];
        if (f == address || f == metadata || f == cluster_epoch) {
            CHECK(sa->fingerprint() == sb->fingerprint());
            CHECK(behaviour(*sa) == behaviour(*sb));
        } else if (behaviour(*sa) != behaviour(*sb)) {
            ++effective[f];
            CHECK(sa->fingerprint() != sb->fingerprint());
        }
    }
    INFO("tried per field: region " << tried[region] << ", zone " << tried[zone] << ", rack " << tried[rack]);
    INFO("with an effect: region " << effective[region] << ", zone " << effective[zone] << ", rack "
                                    << effective[rack] << ", weight " << effective[weight] << ", state "
                                    << effective[state] << ", id " << effective[id] << ", count " << effective[count]
                                    << ", spread " << effective[spread] << ", param " << effective[param]
                                    << ", override " << effective[override_node]);
    for (const auto f : {region, zone, rack, weight, state, id, count, spread, param, override_node}) {
        CHECK(effective[f] >= 5);
    }
    for (const auto f : {address, metadata, cluster_epoch}) {
        CHECK(tried[f] >= 20);
    }
}
