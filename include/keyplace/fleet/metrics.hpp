// keyplace — which node owns a key. Placement health as metrics: text in the Prometheus
// exposition format (version 0.0.4, which OpenMetrics parsers also read) for a snapshot's
// members and exact ownership, a publisher's counts, a watcher's counters, a shadow compare, the
// hot keys of a summary, a bounded load, fencing at the owner and a ramp being published. Written here, with no dependency; serving it is the program's
// (keyplace-cli etcd watch --metrics serves it over HTTP). The names: doc/metrics.md.
#ifndef KEYPLACE_FLEET_METRICS_HPP_INCLUDED
#define KEYPLACE_FLEET_METRICS_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/bounded_load.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/detail/utf8.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/hot_keys.hpp>
#include <keyplace/version.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// One label of a sample: its name and value.
using metric_label = std::pair<std::string_view, std::string_view>;

/// Text in the Prometheus exposition format, one family at a time: family() writes its HELP and
/// TYPE lines, sample() its samples. A family's name may appear once in a text, so each append_*
/// function below is called at most once per text (several clusters: several label values of one
/// call are not supported; one text per cluster). Label values are escaped (backslash, double
/// quote, newline), bytes that are not well-formed UTF-8 become U+FFFD, and a value is cut at
/// max_label_bytes (never inside a character), so any key or id can be a label.
class metrics_text {
public:
    static constexpr std::size_t max_label_bytes = 256;

    /// Begins a family: `type` is "gauge" or "counter" (a counter's name ends in _total).
    auto family(std::string_view name, std::string_view type, std::string_view help) -> metrics_text& {
        out_ += "# HELP ";
        out_ += name;
        out_ += ' ';
        for (const char c : help) {  // HELP escapes backslash and newline
            out_ += c == '\\' ? std::string_view("\\\\") : c == '\n' ? std::string_view("\\n") : std::string_view(&c, 1);
        }
        out_ += "\n# TYPE ";
        out_ += name;
        out_ += ' ';
        out_ += type;
        out_ += '\n';
        name_ = name;
        return *this;
    }
    /// A sample of the current family.
    auto sample(std::initializer_list<metric_label> labels, double value) -> metrics_text& {
        begin_sample(labels);
        out_ += number(value);
        out_ += '\n';
        return *this;
    }
    auto sample(std::initializer_list<metric_label> labels, std::uint64_t value) -> metrics_text& {
        begin_sample(labels);
        out_ += std::to_string(value);
        out_ += '\n';
        return *this;
    }
    [[nodiscard]] auto str() const& -> const std::string& { return out_; }
    [[nodiscard]] auto str() && -> std::string { return std::move(out_); }

    /// A label value as the format writes it between its quotes.
    [[nodiscard]] static auto escape(std::string_view v) -> std::string {
        std::string out;
        std::size_t i = 0;
        while (i < v.size()) {
            const std::size_t n = detail::utf8_sequence(v, i);
            if (i + (n == 0 ? 1 : n) > max_label_bytes) {
                out += "...";
                break;
            }
            if (n == 0) {
                out += "\xef\xbf\xbd";  // U+FFFD for a byte that starts no character
                ++i;
            } else if (v[i] == '\\' || v[i] == '"') {
                out += '\\';
                out += v[i++];
            } else if (v[i] == '\n') {
                out += "\\n";
                ++i;
            } else {
                out.append(v.substr(i, n));
                i += n;
            }
        }
        return out;
    }
    /// A sample value: the shortest decimal that reads back as the same double; NaN, +Inf, -Inf.
    [[nodiscard]] static auto number(double x) -> std::string {
        if (x != x) {
            return "NaN";
        }
        if (!detail::is_finite(x)) {
            return x > 0 ? "+Inf" : "-Inf";
        }
        return detail::json_number(x);
    }

private:
    void begin_sample(std::initializer_list<metric_label> labels) {
        out_ += name_;
        if (labels.size() != 0) {
            out_ += '{';
            bool first = true;
            for (const auto& [name, value] : labels) {
                out_ += first ? "" : ",";
                out_ += name;
                out_ += "=\"";
                out_ += escape(value);
                out_ += '"';
                first = false;
            }
            out_ += '}';
        }
        out_ += ' ';
    }

