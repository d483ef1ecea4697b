// keyplace — which node owns a key. The one lifecycle of every strategy: build and try_build,
// the derivations (with/without, or push_back/pop_back) and their try_ forms, the join and leave
// checks, and the node list with find() and node(). Not API: strategies inherit it.
#ifndef KEYPLACE_DETAIL_ENGINE_LIFECYCLE_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_LIFECYCLE_HPP_INCLUDED

#include <keyplace/config.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine/strategy_kinds.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The configuration of a strategy that takes none.
struct no_config {
    friend auto operator==(const no_config&, const no_config&) -> bool = default;
};

namespace detail {

/// The lifecycle, written once. Derived provides, privately (befriending this class):
///   - a default constructor and `assign(std::span<const Member>, const Config&) -> failure`,
///     which validates everything and fills nodes_ and its engine, or returns the failure and
///     leaves nothing half-built that escapes (the value is discarded on failure);
///   - optionally `assign_with(const Derived& from, const Member&)` and
///     `assign_without(const Derived& from, node_index)`, incremental derivations; without them
///     a derivation rebuilds from the members (member_of(i), default nodes()[i]) plus or minus one;
///   - for Member other than node, `member_of(std::size_t) -> Member`.
/// The join check (a node's own validity, an id already present; for members other than nodes,
/// Derived's assign finds a repeated id) and the leave checks (an unknown id, the last node) are
/// made here, before Derived is asked.
template <class Derived, class Member, class Config, derivation Derives, node_order Order>
class lifecycle {
public:
    using member_type = Member;
    using config_type = Config;
    /// The derivations it offers and how it orders its nodes (the strategy table states both).
    static constexpr derivation lifecycle_derivation = Derives;
    static constexpr node_order lifecycle_order = Order;

    /// Builds a value; throws keyplace::error (see the strategy for the conditions).
    [[nodiscard]] static auto build(std::span<const Member> members, const Config& config = Config{}) -> Derived {
        Derived d;
        return value_or_raise(d.assign(members, config), std::move(d));
    }
    [[nodiscard]] static auto build(std::initializer_list<Member> members, const Config& config = Config{})
        -> Derived {
        return build(std::span<const Member>(members.begin(), members.size()), config);
    }
    /// As build(): the value, or an empty optional with err holding the same code and message
    /// the throwing form reports.
    [[nodiscard]] static auto try_build(std::span<const Member> members, const Config& config, error_info& err)
        -> std::optional<Derived> {
        Derived d;
        return report(d.assign(members, config), std::move(d), err);
    }
    [[nodiscard]] static auto try_build(std::span<const Member> members, error_info& err) -> std::optional<Derived> {
        return try_build(members, Config{}, err);
    }

    /// A new value with m added; this one is unchanged. Throws as build() does, and
    /// errc::duplicate_id if m's id is a member.
    [[nodiscard]] auto with(const Member& m) const -> Derived
        requires(Derives == derivation::any)
    {
        Derived d;
        return value_or_raise(derive_with(d, m), std::move(d));
    }
    [[nodiscard]] auto try_with(const Member& m, error_info& err) const -> std::optional<Derived>
        requires(Derives == derivation::any)
    {
        Derived d;
        return report(derive_with(d, m), std::move(d), err);
    }
    /// A new value without the node id; this one is unchanged. Throws errc::unknown_id if id
    /// is not a member, errc::empty_membership if it is the last.
    [[nodiscard]] auto without(std::string_view id) const -> Derived
        requires(Derives == derivation::any)
    {
        Derived d;
        return value_or_raise(derive_without(d, id), std::move(d));
    }
    [[nodiscard]] auto try_without(std::string_view id, error_info& err) const -> std::optional<Derived>
        requires(Derives == derivation::any)
    {
        Derived d;
        return report(derive_without(d, id), std::move(d), err);
    }

