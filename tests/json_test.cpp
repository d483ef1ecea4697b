// Tests of json.hpp: the round trip read(write(s)) == s.describe() over random snapshots of every
// strategy, the written layout, the forward-compatibility rule, and one refusal per bad input
// (its errc and the JSON path its message starts with).
#include "keyplace_catch.hpp"

#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using keyplace::errc;
using keyplace::error_info;
using keyplace::node_state;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
using json = nlohmann::ordered_json;

namespace {

auto starts_with(std::string_view s, std::string_view prefix) -> bool { return s.substr(0, prefix.size()) == prefix; }

// ---- Random snapshots.

class generator {
public:
    explicit generator(std::uint64_t seed) : rng_(seed) {}

    auto below(std::size_t n) -> std::size_t { return static_cast<std::size_t>(rng_() % n); }
    auto chance(int percent) -> bool { return below(100) < static_cast<std::size_t>(percent); }
    auto word() -> std::uint64_t { return rng_(); }

    /// Text with quotes, backslashes, multi-byte UTF-8 and control bytes (NUL included).
    auto text(std::size_t max_pieces) -> std::string {
        static const std::vector<std::string> pieces = {
            "a", "Z", "9", "-", "\"", "\\", "/", "'", " ", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac",
            "\xf0\x9f\x98\x80", "\n", "\t", "\x01", "\x1f", "\x7f", std::string(1, '\0'), "{}", "[,]"};
        std::string out;
        const std::size_t n = below(max_pieces + 1);
        for (std::size_t i = 0; i < n; ++i) {
            out += pieces[below(pieces.size())];
        }
        return out;
    }

    /// A name (check_name): multi-byte UTF-8, dots and '|', none of the bytes a name may not hold.
    auto name(std::size_t max_pieces) -> std::string {
        static const std::vector<std::string> pieces = {"a",  "Z", "9", "-", ".", "|", "\xc3\xa9",
                                                        "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80"};
        std::string out;
        const std::size_t n = below(max_pieces + 1);
        for (std::size_t i = 0; i < n; ++i) {
            out += pieces[below(pieces.size())];
        }
        return out;
    }

    auto state() -> node_state {
        static constexpr node_state states[] = {node_state::active,  node_state::active, node_state::active,
                                                node_state::joining, node_state::leaving, node_state::left};
        return states[below(std::size(states))];
    }

private:
    std::mt19937_64 rng_;
};

enum class weights { fractional, whole, one };

struct strategy_case {
    std::string_view name;
    weights weight;
};

// Every snapshot strategy; the weights each accepts.
constexpr strategy_case strategy_cases[] = {
    {"ring", weights::fractional},       {"rendezvous", weights::fractional}, {"jump", weights::one},
    {"jump-guava", weights::one},         {"maglev", weights::fractional},     {"modulo", weights::one},
    {"envoy-ring", weights::whole},       {"envoy-maglev", weights::whole},    {"ketama", weights::whole},
    {"ketama-spy", weights::whole},       {"ketama-unweighted", weights::one}, {"libketama", weights::whole},
    {"hash-ring", weights::whole},        {"cassandra", weights::fractional},  {"redis", weights::fractional},
};

auto random_weight(generator& g, weights kind) -> double {
    static constexpr double fractional[] = {0.1, 1.0 / 3.0, 1e-3, 1234.5678, 1.0, 2.0, 0.75, 3.0};
    static constexpr double whole[] = {1.0, 2.0, 3.0, 100.0, 7.0};
    switch (kind) {
        case weights::fractional: return fractional[g.below(std::size(fractional))];
        case weights::whole: return whole[g.below(std::size(whole))];
        case weights::one: break;
    }
    return 1.0;
}

/// Redis with explicit slots: active nodes share the slot space in random ranges; maybe one
/// leaving node hands a range to one joining node; maybe a tombstone with no slots.
void redis_slots(generator& g, std::vector<snapshot_node>& nodes) {
    const std::size_t active = 1 + g.below(5);
    const bool handoff = g.chance(50);
    const std::size_t ranges = active + (handoff ? 1 : 0) + g.below(4);
    std::set<std::uint16_t> cuts;
    while (cuts.size() < ranges - 1) {
        cuts.insert(static_cast<std::uint16_t>(1 + g.below(16383)));
    }
    std::vector<keyplace::slot_span> spans;
    std::uint16_t first = 0;
    for (const auto c : cuts) {
        spans.push_back({first, static_cast<std::uint16_t>(c - 1)});
        first = c;
    }
    spans.push_back({first, 16383});
    for (std::size_t i = 0; i < active; ++i) {
        nodes.push_back({.id = "r" + std::to_string(i) + "|" + g.name(3)});
    }
    std::size_t r = 0;
    if (handoff) {
        nodes.push_back({.id = "leaver", .state = node_state::leaving, .slots = {spans[r]}});
        nodes.push_back({.id = "joiner", .state = node_state::joining, .slots = {spans[r]}});
        ++r;
    }
    for (std::size_t k = 0; r < spans.size(); ++r, ++k) {
        nodes[k % active].slots.push_back(spans[r]);
    }
    if (g.chance(30)) {
        nodes.push_back({.id = "gone", .state = node_state::left});
    }
}

auto random_description(generator& g, const strategy_case& c) -> snapshot_description {
    snapshot_description d;
    d.cluster = "c" + g.name(8);
    d.epoch = g.chance(10) ? std::numeric_limits<std::uint64_t>::max() : 1 + g.word() % (std::uint64_t{1} << 40);
    d.parent_epoch = g.chance(30) ? 0 : g.word() % d.epoch;
    d.strategy.name = std::string(c.name);
    d.metadata = {.created_ms = g.word(), .author = g.text(6), .reason = g.text(10)};
    const std::string_view name = c.name;
    const bool ketama = name.find("ketama") != std::string_view::npos || name == "hash-ring";
    std::uint32_t vnodes = 160;
    if (name == "ring" && g.chance(70)) {
        vnodes = static_cast<std::uint32_t>(1 + g.below(200));
        d.strategy.params["vnodes"] = std::uint64_t{vnodes};
    }
    if (name == "maglev" && g.chance(50)) {
        d.strategy.params["table-size"] = std::uint64_t{g.chance(50) ? 1009U : 65537U};
    }
    if (name == "envoy-ring") {
        if (g.chance(50)) {
            d.strategy.params["hash"] = std::string(g.chance(50) ? "xxh64" : "murmur2-envoy");
        }
        if (g.chance(50)) {
            d.strategy.params["min-ring-size"] = std::uint64_t{g.chance(50) ? 64U : 1024U};
            d.strategy.params["max-ring-size"] = std::uint64_t{g.chance(50) ? 1024U : 4096U};
        }
    }
    if (name == "ketama-unweighted" && g.chance(50)) {
        d.strategy.params["hash"] = std::string(g.chance(50) ? "one-at-a-time" : "md5-ketama");
    }
    if (name == "redis" && g.chance(50)) {
        redis_slots(g, d.nodes);
    } else {
        const std::size_t n = 1 + g.below(g.chance(10) ? 40 : 10);
        std::set<std::int64_t> tokens;
        for (std::size_t i = 0; i < n; ++i) {
            snapshot_node node;
            node.id = ketama ? "10.0." + std::to_string(i) + ".1:" + std::to_string(11211 + g.below(100))
                             : "n" + std::to_string(i) + "|" + g.name(4);
            node.address = g.chance(50) ? "10.1.0." + std::to_string(i) + ":11211" : g.text(3);
            node.weight = random_weight(g, c.weight);
            if (name == "ring" && (static_cast<double>(vnodes) * node.weight < 1.0 ||
                                   static_cast<double>(vnodes) * node.weight > 5000.0)) {
                node.weight = 1.5;  // at least 1 point, at most 300
            }
            node.state = g.state();
            if (g.chance(40)) {
                node.where = {g.name(2), g.name(2), g.name(2)};
            }
            if (name == "cassandra") {
                const std::size_t t = 1 + g.below(4);
                while (node.tokens.size() < t) {
                    const auto token = static_cast<std::int64_t>(g.word());
                    if (tokens.insert(token).second) {
                        node.tokens.push_back(token);
                    }
                }
            }
            d.nodes.push_back(std::move(node));
        }
        d.nodes[g.below(n)].state = node_state::active;  // someone owns keys now and after
    }
    if (g.chance(50)) {
        static constexpr keyplace::failure_domain levels[] = {
            keyplace::failure_domain::node, keyplace::failure_domain::rack, keyplace::failure_domain::zone,
            keyplace::failure_domain::region};
        d.replication.spread = levels[g.below(4)];
    }
    return d;
}

/// Copies per key where the strategy has a preference order and enough holders: a rebuild
/// with 2 or 3 copies over nodes, if it builds.
auto with_replication(generator& g, const snapshot& s) -> std::optional<snapshot> {
    if (!s.current().ordered() || !g.chance(40)) {
        return std::nullopt;
    }
    auto d = s.describe();
    d.fingerprint.reset();
    d.probe.reset();
    d.replication = {.count = 2 + g.below(2), .spread = keyplace::failure_domain::node};
    error_info err;
    return snapshot::try_build(d, err);
}

// ---- Documents for the refusals.

/// A valid document: a ring of nodes a, b, c, d.
auto base() -> json {
    return {{"format", "keyplace.snapshot/1"},
            {"cluster", "c"},
            {"epoch", 42},
            {"parent_epoch", 41},
            {"strategy", {{"name", "ring"}, {"contract", 1}, {"params", {{"vnodes", 160}}}}},
            {"replication", {{"count", 0}, {"spread", "node"}}},
            {"nodes",
             {{{"id", "a"}, {"address", "10.0.0.1:11211"}, {"weight", 1.0}, {"state", "active"}},
              {{"id", "b"}, {"weight", 2}},
              {{"id", "c"}, {"state", "joining"}},
              {{"id", "d"}, {"state", "leaving"}}}},
            {"metadata", {{"created_ms", 0}, {"author", ""}, {"reason", ""}}}};
}

/// The document's text, with the JSON string "RAW" replaced by token (a number JSON allows
/// but nlohmann::json cannot hold as written).
auto text(const json& j, std::string_view token = {}) -> std::string {
    std::string t = j.dump();
    if (const auto at = t.find("\"RAW\""); at != std::string::npos) {
        t.replace(at, 5, token);
    }
    return t;
}

/// A process serving base() at epoch 41, to which every refused document is offered the way a
/// service would (load, then publish): nothing may reach it.
auto serving() -> keyplace::publisher& {
    static keyplace::publisher p([] {
        auto j = base();
        j["epoch"] = 41;
        j["parent_epoch"] = 40;
        return std::make_shared<const snapshot>(keyplace::load_snapshot_json(j.dump()));
    }());
    return p;
}

/// Offers doc to serving(): it stays on epoch 41 with the same snapshot and counts nothing new.
void nothing_published(const std::string& doc) {
    auto& p = serving();
    const auto held = p.current();
    const auto counts = p.counts();
    error_info err;
    if (auto s = keyplace::try_load_snapshot_json(doc, err)) {
        (void)p.try_publish(std::make_shared<const snapshot>(std::move(*s)), err);
    }
    CHECK(p.epoch() == 41);
    CHECK(p.current() == held);
    CHECK(p.counts() == counts);
}

/// read_description_json and try_load_snapshot_json both refuse text with this code and a
/// message that starts with "<path>: "; the error_info is their only output; the throwing
/// form throws the same.
void refused(const std::string& doc, errc code, const std::string& path) {
    INFO(doc);
    error_info err{errc::stale_epoch, "left over from before"};
    const auto read = keyplace::read_description_json(doc, err);
    CHECK_FALSE(read.has_value());
    CHECK(err.code() == code);
    CHECK(starts_with(err.message(), path + ": "));
    CHECK(err.message().size() < 400);
    INFO(err.message());
    error_info load_err;
    const auto loaded = keyplace::try_load_snapshot_json(doc, load_err);
    CHECK_FALSE(loaded.has_value());
    CHECK(load_err.code() == err.code());
    CHECK(load_err.message() == err.message());
    try {
        (void)keyplace::load_snapshot_json(doc);
        FAIL("load_snapshot_json returned");
    } catch (const keyplace::error& e) {
        CHECK(e.code() == code);
        CHECK(std::string(e.what()) == err.message());
    }    nothing_published(doc);
}
void refused(const json& j, errc code, const std::string& path) { refused(text(j), code, path); }

/// The document reads as a description, but its snapshot does not build.
void build_refused(const json& j, errc code, const std::string& path) {
    const std::string doc = text(j);
    INFO(doc);
    error_info err;
    CHECK(keyplace::read_description_json(doc, err).has_value());
    CHECK_FALSE(err);
    err = {errc::stale_epoch, "left over from before"};
    CHECK_FALSE(keyplace::try_load_snapshot_json(doc, err).has_value());
    INFO(err.message());
    CHECK(err.code() == code);
    CHECK(starts_with(err.message(), path + ": "));
    CHECK_THROWS_AS(keyplace::load_snapshot_json(doc), keyplace::error);
    nothing_published(doc);
}

auto loads(const std::string& doc) -> snapshot {
    INFO(doc);
    error_info err{errc::stale_epoch, "left over from before"};
    auto s = keyplace::try_load_snapshot_json(doc, err);
    INFO(err.message());
    REQUIRE(s.has_value());
    CHECK_FALSE(err);
    return std::move(*s);
}

}  // namespace

