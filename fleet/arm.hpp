// keyplace-fleet's default run (--clients 1): every arm with one client in this process, which
// reads its placement from a local publisher, against a control arm of the same traffic.
#ifndef KEYPLACE_FLEET_PROGRAM_ARM_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_ARM_HPP_INCLUDED

#include <string>

namespace keyplace_fleet {

struct options;

// Starts the servers with the memcached binary, runs every arm of o, writes the reports; the
// exit status.
auto run_one_client(const options& o, const std::string& memcached) -> int;

}  // namespace keyplace_fleet

#endif
