// keyplace-contact-check: the contact planner (fleet/contact.hpp) on real memcached servers.
// Six servers on 127.0.0.1 in three "zones" of two, a ring with 3 copies a key, one a zone;
// every write goes to the copies its plan names and succeeds on a QUORUM of acknowledgements,
// every read asks the plan's first wave (the caller's zone first) and one more copy on each
// failure, and succeeds on a QUORUM of answers that agree. Then every server of one zone is
// stopped (by pid): no QUORUM read or write may fail; then a second zone: every request must be
// reported as failed, none may return a value. Exits 0 when all of that holds, 1 with the facts
// that do not, 77 (skip) without memcached. doc/contact.md, "On real servers".
#include "fleet_options.hpp"
#include "servers.hpp"

#include <keyplace/fleet/contact.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <libmemcached/memcached.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kp = keyplace;
using namespace keyplace_fleet;

namespace {

constexpr std::size_t servers_per_zone = 2;
constexpr std::size_t zones = 3;
constexpr int keys = 2000;

struct outcome {
    bool ok = false;
    std::optional<std::string> value;  // a read's value, only when ok
    std::size_t contacted = 0;
};

struct cluster {
    std::vector<server> servers;
    std::vector<std::unique_ptr<connection>> conns;  // waiting for each reply
    std::shared_ptr<const kp::snapshot> snap;
    std::unique_ptr<kp::contact_planner> planner;
};

auto set_on(connection& c, const std::string& key, const std::string& value) -> bool {
    return memcached_set(c.mc, key.data(), key.size(), value.data(), value.size(), 0, 0) == MEMCACHED_SUCCESS;
}

auto get_on(connection& c, const std::string& key) -> std::optional<std::string> {
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc{};
    char* v = memcached_get(c.mc, key.data(), key.size(), &length, &flags, &rc);
    if (v == nullptr || rc != MEMCACHED_SUCCESS) {
        std::free(v);
        return std::nullopt;  // a miss or an error: no answer
    }
    std::string out(v, length);
    std::free(v);
    return out;
}

// One request through its plan and tracker, the contacts answered one after another.
auto request(cluster& c, const kp::contact_request& r, const std::string& key, const std::string& value) -> outcome {
    kp::contact_plan plan;
    kp::error_info err;
    outcome o;
    if (!c.planner->try_plan(key, r, plan, err)) {
        return o;  // refused: too few copies can answer (the caller said which are down)
    }
    kp::contact_tracker t(plan);
    std::vector<std::size_t> todo;
    const auto first = t.start();
    for (std::size_t i = 0; i < first.size(); ++i) {
        todo.push_back(i);
    }
    std::map<std::string, std::size_t> answers;  // read values and how many copies gave each
    const auto index_of = [&](const kp::contact& x) { return static_cast<std::size_t>(&x - plan.contacts().data()); };
    // A write's first wave is sent to every copy (a value must reach them all; the level only says
    // how many acknowledgements make success), so it runs to the end; a read stops at its outcome.
    const bool writing = r.op == kp::contact_op::write;
    while (!todo.empty() && (writing || t.state() == kp::contact_state::running)) {
        const std::size_t i = todo.back();
        todo.pop_back();
        const auto& ct = plan.contacts()[i];
        auto& conn = *c.conns.at(ct.node);
        ++o.contacted;
        bool answered = false;
        if (r.op == kp::contact_op::write) {
            answered = set_on(conn, key, value);
        } else if (const auto v = get_on(conn, key)) {
            answered = true;
            ++answers[*v];
        }
        for (const auto& next : answered ? t.succeeded(i) : t.failed(i)) {
            todo.insert(todo.begin(), index_of(next));
        }
    }
    o.ok = t.state() == kp::contact_state::succeeded;
    if (o.ok && r.op == kp::contact_op::read) {
        // The quorum's copies must agree: one value from every answer.
        if (answers.size() != 1) {
            o.ok = false;
            return o;
        }
        o.value = answers.begin()->first;
    }
    return o;
}

struct tally {
    int ok = 0;
    int failed = 0;
    int wrong = 0;  // a read that succeeded with a value other than the last written
    std::size_t contacted = 0;
};

auto run_phase(cluster& c, const std::string& tag, const std::vector<kp::node_health>* health) -> std::pair<tally, tally> {
    tally writes;
    tally reads;
    for (int k = 0; k < keys; ++k) {
        const std::string key = "user:" + std::to_string(k);
        const std::string value = tag + "-" + std::to_string(k);
        const std::string zone = "z" + std::to_string(static_cast<std::size_t>(k) % zones);  // callers in every zone
        kp::contact_request r{.op = kp::contact_op::write, .level = kp::consistency::quorum, .zone = zone};
        if (health != nullptr) {
            r.health = *health;
        }
        const auto w = request(c, r, key, value);
        (w.ok ? writes.ok : writes.failed) += 1;
        writes.contacted += w.contacted;
        r.op = kp::contact_op::read;
        const auto got = request(c, r, key, "");
        if (got.ok) {
            ++reads.ok;
            reads.wrong += got.value != value && w.ok ? 1 : 0;
            reads.wrong += !w.ok ? 1 : 0;  // a read of a key whose write failed has no right value
        } else {
            ++reads.failed;  // a failed request carries no value (outcome::value is set only on success)
        }
        reads.contacted += got.contacted;
    }
    return {writes, reads};
}

void stop(cluster& c, std::size_t zone) {
    for (std::size_t j = 0; j < servers_per_zone; ++j) {
        const auto& s = c.servers[zone * servers_per_zone + j];
        ::kill(s.pid, SIGKILL);
        ::waitpid(s.pid, nullptr, 0);
        children[s.slot].store(0);
    }
}

auto line(const std::string& phase, const tally& w, const tally& r) -> std::string {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%-34s writes %4d ok %4d failed (%.2f contacts each) | reads %4d ok %4d failed %d wrong (%.2f "
                  "contacts each)\n",
                  phase.c_str(), w.ok, w.failed, static_cast<double>(w.contacted) / keys, r.ok, r.failed, r.wrong,
                  static_cast<double>(r.contacted) / keys);
    return buf;
}

auto run() -> int {
    const auto binary = find_executable("memcached");
    if (!binary) {
        std::fprintf(stderr, "keyplace-contact-check: memcached is not installed (Debian: apt-get install memcached); skipped\n");
        return status_skipped;
    }
    stop_children_on_signals();
    cluster c;
    kp::snapshot_description d;
    d.cluster = "contact-check";
    d.epoch = 1;
    d.strategy.name = "ring";
    d.replication = {3, kp::failure_domain::zone};
    for (std::size_t i = 0; i < zones * servers_per_zone; ++i) {
        c.servers.push_back(start_server(*binary, i));
        c.conns.push_back(std::make_unique<connection>(c.servers.back().port, false));
        kp::snapshot_node n{"mc-" + std::to_string(i)};
        n.where.zone = "z" + std::to_string(i / servers_per_zone);
        n.address = "127.0.0.1:" + std::to_string(c.servers.back().port);
        d.nodes.push_back(n);
    }
    c.snap = std::make_shared<const kp::snapshot>(kp::snapshot::build(d));
    c.planner = std::make_unique<kp::contact_planner>(*c.snap);
    std::vector<std::string> failures;
    std::string report;

    auto [w0, r0] = run_phase(c, "all-up", nullptr);
    report += line("every zone up", w0, r0);
    if (w0.failed != 0 || r0.failed != 0 || r0.wrong != 0) {
        failures.push_back("with every server up, a QUORUM request failed or read a wrong value");
    }
    // Every write reaches the 3 copies; every read asks 2, its first wave, when both answer.
    if (w0.contacted != 3 * keys || r0.contacted != 2 * keys) {
        failures.push_back("with every server up, writes made " + std::to_string(w0.contacted) + " contacts and reads " +
                           std::to_string(r0.contacted) + ", not 3 and 2 a request");
    }
    stop(c, 2);
    auto [w1, r1] = run_phase(c, "one-zone-down", nullptr);
    report += line("zone z2 stopped", w1, r1);
    if (w1.failed != 0 || r1.failed != 0 || r1.wrong != 0) {
        failures.push_back("with one zone stopped, " + std::to_string(w1.failed) + " QUORUM writes and " +
                           std::to_string(r1.failed) + " reads failed, " + std::to_string(r1.wrong) + " wrong");
    }
    stop(c, 1);
    auto [w2, r2] = run_phase(c, "two-zones-down", nullptr);
    report += line("zones z1, z2 stopped, not known", w2, r2);
    std::vector<kp::node_health> health(c.snap->nodes().size(), kp::node_health::up);
    for (std::size_t i = servers_per_zone; i < health.size(); ++i) {
        health[i] = kp::node_health::down;
    }
    auto [w3, r3] = run_phase(c, "two-zones-known", &health);
    report += line("zones z1, z2 stopped, known down", w3, r3);
    for (const auto& [w, r] : {std::pair{w2, r2}, std::pair{w3, r3}}) {
        if (w.ok != 0 || r.ok != 0 || r.wrong != 0) {
            failures.push_back("with two zones stopped, " + std::to_string(w.ok) + " QUORUM writes and " +
                               std::to_string(r.ok) + " reads succeeded, " + std::to_string(r.wrong) +
                               " returned a value");
        }
    }
    if (w3.contacted != 0 || r3.contacted != 0) {
        failures.push_back("with the down servers known, requests still contacted copies");
    }
    std::fputs(report.c_str(), stdout);
    for (const auto& f : failures) {
        std::printf("FAIL: %s\n", f.c_str());
    }
    cleanup();
    return failures.empty() ? 0 : 1;
}

}  // namespace

auto main() -> int {
    try {
        return run();
    } catch (const std::exception& e) {
        cleanup();
        std::fprintf(stderr, "keyplace-contact-check: %s\n", e.what());
        return 1;
    }
}
