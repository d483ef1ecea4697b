// keyplace-fleet's output: the progress line, the text tables, the JSON documents
// (keyplace.fleet/1, keyplace.fleet.clients/1) and the hit-rate timeline (SVG).
#ifndef KEYPLACE_FLEET_PROGRAM_REPORTS_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_REPORTS_HPP_INCLUDED

#include "results.hpp"
#include "servers.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace keyplace_fleet {

struct options;

// "uniform" for 0, else two decimals.
auto alpha_name(double a) -> std::string;

// v printed with the printf format f (one double).
auto fmt(const char* f, double v) -> std::string;

// The control of an arm: same strategy, popularity and seed.
auto control_key(const arm_result& a) -> std::string;

// The progress line on stderr (one line, rewritten in place), unless --quiet.
void print_progress(const options& o, std::chrono::steady_clock::time_point t0, std::size_t arm, std::size_t total,
                    double alpha, std::uint64_t seed, const std::string& strategy, const std::string& rule,
                    const std::string& phase);

// The one-client run: each arm's event figures against its control (controls by control_key).
auto text_report(const std::vector<arm_result>& arms, const std::map<std::string, const arm_result*>& controls)
    -> std::string;
// A client's hot keys: the summary's top beside the true top, and the bound on every count.
auto hot_text(const hot_report& h, const std::string& title) -> std::string;
auto json_report(const options& o, const std::vector<server>& servers, const std::vector<arm_result>& arms,
                 const std::map<std::string, const arm_result*>& controls) -> std::string;

// The hit-rate timeline: one line per strategy, the control dashed, the events marked.
auto timeline_svg(const std::vector<const arm_result*>& lines, const std::string& title) -> std::string;

// The run with --clients: each client's adoption times and old-epoch requests per event.
auto clients_text(const options& o, const std::string& endpoint, const std::vector<clients_arm>& arms) -> std::string;
auto clients_json(const options& o, const std::string& endpoint, pid_t etcd_pid, const std::vector<server>& servers,
                  const std::vector<clients_arm>& arms) -> std::string;

// The run with --rollout: per window each arm's miss rate and extra DB reads over the control, the
// totals, peaks and stale hits, and the two bounds on the ramp.
auto rollout_text(const options& o, const std::vector<clients_arm>& arms) -> std::string;
auto rollout_json(const options& o, const std::string& endpoint, pid_t etcd_pid, const std::vector<server>& servers,
                  const std::vector<clients_arm>& arms) -> std::string;

// text written to path ('-': stdout); a failure names the file, or the output for stdout.
void write_file(const std::string& path, const std::string& text);

}  // namespace keyplace_fleet

#endif
