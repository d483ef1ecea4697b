// The contact planner (fleet/contact.hpp): a table of scripted scenarios written from the
// documented semantics (doc/contact.md: Cassandra's levels, dskit's max errors, minimized
// requests, hedging and zone preference), the cross-zone count the issue asks, and bad input.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/contact.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace contact_tests {

using keyplace::consistency;
using keyplace::contact_op;
using keyplace::contact_state;
using keyplace::node_health;
using keyplace::snapshot;
using keyplace::snapshot_description;

// The layouts. "3z": zones z0..z2 of two nodes each, 3 copies one a zone. "5z": five zones of
// one node, 3 copies one a zone (two zones hold none of a key). "1z": five nodes in one zone, 3
// copies. "join": 3z with node j0 joining in zone z0, and a key that gains a copy on it.
auto layout(const std::string& name) -> snapshot_description {
    snapshot_description d;
    d.cluster = "contact";
    d.epoch = 1;
    d.strategy.name = "ring";
    const int zones = name == "5z" ? 5 : name == "1z" ? 1 : 3;
    const int per_zone = name == "5z" ? 1 : name == "1z" ? 5 : 2;
    for (int z = 0; z < zones; ++z) {
        for (int i = 0; i < per_zone; ++i) {
            keyplace::snapshot_node n{"n" + std::to_string(z) + std::to_string(i)};
            n.where.region = "eu";
            n.where.zone = "z" + std::to_string(z);
            d.nodes.push_back(n);
        }
    }
    d.replication = {3, name == "1z" ? keyplace::failure_domain::node : keyplace::failure_domain::zone};
    if (name == "join") {
        keyplace::snapshot_node j{"j0"};
        j.where.region = "eu";
        j.where.zone = "z0";
        j.state = keyplace::node_state::joining;
        d.nodes.push_back(j);
    }
    return d;
}

struct fixture {
    std::shared_ptr<const snapshot> s;
    std::string key;
    std::map<std::string, std::uint32_t> label;  // r0.. (copies now, in order), p0.. (gained) -> node index
    std::map<std::uint32_t, std::string> name;   // node index -> label
};

auto make_fixture(const std::string& name, bool read_only_r1 = false) -> fixture {
    auto d = layout(name);
    fixture f;
    auto s = std::make_shared<const snapshot>(snapshot::build(d));
    // The key: "user:42", or for "join" the first key that gains a copy.
    f.key = "user:42";
    for (int i = 0; name == "join"; ++i) {
        f.key = "k" + std::to_string(i);
        if (s->write_set(f.key).size() == 4) {
            break;
        }
    }
    if (read_only_r1) {
        std::vector<std::uint32_t> c(3);
        c.resize(s->current().copies_of(f.key, c));
        d.nodes[c[1]].state = keyplace::node_state::read_only;
        s = std::make_shared<const snapshot>(snapshot::build(d));
    }
    std::vector<std::uint32_t> all(8);
    all.resize(s->write_set(f.key, all));
    const std::size_t now = s->current().width();
    for (std::size_t k = 0; k < all.size(); ++k) {
        const std::string l = k < now ? "r" + std::to_string(k) : "p" + std::to_string(k - now);
        f.label[l] = all[k];
        f.name[all[k]] = l;
    }
    f.s = s;
    return f;
}

struct scenario {
    const char* name;
    const char* layout;
    contact_op op;
    consistency level;
    const char* zone;     // "" none, "@r1" the zone of r1, "nocopy" a zone with no copy, else as written
    const char* health;   // "r0=down r1=ro": by label
    bool minimize;
    const char* initial;  // the first wave, by label
    const char* script;   // "ok r1; fail r0 > r2; hedge >; ... => succeeded"
    std::optional<keyplace::errc> error{};
    std::size_t cross = 99;  // cross-zone contacts in the first wave (99: not checked)
};