TEST_CASE("json: read of write is the description, and the fingerprint, on 300 random snapshots", "[json]") {
    generator g(20261201);
    std::size_t checked = 0;
    std::size_t replicated = 0;
    std::size_t in_transition = 0;
    for (int round = 0; round < 20; ++round) {
        for (const auto& c : strategy_cases) {
            const auto d = random_description(g, c);
            CAPTURE(c.name, round);
            error_info err;
            auto built = snapshot::try_build(d, err);
            INFO(err.message());
            REQUIRE(built.has_value());
            if (auto r = with_replication(g, *built)) {
                built = std::move(r);
                ++replicated;
            }
            const snapshot& s = *built;
            in_transition += s.in_transition() ? 1 : 0;
            const std::string doc = keyplace::write_snapshot_json(s);
            INFO(doc);

            const auto back = keyplace::read_description_json(doc, err);
            INFO(err.message());
            REQUIRE(back.has_value());
            CHECK(*back == s.describe());
            const auto loaded = keyplace::try_load_snapshot_json(doc, err);
            REQUIRE(loaded.has_value());
            CHECK(loaded->fingerprint() == s.fingerprint());
            CHECK(loaded->probe_digest() == s.probe_digest());
            CHECK(loaded->describe() == s.describe());
            CHECK(keyplace::write_snapshot_json(*loaded) == doc);
            // The description writer without the digests: the build computes the same ones.
            auto bare = s.describe();
            bare.fingerprint.reset();
            bare.probe.reset();
            const auto rebuilt = keyplace::try_load_snapshot_json(keyplace::write_description_json(bare), err);
            REQUIRE(rebuilt.has_value());
            CHECK(rebuilt->fingerprint() == s.fingerprint());
            ++checked;
        }
    }
    CHECK(checked == 20 * std::size(strategy_cases));
    CHECK(replicated > 20);
    CHECK(in_transition > 60);
}

TEST_CASE("json: weights come back as the same double, whole ones written as 2.0", "[json]") {
    auto j = base();
    const double weights[] = {0.1,    1.0 / 3.0, 1e-3, 1234.5678, 2.0, 5e-324, 1.7976931348623157e308,
                              0.30000000000000004};
    for (const double w : weights) {
        snapshot_description d;
        d.cluster = "c";
        d.strategy.name = "rendezvous";
        d.nodes = {{.id = "a", .weight = w}, {.id = "b"}};
        const std::string doc = keyplace::write_description_json(d);
        error_info err;
        const auto back = keyplace::read_description_json(doc, err);
        REQUIRE(back.has_value());
        CHECK(back->nodes[0].weight == w);
        CHECK(back->nodes[1].weight == 1.0);
    }
    snapshot_description d;
    d.cluster = "c";
    d.nodes = {{.id = "a", .weight = 2.0}, {.id = "b", .weight = 0.1}, {.id = "c", .weight = 1.0 / 3.0}};
    const std::string doc = keyplace::write_description_json(d);
    CHECK(doc.find("\"weight\": 2.0,") != std::string::npos);
    CHECK(doc.find("\"weight\": 0.1,") != std::string::npos);
    CHECK(doc.find("\"weight\": 0.3333333333333333,") != std::string::npos);
    // An integer weight in a document is the same double.
    j["nodes"][1]["weight"] = 2;
    j["nodes"][2]["weight"] = "RAW";
    error_info err;
    const auto back = keyplace::read_description_json(text(j, "3e0"), err);
    REQUIRE(back.has_value());
    CHECK(back->nodes[1].weight == 2.0);
    CHECK(back->nodes[2].weight == 3.0);
}