    std::string out_;
    std::string name_;
};

/// A snapshot's families: keyplace_snapshot_epoch, keyplace_snapshot_info (strategy, fingerprint,
/// probe digest), keyplace_snapshot_in_transition, keyplace_members (by state and zone),
/// keyplace_ownership_ratio (each member's share of the key space under current(), exact where
/// the strategy has regions), keyplace_ownership_max_ratio and keyplace_ownership_cv (of each
/// member's share over its fair share, its weight's part), keyplace_ownership_exact. Every sample
/// has the label cluster.
KEYPLACE_DETAIL_INLINE void append_snapshot_metrics(metrics_text& m, const snapshot& s);

/// keyplace_publish_total{cluster, result}: a publisher's counts, one sample per result.
inline void append_publisher_metrics(metrics_text& m, std::string_view cluster, const publish_counts& c) {
    m.family("keyplace_publish_total", "counter", "Publishes of a snapshot to this process's publisher, by result.");
    for (const auto& [result, n] : {std::pair<std::string_view, std::uint64_t>{"published", c.published},
                                    {"unchanged", c.unchanged},
                                    {"stale_epoch", c.stale_epoch},
                                    {"wrong_cluster", c.wrong_cluster},
                                    {"split_brain", c.split_brain},
                                    {"invalid_state", c.invalid_state},
                                    {"invalid_snapshot", c.invalid_snapshot}}) {
        m.sample({{"cluster", cluster}, {"result", result}}, n);
    }
}

/// A watcher's counters (keyplace::etcd::watcher_stats, or any type with its members):
/// keyplace_watcher_epoch, _adopted_total, _refused_total, _reconnects_total,
/// _contact_age_seconds (since etcd last answered), _restored_epoch, _cache_writes_total,
/// _cache_failures_total.
template <class Stats>
    requires requires(const Stats& s) {
        s.epoch;
        s.adopted;
        s.refused;
        s.reconnects;
        s.since_contact;
        s.restored_epoch;
        s.cache_writes;
        s.cache_failures;
    }
void append_watcher_metrics(metrics_text& m, std::string_view cluster, const Stats& s) {
    const auto one = [&](std::string_view name, std::string_view type, std::string_view help, std::uint64_t v) {
        m.family(name, type, help).sample({{"cluster", cluster}}, v);
    };
    one("keyplace_watcher_epoch", "gauge", "The epoch the watcher adopted last (0 before the first).", s.epoch);
    one("keyplace_watcher_adopted_total", "counter", "Snapshots the watcher adopted.", s.adopted);
    one("keyplace_watcher_refused_total", "counter", "Snapshot documents the watcher refused.", s.refused);
    one("keyplace_watcher_reconnects_total", "counter", "Watch streams re-established after an error.", s.reconnects);
    m.family("keyplace_watcher_contact_age_seconds", "gauge", "Seconds since etcd last answered the watcher.")
        .sample({{"cluster", cluster}}, std::chrono::duration<double>(s.since_contact).count());
    one("keyplace_watcher_restored_epoch", "gauge", "The epoch restored from the cache file at start (0: none).",
        s.restored_epoch);
    one("keyplace_watcher_cache_writes_total", "counter", "Cache file writes that succeeded.", s.cache_writes);
    one("keyplace_watcher_cache_failures_total", "counter", "Cache file writes that failed.", s.cache_failures);
}