auto split(const std::string& s, char c) -> std::vector<std::string> {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, c)) {
        const auto b = part.find_first_not_of(' ');
        const auto e = part.find_last_not_of(' ');
        out.push_back(b == std::string::npos ? std::string() : part.substr(b, e - b + 1));
    }
    return out;
}

auto labels_of(const fixture& f, std::span<const keyplace::contact> cs) -> std::string {
    std::string out;
    for (const auto& c : cs) {
        out += (out.empty() ? "" : " ") + f.name.at(c.node);
    }
    return out;
}

void run(const scenario& sc) {
    INFO("scenario: " << sc.name);
    const std::string lay = sc.layout;
    const fixture f = make_fixture(lay == "3z-ro" ? "3z" : lay, lay == "3z-ro");
    std::vector<node_health> health(f.s->nodes().size(), node_health::up);
    for (const auto& h : split(sc.health, ' ')) {
        if (h.empty()) {
            continue;
        }
        const auto eq = h.find('=');
        health[f.label.at(h.substr(0, eq))] = h.substr(eq + 1) == "down" ? node_health::down : node_health::read_only;
    }
    std::string zone = sc.zone;
    if (zone.rfind("@", 0) == 0) {
        zone = f.s->nodes()[f.label.at(zone.substr(1))].where.zone;
    } else if (zone == "nocopy") {
        for (const auto& n : f.s->nodes()) {
            bool holds = false;
            for (const auto& [l, i] : f.label) {
                holds = holds || f.s->nodes()[i].where.zone == n.where.zone;
            }
            if (!holds) {
                zone = n.where.zone;
                break;
            }
        }
    }
    const keyplace::contact_planner planner(*f.s);
    keyplace::contact_request r;
    r.op = sc.op;
    r.level = sc.level;
    r.zone = zone;
    r.health = health;
    r.minimize = sc.minimize;
    if (lay == "3z-region") {
        r.locality = keyplace::failure_domain::region;
    }
    if (lay == "3z-rack") {
        r.locality = keyplace::failure_domain::rack;
    }
    keyplace::contact_plan p;
    keyplace::error_info err;
    const bool ok = planner.try_plan(f.key, r, p, err);
    if (sc.error) {
        CHECK_FALSE(ok);
        CHECK(err.code() == sc.error);
        return;
    }
    REQUIRE(ok);
    keyplace::contact_tracker t(p);
    CHECK(labels_of(f, t.start()) == sc.initial);
    CHECK(p.initial() == split(sc.initial, ' ').size());
    if (sc.cross != 99) {
        CHECK(p.cross_zone_initial() == sc.cross);
    }
    const auto index_of = [&](const std::string& l) {
        const auto node = f.label.at(l);
        for (std::size_t i = 0; i < p.contacts().size(); ++i) {
            if (p.contacts()[i].node == node) {
                return i;
            }
        }
        return p.contacts().size();  // not a contact: its answer is ignored
    };
    const auto arrow = std::string(sc.script).find("=>");
    const std::string steps = std::string(sc.script).substr(0, arrow);
    const std::string final = split(std::string(sc.script).substr(arrow + 2), ';')[0];
    for (const auto& step : split(steps, ';')) {
        if (step.empty()) {
            continue;
        }
        INFO("step: " << step);
        const auto parts = split(step, '>');
        const auto words = split(parts[0], ' ');
        const std::string want = parts.size() > 1 ? parts[1] : "";
        std::span<const keyplace::contact> got;
        if (words[0] == "hedge") {
            got = t.hedge();
        } else if (words[0] == "ok") {
            got = t.succeeded(index_of(words[1]));
        } else {
            got = t.failed(index_of(words[1]));
        }
        CHECK(labels_of(f, got) == want);
    }
    const auto state = t.state();
    CHECK(std::string(state == contact_state::succeeded ? "succeeded" : state == contact_state::failed ? "failed" : "running") ==
          final);
}

using enum consistency;
constexpr auto R = contact_op::read;
constexpr auto W = contact_op::write;
constexpr auto shortfall = keyplace::errc::replica_shortfall;

