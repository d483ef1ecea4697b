// keyplace — which node owns a key. AnchorHash: Mendelson, Vargaftik, Barabash, Lorenz, Keslassy,
// Orda, "AnchorHash: A Scalable Consistent Hash", IEEE/ACM ToN 2020 (arXiv 1812.09674), in both
// of the paper's representations (A, W, L, K; and the memory-lean A, K) with one set of decisions.
#ifndef KEYPLACE_ANCHOR_HPP_INCLUDED
#define KEYPLACE_ANCHOR_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/engine/bucket_rehash.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The largest AnchorHash capacity (buckets); 2^26 buckets take 1.25 GiB in the fast form.
inline constexpr std::uint32_t anchor_max_capacity = std::uint32_t{1} << 26;

/// Which representation a basic_anchor keeps. Both make exactly the same decisions (tested).
enum class anchor_form : std::uint8_t {
    fast,     ///< A, W, L, K: a removal is O(1)
    compact,  ///< A, K only (8 bytes a bucket less): a removal costs about one lookup
};

/// An AnchorHash state: the capacity a and the removal history. removed is the stack R of
/// removed buckets, bottom first (the last element is the next bucket with() hands out). Empty
/// means the initial state of the paper: buckets w .. a-1 removed, a-1 first, so with() gives
/// w, w+1, ... in turn. A capacity of 0 (the default) means the node count: no bucket is free
/// until a node is removed. A built value's config() always states the capacity and the full stack.
struct anchor_config {
    std::uint32_t capacity = 0;
    std::vector<std::uint32_t> removed;
    friend auto operator==(const anchor_config&, const anchor_config&) -> bool = default;
};

/// AnchorHash over a fixed capacity of buckets. Nodes occupy the working buckets; nodes() lists
/// them in ascending bucket order (build: the i-th listed node takes the i-th working bucket).
/// with(node) gives the node the most recently removed bucket (LIFO); without(id) removes that
/// node's bucket. Removing any node moves only its keys; adding it back restores the placement.
///
/// build()/with() throw keyplace::error: errc::invalid_table_size for a capacity below the
/// node count or above anchor_max_capacity; errc::invalid_argument for a removed stack of the
/// wrong length, naming a bucket twice or one outside the capacity; errc::too_many_nodes for
/// with() when every bucket is working; the node errors (empty list, empty, long or duplicate
/// id, errc::invalid_weight for a weight other than 1).
template <anchor_form Form>
class basic_anchor : public detail::lifecycle<basic_anchor<Form>, node, anchor_config, detail::derivation::any,
                                             detail::node_order::as_given> {
    using base = detail::lifecycle<basic_anchor, node, anchor_config, detail::derivation::any,
                                   detail::node_order::as_given>;
    friend base;

public:
    using key_hash = xxh3;

    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }

    /// The owner of a hashed key: O(1) expected (at most ln(a / w) + 1 rehashes on average).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return node_index{bucket_node_[bucket(point)]};
    }

    /// The working bucket of a hashed key (the contract in doc/contract.md).
    [[nodiscard]] auto bucket(std::uint64_t point) const noexcept -> std::uint32_t {
        auto b = static_cast<std::uint32_t>(first_(point));
        while (a_[b] > 0) {
            auto h = static_cast<std::uint32_t>(detail::bucket_rehash(point, b) % a_[b]);
            while (a_[h] >= a_[b]) {
                h = k_[h];
            }
            b = h;
        }
        return b;
    }

    /// The capacity a.
    [[nodiscard]] auto capacity() const noexcept -> std::uint32_t { return this->config_.capacity; }
    /// The removed stack R, bottom first.
    [[nodiscard]] auto removed() const noexcept -> std::span<const std::uint32_t> { return this->config_.removed; }
    /// The bucket node i occupies.
    [[nodiscard]] auto bucket_of(node_index i) const noexcept -> std::uint32_t {
        KEYPLACE_ASSERT(i.value < node_bucket_.size());
        return node_bucket_[i.value];
    }
    /// The paper's arrays (for tests and state dumps): A (0 for a working bucket, else the
    /// working count right after its removal) and K (its replacement).
    [[nodiscard]] auto anchors() const noexcept -> std::span<const std::uint32_t> { return a_; }
    [[nodiscard]] auto replacements() const noexcept -> std::span<const std::uint32_t> { return k_; }
    /// W (working buckets, first N meaningful) and L (last position), fast form only.
    [[nodiscard]] auto working() const noexcept -> std::span<const std::uint32_t>
        requires(Form == anchor_form::fast)
    {
        return w_;
    }
    [[nodiscard]] auto last_positions() const noexcept -> std::span<const std::uint32_t>
        requires(Form == anchor_form::fast)
    {
        return l_;
    }

    /// Each node's defined share: 1/N.
    [[nodiscard]] auto defined_shares() const -> std::vector<double> {
        return std::vector<double>(this->size(), 1.0 / static_cast<double>(this->size()));
    }