TEST_CASE("json: the written document has the documented fields, in order, pretty with a trailing newline", "[json]") {
    snapshot_description d;
    d.cluster = "cache-eu-1";
    d.epoch = 42;
    d.parent_epoch = 41;
    d.strategy = {.name = "cassandra"};
    d.nodes = {{.id = "a", .address = "10.0.0.1:9042", .weight = 1.0, .where = {"dc1", "", "r1"}, .tokens = {-5, 7}},
               {.id = "b", .tokens = {100}}};
    d.metadata = {.created_ms = 1767225600000, .author = "ops", .reason = "add b"};
    const auto s = snapshot::build(d);
    const std::string doc = keyplace::write_snapshot_json(s);
    CHECK(starts_with(doc, "{\n  \"format\": \"keyplace.snapshot/1\",\n  \"cluster\": \"cache-eu-1\",\n"));
    CHECK(doc.size() > 2);
    CHECK(doc.substr(doc.size() - 2) == "}\n");

    const auto j = json::parse(doc);
    const auto keys = [](const json& o) {
        std::vector<std::string> out;
        for (const auto& [k, v] : o.items()) {
            out.push_back(k);
        }
        return out;
    };
    using v = std::vector<std::string>;
    CHECK(keys(j) == v{"format", "cluster", "epoch", "parent_epoch", "strategy", "replication", "nodes",
                       "fingerprint", "probe", "metadata"});
    CHECK(keys(j["strategy"]) == v{"name", "contract", "params"});
    CHECK(j["strategy"]["params"].empty());
    CHECK(keys(j["replication"]) == v{"count", "spread"});
    CHECK(j["replication"]["spread"] == "node");
    // Empty location parts, tokens and slots are left out.
    CHECK(keys(j["nodes"][0]) == v{"id", "address", "weight", "state", "region", "rack", "tokens"});
    CHECK(keys(j["nodes"][1]) == v{"id", "address", "weight", "state", "tokens"});
    CHECK(j["nodes"][0]["tokens"] == json::array({-5, 7}));
    CHECK(j["nodes"][0]["weight"].is_number_float());
    CHECK(j["epoch"].is_number_unsigned());
    CHECK(j["fingerprint"] == s.fingerprint().hex());
    CHECK(j["probe"] == s.probe_digest().hex());
    CHECK(keys(j["metadata"]) == v{"created_ms", "author", "reason"});
    CHECK(j["metadata"]["created_ms"] == 1767225600000U);

    snapshot_description r;
    r.cluster = "redis";
    r.strategy = {.name = "redis"};
    r.nodes = {{.id = "a", .slots = {{0, 8191}}}, {.id = "b", .slots = {{8192, 16383}}}};
    const auto rj = json::parse(keyplace::write_snapshot_json(snapshot::build(r)));
    CHECK(rj["nodes"][0]["slots"] == json::array({json::array({0, 8191})}));
    // Every parameter of the strategy is written, defaults included.
    snapshot_description e;
    e.cluster = "envoy";
    e.strategy = {.name = "envoy-ring"};
    e.nodes = {{.id = "a"}};
    const auto ej = json::parse(keyplace::write_snapshot_json(snapshot::build(e)));
    CHECK(keys(ej["strategy"]["params"]) == v{"hash", "max-ring-size", "min-ring-size"});
    // A description without digests is written without them.
    const auto dj = json::parse(keyplace::write_description_json(e));
    CHECK_FALSE(dj.contains("fingerprint"));
    CHECK_FALSE(dj.contains("probe"));
}

TEST_CASE("json: the documented example loads, and only format, cluster, epoch, strategy and node ids are required",
          "[json]") {
    const std::string example = R"({"format":"keyplace.snapshot/1","cluster":"c","epoch":42,"parent_epoch":41,
 "strategy":{"name":"ring","contract":1,"params":{"vnodes":160}},
 "replication":{"count":0,"spread":"node"},
 "nodes":[{"id":"a","address":"10.0.0.1:11211","weight":1.0,"state":"active","region":"","zone":"","rack":"","tokens":[],"slots":[]}],
 "metadata":{"created_ms":0,"author":"","reason":""}})";
    const auto s = loads(example);
    CHECK(s.cluster() == "c");
    CHECK(s.epoch() == 42);
    CHECK(s.nodes()[0].address == "10.0.0.1:11211");

    const auto minimal = loads(R"({"format":"keyplace.snapshot/1","cluster":"c","epoch":1,
        "strategy":{"name":"maglev","contract":1},"nodes":[{"id":"a"},{"id":"b"}]})");
    CHECK(minimal.parent_epoch() == 0);
    CHECK(minimal.strategy().params.at("table-size") == keyplace::strategy_param{std::uint64_t{65537}});
    CHECK(minimal.replication() == keyplace::replication_spec{});
    CHECK(minimal.metadata() == keyplace::snapshot_metadata{});
    const snapshot_node defaults{.id = "a"};
    CHECK(minimal.nodes()[0] == defaults);

    // The same snapshot as a description with every field spelled out.
    snapshot_description d;
    d.cluster = "c";
    d.strategy.name = "maglev";
    d.nodes = {{.id = "a"}, {.id = "b"}};
    CHECK(minimal.fingerprint() == snapshot::build(d).fingerprint());
}

TEST_CASE("json: a successful read clears the error_info", "[json]") {
    error_info err{errc::invalid_weight, "stale"};
    const auto d = keyplace::read_description_json(text(base()), err);
    REQUIRE(d.has_value());
    CHECK_FALSE(err);
    CHECK(err.message().empty());
    CHECK(d->nodes.size() == 4);
    CHECK(d->nodes[3].state == node_state::leaving);
    CHECK_FALSE(d->fingerprint.has_value());
}

TEST_CASE("json: invalid JSON is refused with the path being read and the byte offset", "[json]") {
    refused(std::string("{\"format\": tru}"), errc::invalid_document, "format");
    refused(std::string(""), errc::invalid_document, "$");
    refused(std::string("{\"format\":\"keyplace.snapshot/1\"} x"), errc::invalid_document, "$");
    auto doc = text(base());
    refused(doc.substr(0, doc.find("\"joining\"")), errc::invalid_document, "nodes[2].state");
    // A trailing comma in the node list: the element after the last.
    auto trailing = doc;
    trailing.insert(trailing.rfind("}]") + 1, ",");
    refused(trailing, errc::invalid_document, "nodes[4]");

    error_info err;
    CHECK_FALSE(keyplace::read_description_json("{\"format\": tru}", err));
    CHECK(err.message() == "format: invalid JSON at byte 15 (line 1, column 15): syntax error while parsing value - "
                           "invalid literal; last read: '\"format\": tru}'");
    // JSON cannot spell NaN.
    auto j = base();
    j["nodes"][0]["weight"] = "RAW";
    refused(text(j, "NaN"), errc::invalid_document, "nodes[0].weight");
    // Ill-formed UTF-8 in a string.
    j["nodes"][0]["weight"] = 1;
    j["cluster"] = "RAW";
    refused(text(j, "\"\xff\""), errc::invalid_document, "cluster");
    // A long token is shown cut.
    refused("{\"cluster\":\"" + std::string(10000, 'x'), errc::invalid_document, "cluster");
    // A token that itself holds "'; expected " is cut too, not copied raw after the cut (fuzz
    // finding: 3000 DEL bytes reached the message).
    {
        error_info tail;
        const std::string hostile = "{\"format\":\"'; expected " + std::string(3000, '\x7f') + "\xff\"}";
        CHECK_FALSE(keyplace::read_description_json(hostile, tail));
        CHECK(tail.message().size() < 400);
        CHECK(tail.message().find('\x7f') == std::string::npos);
    }
    // Not an object.
    refused(std::string("[1, 2]"), errc::invalid_document, "$");
    refused(std::string("null"), errc::invalid_document, "$");
}

TEST_CASE("json: a key repeated in one object is refused at any depth", "[json]") {
    const auto twice = [](std::string doc, std::string_view after, std::string_view insert) {
        doc.insert(doc.find(after) + after.size(), insert);
        return doc;
    };
    const std::string doc = text(base());
    refused(twice(doc, "{", "\"epoch\":41,"), errc::invalid_document, "epoch");
    refused(twice(doc, "\"params\":{", "\"vnodes\":10,"), errc::invalid_document, "strategy.params.vnodes");
    refused(twice(doc, "{\"id\":\"b\"", ",\"id\":\"b\""), errc::invalid_document, "nodes[1].id");
    refused(twice(doc, "{\"id\":\"c\"", ",\"weight\":1,\"weight\":1"), errc::invalid_document, "nodes[2].weight");
    refused(twice(doc, "\"metadata\":{", "\"author\":\"x\","), errc::invalid_document, "metadata.author");
    // Inside a field a newer minor lets the reader ignore, and in an object of many keys.
    auto j = base();
    j["format"] = "keyplace.snapshot/1.1";
    json extra = json::object();
    for (int i = 0; i < 100; ++i) {
        extra["k" + std::to_string(i)] = {{"deep", {{"x", i}}}};
    }
    j["extra"] = extra;
    CHECK(loads(text(j)).epoch() == 42);
    refused(twice(text(j), "\"k70\":{\"deep\":{", "\"x\":0,"), errc::invalid_document, "extra.k70.deep.x");
    refused(twice(text(j), "\"k99\":{\"deep\":{\"x\":99}}", ",\"k3\":1"), errc::invalid_document, "extra.k3");
    // A key that is not a plain name is quoted in the path.
    refused(twice(text(j), "\"extra\":{", "\"a b\":1,\"a b\":2,"), errc::invalid_document, "extra['a b']");
}

