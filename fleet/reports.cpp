// keyplace-fleet's output: progress, text, JSON and SVG (reports.hpp).
#include "reports.hpp"

#include "fleet_options.hpp"
#include "workload.hpp"

#include <keyplace/detail/text.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace keyplace_fleet {

using keyplace::detail::json_writer;

namespace {

// Per-arm figures against the control of the same strategy, popularity and seed.
struct event_figures {
    double predicted_requests = 0;
    double predicted_keys = 0;
    double measured = 0;            // first window's hit rate over the control's
    double first_hit = 0;
    double control_first_hit = 0;
    double first_miss_ratio = 0;    // first window's DB reads over the control's
    double db_multiple = 0;         // first window's DB reads over the mean per steady window (before the join)
    std::int64_t extra_db = 0;      // whole phase, over the control
    std::int64_t recovery = -1;     // windows until within 1 pp of the control (-1: not in the phase)
    std::uint64_t stale = 0;
    std::uint64_t old_epoch = 0;
};

auto figures(const arm_result& a, const arm_result& control, const std::string& ev) -> event_figures {
    event_figures f;
    if (const auto it = a.predicted.find(ev); it != a.predicted.end()) {
        f.predicted_requests = it->second.requests;
        f.predicted_keys = it->second.keys;
    }
    bool first = true;
    for (std::size_t i = 0; i < a.windows.size() && i < control.windows.size(); ++i) {
        const auto& w = a.windows[i];
        const auto& c = control.windows[i];
        if (w.phase != ev) {
            continue;
        }
        if (first) {
            f.first_hit = w.hit_rate();
            f.control_first_hit = c.hit_rate();
            f.measured = c.hit_rate() > 0 ? w.hit_rate() / c.hit_rate() : 0;
            f.first_miss_ratio =
                c.db_reads > 0 ? static_cast<double>(w.db_reads) / static_cast<double>(c.db_reads) : 0;
            first = false;
        }
        f.extra_db += static_cast<std::int64_t>(w.db_reads) - static_cast<std::int64_t>(c.db_reads);
        f.stale += w.stale;
        f.old_epoch += w.old_epoch;
    }
    double steady_reads = 0;
    double steady_windows = 0;
    for (const auto& w : a.windows) {
        steady_reads += w.phase == "steady" ? static_cast<double>(w.db_reads) : 0.0;
        steady_windows += w.phase == "steady" ? 1.0 : 0.0;
    }
    steady_reads /= steady_windows;
    for (const auto& w : a.windows) {
        if (w.phase == ev) {
            f.db_multiple = steady_reads > 0 ? static_cast<double>(w.db_reads) / steady_reads : 0;
            break;
        }
    }
    std::int64_t n = 0;
    for (std::size_t i = 0; i < a.windows.size() && i < control.windows.size(); ++i) {
        if (a.windows[i].phase != ev) {
            continue;
        }
        if (a.windows[i].hit_rate() >= control.windows[i].hit_rate() - 0.01) {
            f.recovery = n;
            break;
        }
        ++n;
    }
    return f;
}

// A figure for JSON: fixed precision, or null where it is not finite (a ratio over a control
// that missed nothing), which printf would write as "inf" or "nan".
auto json_fixed(const char* f, double v) -> std::string { return std::isfinite(v) ? fmt(f, v) : "null"; }

// "servers":[{"port":P,"pid":N},...]
void servers_json(json_writer& w, const std::vector<server>& servers) {
    w.key("servers").begin_array();
    for (const auto& s : servers) {
        w.begin_object().member("port", s.port).member("pid", s.pid).end_object();
    }
    w.end_array();
}

void windows_json(json_writer& w, const std::vector<window_stats>& windows) {
    w.begin_array();
    for (const auto& x : windows) {
        w.begin_object()
            .member("phase", x.phase)
            .member("epoch", x.epoch)
            .member("gets", x.gets)
            .key("hit_rate")
            .raw(json_fixed("%.4f", x.hit_rate()))
            .member("db_reads", x.db_reads)
            .member("stale_hits", x.stale)
            .member("old_epoch_requests", x.old_epoch)
            .member("old_owner_requests", x.old_owner)
            .end_object();
    }
    w.end_array();
}

// "hot_keys":{...}: the summary's top keys with their true counts, and the true top with the bounds.
void hot_json(json_writer& w, const hot_report& h) {
    const auto keys = [&](const char* name, const std::vector<detected_key>& list) {
        w.key(name).begin_array();
        for (const auto& k : list) {
            w.begin_object()
                .member("key", k.key)
                .member("true", k.truth)
                .member("lower", k.lower)
                .member("upper", k.upper)
                .end_object();
        }
        w.end_array();
    };
    w.key("hot_keys").begin_object().member("requests", h.requests).member("error_bound", h.error_bound);
    w.key("failure_probability").raw(json_fixed("%.4f", h.failure_probability));
    keys("detected", h.detected);
    keys("true_top", h.truth);
    w.member("true_top_detected", h.found).end_object();
}

// A figure written with fixed precision.
struct fixed {
    std::string_view name;
    const char* format;
    double value;
};

// Per client and event: requests on an old epoch, those sent to an old owner, stale hits.
struct client_event {
    std::uint64_t gets = 0, old_epoch = 0, old_owner = 0, stale = 0;
};

auto client_event_of(const client_result& c, const std::string& ev) -> client_event {
    client_event x;
    for (const auto& w : c.windows) {
        if (w.phase == ev) {
            x.gets += w.gets;
            x.old_epoch += w.old_epoch;
            x.old_owner += w.old_owner;
            x.stale += w.stale;
        }
    }
    return x;
}

// The members a run with --clients begins its JSON document with.
void clients_header(json_writer& w, const char* format, const options& o, const std::string& endpoint, pid_t etcd_pid,
                    const std::vector<server>& servers) {
    w.begin_object().member("format", format).member("endpoint", endpoint).member("etcd_pid", etcd_pid);
    servers_json(w, servers);
    w.member("clients", o.clients).member("late_ms", o.late_ms).member("keys", o.keys).member("window", o.window);
}

auto stale_total(const clients_arm& a) -> std::uint64_t {
    std::uint64_t n = 0;
    for (const auto& c : a.clients) {
        for (const auto& w : c.windows) {
            n += w.stale;
        }
    }
    return n;
}

}  // namespace

