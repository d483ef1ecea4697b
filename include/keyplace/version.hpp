// keyplace — which node owns a key. Single source of the library version.
#ifndef KEYPLACE_VERSION_HPP_INCLUDED
#define KEYPLACE_VERSION_HPP_INCLUDED

// The library version. CMake parses these three lines.
#define KEYPLACE_VERSION_MAJOR 0
#define KEYPLACE_VERSION_MINOR 2
#define KEYPLACE_VERSION_PATCH 0

// The placement contract version: bumped whenever any strategy's output for the same
// input changes (see doc/contract.md, "Placement contract"). Independent of the library version.
#define KEYPLACE_CONTRACT_VERSION 1

// Everything lives in an inline namespace carrying the full version, so two different
// copies of this header-only library in one program fail to link instead of silently
// mixing layouts.
#define KEYPLACE_DETAIL_NS_CAT(a, b, c) v##a##_##b##_##c
#define KEYPLACE_DETAIL_NS(a, b, c) KEYPLACE_DETAIL_NS_CAT(a, b, c)
#define KEYPLACE_NAMESPACE \
    KEYPLACE_DETAIL_NS(KEYPLACE_VERSION_MAJOR, KEYPLACE_VERSION_MINOR, KEYPLACE_VERSION_PATCH)
#define KEYPLACE_NAMESPACE_BEGIN \
    namespace keyplace {         \
    inline namespace KEYPLACE_NAMESPACE {
#define KEYPLACE_NAMESPACE_END \
    }                          \
    }

KEYPLACE_NAMESPACE_BEGIN

struct version_info {
    int major;
    int minor;
    int patch;
    int contract;
};

/// The version of the headers in use and of the placement contract they implement.
inline constexpr version_info version{KEYPLACE_VERSION_MAJOR, KEYPLACE_VERSION_MINOR,
                                      KEYPLACE_VERSION_PATCH, KEYPLACE_CONTRACT_VERSION};

KEYPLACE_NAMESPACE_END

#endif