TEST_CASE("json: a format of another major, or no format, is refused", "[json]") {
    for (const char* format : {"keyplace.snapshot/2", "keyplace.snapshot/2.0", "keyplace.snapshot/",
                               "keyplace.snapshot/1.", "keyplace.snapshot/1.x", "keyplace.snapshot/01",
                               "keyplace.snap/1", "", "KEYPLACE.SNAPSHOT/1"}) {
        auto j = base();
        j["format"] = format;
        refused(j, errc::invalid_document, "format");
    }
    auto j = base();
    j["format"] = 1;
    refused(j, errc::invalid_document, "format");
    j.erase("format");
    refused(j, errc::invalid_document, "format");
    // A document of another major is refused before its fields are looked at.
    j = base();
    j["format"] = "keyplace.snapshot/2";
    j["nodes"] = "whatever 2 means";
    refused(j, errc::invalid_document, "format");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "format: 'keyplace.snapshot/2' is not a format this library reads (keyplace.snapshot/1 or "
                           "keyplace.snapshot/1.<minor>)");
    for (const char* ok : {"keyplace.snapshot/1", "keyplace.snapshot/1.0", "keyplace.snapshot/1.7"}) {
        j = base();
        j["format"] = ok;
        CHECK(loads(text(j)).format() == "keyplace.snapshot/1");
    }
}

TEST_CASE("json: a missing required field is refused with its path", "[json]") {
    for (const char* field : {"format", "cluster", "epoch", "strategy", "nodes"}) {
        auto j = base();
        j.erase(field);
        refused(j, errc::invalid_document, field);
    }
    for (const char* field : {"name", "contract"}) {
        auto j = base();
        j["strategy"].erase(field);
        refused(j, errc::invalid_document, std::string("strategy.") + field);
    }
    auto j = base();
    j["nodes"][2].erase("id");
    refused(j, errc::invalid_document, "nodes[2].id");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "nodes[2].id: missing");
}

TEST_CASE("json: a mistyped field is refused with its path and value", "[json]") {
    struct bad {
        std::string path;
        json value;
    };
    const std::vector<bad> cases = {
        {"cluster", 42},
        {"epoch", "42"},
        {"epoch", true},
        {"parent_epoch", nullptr},
        {"strategy", json::array({1})},
        {"strategy.name", 1},
        {"strategy.contract", "1"},
        {"strategy.params", json::array()},
        {"strategy.params.vnodes", 1.5},
        {"strategy.params.vnodes", -3},
        {"strategy.params.vnodes", nullptr},
        {"replication", "node"},
        {"replication.count", "2"},
        {"replication.spread", 1},
        {"nodes", json::object()},
        {"nodes[1]", "b"},
        {"nodes[1].id", 7},
        {"nodes[1].address", json::array()},
        {"nodes[1].weight", nullptr},
        {"nodes[1].weight", "1"},
        {"nodes[1].weight", json::array({1})},
        {"nodes[1].state", 1},
        {"nodes[1].region", false},
        {"nodes[1].zone", 1},
        {"nodes[1].rack", json::object()},
        {"nodes[1].tokens", 5},
        {"nodes[1].tokens[0]", "5"},
        {"nodes[1].slots", json::object()},
        {"nodes[1].slots[0]", json::array({1})},
        {"nodes[1].slots[0]", json::array({1, 2, 3})},
        {"nodes[1].slots[0][1]", "2"},
        {"fingerprint", 1},
        {"probe", json::array()},
        {"metadata", 0},
        {"metadata.created_ms", "0"},
        {"metadata.author", 1},
        {"metadata.reason", nullptr},
    };
    for (const auto& c : cases) {
        auto j = base();
        if (c.path.find("tokens[") != std::string::npos) {
            j["nodes"][1]["tokens"] = {5};
        }
        if (c.path.find("slots[") != std::string::npos) {
            j["nodes"][1]["slots"] = {{1, 2}};
        }
        // "nodes[1].slots[0][1]" as the JSON pointer "/nodes/1/slots/0/1".
        std::string pointer = "/" + c.path;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        std::replace(pointer.begin(), pointer.end(), '[', '/');
        pointer.erase(std::remove(pointer.begin(), pointer.end(), ']'), pointer.end());
        j[json::json_pointer(pointer)] = c.value;
        refused(j, errc::invalid_document, c.path);
    }
}

TEST_CASE("json: weights that are not finite and > 0 are refused, a null weight is mistyped", "[json]") {
    for (const char* w : {"-1", "0", "-0", "0.0", "-0.0", "-1e-300", "-18446744073709551616"}) {
        auto j = base();
        j["nodes"][3]["weight"] = "RAW";
        refused(text(j, w), errc::invalid_weight, "nodes[3].weight");
    }
    error_info err;
    auto j = base();
    j["nodes"][3]["weight"] = -1;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "nodes[3].weight: -1 is not > 0");
    // Beyond double's range: a valid JSON number, an infinite weight.
    for (const char* w : {"1e999", "-1e999", "1e309"}) {
        j["nodes"][3]["weight"] = "RAW";
        refused(text(j, w), errc::invalid_weight, "nodes[3].weight");
    }
    CHECK_FALSE(keyplace::read_description_json(text(j, "1e999"), err));
    CHECK(err.message() == "nodes[3].weight: 1e999 is not finite");
    j["nodes"][3]["weight"] = nullptr;
    refused(j, errc::invalid_document, "nodes[3].weight");
    // What nlohmann::json writes for a NaN weight.
    snapshot_description d;
    d.cluster = "c";
    d.nodes = {{.id = "a", .weight = std::numeric_limits<double>::quiet_NaN()}};
    refused(keyplace::write_description_json(d), errc::invalid_document, "nodes[0].weight");
}

TEST_CASE("json: the header is checked by the builder's one check, in its words, at its path", "[json]") {
    // parent_epoch at or above epoch, and a cluster outside the name grammar: the reader refuses
    // them with detail::check_header, the check snapshot::try_build makes of a C++ description.
    for (const std::uint64_t parent : {42U, 43U}) {
        auto j = base();
        j["parent_epoch"] = parent;
        refused(j.dump(), errc::invalid_document, "parent_epoch");
        error_info err;
        (void)keyplace::read_description_json(j.dump(), err);
        CHECK(err.message() == "parent_epoch: parent_epoch " + std::to_string(parent) + " is not below epoch 42");
        CHECK(err.where() == "parent_epoch");
        const std::string read_message = err.message();
        auto d = keyplace::read_description_json(base().dump(), err).value();
        d.parent_epoch = parent;
        error_info built;
        CHECK_FALSE(keyplace::snapshot::try_build(d, built).has_value());
        CHECK(built.code() == errc::invalid_document);
        CHECK(built.where() == "parent_epoch");
        CHECK("parent_epoch: " + built.message() == read_message);
    }
    auto j = base();
    j["cluster"] = "c d";
    refused(j.dump(), errc::invalid_document, "cluster");
}

