// keyplace — which node owns a key. Umbrella header: every placement header (strategies, compat
// modes, replicas, analysis). The planners — token_allocation.hpp and compat/redis_planner.hpp —
// and the fleet headers in keyplace/fleet/ — snapshot.hpp, publisher.hpp, shadow.hpp,
// transfer_plan.hpp and json.hpp (which needs nlohmann_json) — are included on their own: a
// placement-only translation unit does not pay for them.
#ifndef KEYPLACE_KEYPLACE_HPP_INCLUDED
#define KEYPLACE_KEYPLACE_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/anchor.hpp>
#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/jumpback.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/modulo.hpp>
#include <keyplace/multiprobe.hpp>
#include <keyplace/node.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/mpchash.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/ring.hpp>
#include <keyplace/spread.hpp>
#include <keyplace/version.hpp>

#endif
