// keyplace — which node owns a key. The snapshot layer's headers live in <keyplace/fleet/>. This
// is the path <keyplace/fleet/shadow.hpp> had before, kept so that programs written against it
// still compile.
#ifndef KEYPLACE_SHADOW_HPP_INCLUDED
#define KEYPLACE_SHADOW_HPP_INCLUDED

#include <keyplace/fleet/shadow.hpp>

#endif
