// keyplace-fleet — a real cache fleet: memcached servers on 127.0.0.1 placed by keyplace, a
// look-aside workload with Zipf popularity, membership changes published as snapshot epochs,
// measured through a join, a leave and a rejoin against a control run (doc/fleet.md, "A real cache
// fleet"). --cascade runs the ring-cascade simulation instead (no servers).
//
// The program's parts: fleet_options.hpp (the command line), servers (memcached and every child
// process), workload (keys, popularity, membership plan, the look-aside client), arm (the
// default run, one client in this process), clients and delay_relay (--clients N through etcd),
// reports (text, JSON, SVG), cascade (--cascade).

// keyplace-cli's argument helpers (numbers, lists, quoting) and its descriptor guard: one copy.
#include "args.hpp"
#include "descriptors.hpp"
#include "fleet_options.hpp"

#include "arm.hpp"
#include "cascade.hpp"
#include "clients.hpp"
#include "reports.hpp"
#include "servers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>

namespace keyplace_fleet {
namespace {

// The options that only make sense together, checked before any server starts.
void check_combinations(const options& o) {
    if (!o.json.empty() && o.json == o.svg) {
        throw failure("--json and --svg name the same file " + keyplace_cli::quote(o.json), 2);
    }
    const std::string n = std::to_string(o.clients);
    if (o.rollout) {
        if (o.clients == 1 || o.etcd.empty()) {
            throw failure("--rollout measures several clients through etcd: add --clients N (2..8) and --etcd", 2);
        }
        if (o.rules_given || o.no_barrier) {
            throw failure("--rollout runs rule write-set under the barrier: --rules and --no-barrier are for the "
                          "event run", 2);
        }
        // The rows whose ramp is by weight and moves each key once (the write rule's premise).
        const auto monotone = [](const keyplace::strategy_row& row) {
            return row.per_node == keyplace::node_data::none && row.ramps == keyplace::ramp_method::weights &&
                   row.minimal_change;
        };
        std::string allowed;
        for (const auto& row : keyplace::strategy_table) {
            allowed += monotone(row) ? (allowed.empty() ? "" : ", ") + std::string(row.name) : "";
        }
        for (const auto& s : o.strategies) {
            const auto* row = keyplace::find_strategy(s);
            if (row == nullptr || !monotone(*row)) {
                throw bad("strategies", s, "--rollout ramps a node's weight, and keeps every write reaching each "
                                           "copy only where keys move toward it once (" + allowed + ")");
            }
        }
    }
    if (o.clients == 1) {
        if (!o.etcd.empty() || o.late_ms_given || o.no_barrier) {
            throw failure("--etcd, --late-ms and --no-barrier are for several clients: add --clients N (2..8)", 2);
        }
        return;
    }
#ifndef KEYPLACE_FLEET_ETCD
    throw failure("--clients " + n + ": this keyplace-fleet is built without keyplace::etcd (libcurl and "
                  "nlohmann_json), which several clients need", 2);
#endif
    if (o.etcd.empty()) {
        throw failure("--clients " + n + " needs --etcd URL or --etcd start", 2);
    }
    if (o.lag != 0) {
        throw failure("--lag is for one client; with --clients the last client is late by --late-ms", 2);
    }
    if (!o.svg.empty()) {
        throw failure("--svg draws the one-client run, not --clients", 2);
    }
}

// An output FILE is opened for writing before any server starts, so that a path that cannot be
// written fails in a second, not after the run; it is not truncated, and removed again if this
// made it (the run writes it at the end).
void check_output_file(const std::string& opt, const std::string& path) {
    if (path.empty() || path == "-") {
        return;
    }
    const bool existed = ::access(path.c_str(), F_OK) == 0;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        throw bad(opt, path, std::string("cannot write: ") + std::strerror(errno));
    }
    ::close(fd);
    if (!existed) {
        ::unlink(path.c_str());
    }
}

auto run(const options& o) -> int {
    if (o.cascade) {
        write_file("-", cascade_report());
        return 0;
    }
    check_combinations(o);
    check_output_file("json", o.json);
    check_output_file("svg", o.svg);
    const auto binary = find_executable(o.memcached);
    if (!binary) {
        std::fprintf(stderr, "keyplace-fleet: memcached not found (%s is not an executable on PATH); install "
                             "memcached or pass --memcached PATH\n", keyplace_cli::quote(o.memcached).c_str());
        return status_skipped;
    }
#ifdef KEYPLACE_FLEET_ETCD
    if (o.clients > 1) {
        return run_clients(o, *binary);
    }
#endif
    return run_one_client(o, *binary);
}

}  // namespace
}  // namespace keyplace_fleet

auto main(int argc, char** argv) -> int {
    // Before any server's socket can take descriptor 1: every run writes stdout (the report, the
    // JSON with --json -, --cascade, --help), so a closed stdout is refused before it starts.
    const auto fds = keyplace_cli::hold_standard_descriptors();
    if (!fds.held || fds.closed[1]) {
        std::fprintf(stderr, "keyplace-fleet: %s\n",
                     fds.held ? "cannot write the output: stdout is closed"
                              : "cannot open /dev/null to hold a closed standard descriptor");
        return 1;
    }
    using namespace keyplace_fleet;
    stop_children_on_signals();
    int status = 1;
    try {
        const auto o = parse(argc, argv);
        if (!o) {
            write_file("-", usage());
            return 0;
        }
        status = run(*o);
    } catch (const failure& e) {
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return e.status;
    } catch (const std::bad_alloc&) {
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: out of memory\n");
        return 1;
    } catch (const std::exception& e) {
        cleanup();
        std::fprintf(stderr, "keyplace-fleet: %s\n", e.what());
        return 1;
    }
    cleanup();
    return status;
}
