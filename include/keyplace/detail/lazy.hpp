// keyplace — which node owns a key. dependent_t: a type spelled so that it depends on a
// template parameter. Not API.
//
// Why: clang instantiates a constexpr function as soon as a template names it, and C++20 made
// most of std::vector constexpr; code in a template that names std::vector<node> (not a
// dependent type) therefore compiles those members in every translation unit that includes the
// header. Spelling the element type dependent_t<node, Tag> defers them to the translation units
// that instantiate the template. The type is the same: dependent_t<T, Tag> is T.
#ifndef KEYPLACE_DETAIL_LAZY_HPP_INCLUDED
#define KEYPLACE_DETAIL_LAZY_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

template <class T, class Tag>
struct dependent_type {
    using type = T;
};
template <class T, class Tag>
using dependent_t = typename dependent_type<T, Tag>::type;

/// std::vector<T>, spelled dependent on Tag.
template <class T, class Tag>
using lazy_vector = std::vector<dependent_t<T, Tag>>;

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