auto alpha_name(double a) -> std::string {
    if (a == 0) {
        return "uniform";
    }
    char b[16];
    std::snprintf(b, sizeof b, "%.2f", a);
    return b;
}

auto fmt(const char* f, double v) -> std::string {
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

auto control_key(const arm_result& a) -> std::string {
    return a.strategy + "/" + alpha_name(a.alpha) + "/" + std::to_string(a.seed);
}

void print_progress(const options& o, std::chrono::steady_clock::time_point t0, std::size_t arm, std::size_t total,
                    double alpha, std::uint64_t seed, const std::string& strategy, const std::string& rule,
                    const std::string& phase) {
    if (o.quiet) {
        return;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\rkeyplace-fleet: arm %zu/%zu alpha %s seed %llu %s %s: %-6s %6.0f s", arm, total,
                 alpha_name(alpha).c_str(), static_cast<unsigned long long>(seed), strategy.c_str(), rule.c_str(),
                 phase.c_str(), secs);
    std::fflush(stderr);
}

auto text_report(const std::vector<arm_result>& arms, const std::map<std::string, const arm_result*>& controls)
    -> std::string {
    std::string out;
    std::string last_group;
    for (const auto& a : arms) {
        if (a.rule == "control") {
            continue;
        }
        const std::string group = "alpha " + alpha_name(a.alpha) + ", seed " + std::to_string(a.seed);
        if (group != last_group) {
            const auto& c = *controls.at(control_key(a));
            out += "\n" + group + " (control steady hit rate " + fmt("%.3f", c.windows.front().hit_rate()) + ")\n";
            out += "strategy    rule       | join: kept pred (keys)  measured  hit 1st  miss x1st  extra DB  recov |"
                   " leave: kept pred  extra DB  stale | rejoin: kept pred  extra DB  stale\n";
            last_group = group;
        }
        const auto& c = *controls.at(control_key(a));
        const auto j = figures(a, c, "join");
        const auto l = figures(a, c, "leave");
        const auto r = figures(a, c, "rejoin");
        char line[512];
        std::snprintf(line, sizeof line,
                      "%-11s %-10s | %14.3f (%.3f) %9.3f %8.3f %9.2f %9lld %6lld | %17.3f %9lld %6llu | %18.3f %9lld "
                      "%6llu\n",
                      a.strategy.c_str(), a.rule.c_str(), j.predicted_requests, j.predicted_keys, j.measured,
                      j.first_hit, j.first_miss_ratio, static_cast<long long>(j.extra_db),
                      static_cast<long long>(j.recovery), l.predicted_requests, static_cast<long long>(l.extra_db),
                      static_cast<unsigned long long>(l.stale), r.predicted_requests,
                      static_cast<long long>(r.extra_db), static_cast<unsigned long long>(r.stale));
        out += line;
    }
    // Every arm of a popularity and seed makes the same requests: its hot keys once, from its first arm.
    std::string shown;
    for (const auto& a : arms) {
        const std::string group = "alpha " + alpha_name(a.alpha) + ", seed " + std::to_string(a.seed);
        if (group == shown) {
            continue;
        }
        shown = group;
        out += hot_text(a.hot, group);
    }
    return out;
}

auto hot_text(const hot_report& h, const std::string& title) -> std::string {
    std::string out = "\nhot keys, " + title + ": " + std::to_string(h.requests) +
                      " requests observed; each true count lies in [lower, upper], and upper exceeds it by more than " +
                      std::to_string(h.error_bound) + " with probability " + fmt("%.3f", h.failure_probability) + "\n";
    out += "rank  detected             true    lower    upper | true top             true\n";
    for (std::size_t i = 0; i < std::max(h.detected.size(), h.truth.size()); ++i) {
        char line[256];
        const detected_key none{};
        const auto& d = i < h.detected.size() ? h.detected[i] : none;
        const auto& t = i < h.truth.size() ? h.truth[i] : none;
        std::snprintf(line, sizeof line, "%4zu  %-16s %8llu %8llu %8llu | %-16s %8llu\n", i + 1, d.key.c_str(),
                      static_cast<unsigned long long>(d.truth), static_cast<unsigned long long>(d.lower),
                      static_cast<unsigned long long>(d.upper), t.key.c_str(), static_cast<unsigned long long>(t.truth));
        out += line;
    }
    out += "of the true top " + std::to_string(h.truth.size()) + ", " + std::to_string(h.found) + " detected\n";
    return out;
}

auto json_report(const options& o, const std::vector<server>& servers, const std::vector<arm_result>& arms,
                 const std::map<std::string, const arm_result*>& controls) -> std::string {
    json_writer w;
    w.begin_object().member("format", "keyplace.fleet/1");
    servers_json(w, servers);
    w.member("keys", o.keys).member("window", o.window);
    w.key("writes").raw(json_fixed("%.4f", o.writes)).key("prefill").raw(json_fixed("%.3f", o.prefill));
    w.key("arms").begin_array();
    for (const auto& a : arms) {
        w.begin_object()
            .member("strategy", a.strategy)
            .member("rule", a.rule)
            .member("alpha", alpha_name(a.alpha))
            .member("seed", a.seed)
            .key("windows");
        windows_json(w, a.windows);
        hot_json(w, a.hot);
        if (a.rule != "control") {
            const auto& c = *controls.at(control_key(a));
            w.key("events").begin_object();
            for (const auto& event : event_names) {
                const auto f = figures(a, c, event);
                w.key(event).begin_object();
                for (const auto& [name, format, value] :
                     {fixed{"kept_requests_predicted", "%.4f", f.predicted_requests},
                      fixed{"kept_keys_predicted", "%.4f", f.predicted_keys}, fixed{"kept_measured", "%.4f", f.measured},
                      fixed{"first_window_hit_rate", "%.4f", f.first_hit},
                      fixed{"control_first_window_hit_rate", "%.4f", f.control_first_hit},
                      fixed{"first_window_miss_ratio", "%.3f", f.first_miss_ratio},
                      fixed{"db_load_multiple", "%.3f", f.db_multiple}}) {
                    w.key(name).raw(json_fixed(format, value));
                }
                w.member("extra_db_reads", f.extra_db)
                    .member("windows_to_recover", f.recovery)
                    .member("stale_hits", f.stale)
                    .member("old_epoch_requests", f.old_epoch)
                    .end_object();
            }
            w.end_object();
        }
        w.end_object();
    }
    w.end_array().end_object();
    return std::move(w).str() + "\n";
}

auto timeline_svg(const std::vector<const arm_result*>& lines, const std::string& title) -> std::string {
    constexpr double width = 900, height = 420, left = 60, right = 150, top = 40, bottom = 50;
    const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
    std::string b;
    const std::size_t n = lines.front()->windows.size();
    double ymin = 1.0;
    for (const auto* a : lines) {
        for (const auto& w : a->windows) {
            ymin = std::min(ymin, w.hit_rate());
        }
    }
    ymin = std::max(0.0, std::floor(ymin * 10) / 10);
    auto px = [&](double x) { return left + x / static_cast<double>(n) * (width - left - right); };
    auto py = [&](double y) { return height - bottom - (y - ymin) / (1.0 - ymin) * (height - top - bottom); };
    auto line = [&](double x1, double y1, double x2, double y2, const char* color, double w, bool dashed) {
        b += "<line x1=\"" + fmt("%.1f", x1) + "\" y1=\"" + fmt("%.1f", y1) + "\" x2=\"" + fmt("%.1f", x2) +
             "\" y2=\"" + fmt("%.1f", y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + fmt("%.1f", w) + "\"" +
             (dashed ? " stroke-dasharray=\"5,4\"" : "") + "/>\n";
    };
    auto text = [&](double x, double y, const std::string& s, const char* anchor) {
        b += "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) +
             "\" font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"" + anchor + "\">" + s + "</text>\n";
    };
    for (double t = ymin; t <= 1.0001; t += 0.1) {
        line(left, py(t), width - right, py(t), "#dddddd", 1, false);
        text(left - 6, py(t) + 4, fmt("%.1f", t), "end");
    }
    line(left, height - bottom, width - right, height - bottom, "black", 1, false);
    line(left, top, left, height - bottom, "black", 1, false);
    for (std::size_t i = 1; i < n; ++i) {
        if (lines.front()->windows[i].phase != lines.front()->windows[i - 1].phase) {
            line(px(static_cast<double>(i)), top, px(static_cast<double>(i)), height - bottom, "#888888", 1, true);
            text(px(static_cast<double>(i)) + 4, top + 12, lines.front()->windows[i].phase, "start");
        }
    }
    text((left + width - right) / 2, height - 14, "window of requests", "middle");
    text(16, top - 8, "hit rate", "start");
    for (std::size_t s = 0; s < lines.size(); ++s) {
        const bool ctl = lines[s]->rule == "control";
        const char* color = ctl ? "#555555" : colors[s % 7];
        for (std::size_t i = 1; i < lines[s]->windows.size(); ++i) {
            line(px(static_cast<double>(i) - 0.5), py(lines[s]->windows[i - 1].hit_rate()),
                 px(static_cast<double>(i) + 0.5), py(lines[s]->windows[i].hit_rate()), color, ctl ? 1.5 : 2, ctl);
        }
        const double ly = top + 16 + 18.0 * static_cast<double>(s);
        line(width - right + 10, ly, width - right + 30, ly, color, 2, ctl);
        text(width - right + 36, ly + 4, ctl ? std::string("control") : lines[s]->strategy, "start");
    }
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"420\" viewBox=\"0 0 900 420\">\n"
           "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"450\" y=\"22\" font-size=\"14\" "
           "text-anchor=\"middle\" font-family=\"sans-serif\">" +
           title + "</text>\n" + b + "</svg>\n";
}

auto clients_text(const options& o, const std::string& endpoint, const std::vector<clients_arm>& arms) -> std::string {
    std::string out = std::to_string(o.clients) + " client processes following membership through etcd at " +
                      endpoint + "; " +
                      (o.late_ms > 0 ? client_id(o.clients - 1) + " is late (everything etcd sends it arrives " +
                                           std::to_string(o.late_ms) + " ms late)"
                                     : std::string("no client is late")) +
                      "; " +
                      (o.no_barrier ? std::string("no barrier: each completing epoch follows its transition at once")
                                    : std::string("write-set and flush publish an event's completing epoch after every "
                                                  "client reports its transition epoch")) +
                      "\nadopt ms: from the publish of the transition / completing epoch to the client's first request "
                      "on it (- : skipped); old epoch: requests served from an epoch older than the newest published; "
                      "old owner: those sent to another server than the newest epoch names\n";
    std::string last_group;
    for (const auto& a : arms) {
        const std::string group = "alpha " + alpha_name(a.spec.alpha) + ", seed " + std::to_string(a.spec.seed);
        if (group != last_group) {
            out += "\n" + group + "\nstrategy    rule       client           |";
            for (const auto& ev : event_names) {
                char h[96];
                std::snprintf(h, sizeof h, " %-6s adopt ms  old epoch  old owner  stale |", ev.c_str());
                out += h;
            }
            out += "\n";
            last_group = group;
        }
        for (const auto& c : a.clients) {
            char line[128];
            std::snprintf(line, sizeof line, "%-11s %-10s %-16s |", a.spec.strategy.c_str(), a.spec.rule.c_str(),
                          (c.id + (c.late ? " (late)" : "")).c_str());
            out += line;
            for (std::size_t e = 0; e < event_names.size(); ++e) {
                const auto x = client_event_of(c, event_names[e]);
                auto ms = [&](std::size_t epoch) {
                    return c.adoption_ms[epoch] < 0 ? std::string("-") : fmt("%.0f", c.adoption_ms[epoch]);
                };
                const std::string adopt = ms(2 * e + 2) + "/" + ms(2 * e + 3);
                std::snprintf(line, sizeof line, " %15s %10llu %10llu %6llu |", adopt.c_str(),
                              static_cast<unsigned long long>(x.old_epoch), static_cast<unsigned long long>(x.old_owner),
                              static_cast<unsigned long long>(x.stale));
                out += line;
            }
            out += "\n";
        }
    }
    // The arms of one popularity and seed draw the same keys: their merged hot keys once.
    std::string shown;
    for (const auto& a : arms) {
        const std::string group = "alpha " + alpha_name(a.spec.alpha) + ", seed " + std::to_string(a.spec.seed);
        if (group != shown) {
            shown = group;
            out += hot_text(a.hot, group + ", the " + std::to_string(a.clients.size()) +
                                       " clients' summaries merged from their bytes");
        }
    }
    return out;
}

auto clients_json(const options& o, const std::string& endpoint, pid_t etcd_pid, const std::vector<server>& servers,
                  const std::vector<clients_arm>& arms) -> std::string {
    json_writer w;
    clients_header(w, "keyplace.fleet.clients/1", o, endpoint, etcd_pid, servers);
    w.member("barrier", !o.no_barrier);
    w.key("arms").begin_array();
    for (const auto& a : arms) {
        w.begin_object()
            .member("strategy", a.spec.strategy)
            .member("rule", a.spec.rule)
            .member("alpha", alpha_name(a.spec.alpha))
            .member("seed", a.spec.seed)
            .member("stale_hits", stale_total(a));
        hot_json(w, a.hot);
        w.key("clients").begin_array();
        for (std::size_t k = 0; k < a.clients.size(); ++k) {
            const auto& c = a.clients[k];
            w.begin_object().member("id", c.id).member("pid", a.pids[k]).member("late", c.late);
            w.key("adoption_ms").begin_object();
            for (std::size_t e = 2; e <= 1 + 2 * event_names.size(); ++e) {  // epoch 1 precedes the clients
                w.key(std::to_string(e)).raw(c.adoption_ms[e] < 0 ? std::string("null") : json_fixed("%.2f", c.adoption_ms[e]));
            }
            w.end_object().key("events").begin_object();
            for (const auto& event : event_names) {
                const auto x = client_event_of(c, event);
                w.key(event)
                    .begin_object()
                    .member("gets", x.gets)
                    .member("old_epoch_requests", x.old_epoch)
                    .member("old_owner_requests", x.old_owner)
                    .member("stale_hits", x.stale)
                    .end_object();
            }
            w.end_object().key("windows");
            windows_json(w, c.windows);
            w.end_object();
        }
        w.end_array().end_object();
    }
    w.end_array().end_object();
    return std::move(w).str() + "\n";
}

// ---------------------------------------------------------------------------------------------
// --rollout: every client's windows summed window by window, each arm against the control of the
// same strategy, popularity and seed.

namespace {

struct rollout_arm {
    const clients_arm* arm = nullptr;
    std::vector<window_stats> windows;  // summed over the clients
    // DB reads over the control's, per window after the steady ones: the window's DB reads minus its
    // gets at the control's rate in the same window (a step's first window is the longer by the
    // requests made while its epochs propagate).
    std::vector<double> extra;
    double extra_total = 0;
    double extra_peak = 0;
    std::uint64_t stale = 0;
};

struct rollout_group {
    std::vector<rollout_arm> arms;  // in rollout_arms order
    double peak_limit = 0;          // 1.5 x the one-shot's peak / ramp_steps
    double total_limit = 0;         // 1.1 x the one-shot's total
    [[nodiscard]] auto of(const std::string& name) const -> const rollout_arm& {
        const auto i = static_cast<std::size_t>(std::find(rollout_arms.begin(), rollout_arms.end(), name) -
                                                rollout_arms.begin());
        return arms.at(i);
    }
    [[nodiscard]] auto peak_met() const -> bool { return of("ramp").extra_peak <= peak_limit; }
    [[nodiscard]] auto total_met() const -> bool { return of("ramp").extra_total <= total_limit; }
};

// The groups of a --rollout run: its arms come rollout_arms.size() at a time, control first.
auto rollout_groups(const options& o, const std::vector<clients_arm>& arms) -> std::vector<rollout_group> {
    std::vector<rollout_group> out;
    for (std::size_t g = 0; g + rollout_arms.size() <= arms.size(); g += rollout_arms.size()) {
        rollout_group grp;
        for (std::size_t a = 0; a < rollout_arms.size(); ++a) {
            rollout_arm r;
            r.arm = &arms[g + a];
            for (const auto& c : r.arm->clients) {
                r.windows.resize(std::max(r.windows.size(), c.windows.size()));
                for (std::size_t i = 0; i < c.windows.size(); ++i) {
                    auto& w = r.windows[i];
                    const auto& x = c.windows[i];
                    w.phase = x.phase;
                    w.epoch = std::max(w.epoch, x.epoch);
                    w.gets += x.gets;
                    w.hits += x.hits;
                    w.db_reads += x.db_reads;
                    w.stale += x.stale;
                    w.old_epoch += x.old_epoch;
                    w.old_owner += x.old_owner;
                }
            }
            for (const auto& w : r.windows) {
                r.stale += w.stale;
            }
            grp.arms.push_back(std::move(r));
        }
        const auto& control = grp.arms.front().windows;
        for (auto& r : grp.arms) {
            for (std::size_t i = o.steady; i < r.windows.size() && i < control.size(); ++i) {
                const auto rate = control[i].gets == 0 ? 0.0
                                                       : static_cast<double>(control[i].db_reads) /
                                                             static_cast<double>(control[i].gets);
                const auto x = static_cast<double>(r.windows[i].db_reads) - rate * static_cast<double>(r.windows[i].gets);
                r.extra.push_back(x);
                r.extra_total += x;
                r.extra_peak = std::max(r.extra_peak, x);
            }
        }
        grp.peak_limit = 1.5 * grp.of("one-shot").extra_peak / static_cast<double>(ramp_steps);
        grp.total_limit = 1.1 * grp.of("one-shot").extra_total;
        out.push_back(std::move(grp));
    }
    return out;
}

auto miss_rate(const window_stats& w) -> double { return w.gets == 0 ? 0.0 : 1.0 - w.hit_rate(); }

}  // namespace

auto rollout_text(const options& o, const std::vector<clients_arm>& arms) -> std::string {
    std::string out =
        "a 3 -> 4 join on real memcached and etcd, " + std::to_string(o.clients) +
        " client processes, rule write-set with the barrier: one-shot (transition, then completion, in step 1), "
        "ramp (" + std::to_string(ramp_steps) + " epochs, one per step), rollback (the ramp's first " +
        std::to_string(rollback_after) + " epochs, then in step " + std::to_string(rollback_after + 1) +
        " mc-3 leaving and removed, invalidations applied before), uninvalidated (the same without them); " +
        std::to_string(o.phase) + " windows of " + std::to_string(o.window) +
        " requests per client after each step\nmiss: misses per get; extra: DB reads over the control's, all "
        "clients\n";
    for (const auto& g : rollout_groups(o, arms)) {
        const auto& spec = g.arms.front().arm->spec;
        out += "\n" + spec.strategy + ", alpha " + alpha_name(spec.alpha) + ", seed " + std::to_string(spec.seed) +
               "\nwindow  phase   ";
        for (const auto& name : rollout_arms) {
            char h[64];
            std::snprintf(h, sizeof h, "| %-13s miss extra ", name.c_str());
            out += h;
        }
        out += "\n";
        const std::size_t n = g.arms.front().windows.size();
        for (std::size_t i = 0; i < n; ++i) {
            char line[64];
            std::snprintf(line, sizeof line, "%-7zu %-7s ", i + 1, g.arms.front().windows[i].phase.c_str());
            out += line;
            for (const auto& r : g.arms) {
                const bool has = i < r.windows.size();
                const std::string extra = has && i >= o.steady && i - o.steady < r.extra.size()
                                              ? fmt("%.0f", r.extra[i - o.steady])
                                              : std::string("");
                std::snprintf(line, sizeof line, "| e%-3llu %12s %6s ",
                              static_cast<unsigned long long>(has ? r.windows[i].epoch : 0),
                              has ? fmt("%.4f", miss_rate(r.windows[i])).c_str() : "-", extra.c_str());
                out += line;
            }
            out += "\n";
        }
        out += "total extra DB reads:";
        for (const auto& r : g.arms) {
            out += " " + r.arm->spec.rollout + " " + fmt("%.0f", r.extra_total) + " (peak " + fmt("%.0f", r.extra_peak) +
                   ", stale hits " + std::to_string(r.stale) + ");";
        }
        const auto& ramp = g.of("ramp");
        out += "\nramp peak " + fmt("%.1f", ramp.extra_peak) + " <= 1.5 x one-shot peak / " +
               std::to_string(ramp_steps) + " = " + fmt("%.1f", g.peak_limit) + ": " + (g.peak_met() ? "yes" : "NO") +
               "; ramp total " + fmt("%.1f", ramp.extra_total) + " <= 1.1 x one-shot total = " +
               fmt("%.1f", g.total_limit) + ": " + (g.total_met() ? "yes" : "NO") + "\n";
    }
    return out;
}

auto rollout_json(const options& o, const std::string& endpoint, pid_t etcd_pid, const std::vector<server>& servers,
                  const std::vector<clients_arm>& arms) -> std::string {
    json_writer w;
    clients_header(w, "keyplace.fleet.rollout/1", o, endpoint, etcd_pid, servers);
    w.member("steady", o.steady)
        .member("phase", o.phase)
        .member("ramp_steps", std::uint64_t{ramp_steps})
        .member("rollback_after", std::uint64_t{rollback_after});
    w.key("groups").begin_array();
    for (const auto& g : rollout_groups(o, arms)) {
        const auto& spec = g.arms.front().arm->spec;
        w.begin_object()
            .member("strategy", spec.strategy)
            .member("alpha", alpha_name(spec.alpha))
            .member("seed", spec.seed)
            .key("ramp_peak_limit")
            .raw(json_fixed("%.2f", g.peak_limit))
            .member("ramp_peak_met", g.peak_met())
            .key("ramp_total_limit")
            .raw(json_fixed("%.2f", g.total_limit))
            .member("ramp_total_met", g.total_met());
        w.key("arms").begin_object();
        for (const auto& r : g.arms) {
            w.key(r.arm->spec.rollout)
                .begin_object()
                .key("extra_db_reads")
                .raw(json_fixed("%.2f", r.extra_total))
                .key("extra_db_reads_peak")
                .raw(json_fixed("%.2f", r.extra_peak))
                .member("stale_hits", r.stale);
            w.key("extra_db_reads_per_window").begin_array();
            for (const double x : r.extra) {
                w.raw(json_fixed("%.2f", x));
            }
            w.end_array().key("windows");
            windows_json(w, r.windows);
            w.key("client_pids").array(r.arm->pids).end_object();
        }
        w.end_object().end_object();
    }
    w.end_array().end_object();
    return std::move(w).str() + "\n";
}

void write_file(const std::string& path, const std::string& text) {
    FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        throw failure("cannot open " + path + ": " + std::strerror(errno));
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
    if (f != stdout && std::fclose(f) != 0) {
        throw failure("cannot write " + path);
    }
    if (!ok) {
        throw failure(path == "-" ? std::string("cannot write the output") : "cannot write " + path);
    }
}

}  // namespace keyplace_fleet
