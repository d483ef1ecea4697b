// keyplace-fleet --cascade: the ring-cascade simulation (no servers).
#ifndef KEYPLACE_FLEET_PROGRAM_CASCADE_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_CASCADE_HPP_INCLUDED

#include <string>

namespace keyplace_fleet {

// One line per arm (1 or 256 tokens per node, with and without bounded loads; with and without a
// first crash): the maximum load and the nodes ejected in order.
auto cascade_report() -> std::string;

}  // namespace keyplace_fleet

#endif