TEST_CASE("json: integers outside their range, negative or fractional are refused", "[json]") {
    struct bad {
        std::string path;
        const char* token;
        std::string message;
    };
    const std::vector<bad> cases = {
        {"epoch", "18446744073709551616", "epoch: 18446744073709551616 is not a whole number from 1 to 2^64-1"},
        {"epoch", "0", "epoch: 0 is not a whole number from 1 to 2^64-1"},
        {"epoch", "-1", "epoch: -1 is not a whole number from 1 to 2^64-1"},
        {"epoch", "42.0", "epoch: 42.0 is not a whole number from 1 to 2^64-1"},
        {"epoch", "4.2e1", "epoch: 4.2e1 is not a whole number from 1 to 2^64-1"},
        {"parent_epoch", "-5", "parent_epoch: -5 is not a whole number from 0 to 2^64-1"},
        {"parent_epoch", "1e400", "parent_epoch: 1e400 is outside the range of a double"},
        {"strategy.contract", "4294967296", "strategy.contract: 4294967296 is not a whole number from 0 to 2^32-1"},
        {"replication.count", "0.5", "replication.count: 0.5 is not a whole number from 0 to 2^64-1"},
        {"metadata.created_ms", "-1", "metadata.created_ms: -1 is not a whole number from 0 to 2^64-1"},
        {"metadata.created_ms", "18446744073709551616",
         "metadata.created_ms: 18446744073709551616 is not a whole number from 0 to 2^64-1"},
        {"nodes[0].tokens[1]", "9223372036854775808",
         "nodes[0].tokens[1]: 9223372036854775808 is not a whole number from -2^63 to 2^63-1"},
        {"nodes[0].tokens[1]", "-9223372036854775809",
         "nodes[0].tokens[1]: -9223372036854775809 is not a whole number from -2^63 to 2^63-1"},
        {"nodes[0].tokens[1]", "1.5", "nodes[0].tokens[1]: 1.5 is not a whole number from -2^63 to 2^63-1"},
        {"nodes[0].slots[0][1]", "16384", "nodes[0].slots[0][1]: 16384 is not a whole number from 0 to 16383"},
        {"nodes[0].slots[0][0]", "-1", "nodes[0].slots[0][0]: -1 is not a whole number from 0 to 16383"},
        {"nodes[0].slots[0][1]", "8191.5", "nodes[0].slots[0][1]: 8191.5 is not a whole number from 0 to 16383"},
    };
    for (const auto& c : cases) {
        auto j = base();
        j["strategy"] = {{"name", "redis"}, {"contract", 1}};
        j["nodes"][0]["tokens"] = {1, 2};
        j["nodes"][0]["slots"] = {{0, 8191}};
        if (c.path == "epoch" || c.path == "parent_epoch") {
            j[c.path] = "RAW";
        } else if (c.path == "strategy.contract") {
            j["strategy"]["contract"] = "RAW";
        } else if (c.path == "replication.count") {
            j["replication"]["count"] = "RAW";
        } else if (c.path == "metadata.created_ms") {
            j["metadata"]["created_ms"] = "RAW";
        } else if (c.path == "nodes[0].tokens[1]") {
            j["nodes"][0]["tokens"][1] = "RAW";
        } else if (c.path == "nodes[0].slots[0][0]") {
            j["nodes"][0]["slots"][0][0] = "RAW";
        } else {
            j["nodes"][0]["slots"][0][1] = "RAW";
        }
        const std::string doc = text(j, c.token);
        refused(doc, errc::invalid_document, c.path);
        error_info err;
        CHECK_FALSE(keyplace::read_description_json(doc, err));
        CHECK(err.message() == c.message);
    }
    // parent_epoch must be below epoch; a cluster of 1 to 255 bytes.
    auto j = base();
    j["parent_epoch"] = 42;
    refused(j, errc::invalid_document, "parent_epoch");
    j = base();
    j["cluster"] = "";
    refused(j, errc::invalid_document, "cluster");
    j["cluster"] = std::string(256, 'c');
    refused(j, errc::invalid_document, "cluster");
    // A reversed slot range.
    j = base();
    j["strategy"] = {{"name", "redis"}, {"contract", 1}};
    j["nodes"][1]["slots"] = {{9000, 100}};
    refused(j, errc::invalid_slot_range, "nodes[1].slots[0]");
    // An enormous number is shown cut.
    j = base();
    j["epoch"] = "RAW";
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j, std::string(300, '9')), err));
    CHECK(err.message() == "epoch: " + std::string(64, '9') + "... is not a whole number from 1 to 2^64-1");
}

TEST_CASE("json: ids that are not unique, empty or too long are refused", "[json]") {
    auto j = base();
    j["nodes"][3]["id"] = "a";
    refused(j, errc::duplicate_id, "nodes[3].id");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "nodes[3].id: node id 'a' is also the id of nodes[0]");
    // A tombstone keeps its id.
    j["nodes"][3]["state"] = "left";
    refused(j, errc::duplicate_id, "nodes[3].id");
    j = base();
    j["nodes"][1]["id"] = "";
    refused(j, errc::empty_id, "nodes[1].id");
    j["nodes"][1]["id"] = std::string(keyplace::max_id_length + 1, 'x');
    refused(j, errc::id_too_long, "nodes[1].id");
}

TEST_CASE("json: unknown states and spreads are refused", "[json]") {
    auto j = base();
    j["nodes"][2]["state"] = "gone";
    refused(j, errc::invalid_state, "nodes[2].state");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "nodes[2].state: 'gone' is not joining, active, leaving, read_only or left");
    j["nodes"][2]["state"] = "Active";
    refused(j, errc::invalid_state, "nodes[2].state");
    j = base();
    j["replication"]["spread"] = "datacenter";
    refused(j, errc::invalid_argument, "replication.spread");
}

TEST_CASE("json: unknown strategies, contracts and parameters are refused", "[json]") {
    auto j = base();
    j["strategy"]["name"] = "consistent";
    refused(j, errc::unknown_strategy, "strategy.name");
    j = base();
    j["strategy"]["contract"] = 2;
    refused(j, errc::unknown_strategy, "strategy.contract");
    j = base();
    j["strategy"]["params"]["vnode"] = 160;
    refused(j, errc::unknown_strategy, "strategy.params.vnode");
    j = base();
    j["strategy"]["params"]["vnodes"] = "160";
    refused(j, errc::unknown_strategy, "strategy.params.vnodes");
    j = base();
    j["strategy"] = {{"name", "envoy-ring"}, {"contract", 1}, {"params", {{"hash", "md5"}}}};
    refused(j, errc::unknown_strategy, "strategy.params.hash");
    j["strategy"]["params"]["hash"] = 1;
    refused(j, errc::unknown_strategy, "strategy.params.hash");
    j = base();
    j["strategy"] = {{"name", "jump"}, {"contract", 1}, {"params", {{"vnodes", 1}}}};
    refused(j, errc::unknown_strategy, "strategy.params.vnodes");
    // A newer minor does not make an unknown parameter ignorable: it would change placement.
    j["format"] = "keyplace.snapshot/1.1";
    refused(j, errc::unknown_strategy, "strategy.params.vnodes");
}

TEST_CASE("json: unknown fields are refused in a /1 document and ignored in a /1.1 document", "[json]") {
    struct where_to {
        std::string path;
        std::string pointer;  // of the field
    };
    const std::vector<where_to> places = {{"shards", "/shards"},
                                          {"strategy.seed", "/strategy/seed"},
                                          {"replication.quorum", "/replication/quorum"},
                                          {"nodes[1].colour", "/nodes/1/colour"},
                                          {"metadata.ticket", "/metadata/ticket"}};
    for (const auto& p : places) {
        auto j = base();
        j[json::json_pointer(p.pointer)] = json{{"any", json::array({1, "two", nullptr})}};
        refused(j, errc::invalid_document, p.path);
        j["format"] = "keyplace.snapshot/1.0";
        refused(j, errc::invalid_document, p.path);
        j["format"] = "keyplace.snapshot/1.1";
        const auto newer = loads(text(j));
        auto plain = base();
        plain["format"] = "keyplace.snapshot/1.1";
        CHECK(newer.describe() == loads(text(plain)).describe());
    }
    // The message names the fields a reader of this format knows: a typo is not a default.
    auto j = base();
    j["nodes"][0]["wieght"] = 2;
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message() == "nodes[0].wieght: unknown field: a node of format keyplace.snapshot/1 holds only id, "
                           "address, weight, state, region, zone, rack, tokens, slots, partitions, points");
}

TEST_CASE("json: stated digests the build does not reproduce are refused as fingerprint_mismatch", "[json]") {
    const auto s = loads(text(base()));
    const std::string doc = keyplace::write_snapshot_json(s);
    auto j = json::parse(doc);
    CHECK(loads(doc).fingerprint() == s.fingerprint());
    // Another placement under the same stated digests: node b's weight changed.
    j["nodes"][1]["weight"] = 3.0;
    build_refused(j, errc::fingerprint_mismatch, "fingerprint");
    j = json::parse(doc);
    std::string probe = j["probe"];
    probe[0] = probe[0] == '0' ? '1' : '0';
    j["probe"] = probe;
    build_refused(j, errc::fingerprint_mismatch, "probe");
    j = json::parse(doc);
    j["fingerprint"] = "not hex";
    refused(j, errc::invalid_document, "fingerprint");
    j["fingerprint"] = std::string(33, 'a');
    refused(j, errc::invalid_document, "fingerprint");
    // Either case of hex digits reads.
    j = json::parse(doc);
    std::string upper = j["fingerprint"];
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](char c) { return c >= 'a' && c <= 'f' ? static_cast<char>(c - 'a' + 'A') : c; });
    j["fingerprint"] = upper;
    CHECK(loads(text(j)).fingerprint() == s.fingerprint());
    // Metadata and addresses are outside the digests.
    j = json::parse(doc);
    j["metadata"]["reason"] = "rolled back";
    j["nodes"][0]["address"] = "10.9.9.9:1";
    CHECK(loads(text(j)).fingerprint() == s.fingerprint());
}