/// A shadow compare's report: keyplace_shadow_requests_total (seen), keyplace_shadow_keys_sampled,
/// keyplace_shadow_keys_moved, keyplace_shadow_moved_ratio and keyplace_shadow_expected_moved_ratio,
/// keyplace_shadow_survivor_moved_ratio, keyplace_shadow_verdict (1 for the report's verdict).
inline void append_shadow_metrics(metrics_text& m, std::string_view cluster, const shadow_report& r) {
    const std::string before = std::to_string(r.before_epoch);
    const std::string after = std::to_string(r.after_epoch);
    const std::initializer_list<metric_label> labels{{"cluster", cluster}, {"before_epoch", before}, {"after_epoch", after}};
    m.family("keyplace_shadow_requests_total", "counter", "Requests a shadow compare observed.")
        .sample(labels, r.requests_seen);
    m.family("keyplace_shadow_keys_sampled", "gauge", "Distinct keys a shadow compare sampled.")
        .sample(labels, r.keys_sampled);
    m.family("keyplace_shadow_keys_moved", "gauge", "Sampled keys whose owner differs between the two snapshots.")
        .sample(labels, r.keys_moved);
    m.family("keyplace_shadow_moved_ratio", "gauge", "The fraction of sampled keys that move.")
        .sample(labels, r.moved_fraction);
    m.family("keyplace_shadow_expected_moved_ratio", "gauge", "The fraction analysis says moves.")
        .sample(labels, r.expected_moved);
    m.family("keyplace_shadow_survivor_moved_ratio", "gauge",
             "The fraction of sampled keys moved between two nodes present in both with an unchanged weight.")
        .sample(labels, r.survivor_fraction);
    m.family("keyplace_shadow_verdict", "gauge", "1 for the shadow compare's verdict.");
    const std::string verdict(to_string(r.verdict));
    m.sample({{"cluster", cluster}, {"before_epoch", before}, {"after_epoch", after}, {"verdict", verdict}},
             std::uint64_t{1});
}

/// A hot-key summary: keyplace_hot_keys_observed_total, keyplace_hot_keys_error_bound (requests an
/// estimate may exceed its truth by, with probability at most keyplace_hot_keys_failure_ratio),
/// and for its top n keys keyplace_hot_key_requests_upper and _lower {key} (the true count lies
/// between them).
inline void append_hot_key_metrics(metrics_text& m, const hot_keys& h, std::size_t n = 10) {
    m.family("keyplace_hot_keys_observed_total", "counter", "Requests the hot-key summary observed.")
        .sample({}, h.total());
    m.family("keyplace_hot_keys_error_bound", "gauge",
             "Requests by which an estimate may exceed its key's true count (ceil(e n / width)).")
        .sample({}, h.error_bound());
    m.family("keyplace_hot_keys_failure_ratio", "gauge", "The probability an estimate exceeds the error bound (e^-depth).")
        .sample({}, h.failure_probability());
    const auto top = h.top(n);
    m.family("keyplace_hot_key_requests_upper", "gauge", "A hot key's estimated requests, never below the truth.");
    for (const auto& k : top) {
        m.sample({{"key", k.key}}, k.upper);
    }
    m.family("keyplace_hot_key_requests_lower", "gauge",
             "A hot key's requests counted since it became a candidate, never above the truth.");
    for (const auto& k : top) {
        m.sample({{"key", k.key}}, k.lower);
    }
}

/// A bounded-load tracker: keyplace_bounded_load_overflows_total (requests admitted after passing
/// over a node at its cap), keyplace_bounded_load_in_flight, and per node
/// keyplace_bounded_load_node_in_flight{node} beside keyplace_bounded_load_node_cap{node} (its
/// cap at the current total).
template <class S>
void append_bounded_load_metrics(metrics_text& m, std::string_view cluster, const load_tracker<S>& t) {
    m.family("keyplace_bounded_load_overflows_total", "counter",
             "Requests admitted after passing over a node at its cap (their first choice was full).")
        .sample({{"cluster", cluster}}, t.overflows());
    const std::uint64_t total = t.in_flight();
    m.family("keyplace_bounded_load_in_flight", "gauge", "Requests in flight under the bounded load.")
        .sample({{"cluster", cluster}}, total);
    const auto& s = t.strategy();
    m.family("keyplace_bounded_load_node_in_flight", "gauge", "Requests in flight on a node.");
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        m.sample({{"cluster", cluster}, {"node", s.nodes()[i].id}}, t.load(node_index{i}));
    }
    m.family("keyplace_bounded_load_node_cap", "gauge", "A node's cap at the current number of requests in flight.");
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        m.sample({{"cluster", cluster}, {"node", s.nodes()[i].id}}, t.caps().cap(node_index{i}, total));
    }
}