// Each row from the semantics (doc/contact.md), not from the code's output: n copies now, QUORUM
// n/2 + 1, ONE 1, ALL n, LOCAL_QUORUM n_z/2 + 1 of the caller's zone's copies (a read asks only
// them, a write sends to all and counts theirs), EACH_QUORUM n_z/2 + 1 in every zone; a write in
// a transition also needs each gained copy; down copies are not contacted and read-only ones
// answer reads but only take a write's invalidation; reads contact as many as needed, local copies
// first then the placement's order, one more on each failure (of the same requirement) or hedge;
// writes contact every copy; success when every requirement has its answers, failure when one can
// no longer have them.
const scenario scenarios[] = {
    // QUORUM reads, 3 zones, one copy each: 2 answers of 3.
    {"quorum read, local r1: r1 then r0, one cross-zone", "3z", R, quorum, "@r1", "", true, "r1 r0", "ok r1; ok r0 => succeeded", {}, 1},
    {"quorum read, local r0", "3z", R, quorum, "@r0", "", true, "r0 r1", "ok r0; ok r1 => succeeded", {}, 1},
    {"quorum read, local r2: a failure releases r1", "3z", R, quorum, "@r2", "", true, "r2 r0", "ok r2; fail r0 > r1; ok r1 => succeeded", {}, 1},
    {"quorum read, no zone: two failures fail it", "3z", R, quorum, "", "", true, "r0 r1", "fail r1 > r2; fail r2 > => failed", {}, 2},
    {"quorum read, every copy at once: two cross-zone", "3z", R, quorum, "@r1", "", false, "r1 r0 r2", "ok r2; ok r0 => succeeded", {}, 2},
    {"quorum read, local copy down: both others", "3z", R, quorum, "@r0", "r0=down", true, "r1 r2", "ok r1; ok r2 => succeeded", {}, 2},
    {"quorum read, two copies down: refused", "3z", R, quorum, "@r0", "r0=down r1=down", true, "", "", shortfall},
    {"quorum read, a read-only copy answers reads", "3z", R, quorum, "@r1", "r1=ro", true, "r1 r0", "ok r1; ok r0 => succeeded"},
    {"quorum read, hedge releases the third", "3z", R, quorum, "@r1", "", true, "r1 r0", "hedge > r2; ok r2; ok r1 => succeeded"},
    {"quorum read, a second hedge has nothing left", "3z", R, quorum, "@r1", "", true, "r1 r0", "hedge > r2; hedge >; ok r0; ok r2 => succeeded"},
    {"quorum read, an answer from a copy not started is ignored", "3z", R, quorum, "@r1", "", true, "r1 r0", "ok r1; ok r0; fail r2 > => succeeded"},
    {"quorum read, a second answer from one copy is ignored", "3z", R, quorum, "", "", true, "r0 r1", "fail r0 > r2; fail r0 >; ok r1; ok r2 => succeeded"},
    {"quorum read, no hedge after success", "3z", R, quorum, "@r1", "", true, "r1 r0", "ok r1; ok r0; hedge > => succeeded"},
    {"quorum read, one answer is not enough", "3z", R, quorum, "@r1", "", true, "r1 r0", "ok r1 => running"},
    {"quorum read, a failure after a success still releases", "3z", R, quorum, "@r1", "", true, "r1 r0", "ok r1; fail r0 > r2 => running"},
    // ONE reads.
    {"one read, local r2 only", "3z", R, one, "@r2", "", true, "r2", "ok r2 => succeeded", {}, 0},
    {"one read, failures walk the order", "3z", R, one, "@r2", "", true, "r2", "fail r2 > r0; fail r0 > r1; ok r1 => succeeded"},
    {"one read, every copy fails", "3z", R, one, "@r2", "", true, "r2", "fail r2 > r0; fail r0 > r1; fail r1 > => failed"},
    {"one read, every copy at once", "3z", R, one, "@r2", "", false, "r2 r0 r1", "ok r0 => succeeded"},
    {"one read, local copy down", "3z", R, one, "@r2", "r2=down", true, "r0", "ok r0 => succeeded", {}, 1},
    {"one read, every copy down: refused", "3z", R, one, "", "r0=down r1=down r2=down", true, "", "", shortfall},
    {"one read, hedges walk the order", "3z", R, one, "", "", true, "r0", "hedge > r1; hedge > r2; hedge >; ok r2 => succeeded"},
    // ALL reads.
    {"all read, every copy, local first", "3z", R, all, "@r1", "", true, "r1 r0 r2", "ok r0; ok r1; ok r2 => succeeded", {}, 2},
    {"all read, one failure fails it", "3z", R, all, "@r1", "", true, "r1 r0 r2", "fail r1 > => failed"},
    {"all read, a copy down: refused", "3z", R, all, "", "r2=down", true, "", "", shortfall},
    {"all read, a read-only copy counts", "3z", R, all, "", "r2=ro", true, "r0 r1 r2", "ok r0; ok r1; ok r2 => succeeded"},
    // LOCAL_QUORUM reads.
    {"local_quorum read, one copy in the zone: it alone", "3z", R, local_quorum, "@r1", "", true, "r1", "ok r1 => succeeded", {}, 0},
    {"local_quorum read, its failure fails it", "3z", R, local_quorum, "@r1", "", true, "r1", "fail r1 > => failed"},
    {"local_quorum read, a zone without a copy: refused", "5z", R, local_quorum, "nocopy", "", true, "", "", shortfall},
    {"local_quorum read without a zone: refused", "3z", R, local_quorum, "", "", true, "", "", keyplace::errc::invalid_argument},
    {"local_quorum read, one zone of three copies: 2, then the third", "1z", R, local_quorum, "@r0", "", true, "r0 r1", "fail r0 > r2; ok r1; ok r2 => succeeded", {}, 0},
    {"local_quorum read, the local copy down: refused", "3z", R, local_quorum, "@r2", "r2=down", true, "", "", shortfall},
    {"local_quorum read, no minimizing: still only local copies", "3z", R, local_quorum, "@r0", "", false, "r0", "ok r0 => succeeded", {}, 0},
    // EACH_QUORUM reads.
    {"each_quorum read, one a zone: all three", "3z", R, each_quorum, "@r1", "", true, "r1 r0 r2", "ok r0; ok r1; ok r2 => succeeded"},
    {"each_quorum read, a zone's only copy fails", "3z", R, each_quorum, "", "", true, "r0 r1 r2", "ok r0; fail r2 > => failed"},
    {"each_quorum read, one zone: 2 of 3, a failure releases the third", "1z", R, each_quorum, "", "", true, "r0 r1", "fail r1 > r2; ok r0; ok r2 => succeeded"},
    {"each_quorum read, one zone: a hedge", "1z", R, each_quorum, "", "", true, "r0 r1", "hedge > r2; ok r2; ok r1 => succeeded"},
    {"each_quorum read, a zone's copy down: refused", "3z", R, each_quorum, "", "r1=down", true, "", "", shortfall},
    // Writes: every copy that takes values, the level counting acknowledgements.
    {"quorum write, every copy, local first", "3z", W, quorum, "@r1", "", true, "r1 r0 r2", "ok r1; ok r2 => succeeded", {}, 2},
    {"quorum write, two failures", "3z", W, quorum, "@r1", "", true, "r1 r0 r2", "fail r1 >; fail r0 > => failed"},
    {"quorum write, a read-only copy takes the invalidation only", "3z", W, quorum, "", "r2=ro", true, "r0 r1 r2", "ok r2; ok r1 ; ok r0 => succeeded"},
    {"quorum write, read-only and down: refused", "3z", W, quorum, "", "r2=ro r0=down", true, "", "", shortfall},
    // A read-only node drains: the key keeps it as a copy now (invalidation only) and gains p0.
    {"quorum write, read-only by the snapshot's state: 2 + the gained copy", "3z-ro", W, quorum, "", "", true, "r0 r1 r2 p0", "ok r1; ok r2; ok r0 => running"},
    {"quorum write, a draining copy's gain completes it", "3z-ro", W, quorum, "", "", true, "r0 r1 r2 p0", "ok r1; ok r2; ok r0; ok p0 => succeeded"},
    {"one write, the first acknowledgement", "3z", W, one, "@r2", "", true, "r2 r0 r1", "ok r0 => succeeded"},
    {"all write, a copy down: refused", "3z", W, all, "", "r1=down", true, "", "", shortfall},
    {"all write, a failure fails it", "3z", W, all, "", "", true, "r0 r1 r2", "ok r0; ok r1; fail r2 > => failed"},
    {"local_quorum write, sent everywhere, the local one counts", "3z", W, local_quorum, "@r1", "", true, "r1 r0 r2", "ok r0; ok r2; ok r1 => succeeded"},
    {"local_quorum write, the local copy fails", "3z", W, local_quorum, "@r1", "", true, "r1 r0 r2", "ok r0; fail r1 > => failed"},
    {"each_quorum write, one a zone", "3z", W, each_quorum, "", "", true, "r0 r1 r2", "ok r0; ok r1; ok r2 => succeeded"},
    {"quorum write, minimizing does not apply", "3z", W, quorum, "", "", false, "r0 r1 r2", "ok r0; ok r1 => succeeded"},
    // A transition: the key gains copy p0 on the joining node.
    {"quorum write in a transition: 2 + the gained copy", "join", W, quorum, "", "", true, "r0 r1 r2 p0", "ok r0; ok r1; ok p0 => succeeded"},
    {"quorum write in a transition: any 3 of the 4", "join", W, quorum, "", "", true, "r0 r1 r2 p0", "ok r0; ok r1; ok r2 => succeeded"},
    {"quorum write in a transition: two failures of four", "join", W, quorum, "", "", true, "r0 r1 r2 p0", "fail p0 >; fail r0 > => failed"},
    {"quorum read in a transition: the copies now", "join", R, quorum, "", "", true, "r0 r1", "ok r0; ok r1 => succeeded"},
    {"one write in a transition: 1 + the gained copy", "join", W, one, "", "", true, "r0 r1 r2 p0", "ok r0 ; ok r1 => succeeded"},
    {"all write in a transition: four", "join", W, all, "", "", true, "r0 r1 r2 p0", "ok r0; ok r1; ok r2 => running"},
    // Zones and bad input.
    {"quorum read, a zone holding no copy: two cross-zone", "5z", R, quorum, "nocopy", "", true, "r0 r1", "ok r0; ok r1 => succeeded", {}, 2},
    {"quorum read, an unknown zone: refused", "3z", R, quorum, "z9", "", true, "", "", keyplace::errc::unknown_domain},
    {"quorum read by region: every copy local", "3z-region", R, quorum, "eu", "", true, "r0 r1", "ok r0; ok r1 => succeeded", {}, 0},
    {"locality rack: refused", "3z-rack", R, quorum, "", "", true, "", "", keyplace::errc::invalid_argument},
    {"one zone, quorum read, no zone: the order", "1z", R, quorum, "", "", true, "r0 r1", "ok r0; ok r1 => succeeded"},
};

}  // namespace contact_tests

