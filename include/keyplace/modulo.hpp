// keyplace — which node owns a key. Modulo placement (point mod N): the baseline that shows
// why consistent hashing exists. Not for production: a membership change moves almost every key.
#ifndef KEYPLACE_MODULO_HPP_INCLUDED
#define KEYPLACE_MODULO_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// pick(point) = point mod N over the nodes sorted by id. Going from N to N+1 nodes moves about
/// N/(N+1) of all keys. build() throws keyplace::error as every strategy does for the node list,
/// and, as jump does, for a weight other than 1 (errc::invalid_weight: modulo has no weights);
/// with() and without() rebuild.
template <class Unused = void>
class basic_modulo : public detail::lifecycle<basic_modulo<Unused>, keyplace::node, no_config, detail::derivation::any,
                                        detail::node_order::by_id> {
    friend detail::lifecycle<basic_modulo, keyplace::node, no_config, detail::derivation::any, detail::node_order::by_id>;

public:
    using key_hash = xxh3;

    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return node_index{static_cast<std::uint32_t>(point % this->nodes_.size())};
    }
    /// The residues modulo N: ownership and movement are exact over them.
    [[nodiscard]] auto regions() const noexcept -> residue_regions { return {this->nodes_.size()}; }

private:
    basic_modulo() = default;

    auto assign(std::span<const keyplace::node> input, const no_config&) -> detail::failure {
        detail::lazy_vector<keyplace::node, basic_modulo> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (auto f = detail::unit_weights(sorted, "modulo")) {
            return detail::in_input_order(std::move(f), input);
        }
        this->nodes_ = std::move(sorted);
        return {};
    }
};

/// (A template only so that translation units that do not use it do not compile it.)
using modulo = basic_modulo<>;

KEYPLACE_NAMESPACE_END

#endif