/// Fencing at the owner (fleet/ownership.hpp): an ownership_history and its admission_counts.
/// keyplace_fencing_admissions_total{cluster, node, verdict} (serve, redirect, stale, behind),
/// keyplace_fencing_epoch (the newest adopted, 0 before the first), keyplace_fencing_oldest_epoch
/// (the first epoch of the oldest placement kept: requests stamped before it cannot be served),
/// keyplace_fencing_placements (distinct placements kept) and keyplace_fencing_truncated (1 once
/// the capacity dropped one). One node a text: a family appears once (a process serving several
/// nodes writes one text each, or labels its own). Templates, so that this header needs no
/// ownership.hpp.
template <class History, class Counts>
    requires requires(const History& h, const Counts& c) {
        h.node_id();
        h.newest();
        h.oldest_epoch();
        h.size();
        h.truncated();
        c.for_each([](std::string_view, std::uint64_t) {});
    }
void append_fencing_metrics(metrics_text& m, std::string_view cluster, const History& h, const Counts& c) {
    const std::string_view node = h.node_id();
    m.family("keyplace_fencing_admissions_total", "counter", "Requests a node's fencing answered, by verdict.");
    c.for_each([&](std::string_view verdict, std::uint64_t n) {
        m.sample({{"cluster", cluster}, {"node", node}, {"verdict", verdict}}, n);
    });
    const auto one = [&](std::string_view name, std::string_view help, std::uint64_t v) {
        m.family(name, "gauge", help).sample({{"cluster", cluster}, {"node", node}}, v);
    };
    one("keyplace_fencing_epoch", "The newest epoch the node adopted (0 before the first).",
        h.newest() == nullptr ? 0 : h.newest()->epoch());
    one("keyplace_fencing_oldest_epoch", "The first epoch of the oldest placement the node keeps (0 when none).",
        h.oldest_epoch());
    one("keyplace_fencing_placements", "Distinct placements the node keeps for fencing.",
        static_cast<std::uint64_t>(h.size()));
    one("keyplace_fencing_truncated", "1 once the history dropped a placement for its capacity.",
        std::uint64_t{h.truncated() ? 1U : 0U});
}

/// A ramp being published (fleet/ramp.hpp's ramp_plan, `published` of its epochs out so far):
/// keyplace_ramp_epochs and keyplace_ramp_epochs_published {cluster, node, method},
/// keyplace_ramp_moved_ratio (what the published epochs moved, the sum of their `moved`),
/// keyplace_ramp_planned_moved_ratio (the whole chain's) and keyplace_ramp_one_shot_moved_ratio
/// (one epoch straight to the target), keyplace_ramp_value (the node's weight or points under the
/// newest published epoch; absent before the first). Throws keyplace::error (invalid_argument)
/// for `published` above the plan's epochs, naming both. A template, as above.
template <class Plan>
    requires requires(const Plan& p) {
        p.epochs.size();
        p.moved[0];
        p.values[0];
        p.node;
        p.method;
        p.total_moved;
        p.one_shot_moved;
    }
void append_ramp_metrics(metrics_text& m, std::string_view cluster, const Plan& p, std::size_t published) {
    if (published > p.epochs.size()) {
        detail::raise(detail::fail(errc::invalid_argument, "ramp metrics: " + std::to_string(published) +
                                                               " epochs published of a ramp of " +
                                                               std::to_string(p.epochs.size())));
    }
    const std::string method(to_string(p.method));
    const std::initializer_list<metric_label> labels{{"cluster", cluster}, {"node", p.node}, {"method", method}};
    m.family("keyplace_ramp_epochs", "gauge", "Epochs in the ramp being published.")
        .sample(labels, static_cast<std::uint64_t>(p.epochs.size()));
    m.family("keyplace_ramp_epochs_published", "gauge", "Epochs of the ramp published so far.")
        .sample(labels, static_cast<std::uint64_t>(published));
    double moved = 0;
    for (std::size_t i = 0; i < published; ++i) {
        moved += p.moved[i];
    }
    m.family("keyplace_ramp_moved_ratio", "gauge", "The fraction of keys the published epochs of the ramp moved.")
        .sample(labels, moved);
    m.family("keyplace_ramp_planned_moved_ratio", "gauge", "The fraction of keys the whole ramp moves.")
        .sample(labels, p.total_moved);
    m.family("keyplace_ramp_one_shot_moved_ratio", "gauge", "The fraction of keys one epoch straight to the target moves.")
        .sample(labels, p.one_shot_moved);
    if (published != 0) {
        m.family("keyplace_ramp_value", "gauge", "The ramped node's weight or point count under the newest published epoch.")
            .sample(labels, p.values[published - 1]);
    }
}