TEST_CASE("contact: scripted scenarios from the documented semantics", "[contact]") {
    using namespace contact_tests;
    CHECK(std::size(scenarios) >= 50);
    for (const auto& sc : scenarios) {
        run(sc);
    }
}

// The issue's figure: 3 zones, 3 copies, the local zone preferred: one cross-zone contact per
// QUORUM read when the first wave succeeds, two when every copy is contacted; over 10^4 keys and
// every caller zone.
TEST_CASE("contact: one cross-zone contact per QUORUM read from a zone, two when all are contacted", "[contact]") {
    using namespace contact_tests;
    const auto s = snapshot::build(layout("3z"));
    const keyplace::contact_planner planner(s);
    keyplace::contact_plan p;
    keyplace::error_info err;
    std::size_t plans = 0;
    for (int k = 0; k < 10000; ++k) {
        for (const char* zone : {"z0", "z1", "z2"}) {
            keyplace::contact_request r{.op = contact_op::read, .level = consistency::quorum, .zone = zone};
            REQUIRE(planner.try_plan("key:" + std::to_string(k), r, p, err));
            CHECK(p.initial() == 2);
            CHECK(p.cross_zone_initial() == 1);
            CHECK(p.contacts()[0].local);
            r.minimize = false;
            REQUIRE(planner.try_plan("key:" + std::to_string(k), r, p, err));
            CHECK(p.cross_zone_initial() == 2);
            ++plans;
        }
    }
    CHECK(plans == 30000);
    // The zones a key's request survives losing, one copy a zone: QUORUM 1, ONE 2, ALL and
    // EACH_QUORUM 0, a LOCAL_QUORUM read 0 (it asks its own zone alone); with one copy down
    // already, QUORUM survives no further zone (as max_failures says).
    for (const auto& [level, zones] : {std::pair{consistency::quorum, 1U}, {consistency::one, 2U}, {consistency::all, 0U},
                                       {consistency::each_quorum, 0U}, {consistency::local_quorum, 0U}}) {
        REQUIRE(planner.try_plan("user:42", {.level = level, .zone = "z1"}, p, err));
        CHECK(p.max_unavailable_zones() == zones);
    }
    std::vector<node_health> one_down(s.nodes().size(), node_health::up);
    std::vector<std::uint32_t> copies(3);
    copies.resize(s.current().copies_of("user:42", copies));
    one_down[copies[2]] = node_health::down;
    REQUIRE(planner.try_plan("user:42", {.level = consistency::quorum, .health = one_down}, p, err));
    CHECK(p.max_failures() == 0);
    CHECK(p.max_unavailable_zones() == 0);
    // A refused plan holds no contact, and a tracker on it fails rather than succeeds.
    CHECK_FALSE(planner.try_plan("user:42", {.level = consistency::local_quorum}, p, err));
    CHECK(p.contacts().empty());
    CHECK(keyplace::contact_tracker(p).state() == contact_state::failed);
}