private:
    static constexpr std::uint32_t no_node = ~std::uint32_t{0};

    basic_anchor() = default;

    auto assign(std::span<const node> nodes, const anchor_config& config) -> detail::failure {
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(nodes, sorted)) {
            return f;
        }
        if (auto f = detail::unit_weights(nodes, "anchor")) {
            return f;
        }
        const std::uint32_t cap = config.capacity != 0 || nodes.size() > anchor_max_capacity
                                      ? config.capacity
                                      : static_cast<std::uint32_t>(nodes.size());
        if (cap == 0 || cap > anchor_max_capacity || cap < nodes.size()) {
            return detail::fail(errc::invalid_table_size,
                                "anchor capacity " + std::to_string(cap) + " for " + std::to_string(nodes.size()) +
                                    " nodes; it must be at least the node count and at most " +
                                    std::to_string(anchor_max_capacity))
                .at("capacity");
        }
        const auto w = static_cast<std::uint32_t>(nodes.size());
        anchor_config full{cap, config.removed};
        if (full.removed.empty()) {
            for (std::uint32_t b = cap; b > w; --b) {
                full.removed.push_back(b - 1);
            }
        } else {
            if (full.removed.size() != cap - w) {
                return detail::fail(errc::invalid_argument,
                                    "anchor removed stack lists " + std::to_string(full.removed.size()) +
                                        " buckets; capacity " + std::to_string(cap) + " with " + std::to_string(w) +
                                        " nodes needs " + std::to_string(cap - w))
                    .at("removed");
            }
            detail::lazy_vector<bool, basic_anchor> seen(cap, false);
            for (const std::uint32_t b : full.removed) {
                if (b >= cap || seen[b]) {
                    return detail::fail(errc::invalid_argument,
                                        "anchor removed bucket " + std::to_string(b) +
                                            (b >= cap ? " is outside capacity " + std::to_string(cap)
                                                      : std::string(" is listed twice")))
                        .at("removed");
                }
                seen[b] = true;
            }
        }
        init(cap);
        for (const std::uint32_t b : full.removed) {
            remove_bucket(b);
        }
        this->config_ = std::move(full);
        this->nodes_.assign(nodes.begin(), nodes.end());
        index_buckets();
        return {};
    }

    auto assign_with(const basic_anchor& from, const node& m) -> detail::failure {
        if (auto f = detail::unit_weights(std::span<const node>(&m, 1), "anchor")) {
            return f;
        }
        if (from.config_.removed.empty()) {
            return detail::fail(errc::too_many_nodes, "adding " + detail::quote(m.id) + ": all " +
                                                          std::to_string(from.capacity()) +
                                                          " anchor buckets are working");
        }
        *this = from;
        const std::uint32_t b = this->config_.removed.back();
        this->config_.removed.pop_back();
        add_bucket(b);
        std::size_t pos = 0;
        while (pos < node_bucket_.size() && node_bucket_[pos] < b) {
            ++pos;
        }
        this->nodes_.insert(this->nodes_.begin() + static_cast<std::ptrdiff_t>(pos), m);
        index_buckets();
        return {};
    }

    auto assign_without(const basic_anchor& from, node_index i) -> detail::failure {
        *this = from;
        const std::uint32_t b = node_bucket_[i.value];
        remove_bucket(b);
        this->config_.removed.push_back(b);
        this->nodes_.erase(this->nodes_.begin() + static_cast<std::ptrdiff_t>(i.value));
        index_buckets();
        return {};
    }

    void init(std::uint32_t cap) {
        first_ = detail::fast_mod(cap);
        a_.assign(cap, 0);
        k_.resize(cap);
        for (std::uint32_t b = 0; b < cap; ++b) {
            k_[b] = b;
        }
        if constexpr (Form == anchor_form::fast) {
            w_ = k_;
            l_ = k_;
        }
        n_ = cap;
    }

    // The bucket at position p of the working list when it held v buckets (the compact form's
    // replacement for W: follow replacements of buckets removed at or after that moment).
    [[nodiscard]] auto at_view(std::uint32_t p, std::uint32_t v) const noexcept -> std::uint32_t {
        while (a_[p] >= v) {
            p = k_[p];
        }
        return p;
    }

    void remove_bucket(std::uint32_t b) {
        if constexpr (Form == anchor_form::fast) {
            --n_;
            w_[l_[b]] = w_[n_];
            l_[w_[n_]] = l_[b];
            k_[b] = w_[n_];
        } else {
            k_[b] = at_view(n_ - 1, n_);
            --n_;
        }
        a_[b] = n_;
    }

    void add_bucket(std::uint32_t b) {
        if constexpr (Form == anchor_form::fast) {
            l_[w_[n_]] = n_;
            w_[l_[b]] = b;
        }
        ++n_;
        a_[b] = 0;
        k_[b] = b;
    }

    void index_buckets() {
        bucket_node_.assign(a_.size(), no_node);
        node_bucket_.clear();
        node_bucket_.reserve(this->nodes_.size());
        for (std::uint32_t b = 0; b < a_.size(); ++b) {
            if (a_[b] == 0) {
                bucket_node_[b] = static_cast<std::uint32_t>(node_bucket_.size());
                node_bucket_.push_back(b);
            }
        }
    }

    detail::fast_mod first_{};
    std::uint32_t n_ = 0;
    std::vector<std::uint32_t> a_;
    std::vector<std::uint32_t> k_;
    std::vector<std::uint32_t> w_;  // fast form only
    std::vector<std::uint32_t> l_;  // fast form only
    std::vector<std::uint32_t> bucket_node_;
    std::vector<std::uint32_t> node_bucket_;
};

/// AnchorHash, the fast form (the native strategy `anchor`).
using anchor = basic_anchor<anchor_form::fast>;
/// AnchorHash keeping only A and K: the same placement in less memory.
using anchor_compact = basic_anchor<anchor_form::compact>;

KEYPLACE_NAMESPACE_END

#endif
