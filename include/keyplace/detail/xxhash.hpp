// keyplace — which node owns a key. The only includer of xxHash (compiled inline, nothing linked).
#ifndef KEYPLACE_DETAIL_XXHASH_HPP_INCLUDED
#define KEYPLACE_DETAIL_XXHASH_HPP_INCLUDED

#include <keyplace/config.hpp>

// XXH_INLINE_ALL gives every xxHash function internal linkage under private names, so this
// coexists with a program that also links libxxhash or includes xxhash.h itself.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#define KEYPLACE_DETAIL_UNDEF_XXH_INLINE_ALL
#endif
#include KEYPLACE_XXHASH_HEADER
#ifdef KEYPLACE_DETAIL_UNDEF_XXH_INLINE_ALL
#undef XXH_INLINE_ALL
#undef KEYPLACE_DETAIL_UNDEF_XXH_INLINE_ALL
#endif

#if !defined(XXH_VERSION_NUMBER) || XXH_VERSION_NUMBER < 800
#error "keyplace needs xxHash 0.8.0 or newer: XXH3-64 output is stable only from 0.8.0"
#endif

#endif