    /// A new value with m as the last node; this one is unchanged.
    [[nodiscard]] auto push_back(const Member& m) const -> Derived
        requires(Derives == derivation::append_only)
    {
        Derived d;
        return value_or_raise(derive_with(d, m), std::move(d));
    }
    [[nodiscard]] auto try_push_back(const Member& m, error_info& err) const -> std::optional<Derived>
        requires(Derives == derivation::append_only)
    {
        Derived d;
        return report(derive_with(d, m), std::move(d), err);
    }
    /// A new value without the last node. Throws errc::empty_membership when it is the only one.
    [[nodiscard]] auto pop_back() const -> Derived
        requires(Derives == derivation::append_only)
    {
        Derived d;
        return value_or_raise(derive_without(d, nodes_.back().id), std::move(d));
    }
    [[nodiscard]] auto try_pop_back(error_info& err) const -> std::optional<Derived>
        requires(Derives == derivation::append_only)
    {
        Derived d;
        return report(derive_without(d, nodes_.back().id), std::move(d), err);
    }

    /// Number of nodes.
    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    /// The nodes (sorted by id, or in the order given: see the strategy); node_index values
    /// index this span.
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    /// The node at index i < size().
    [[nodiscard]] auto node(node_index i) const noexcept -> const keyplace::node& {
        KEYPLACE_ASSERT(i.value < nodes_.size());
        return nodes_[i.value];
    }
    /// The index of the node with this id, if it is a member: O(log N) for nodes sorted by id,
    /// O(N) for nodes kept in the order given.
    [[nodiscard]] auto find(std::string_view id) const noexcept -> std::optional<node_index> {
        const std::size_t i = Order == node_order::by_id ? find_sorted(nodes_, id) : find_linear(id);
        if (i == nodes_.size()) {
            return std::nullopt;
        }
        return node_index{static_cast<std::uint32_t>(i)};
    }

    /// The configuration the value was built with (strategies that derive keep it).
    [[nodiscard]] auto config() const noexcept -> const Config&
        requires(Derives != derivation::none)
    {
        return config_;
    }

protected:
    lifecycle() = default;

    struct unstored {};
    std::vector<dependent_t<keyplace::node, Derived>> nodes_;  // a dependent spelling: detail/lazy.hpp
    // Derived::assign stores its configuration here when it derives (rebuilds need it).
    [[no_unique_address]] std::conditional_t<Derives == derivation::none, unstored, Config> config_{};

private:
    [[nodiscard]] auto self() const noexcept -> const Derived& { return static_cast<const Derived&>(*this); }

    [[nodiscard]] auto find_linear(std::string_view id) const noexcept -> std::size_t {
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (nodes_[i].id == id) {
                return i;
            }
        }
        return nodes_.size();
    }

    [[nodiscard]] auto members() const -> std::vector<Member> {
        if constexpr (std::is_same_v<Member, keyplace::node>) {
            return nodes_;
        } else {
            std::vector<Member> out;
            out.reserve(nodes_.size() + 1);
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                out.push_back(self().member_of(i));
            }
            return out;
        }
    }

    auto derive_with(Derived& out, const Member& m) const -> failure {
        if constexpr (std::is_same_v<Member, keyplace::node>) {
            if (auto f = check_node(m)) {
                return f;
            }
            if (find(m.id)) {
                return fail(errc::duplicate_id, "node id " + quote(m.id) + " is already a member");
            }
        }
        if constexpr (requires { out.assign_with(self(), m); }) {
            return out.assign_with(self(), m);
        } else {
            auto next = members();
            next.push_back(m);
            return out.assign(next, config_);
        }
    }

    auto derive_without(Derived& out, std::string_view id) const -> failure {
        const auto found = find(id);
        if (!found) {
            return fail(errc::unknown_id, "node id " + quote(id) + " is not a member");
        }
        if (nodes_.size() == 1) {
            return fail(errc::empty_membership, "removing " + quote(id) + " would leave no nodes");
        }
        if constexpr (requires { out.assign_without(self(), *found); }) {
            return out.assign_without(self(), *found);
        } else {
            auto next = members();
            next.erase(next.begin() + static_cast<std::ptrdiff_t>(found->value));
            return out.assign(next, config_);
        }
    }
};

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
