// keyplace-fleet --cascade (cascade.hpp).
#include "cascade.hpp"

#include "reports.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/bounded_load.hpp>
#include <keyplace/ring.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace keyplace_fleet {

namespace kp = keyplace;

namespace {

// The ring cascade: 8 nodes, each with capacity for 1 / (8 * 0.6) of the load; a node whose load
// exceeds its capacity is ejected and its keys go where the strategy sends them without it (the
// ring: its arcs to the next point clockwise). Loads are exact: arc measures for the rings, the
// bounded assignment of analysis_sample()'s 2^17 points for bounded loads.
auto cascade_loads(const std::vector<kp::node>& nodes, std::uint32_t vnodes, bool bounded) -> std::vector<double> {
    const auto r = kp::ring::build(nodes, {.vnodes = vnodes});
    if (!bounded) {
        return kp::ownership(r).share;
    }
    const auto& pts = kp::analysis_sample();
    const auto got = kp::bounded_assign(r, pts, {}, {.load_factor = 1.25});
    std::vector<double> share(nodes.size());
    for (const auto g : got) {
        share[g.value] += 1.0 / static_cast<double>(pts.size());
    }
    return share;
}

}  // namespace

auto cascade_report() -> std::string {
    constexpr double capacity = 1.0 / (8 * 0.6);
    std::string out = "ring cascade: 8 nodes at 60% utilization (capacity " + fmt("%.4f", capacity) +
                      " of the load each); an overloaded node is ejected, the most overloaded first\n";
    struct arm {
        const char* name;
        std::uint32_t vnodes;
        bool bounded;
    };
    for (const auto& a : {arm{"1 token per node", 1, false}, arm{"256 tokens per node", 256, false},
                          arm{"bounded loads c=1.25 (1 token)", 1, true},
                          arm{"bounded loads c=1.25 (256 tokens)", 256, true}}) {
        for (const bool crash : {false, true}) {
            std::vector<kp::node> alive;
            for (int i = 0; i < 8; ++i) {
                alive.push_back({.id = "cache-" + std::to_string(i)});
            }
            std::string line = std::string(a.name) + (crash ? ", cache-0 crashes first" : ", no crash") + ": ";
            std::string order;
            if (crash) {
                alive.erase(alive.begin());
            }
            auto loads = cascade_loads(alive, a.vnodes, a.bounded);
            line += "max load " + fmt("%.3f", *std::max_element(loads.begin(), loads.end()));
            while (alive.size() > 1) {
                const auto worst = static_cast<std::size_t>(std::max_element(loads.begin(), loads.end()) - loads.begin());
                if (loads[worst] <= capacity) {
                    break;
                }
                order += (order.empty() ? "" : " -> ") + alive[worst].id + " (" + fmt("%.3f", loads[worst]) + ")";
                alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(worst));
                loads = cascade_loads(alive, a.vnodes, a.bounded);
            }
            const bool total = alive.size() == 1 && loads.front() > capacity;
            line += "; ejected: " + (order.empty() ? std::string("none") : order) + "; " +
                    std::to_string(alive.size()) + " left" + (total ? " (overloaded: the whole fleet is down)" : "");
            out += line + "\n";
        }
    }
    return out;
}

}  // namespace keyplace_fleet