TEST_CASE("json: errors of the build pass through, prefixed by what they concern", "[json]") {
    auto j = base();
    for (auto& n : j["nodes"]) {
        n["state"] = "joining";
    }
    build_refused(j, errc::no_owner, "nodes");
    j = base();
    j["nodes"][1]["tokens"] = {5};
    refused(j, errc::invalid_argument, "nodes[1].tokens");  // the reader checks per-node data against the table
    j = base();
    j["strategy"]["params"]["vnodes"] = 0;
    refused(j, errc::invalid_vnodes, "strategy.params.vnodes");  // and parameters' ranges
    j = base();
    j["strategy"] = {{"name", "maglev"}, {"contract", 1}, {"params", {{"table-size", 8}}}};
    build_refused(j, errc::table_size_not_prime, "strategy.params.table-size");
    j = base();
    j["strategy"] = {{"name", "jump"}, {"contract", 1}};
    build_refused(j, errc::invalid_weight, "nodes[1]");
    j = base();
    j["replication"]["count"] = 9;
    build_refused(j, errc::invalid_replica_count, "replication");
    j = base();
    j["strategy"] = {{"name", "modulo"}, {"contract", 1}};
    j["nodes"][1]["weight"] = 1;
    j["replication"]["count"] = 2;
    build_refused(j, errc::invalid_argument, "replication");
    j = base();
    j["strategy"] = {{"name", "redis"}, {"contract", 1}};
    j["nodes"][0]["slots"] = {{0, 100}};
    build_refused(j, errc::slot_gap, "nodes");
    j = base();
    j["nodes"] = json::array({{{"id", "a"}, {"state", "left"}}});
    error_info err;
    CHECK_FALSE(keyplace::try_load_snapshot_json(text(j), err));
    CHECK(err.message() == "nodes: no node owns keys now (none is active, leaving or read_only)");
}

TEST_CASE("json: nesting deeper than 64 levels is refused while parsing", "[json]") {
    const std::string deep =
        "{\"format\":\"keyplace.snapshot/1.1\",\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(deep, err));
    CHECK(err.code() == errc::invalid_document);
    CHECK(starts_with(err.message(), "x[0][0][0]"));
    CHECK(err.message().find(": nested deeper than 64 levels") != std::string::npos);
    // 4 levels is all a document needs; 64 are read.
    auto j = base();
    j["format"] = "keyplace.snapshot/1.1";
    j["x"] = "RAW";
    CHECK(loads(text(j, std::string(63, '[') + std::string(63, ']'))).epoch() == 42);
}

TEST_CASE("json: the try_ forms never throw on mutated documents, and every message starts with a path", "[json]") {
    generator g(7);
    auto j = base();
    j["strategy"] = {{"name", "cassandra"}, {"contract", 1}};
    for (std::size_t i = 0; i < j["nodes"].size(); ++i) {
        j["nodes"][i]["tokens"] = {static_cast<std::int64_t>(i) * 1000 - 1500, static_cast<std::int64_t>(i) * 7 + 3};
        j["nodes"][i]["rack"] = "r" + std::to_string(i);
    }
    const std::string doc = keyplace::write_snapshot_json(loads(text(j)));
    const std::string alphabet = "{}[],:\"\\0123456789.eE+-tfnul xyz\x01\xc3\xff";
    std::size_t refusals = 0;
    for (int round = 0; round < 1500; ++round) {
        std::string m = doc;
        const int edits = 1 + static_cast<int>(g.below(3));
        for (int e = 0; e < edits && !m.empty(); ++e) {
            const std::size_t at = g.below(m.size());
            switch (g.below(4)) {
                case 0: m[at] = alphabet[g.below(alphabet.size())]; break;
                case 1: m.insert(at, 1, alphabet[g.below(alphabet.size())]); break;
                case 2: m.erase(at, 1 + g.below(8)); break;
                default: m.resize(at); break;
            }
        }
        error_info err;
        std::optional<snapshot> s;
        if (std::getenv("KEYPLACE_JSON_FUZZ_TRACE") != nullptr) {  // to find the document that failed
            std::fprintf(stderr, "---\n%s\n", m.c_str());
        }
        REQUIRE_NOTHROW(s = keyplace::try_load_snapshot_json(m, err));
        CHECK(s.has_value() != static_cast<bool>(err));
        if (!s) {
            ++refusals;
            const auto& msg = err.message();
            INFO(m);
            INFO(msg);
            const auto colon = msg.find(": ");
            REQUIRE(colon != std::string::npos);
            REQUIRE(colon > 0);
            const std::string_view path = std::string_view(msg).substr(0, colon);
            CHECK((path == "$" || path.find_first_of(" \n") == std::string_view::npos ||
                   path.find("['") != std::string_view::npos));
            CHECK(msg.size() < 1000);
        }
    }
    CHECK(refusals > 750);
}

TEST_CASE("json: bytes that are not UTF-8 are written as U+FFFD, and an id that is not UTF-8 does not build",
          "[json]") {
    snapshot_description d;
    d.cluster = "c";
    d.nodes = {{.id = "a"}, {.id = "b"}};
    d.metadata.reason = "caf\xe9";  // Latin-1
    const auto s = snapshot::build(d);
    const std::string doc = keyplace::write_snapshot_json(s);
    CHECK(doc.find("\"reason\": \"caf\xef\xbf\xbd\"") != std::string::npos);
    CHECK(loads(doc).fingerprint() == s.fingerprint());  // metadata is not placement
    // An id is a name (check_name): the document could not state it, so it does not build.
    d.nodes[0].id = "a\xff";
    error_info err;
    CHECK_FALSE(snapshot::try_build(d, err));
    CHECK(err.code() == errc::invalid_name);
    CHECK(err.message() == "node id 'a\\xff' is not UTF-8 (byte 1)");
}

TEST_CASE("json: a partition table round-trips, spans above rank 0 with their rank as a third element", "[json][partitions]") {
    snapshot_description d;
    d.cluster = "p";
    d.strategy.name = "partitions";
    d.strategy.params = {{"partitions", std::uint64_t{16}}, {"replicas", std::uint64_t{2}}};
    for (int i = 0; i < 4; ++i) {
        d.nodes.push_back({"n" + std::to_string(i)});
    }
    const auto listed = snapshot::build(snapshot::build(d).successor());
    const auto doc = keyplace::write_snapshot_json(listed);
    CHECK_THAT(doc, Catch::Matchers::Contains("\"partitions\": ["));
    bool ranked = false;  // a rank-1 span, written with its rank as a third element
    for (const auto& n : listed.nodes()) {
        for (const auto& sp : n.partitions) {
            ranked = ranked || sp.rank == 1;
        }
    }
    CHECK(ranked);
    error_info err;
    const auto loaded = keyplace::try_load_snapshot_json(doc, err);
    INFO(err.message());
    REQUIRE(loaded.has_value());
    CHECK(loaded->describe() == listed.describe());
    CHECK(loaded->fingerprint() == listed.fingerprint());
    // Spans that are not [first, last] or [first, last, rank], or reversed, are refused with the path.
    auto bad = doc;
    bad.replace(bad.find("\"partitions\": ["), 15, "\"partitions\": [[3], ");
    CHECK_FALSE(keyplace::try_load_snapshot_json(bad, err).has_value());
    CHECK_THAT(err.message(), Catch::Matchers::Contains("nodes[0].partitions[0]: "));
    CHECK_THAT(err.message(), Catch::Matchers::Contains("is not [first, last] or [first, last, rank]"));
    bad = doc;
    bad.replace(bad.find("\"partitions\": ["), 15, "\"partitions\": [[5, 2], ");
    CHECK_FALSE(keyplace::try_load_snapshot_json(bad, err).has_value());
    CHECK(err.code() == errc::invalid_partition_table);
    CHECK_THAT(err.message(), Catch::Matchers::Contains("[5, 2] is reversed"));
}

TEST_CASE("json: overrides round-trip after the nodes, and a document without them has no such field",
          "[json][overrides]") {
    auto j = base();
    const auto plain = keyplace::load_snapshot_json(text(j));
    CHECK(keyplace::write_snapshot_json(plain).find("overrides") == std::string::npos);
    j["overrides"] = {{{"key", "user:9"}, {"node", "a"}}, {{"key", "hot:\"q\""}, {"node", "b"}}};
    const auto s = keyplace::load_snapshot_json(text(j));
    CHECK(s.owner("user:9").id == "a");
    CHECK(s.owner("hot:\"q\"").id == "b");
    CHECK(s.fingerprint() != plain.fingerprint());
    CHECK(s.probe_digest() == plain.probe_digest());
    const std::string doc = keyplace::write_snapshot_json(s);
    const auto written = json::parse(doc);
    std::vector<std::string> keys;
    for (const auto& item : written.items()) {
        keys.push_back(item.key());
    }
    const auto nodes_at = std::find(keys.begin(), keys.end(), "nodes");
    REQUIRE(nodes_at != keys.end());
    CHECK(*(nodes_at + 1) == "overrides");
    CHECK(written["overrides"] == json::parse(R"([{"key":"hot:\"q\"","node":"b"},{"key":"user:9","node":"a"}])"));
    error_info err;
    const auto again = keyplace::try_load_snapshot_json(doc, err);  // the stated digests check
    REQUIRE(again.has_value());
    CHECK(again->describe() == s.describe());
    // The stated fingerprint covers them: dropping one from a document that states it is refused.
    auto tampered = json::parse(doc);
    tampered["overrides"].erase(0);
    build_refused(tampered, errc::fingerprint_mismatch, "fingerprint");
}

