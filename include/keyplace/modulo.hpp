// keyplace — which node owns a key. Modulo placement (point mod N): the baseline that shows
// why consistent hashing exists. Not for production: a membership change moves almost every key.
#ifndef KEYPLACE_MODULO_HPP_INCLUDED
#define KEYPLACE_MODULO_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// pick(point) = point mod N over the nodes sorted by id. Weights are validated but ignored.
/// Going from N to N+1 nodes moves about N/(N+1) of all keys.
class modulo {
public:
    using key_hash = xxh3;

    /// Throws keyplace::error as ring::build does for the node list.
    [[nodiscard]] static auto build(std::span<const node> nodes) -> modulo {
        modulo m;
        if (auto f = detail::sorted_membership(nodes, m.nodes_)) {
            detail::throw_error(std::move(f));
        }
        return m;
    }
    [[nodiscard]] static auto build(std::initializer_list<node> nodes) -> modulo {
        return build(std::span<const node>(nodes.begin(), nodes.size()));
    }
    [[nodiscard]] static auto try_build(std::span<const node> nodes, std::error_code& ec)
        -> std::optional<modulo> {
        modulo m;
        auto f = detail::sorted_membership(nodes, m.nodes_);
        return detail::report(std::move(f), std::move(m), ec);
    }

    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return node_index{static_cast<std::uint32_t>(point % nodes_.size())};
    }

private:
    modulo() = default;
    std::vector<node> nodes_;
};

static_assert(placement_strategy<modulo>);

KEYPLACE_NAMESPACE_END

#endif