TEST_CASE("contact: bad input is refused, naming the value", "[contact][errors]") {
    using namespace contact_tests;
    const auto s = snapshot::build(layout("3z"));
    const keyplace::contact_planner planner(s);
    keyplace::contact_plan p;
    keyplace::error_info err;
    std::vector<node_health> short_health(2, node_health::up);
    CHECK_FALSE(planner.try_plan("k", {.health = short_health}, p, err));
    CHECK(err.message() == "contact plan: health for 2 nodes, the snapshot lists 6");
    CHECK_FALSE(planner.try_plan("k", {.zone = "z9"}, p, err));
    CHECK(err.message() == "contact plan: no node is in zone 'z9'");
    CHECK_FALSE(planner.try_plan("k", {.level = consistency::local_quorum}, p, err));
    CHECK(err.message() == "contact plan: LOCAL_QUORUM needs the caller's zone");
    std::vector<node_health> down(6, node_health::down);
    CHECK_FALSE(planner.try_plan("user:42", {.level = consistency::quorum, .health = down}, p, err));
    CHECK(err.code() == keyplace::errc::replica_shortfall);
    CHECK(err.message().rfind("contact plan: QUORUM read of 'user:42' needs 2 answers, 0 copies can give one ('n", 0) == 0);
    CHECK_THROWS_AS(planner.plan("k", {.zone = "z9"}), keyplace::error);
    CHECK(keyplace::parse_consistency("local_quorum") == consistency::local_quorum);
    CHECK(keyplace::parse_consistency("EACH_QUORUM") == consistency::each_quorum);
    CHECK_FALSE(keyplace::parse_consistency("TWO").has_value());
    CHECK_FALSE(keyplace::parse_consistency("").has_value());
}
