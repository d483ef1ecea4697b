// Metrics (fleet/metrics.hpp): the Prometheus text a snapshot, a publisher, a watcher, a shadow
// compare, a hot-key summary, a bounded load, fencing and a ramp give, its values against the library's own analyses and
// counts, its escaping, and promtool's check of all of it together.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/metrics.hpp>
#include <keyplace/fleet/ownership.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/ring.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace metrics_tests {

using keyplace::snapshot;
using keyplace::snapshot_description;

// 3 zones x 4 nodes on a ring, one node joining.
auto zoned_ring() -> snapshot_description {
    snapshot_description d;
    d.cluster = "eu-1";
    d.epoch = 9;
    d.parent_epoch = 8;
    d.strategy.name = "ring";
    for (int z = 0; z < 3; ++z) {
        for (int i = 0; i < 4; ++i) {
            keyplace::snapshot_node n{"n" + std::to_string(z) + std::to_string(i)};
            n.where.zone = "z" + std::to_string(z);
            n.weight = i == 0 ? 2.0 : 1.0;
            d.nodes.push_back(n);
        }
    }
    d.nodes.back().state = keyplace::node_state::joining;
    return d;
}

// The value of the sample written exactly as `series` (name and labels), or NaN if none is.
auto value_of(const std::string& text, const std::string& series) -> double {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ') {
            return std::stod(line.substr(series.size() + 1));
        }
    }
    return std::nan("");
}

auto lines_starting(const std::string& text, const std::string& prefix) -> std::size_t {
    std::istringstream in(text);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        n += line.rfind(prefix, 0) == 0 ? 1U : 0U;
    }
    return n;
}

}  // namespace metrics_tests

TEST_CASE("metrics: a snapshot's members, epoch and exact ownership", "[metrics]") {
    using namespace metrics_tests;
    const auto d = zoned_ring();
    const snapshot s = snapshot::build(d);
    keyplace::metrics_text m;
    keyplace::append_snapshot_metrics(m, s);
    const std::string t = m.str();
    CHECK(value_of(t, "keyplace_snapshot_epoch{cluster=\"eu-1\"}") == 9);
    CHECK(value_of(t, "keyplace_snapshot_in_transition{cluster=\"eu-1\"}") == 1);
    CHECK(value_of(t, "keyplace_snapshot_info{cluster=\"eu-1\",strategy=\"ring\",fingerprint=\"" +
                          s.fingerprint().hex() + "\",probe=\"" + s.probe_digest().hex() + "\"}") == 1);
    CHECK(value_of(t, "keyplace_members{cluster=\"eu-1\",state=\"active\",zone=\"z0\"}") == 4);
    CHECK(value_of(t, "keyplace_members{cluster=\"eu-1\",state=\"active\",zone=\"z2\"}") == 3);
    CHECK(value_of(t, "keyplace_members{cluster=\"eu-1\",state=\"joining\",zone=\"z2\"}") == 1);
    CHECK(lines_starting(t, "keyplace_members{") == 4);

    // The shares are the ring's exact arcs: a ring of the 11 active nodes built on its own.
    std::vector<keyplace::node> active;
    for (const auto& n : d.nodes) {
        if (n.state == keyplace::node_state::active) {
            active.push_back({n.id, n.weight, n.where});
        }
    }
    const auto ring = keyplace::ring::build(active);
    const auto shares = keyplace::ownership(ring).share;
    CHECK(lines_starting(t, "keyplace_ownership_ratio{") == 11);
    double sum = 0;
    double max_relative = 0;
    for (std::size_t i = 0; i < active.size(); ++i) {
        const double v = value_of(t, "keyplace_ownership_ratio{cluster=\"eu-1\",node=\"" + ring.nodes()[i].id +
                                         "\",zone=\"" + ring.nodes()[i].where.zone + "\"}");
        CHECK(v == shares[i]);  // written as the shortest decimal that reads back as the same double
        sum += v;
        max_relative = std::max(max_relative, v / (ring.nodes()[i].weight / 14.0));
    }
    CHECK(std::abs(sum - 1) < 1e-12);
    CHECK(std::abs(value_of(t, "keyplace_ownership_max_ratio{cluster=\"eu-1\"}") - max_relative) < 1e-12);
    CHECK(value_of(t, "keyplace_ownership_exact{cluster=\"eu-1\"}") == 1);
    const double cv = value_of(t, "keyplace_ownership_cv{cluster=\"eu-1\"}");
    CHECK(cv > 0.0);
    CHECK(cv < 0.2);  // 160 vnodes a unit of weight: about 1/sqrt(160) = 0.08 per node

    // Rendezvous has no regions: sampled, and said so.
    auto r = zoned_ring();
    r.strategy.name = "rendezvous";
    keyplace::metrics_text mr;
    keyplace::append_snapshot_metrics(mr, snapshot::build(r));
    CHECK(value_of(mr.str(), "keyplace_ownership_exact{cluster=\"eu-1\"}") == 0);
}