TEST_CASE("json: bad overrides are refused with their path", "[json][overrides][errors]") {
    auto j = base();
    j["overrides"] = {{"key", "k"}};
    refused(j, errc::invalid_document, "overrides");
    j["overrides"] = json::array({"k"});
    refused(j, errc::invalid_document, "overrides[0]");
    j["overrides"] = {{{"key", "k"}}};
    refused(j, errc::invalid_document, "overrides[0].node");
    j["overrides"] = {{{"key", 5}, {"node", "a"}}};
    refused(j, errc::invalid_document, "overrides[0].key");
    j["overrides"] = {{{"key", "k"}, {"node", "a"}, {"weight", 1}}};
    refused(j, errc::invalid_document, "overrides[0].weight");
    j["overrides"] = {{{"key", "k"}, {"node", "a"}}, {{"key", "k"}, {"node", "b"}}};
    refused(j, errc::invalid_override, "overrides[1].key");
    j["overrides"] = json::array();
    for (std::size_t i = 0; i <= keyplace::max_overrides; ++i) {
        j["overrides"].push_back({{"key", "k" + std::to_string(i)}, {"node", "a"}});
    }
    refused(j, errc::invalid_override, "overrides");
    // What the build checks: the node and the key.
    j["overrides"] = {{{"key", "k"}, {"node", "a"}}, {{"key", "hot"}, {"node", "zz"}}};
    build_refused(j, errc::unknown_id, "overrides[1]");
    j["overrides"] = {{{"key", "k"}, {"node", "c"}}};  // joining
    build_refused(j, errc::invalid_state, "overrides[0]");
    j["overrides"] = {{{"key", ""}, {"node", "a"}}};
    build_refused(j, errc::invalid_override, "overrides[0]");
    j["overrides"] = {{{"key", std::string(1025, 'x')}, {"node", "a"}}};
    build_refused(j, errc::invalid_override, "overrides[0]");
}

TEST_CASE("json: ids, location parts, override nodes and the cluster follow the name grammar", "[json][names]") {
    // Every line and list ("a,b") of the CLI holds a name as given: a newline, a comma or a space
    // in an id would forge lines and make write sets ambiguous (issue 35).
    for (const std::string bad : {"n\n1", "a,b", "a b", "a=1", "a@eu", "...", "a\x7f", "a*2", "a#b", "a\tb"}) {
        auto j = base();
        j["nodes"][1]["id"] = bad;
        refused(j, errc::invalid_name, "nodes[1].id");
    }
    for (const std::string part : {"region", "zone", "rack"}) {
        auto j = base();
        j["nodes"][0][part] = "z/1";
        refused(j, errc::invalid_name, "nodes[0]." + part);
        j["nodes"][0][part] = "z 1";
        refused(j, errc::invalid_name, "nodes[0]." + part);
    }
    auto j = base();
    j["overrides"] = {{{"key", "user:1"}, {"node", "a,b"}}};
    refused(j, errc::invalid_name, "overrides[0].node");
    for (const std::string bad : {"a/b", "a b", "bar/clients", "..", "c\n"}) {
        j = base();
        j["cluster"] = bad;
        refused(j, errc::invalid_document, "cluster");
    }
    // The message names the value escaped and cut, whatever its length.
    j = base();
    j["nodes"][0]["id"] = std::string(5000, 'x') + "\n";
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(text(j), err));
    CHECK(err.message().size() < 300);
    CHECK(err.message().find("contains '\\x0a'") != std::string::npos);
    // What the committed documents hold stays valid: addresses as ids, '/' and ':' in ids, UTF-8.
    for (const std::string good : {"10.0.1.1:11211", "node-a", "a/b", "n\xc5\x93ud", "cache_1.eu"}) {
        j = base();
        j["nodes"][0]["id"] = good;
        j["nodes"][0]["region"] = "eu-west";
        j["nodes"][0]["zone"] = "eu-west-1a";
        (void)loads(text(j));
    }
}

TEST_CASE("json: a NUL byte does not end a document: the whole text is read", "[json][names]") {
    const std::string doc = text(base());
    (void)loads(doc);
    refused(doc + std::string("\0garbage{", 9), errc::invalid_document, "$");
    refused(doc.substr(0, 10) + std::string(1, '\0') + doc.substr(10), errc::invalid_document, "$");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(doc + std::string(1, '\0'), err));
    CHECK(err.message() == "$: invalid JSON at byte " + std::to_string(doc.size() + 1) + ": a NUL byte");
}

TEST_CASE("json: a document is at most max_document_size bytes", "[json][names]") {
    // Refused before parsing: spaces are valid JSON padding, so only the size can refuse it.
    std::string doc = text(base());
    doc.resize(keyplace::max_document_size, ' ');
    (void)loads(doc);
    doc.push_back(' ');
    refused(doc, errc::invalid_document, "$");
    error_info err;
    CHECK_FALSE(keyplace::read_description_json(doc, err));
    CHECK(err.message().find(std::to_string(keyplace::max_document_size)) != std::string::npos);
}

TEST_CASE("json: an unknown key of any length gives a short message", "[json][names]") {
    auto j = base();
    j[std::string(100000, 'k')] = 1;
    refused(j, errc::invalid_document, "['" + std::string(64, 'k') + "'...]");
    j = base();
    j["nodes"][0][std::string(100000, 'k')] = 1;
    refused(j, errc::invalid_document, "nodes[0]['" + std::string(64, 'k') + "'...]");
}

TEST_CASE("json: strategy tokens refuses a node without tokens and a token listed twice", "[json][names]") {
    auto j = base();
    j["strategy"] = {{"name", "tokens"}, {"contract", 1}};
    j["nodes"] = {{{"id", "a"}, {"points", {1, 5}}}, {{"id", "b"}, {"points", {9}}}};
    (void)loads(text(j));
    j["nodes"][1].erase("points");
    build_refused(j, errc::no_points, "nodes[1]");
    j["nodes"][1]["points"] = {5};
    build_refused(j, errc::duplicate_token, "nodes");
    j["nodes"][1]["points"] = {9, 9};
    build_refused(j, errc::duplicate_token, "nodes[1]");
}

// ---- Every refusal of snapshot::try_build carries where it is (issue 28, "Validate once").

namespace where_test {

/// A ring of three nodes whose ids are not in id order, so that an index into the sorted
/// membership and one into the description differ.
auto three(const std::string& strategy = "ring") -> snapshot_description {
    snapshot_description d;
    d.cluster = "c";
    d.epoch = 2;
    d.parent_epoch = 1;
    d.strategy.name = strategy;
    d.nodes = {{"n2"}, {"n0"}, {"n1"}};
    return d;
}

/// The C++ builder refuses d with this code and where(), and node() is the index where() names;
/// the document of d loads refused with the same code, where(), and a message starting with it.
void located(const snapshot_description& d, errc code, const std::string& where,
             std::optional<std::size_t> node = std::nullopt, bool json_too = true) {
    INFO(where);
    error_info err;
    CHECK_FALSE(snapshot::try_build(d, err).has_value());
    INFO(err.message());
    CHECK(err.code() == code);
    CHECK(err.where() == where);
    CHECK(err.node() == node);
    if (!json_too) {
        return;
    }
    error_info loaded;
    CHECK_FALSE(keyplace::try_load_snapshot_json(keyplace::write_description_json(d), loaded).has_value());
    INFO(loaded.message());
    CHECK(loaded.code() == code);
    CHECK(loaded.where() == where);
    CHECK(loaded.message().rfind(where + ": ", 0) == 0);
}

}  // namespace where_test

