// keyplace-fleet --clients N: client processes following membership through etcd, each placing
// its requests by the snapshot its own watcher adopted, and the coordinator that publishes every
// arm's epochs (waiting, under write-set and flush, until every client reports each one).
// Built with keyplace::etcd only (KEYPLACE_FLEET_ETCD).
#ifndef KEYPLACE_FLEET_PROGRAM_CLIENTS_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_CLIENTS_HPP_INCLUDED

#include <string>

namespace keyplace_fleet {

struct options;

// Starts the servers with the memcached binary, and etcd with --etcd start, runs every arm of o
// with o.clients client processes, writes the reports; the exit status.
auto run_clients(const options& o, const std::string& memcached) -> int;

}  // namespace keyplace_fleet

#endif
