// keyplace — which node owns a key. The snapshot layer's headers live in <keyplace/fleet/>. This
// is the path <keyplace/fleet/snapshot.hpp> had before, kept so that programs written against it
// still compile.
#ifndef KEYPLACE_SNAPSHOT_HPP_INCLUDED
#define KEYPLACE_SNAPSHOT_HPP_INCLUDED

#include <keyplace/fleet/snapshot.hpp>

#endif
