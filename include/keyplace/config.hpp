// keyplace — which node owns a key. Documented configuration macros.
#ifndef KEYPLACE_CONFIG_HPP_INCLUDED
#define KEYPLACE_CONFIG_HPP_INCLUDED

// KEYPLACE_XXHASH_HEADER: how to include xxHash (default <xxhash.h>). keyplace compiles
// xxHash inline (XXH_INLINE_ALL), so no xxHash library is linked.
#ifndef KEYPLACE_XXHASH_HEADER
#define KEYPLACE_XXHASH_HEADER <xxhash.h>
#endif

// KEYPLACE_ASSERT(cond): checks internal invariants in debug builds. Define it to your
// own handler before including any keyplace header; it must not return when cond is false.
#ifndef KEYPLACE_ASSERT
#include <cassert>
#define KEYPLACE_ASSERT(cond) assert(cond)
#endif

// KEYPLACE_ON_ERROR(code, message): where the throwing forms (build, with, without) report a
// failure. Left undefined, they throw keyplace::error, or, in a translation unit built without
// exceptions, print the message to stderr and call std::abort(). Define it before including any
// keyplace header to the name of a [[noreturn]] function `void(int code, const char* message)`
// (code is the keyplace::errc value) to report failures your own way; it must not return. The
// try_ forms never call it: they fill a keyplace::error_info.

// KEYPLACE_COMPILED: the snapshot layer (building and verifying snapshots, successors, the JSON
// reader and writer, shadow compares and transfer plans) is compiled once, in the keyplace::compiled
// library, instead of in every translation unit that calls it; lookups stay inline. Linking
// keyplace::compiled defines it for you. Every translation unit of a program must agree: define it
// in all of them (and link the library) or in none. It refuses to compile with KEYPLACE_ON_ERROR
// or without exceptions, which the library, compiled once, cannot follow.
#if defined(KEYPLACE_COMPILED) && !defined(KEYPLACE_COMPILED_SOURCE)
#define KEYPLACE_DETAIL_DEFINE 0  // declarations only: the definitions are in the library
// The library was compiled with exceptions and without a handler: its throwing forms throw
// keyplace::error. A program that reports failures otherwise would be obeyed by its own inline
// code and not by the library's, so it is refused here rather than half obeyed.
#if defined(KEYPLACE_ON_ERROR)
#error "keyplace: KEYPLACE_ON_ERROR with KEYPLACE_COMPILED: keyplace::compiled reports failures by throwing keyplace::error; use the try_ forms, or the header-only library"
#endif
#if !(defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND))
#error "keyplace: KEYPLACE_COMPILED without exceptions: keyplace::compiled throws keyplace::error; build without exceptions header-only"
#endif
#else
#define KEYPLACE_DETAIL_DEFINE 1
#endif
#ifdef KEYPLACE_COMPILED
#define KEYPLACE_DETAIL_INLINE
#else
#define KEYPLACE_DETAIL_INLINE inline
#endif

// Out-of-line cold paths (error construction) keep lookups and builds compact.
#if defined(__GNUC__) || defined(__clang__)
#define KEYPLACE_COLD [[gnu::cold, gnu::noinline]]
#else
#define KEYPLACE_COLD
#endif

#endif
