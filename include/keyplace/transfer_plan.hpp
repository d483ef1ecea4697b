// keyplace — which node owns a key. The snapshot layer's headers live in <keyplace/fleet/>. This
// is the path <keyplace/fleet/transfer_plan.hpp> had before, kept so that programs written against it
// still compile.
#ifndef KEYPLACE_TRANSFER_PLAN_HPP_INCLUDED
#define KEYPLACE_TRANSFER_PLAN_HPP_INCLUDED

#include <keyplace/fleet/transfer_plan.hpp>

#endif
