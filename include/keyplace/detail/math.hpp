// keyplace — which node owns a key. Forwarding header for the integer arithmetic of placement
// decisions, now split by concern; include the one you use (issue 11). To be removed.
#ifndef KEYPLACE_DETAIL_MATH_HPP_INCLUDED
#define KEYPLACE_DETAIL_MATH_HPP_INCLUDED

#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/log2.hpp>
#include <keyplace/detail/weight.hpp>
#include <keyplace/detail/wide.hpp>

#endif