TEST_CASE("json: every build refusal is located where the check fails, for C++ and JSON callers alike",
          "[json][errors]") {
    using namespace where_test;
    using keyplace::failure_domain;
    auto d = three();
    d.format = "keyplace.snapshot/2";
    located(d, errc::invalid_document, "format");
    d = three();
    d.cluster = "a b";
    located(d, errc::invalid_document, "cluster");
    d = three();
    d.epoch = 0;
    d.parent_epoch = 0;
    located(d, errc::invalid_document, "epoch");
    d = three();
    d.parent_epoch = 2;
    located(d, errc::invalid_document, "parent_epoch");
    d = three();
    d.strategy.name = "consistent";
    located(d, errc::unknown_strategy, "strategy.name");
    d = three();
    d.strategy.params["vnodes"] = std::uint64_t{0};
    located(d, errc::invalid_vnodes, "strategy.params.vnodes");
    d = three();
    d.replication.count = 9;
    located(d, errc::invalid_replica_count, "replication");

    // Each node on its own, at its field.
    d = three();
    d.nodes[1].id = "";
    located(d, errc::empty_id, "nodes[1].id", 1);
    d = three();
    d.nodes[1].id = "a b";
    located(d, errc::invalid_name, "nodes[1].id", 1);
    d = three();
    d.nodes[2].weight = -1.0;
    located(d, errc::invalid_weight, "nodes[2].weight", 2);
    d = three();
    d.nodes[1].where.zone = "z 1";
    located(d, errc::invalid_name, "nodes[1].zone", 1);
    d = three();
    d.nodes[1].state = static_cast<node_state>(9);
    located(d, errc::invalid_state, "nodes[1].state", 1, false);  // a document cannot state it
    d = three();
    d.nodes[1].slots = {{0, 5}};
    located(d, errc::invalid_argument, "nodes[1].slots", 1);
    d = three("ketama");
    d.nodes[2].weight = 1.5;
    located(d, errc::invalid_weight, "nodes[2].weight", 2);
    d = three();
    d.nodes.push_back({"n0"});
    located(d, errc::duplicate_id, "nodes[3].id", 3);  // the second of the two
    d = three();  // the first repeat in the list's order, whichever id sorts first
    d.nodes.push_back({"n2"});
    d.nodes.push_back({"n0"});
    located(d, errc::duplicate_id, "nodes[3].id", 3);
    // The whole membership.
    d = three();
    for (auto& n : d.nodes) {
        n.state = node_state::joining;
    }
    located(d, errc::no_owner, "nodes");

    // Overrides, at their index in the description.
    d = three();
    d.overrides = {{"k", "n0"}, {"", "n1"}};
    located(d, errc::invalid_override, "overrides[1]");
    d.overrides = {{"k", "n0"}, {"hot", "zz"}};
    located(d, errc::unknown_id, "overrides[1]");
    d.overrides = {{std::string(1025, 'x'), "n0"}};
    located(d, errc::invalid_override, "overrides[0]");
    d.overrides = {{"k", "n0"}, {"j", "n1"}, {"k", "n2"}};
    located(d, errc::invalid_override, "overrides[2].key");  // one check: the reader's and the builder's
    d.overrides.clear();
    d.nodes[0].state = node_state::joining;
    d.overrides = {{"k", "n2"}};
    located(d, errc::invalid_state, "overrides[0]");
    d = three();
    for (std::size_t i = 0; i <= keyplace::max_overrides; ++i) {
        d.overrides.push_back({"k" + std::to_string(i), "n0"});
    }
    located(d, errc::invalid_override, "overrides");

    // The stated digests.
    d = three();
    const auto built = snapshot::build(d).describe();
    d = built;
    d.nodes[1].weight = 3.0;
    located(d, errc::fingerprint_mismatch, "fingerprint");
    d = built;
    d.probe->low ^= 1;
    located(d, errc::fingerprint_mismatch, "probe");

    // An engine's refusal of one node: that node's index in the description, not in id order
    // (n0 is the second node, first in id order).
    for (const char* unit : {"jump", "jumpback", "modulo", "multiprobe", "mpchash", "anchor", "memento"}) {
        d = three(unit);
        d.nodes[1].weight = 2.0;
        located(d, errc::invalid_weight, "nodes[1]", 1);
    }
    d = three();
    d.nodes[1].weight = 1e-9;  // rounds to no ring point
    located(d, errc::invalid_weight, "nodes[1]", 1);
    for (const char* scaled : {"rendezvous", "maglev", "partitions"}) {
        d = three(scaled);
        if (std::string_view(scaled) == "maglev") {
            d.strategy.params["table-size"] = std::uint64_t{1009};
        }
        d.nodes[1].weight = 1e12;  // above 2^37
        located(d, errc::invalid_weight, "nodes[1]", 1);
    }
    for (const char* envoy : {"envoy-ring", "envoy-maglev"}) {
        d = three(envoy);
        d.nodes[1].weight = 1.5;
        located(d, errc::invalid_weight, "nodes[1]", 1);
    }
    d = three("ketama-unweighted");
    d.nodes[2].weight = 2.0;
    located(d, errc::invalid_weight, "nodes[2]", 2);
    d = three("ketama");
    d.nodes[2].id = "host:99999";
    located(d, errc::invalid_address, "nodes[2]", 2);
    d = three("cassandra");
    d.nodes[0].tokens = {1};
    d.nodes[2].tokens = {2};
    located(d, errc::no_points, "nodes[1]", 1);
    d.nodes[1].tokens = {3, 3};
    located(d, errc::duplicate_token, "nodes[1]", 1);
    d.nodes[1].tokens = {2};
    located(d, errc::duplicate_token, "nodes");  // two nodes: the membership
    d = three("tokens");
    d.nodes[0].points = {1};
    d.nodes[2].points = {2};
    located(d, errc::no_points, "nodes[1]", 1);
    d = three("redis");
    d.nodes[0].slots = {{0, 100}};
    located(d, errc::slot_gap, "nodes");

    // An engine's refusal of a parameter: the parameter.
    struct parameter_case {
        const char* strategy;
        const char* name;
        std::uint64_t value;
        errc code;
        const char* where;
    };
    const parameter_case parameters[] = {
        {"ring", "vnodes", std::uint64_t{1} << 28, errc::too_many_points, "strategy.params.vnodes"},  // 3 * 2^28
        {"maglev", "table-size", 8, errc::table_size_not_prime, "strategy.params.table-size"},
        {"maglev", "table-size", 2, errc::invalid_table_size, "strategy.params.table-size"},
        {"envoy-maglev", "table-size", 4, errc::table_size_not_prime, "strategy.params.table-size"},
        {"envoy-ring", "min-ring-size", 8388608, errc::invalid_ring_size, "strategy.params"},  // above the max
        {"anchor", "capacity", 2, errc::invalid_table_size, "strategy.params.capacity"},
        {"partitions", "partitions", 6, errc::invalid_partition_count, "strategy.params.partitions"},
        {"partitions", "replicas", 4, errc::invalid_replica_count, "strategy.params.replicas"},
    };
    for (const auto& c : parameters) {
        d = three(c.strategy);
        d.strategy.params[c.name] = c.value;
        if (std::string_view(c.name) == "min-ring-size") {
            d.strategy.params["max-ring-size"] = std::uint64_t{1024};
        }
        located(d, c.code, c.where);
    }
    d = three("anchor");
    d.strategy.params["capacity"] = std::uint64_t{5};
    d.strategy.params["removed"] = std::vector<std::uint64_t>{4, 4};
    located(d, errc::invalid_argument, "strategy.params.removed");
    d = three("memento");
    d.strategy.params["removed"] = std::vector<std::uint64_t>{3};
    located(d, errc::invalid_argument, "strategy.params.removed");
    d = three("partitions");
    d.strategy.params["spread"] = std::string("rack");
    for (auto& n : d.nodes) {
        n.where.rack = "r";
    }
    d.nodes[1].where.rack.clear();
    located(d, errc::missing_location, "nodes[1]", 1);

    // A partition table the nodes list: the node and the span.
    d = three("partitions");
    d.strategy.params["partitions"] = std::uint64_t{4};
    d.nodes[0].partitions = {{0, 1, 0}};
    d.nodes[1].partitions = {{2, 2, 0}};
    d.nodes[2].partitions = {{3, 3, 0}};
    d.nodes[1].state = node_state::joining;
    located(d, errc::invalid_partition_table, "nodes[1].partitions", 1);
    d.nodes[1].state = node_state::active;
    d.nodes[2].partitions = {{3, 3, 0}, {1, 1, 0}};
    located(d, errc::invalid_partition_table, "nodes[2].partitions[1]", 2);
    d.nodes[2].partitions = {{3, 4, 0}};
    located(d, errc::invalid_partition_table, "nodes[2].partitions[0]", 2);
    d.nodes[2].partitions.clear();
    located(d, errc::invalid_partition_table, "nodes");  // partition 3 held by none

    // Deriving the table after a transition: the node joining or leaving.
    d = three("anchor");
    d.strategy.params["capacity"] = std::uint64_t{3};
    d.nodes.push_back({"n3", "", 1.0, {}, node_state::joining});
    located(d, errc::too_many_nodes, "nodes[3]", 3);

    // Copies.
    d = three("jump");
    d.replication.count = 2;
    located(d, errc::invalid_argument, "replication");
    d = three();
    d.replication.count = 2;
    d.replication.spread = failure_domain::rack;
    for (auto& n : d.nodes) {
        n.where.rack = "r";
    }
    located(d, errc::replica_shortfall, "replication");
    d.nodes[1].where.rack.clear();  // the ring numbers n0 first: the placer's node 0
    located(d, errc::missing_location, "nodes[1]", 1);
}
