// keyplace — which node owns a key. The snapshot layer's headers live in <keyplace/fleet/>. This
// is the path <keyplace/fleet/json.hpp> had before, kept so that programs written against it
// still compile.
#ifndef KEYPLACE_JSON_HPP_INCLUDED
#define KEYPLACE_JSON_HPP_INCLUDED

#include <keyplace/fleet/json.hpp>

#endif
