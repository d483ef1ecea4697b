// keyplace — which node owns a key. The snapshot layer's headers live in <keyplace/fleet/>. This
// is the path <keyplace/fleet/strategy_table.hpp> had before, kept so that programs written against it
// still compile.
#ifndef KEYPLACE_STRATEGY_TABLE_HPP_INCLUDED
#define KEYPLACE_STRATEGY_TABLE_HPP_INCLUDED

#include <keyplace/fleet/strategy_table.hpp>

#endif
