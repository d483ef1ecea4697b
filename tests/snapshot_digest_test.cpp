// Tests of snapshot.hpp's two digests against golden values from an independent Python
// reference (tests/golden/generate_snapshot_digests.py, written from the README's contract
// text): every case line of tests/golden/snapshot_digests_v1.txt describes a snapshot whole,
// and the library must build it to the stated fingerprint and probe digest.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/snapshot.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

using keyplace::digest128;
using keyplace::errc;
using keyplace::error_info;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
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

auto golden_cases() -> std::vector<golden_case> {
    std::vector<golden_case> cases;
    bool header = false;
    for (const auto& f : golden_records("snapshot_digests_v1.txt")) {
        if (f.at(0) == "keyplace-snapshot-digests") {
            REQUIRE(f.size() == 2);
            REQUIRE(f[1] == "1");
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
    CHECK(strategies.size() == 17);
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
