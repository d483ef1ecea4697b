// keyplace-fleet's default run: one client in this process, each arm and its control (arm.hpp).
#include "arm.hpp"

#include "fleet_options.hpp"
#include "reports.hpp"
#include "servers.hpp"
#include "workload.hpp"

#include <keyplace/fleet/publisher.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace keyplace_fleet {

// One client in this process, reading its placement from a local publisher: the snapshots are
// published here, and with --lag N the client adopts each one N requests late.
static auto run_arm(const options& o, fleet& f, const universe& u, const std::vector<std::uint32_t>& request_weights,
                    const std::string& strategy, const std::string& rule, double alpha, std::uint64_t seed,
                    bool control, const std::function<void(const std::string&)>& progress) -> arm_result {
    arm_result res{strategy, control ? "control" : rule, alpha, seed, {}, {}};
    for (std::size_t i = 0; i < f.conns.size(); ++i) {
        f.flush(i);
    }
    const plan p = make_plan("fleet", u, request_weights, strategy, control);
    kp::publisher pub(p.snaps.front());
    auto reader = pub.make_reader();
    const auto versions = std::make_unique<std::atomic<std::uint32_t>[]>(u.names.size());
    cache_client c{f.conns, u, p, {versions.get()}, rule, o.writes, std::string(o.value_size, 'x'),
                   {workload_seed(seed, alpha)}};
    // Every request's key, observed as a service would (one summary of the default shape) and
    // counted exactly beside it.
    auto detect = kp::hot_keys::make();
    std::vector<std::uint64_t> exact(u.names.size(), 0);
    c.detect = &detect;
    c.exact = &exact;
    const kp::snapshot* snap = &reader.get();
    std::uint64_t behind = 0;
    auto request = [&](window_stats& w) {
        if (snap->epoch() != pub.epoch()) {
            if (behind >= o.lag) {
                snap = &reader.get();
                behind = 0;
            } else {
                ++behind;
            }
        }
        c.request(w, snap->epoch(), pub.epoch());
    };
    auto run_windows = [&](const std::string& phase, std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i) {
            window_stats w;
            w.phase = phase;
            for (std::uint64_t r = 0; r < o.window; ++r) {
                request(w);
            }
            w.epoch = snap->epoch();
            res.windows.push_back(w);
        }
    };
    c.prefill(o.prefill);
    {
        window_stats w;
        for (std::uint64_t r = 0; r < o.warm; ++r) {
            request(w);
        }
    }
    run_windows("steady", o.steady);
    for (std::size_t e = 0; e < p.events.size(); ++e) {
        const auto& ev = p.events[e];
        progress(ev.name);
        if (!control) {
            (void)pub.publish(p.snaps[2 * e + 1]);  // the transition epoch
            if (ev.adds && rule == "flush") {
                f.flush(ev.server);
            }
            (void)pub.publish(p.snaps[2 * e + 2]);  // the transition completes
            res.predicted[ev.name] = kept_between(p.tables[2 * e].now, p.tables[2 * e + 2].now, u);
        }
        run_windows(ev.name, o.phase);
    }
    res.hot = hot_report_of(detect, exact, u);
    return res;
}

auto run_one_client(const options& o, const std::string& memcached) -> int {
    const auto t0 = std::chrono::steady_clock::now();
    fleet f = start_fleet(memcached, initial_servers + 1, true);
    std::vector<arm_result> arms;
    const std::size_t total_arms = o.alphas.size() * o.seeds.size() * o.strategies.size() * (o.rules.size() + 1);
    std::size_t done = 0;
    for (const double alpha : o.alphas) {
        for (const auto seed : o.seeds) {
            const universe u(o.keys, alpha, seed);
            const auto weights = request_weights(u);
            for (const auto& s : o.strategies) {
                for (std::size_t r = 0; r <= o.rules.size(); ++r) {
                    const bool control = r == o.rules.size();
                    const std::string rule = control ? "none" : o.rules[r];
                    ++done;
                    auto progress = [&](const std::string& phase) {
                        print_progress(o, t0, done, total_arms, alpha, seed, s, control ? "control" : rule, phase);
                    };
                    arms.push_back(run_arm(o, f, u, weights, s, rule, alpha, seed, control, progress));
                }
            }
        }
    }
    if (!o.quiet) {
        std::fprintf(stderr, "\n");
    }
    kill_children();
    std::map<std::string, const arm_result*> controls;
    for (const auto& a : arms) {
        if (a.rule == "control") {
            controls[control_key(a)] = &a;
        }
    }
    if (o.json != "-") {
        write_file("-", text_report(arms, controls));
    }
    if (!o.json.empty()) {
        write_file(o.json, json_report(o, f.servers, arms, controls));
    }
    if (!o.svg.empty()) {
        std::vector<const arm_result*> lines;
        for (const auto& a : arms) {
            if (a.alpha == o.alphas.front() && a.seed == o.seeds.front() && a.rule == o.rules.front()) {
                lines.push_back(&a);
            }
        }
        for (const auto& a : arms) {
            if (a.alpha == o.alphas.front() && a.seed == o.seeds.front() && a.rule == "control") {
                lines.push_back(&a);  // every strategy's control is the same traffic; draw the first
                break;
            }
        }
        write_file(o.svg, timeline_svg(lines, "Hit rate per window, " + std::to_string(initial_servers) +
                                                  " -> 4 -> 3 -> 4 memcached servers, alpha " +
                                                  alpha_name(o.alphas.front()) + ", rule " + o.rules.front()));
    }
    return 0;
}

}  // namespace keyplace_fleet