TEST_CASE("metrics: label values escape quotes, backslashes and newlines, replace bad UTF-8 and are cut",
          "[metrics]") {
    using keyplace::metrics_text;
    CHECK(metrics_text::escape("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
    CHECK(metrics_text::escape("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(metrics_text::escape("x\xff" "y") == "x\xef\xbf\xbdy");
    const std::string long_key(300, 'k');
    CHECK(metrics_text::escape(long_key) == std::string(256, 'k') + "...");
    // A cut never splits a character: 255 bytes, then a 2-byte one that would end past 256.
    CHECK(metrics_text::escape(std::string(255, 'k') + "\xc3\xa9") == std::string(255, 'k') + "...");
    CHECK(metrics_text::number(0.25) == "0.25");
    CHECK(metrics_text::number(std::nan("")) == "NaN");
    CHECK(metrics_text::number(-HUGE_VAL) == "-Inf");
    metrics_text m;
    m.family("x_total", "counter", "a\\b\nc").sample({{"k", "v\""}}, std::uint64_t{18446744073709551615ULL});
    CHECK(m.str() == "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\nx_total{k=\"v\\\"\"} 18446744073709551615\n");
}

TEST_CASE("metrics: publisher counts, a watcher's counters, a shadow compare and hot keys, checked by promtool",
          "[metrics]") {
    using namespace metrics_tests;
    auto d = zoned_ring();
    d.nodes.back().state = keyplace::node_state::active;
    const auto first = std::make_shared<const snapshot>(snapshot::build(d));
    keyplace::publisher pub(first);
    auto next = first->successor();
    next.nodes[0].weight = 3.0;
    const auto second = std::make_shared<const snapshot>(snapshot::build(next));
    CHECK(pub.publish(second) == keyplace::publish_result::published);
    CHECK(pub.publish(second) == keyplace::publish_result::unchanged);
    keyplace::error_info err;
    CHECK_FALSE(pub.try_publish(first, err).has_value());  // an older epoch: stale_epoch

    keyplace::metrics_text m;
    keyplace::append_snapshot_metrics(m, *second);
    keyplace::append_publisher_metrics(m, second->cluster(), pub.counts());
    struct stats {
        std::uint64_t epoch = 10, adopted = 3, refused = 1, reconnects = 2;
        std::chrono::steady_clock::duration since_contact = std::chrono::milliseconds(1500);
        std::uint64_t restored_epoch = 0, cache_writes = 3, cache_failures = 0;
    };
    keyplace::append_watcher_metrics(m, second->cluster(), stats{});
    keyplace::shadow_compare shadow(first, second);
    for (int i = 0; i < 20000; ++i) {
        shadow.observe("user:" + std::to_string(i));
    }
    keyplace::append_shadow_metrics(m, second->cluster(), shadow.report());
    auto hot = keyplace::hot_keys::make();
    for (int i = 0; i < 1000; ++i) {
        hot.observe(i % 2 == 0 ? std::string_view("quote\"key") : std::string_view("user:1"));
        hot.observe("user:" + std::to_string(i));
    }
    hot.observe("bad\xff\nkey", 700);
    keyplace::append_hot_key_metrics(m, hot, 3);
    // A bounded load over the ring: one key requested 10 times, all held; the owner takes its cap.
    auto tracker = keyplace::load_tracker<keyplace::ring>::build(second->current().visit([](const auto& x) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(x)>, keyplace::ring>) {
            return x;
        } else {
            return keyplace::ring::build(std::vector<keyplace::node>{{"x"}});
        }
    }));
    std::vector<keyplace::load_tracker<keyplace::ring>::token> held;
    for (int i = 0; i < 10; ++i) {
        held.push_back(tracker.acquire("user:7"));
    }
    keyplace::append_bounded_load_metrics(m, second->cluster(), tracker);
    // Fencing at n00, whose weight went from 2 to 3: 1,000 requests stamped with epoch 9 and
    // 1,000 with epoch 11 (ahead), their verdicts tallied here beside the counts.
    keyplace::ownership_history history("n00");
    history.adopt(first);
    history.adopt(second);
    keyplace::admission_counts admitted;
    std::size_t tally[4] = {};
    for (int i = 0; i < 2000; ++i) {
        const auto a = history.admit("user:" + std::to_string(i), i < 1000 ? 9 : 11);
        admitted.record(a);
        ++tally[static_cast<std::size_t>(a.verdict)];
    }
    keyplace::append_fencing_metrics(m, second->cluster(), history, admitted);
    // A ramp of n00's weight from 2 to 3 in four epochs, two of them published.
    const auto ramp = keyplace::plan_ramp(*first, *second, {.steps = 4});
    REQUIRE(ramp.epochs.size() == 4);
    keyplace::append_ramp_metrics(m, second->cluster(), ramp, 2);
    const std::string t = m.str();
    const std::string at_n00 = "{cluster=\"eu-1\",node=\"n00\"";
    CHECK(value_of(t, "keyplace_fencing_admissions_total" + at_n00 + ",verdict=\"serve\"}") == static_cast<double>(tally[0]));
    CHECK(value_of(t, "keyplace_fencing_admissions_total" + at_n00 + ",verdict=\"redirect\"}") == static_cast<double>(tally[1]));
    CHECK(value_of(t, "keyplace_fencing_admissions_total" + at_n00 + ",verdict=\"stale\"}") == static_cast<double>(tally[2]));
    CHECK(value_of(t, "keyplace_fencing_admissions_total" + at_n00 + ",verdict=\"behind\"}") == 1000);
    CHECK(tally[0] > 0);
    CHECK(tally[1] > 0);
    CHECK(tally[2] > 0);  // keys n00 gained at epoch 10, requested under 9
    CHECK(value_of(t, "keyplace_fencing_epoch" + at_n00 + "}") == 10);
    CHECK(value_of(t, "keyplace_fencing_oldest_epoch" + at_n00 + "}") == 9);
    CHECK(value_of(t, "keyplace_fencing_placements" + at_n00 + "}") == 2);
    CHECK(value_of(t, "keyplace_fencing_truncated" + at_n00 + "}") == 0);
    const std::string ramp_labels = "{cluster=\"eu-1\",node=\"n00\",method=\"weights\"}";
    CHECK(value_of(t, "keyplace_ramp_epochs" + ramp_labels) == 4);
    CHECK(value_of(t, "keyplace_ramp_epochs_published" + ramp_labels) == 2);
    CHECK(value_of(t, "keyplace_ramp_moved_ratio" + ramp_labels) == ramp.moved[0] + ramp.moved[1]);
    CHECK(value_of(t, "keyplace_ramp_planned_moved_ratio" + ramp_labels) == ramp.total_moved);
    CHECK(value_of(t, "keyplace_ramp_value" + ramp_labels) == 2.5);  // 2, 2.25, 2.5: half way after two of four
    {
        keyplace::metrics_text bad;
        CHECK_THROWS_WITH(keyplace::append_ramp_metrics(bad, "eu-1", ramp, 5),
                          "ramp metrics: 5 epochs published of a ramp of 4");
        keyplace::metrics_text none;
        keyplace::append_ramp_metrics(none, "eu-1", ramp, 0);
        CHECK(none.str().find("keyplace_ramp_value") == std::string::npos);
        CHECK(value_of(none.str(), "keyplace_ramp_moved_ratio" + ramp_labels) == 0);
    }
    CHECK(value_of(t, "keyplace_bounded_load_in_flight{cluster=\"eu-1\"}") == 10);
    CHECK(value_of(t, "keyplace_bounded_load_overflows_total{cluster=\"eu-1\"}") == static_cast<double>(tracker.overflows()));
    CHECK(tracker.overflows() > 0);  // 10 requests, no node's cap at 10 in flight over 12 nodes is 10

    CHECK(value_of(t, "keyplace_publish_total{cluster=\"eu-1\",result=\"published\"}") == 1);
    CHECK(value_of(t, "keyplace_publish_total{cluster=\"eu-1\",result=\"unchanged\"}") == 1);
    CHECK(value_of(t, "keyplace_publish_total{cluster=\"eu-1\",result=\"stale_epoch\"}") == 1);
    CHECK(value_of(t, "keyplace_watcher_contact_age_seconds{cluster=\"eu-1\"}") == 1.5);
    CHECK(value_of(t, "keyplace_watcher_adopted_total{cluster=\"eu-1\"}") == 3);
    CHECK(value_of(t, "keyplace_shadow_requests_total{cluster=\"eu-1\",before_epoch=\"9\",after_epoch=\"10\"}") ==
          20000);
    CHECK(value_of(t, "keyplace_hot_keys_observed_total") == 2700);
    CHECK(value_of(t, "keyplace_hot_key_requests_upper{key=\"user:1\"}") >= 501);
    CHECK(value_of(t, "keyplace_hot_key_requests_lower{key=\"user:1\"}") <= 501);
    CHECK(value_of(t, "keyplace_hot_key_requests_upper{key=\"bad\xef\xbf\xbd\\nkey\"}") >= 700);
    CHECK(value_of(t, "keyplace_hot_key_requests_upper{key=\"quote\\\"key\"}") >= 500);

    // promtool (Debian's prometheus package) parses the text and lints the names.
    const auto dir = std::filesystem::temp_directory_path() / ("keyplace-metrics-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "metrics.prom";
    std::ofstream(file, std::ios::binary) << t;
    if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
        WARN("promtool not found (Debian: apt-get install prometheus): the text is not checked by it");
    } else {
        const std::string out = (dir / "promtool.out").string();
        const int status = std::system(("promtool check metrics < " + file.string() + " > " + out + " 2>&1").c_str());
        std::ifstream said(out);
        const std::string report((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
        INFO("promtool: " << report);
        CHECK(status == 0);
        CHECK(report.empty());
    }
    std::filesystem::remove_all(dir);
}