#if KEYPLACE_DETAIL_DEFINE

KEYPLACE_DETAIL_INLINE void append_snapshot_metrics(metrics_text& m, const snapshot& s) {
    const std::string& cluster = s.cluster();
    m.family("keyplace_snapshot_epoch", "gauge", "The epoch of the snapshot in force.")
        .sample({{"cluster", cluster}}, s.epoch());
    const std::string fingerprint = s.fingerprint().hex();
    const std::string probe = s.probe_digest().hex();
    m.family("keyplace_snapshot_info", "gauge", "The snapshot in force: its strategy and digests (value 1).")
        .sample({{"cluster", cluster}, {"strategy", s.strategy().name}, {"fingerprint", fingerprint}, {"probe", probe}},
                std::uint64_t{1});
    m.family("keyplace_snapshot_in_transition", "gauge", "1 while the snapshot has nodes joining or leaving.")
        .sample({{"cluster", cluster}}, std::uint64_t{s.in_transition() ? 1U : 0U});

    std::map<std::pair<std::string_view, std::string>, std::uint64_t> members;  // (state, zone)
    for (const auto& n : s.nodes()) {
        ++members[{to_string(n.state), n.where.zone}];
    }
    m.family("keyplace_members", "gauge", "Nodes listed in the snapshot, by state and zone.");
    for (const auto& [key, count] : members) {
        m.sample({{"cluster", cluster}, {"state", key.first}, {"zone", key.second}}, count);
    }

    // Each member's share under current(): exact over regions, the defined share, or sampled.
    const placement& p = s.current();
    ownership_report owned;
    p.visit([&](const auto& x) { owned = ownership(x); });
    double weight = 0;
    for (std::uint32_t i = 0; i < p.size(); ++i) {
        weight += s.nodes()[p.member(node_index{i})].weight;
    }
    m.family("keyplace_ownership_ratio", "gauge", "A member's share of the key space under the current placement.");
    std::vector<double> relative;
    for (std::uint32_t i = 0; i < p.size(); ++i) {
        const auto& n = s.nodes()[p.member(node_index{i})];
        m.sample({{"cluster", cluster}, {"node", n.id}, {"zone", n.where.zone}}, owned.share[i]);
        relative.push_back(owned.share[i] / (n.weight / weight));
    }
    double max = 0;
    double mean = 0;
    for (const double r : relative) {
        max = r > max ? r : max;
        mean += r / static_cast<double>(relative.size());
    }
    double var = 0;
    for (const double r : relative) {
        var += (r - mean) * (r - mean) / static_cast<double>(relative.size());
    }
    m.family("keyplace_ownership_max_ratio", "gauge",
             "The busiest member's share over its fair share (its weight's part); 1 is perfect balance.")
        .sample({{"cluster", cluster}}, max);
    m.family("keyplace_ownership_cv", "gauge",
             "The coefficient of variation of the members' shares over their fair shares.")
        .sample({{"cluster", cluster}}, detail::square_root(var) / mean);
    m.family("keyplace_ownership_exact", "gauge",
             "1 when the shares are exact (regions, or the strategy's defined share), 0 when sampled.")
        .sample({{"cluster", cluster}}, std::uint64_t{owned.method == share_method::sampled ? 0U : 1U});
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
