// keyplace — which node owns a key. Two facts about a strategy that its lifecycle fixes and the
// strategy table states: which derivations it offers, and how it orders its nodes.
#ifndef KEYPLACE_DETAIL_ENGINE_STRATEGY_KINDS_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_STRATEGY_KINDS_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN

namespace detail {

/// Which derivations a strategy offers.
enum class derivation : std::uint8_t {
    none,         ///< rebuild from new input (a slot map, a ring of given points)
    append_only,  ///< push_back / pop_back (jump: buckets are numbered)
    any,          ///< with / without any node
};

/// How a strategy orders its nodes: sorted by id (input order never matters), or as given
/// (the reference system's server index, jump's buckets).
enum class node_order : std::uint8_t { by_id, as_given };

}  // namespace detail

KEYPLACE_NAMESPACE_END

#endif
