// keyplace — which node owns a key. MementoHash: Coluzzi, Brocco, Antonucci, Leidi, "MementoHash:
// A Stateful, Minimal Memory, Best Performing Consistent Hash Algorithm", IEEE/ACM ToN 2024
// (arXiv 2306.09783): jump hash plus a memento of removed buckets, so any node can be removed.
#ifndef KEYPLACE_MEMENTO_HPP_INCLUDED
#define KEYPLACE_MEMENTO_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/engine/bucket_rehash.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// A MementoHash state: the removed buckets in the order they were removed (the memento). The
/// jump table has n = nodes + removed.size() buckets; the k-th removed bucket's replacer is
/// n - 1 - k. Removing bucket n - 1 while nothing is removed shrinks the table instead (plain
/// jump), so a canonical memento never starts with n - 1.
struct memento_config {
    std::vector<std::uint32_t> removed;
    friend auto operator==(const memento_config&, const memento_config&) -> bool = default;
};

/// MementoHash over jump buckets. nodes() lists the nodes in ascending bucket order (build: the
/// i-th listed node takes the i-th working bucket). without(id) removes that node's bucket;
/// with(node) restores the most recently removed bucket (LIFO), or appends bucket n when none is
/// removed. Memory: the nodes plus 12 bytes or so per removed bucket, none per working one.
///
/// build()/with() throw keyplace::error: errc::invalid_argument for a memento naming a bucket
/// twice, one outside the table or starting with n - 1; errc::too_many_nodes above 2^31 - 1
/// buckets; the node errors (empty list, empty, long or duplicate id, errc::invalid_weight for a
/// weight other than 1).
/// KeyHash is the key hash locate() applies (the native contract: xxh3).
template <class KeyHash = xxh3>
class basic_memento : public detail::lifecycle<basic_memento<KeyHash>, node, memento_config,
                                               detail::derivation::any, detail::node_order::as_given> {
    using base = detail::lifecycle<basic_memento, node, memento_config, detail::derivation::any,
                                   detail::node_order::as_given>;
    friend base;

public:
    using key_hash = KeyHash;

    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }

    /// The owner of a hashed key: jump's O(log n), plus O(1) expected per removed bucket met.
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        const std::uint32_t b = bucket(point);
        if (sorted_removed_.empty()) {
            return node_index{b};
        }
        const auto below = std::lower_bound(sorted_removed_.begin(), sorted_removed_.end(), b) - sorted_removed_.begin();
        return node_index{b - static_cast<std::uint32_t>(below)};
    }

    /// The working bucket of a hashed key (the contract in doc/contract.md).
    [[nodiscard]] auto bucket(std::uint64_t point) const noexcept -> std::uint32_t {
        auto b = static_cast<std::uint32_t>(detail::jump_bucket(point, static_cast<std::int32_t>(n_)));
        if (slots_.empty()) {
            return b;
        }
        std::int64_t r = replacer(b);
        while (r >= 0) {
            b = static_cast<std::uint32_t>(detail::bucket_rehash(point, b) % static_cast<std::uint64_t>(r));
            std::int64_t r2 = replacer(b);
            while (r2 >= r) {
                b = static_cast<std::uint32_t>(r2);
                r2 = replacer(b);
            }
            r = r2;
        }
        return b;
    }

    /// The jump table size n.
    [[nodiscard]] auto table_size() const noexcept -> std::uint32_t { return n_; }
    /// The memento: removed buckets in removal order.
    [[nodiscard]] auto removed() const noexcept -> std::span<const std::uint32_t> { return this->config_.removed; }
    /// The bucket node i occupies. Precondition: i < size(), checked by KEYPLACE_ASSERT.
    [[nodiscard]] auto bucket_of(node_index i) const noexcept -> std::uint32_t {
        KEYPLACE_ASSERT(i.value < this->size());
        auto b = i.value;
        for (const std::uint32_t r : sorted_removed_) {  // the i-th bucket not removed
            if (r > b) {
                break;
            }
            ++b;
        }
        return b;
    }
    /// The replacer of bucket b (n - 1 - k for the k-th removed bucket), -1 for a working one.
    [[nodiscard]] auto replacer(std::uint32_t b) const noexcept -> std::int64_t {
        if (slots_.empty()) {
            return -1;
        }
        for (std::size_t s = slot_of(b);; s = (s + 1) & (slots_.size() - 1)) {
            if (slots_[s].bucket == b) {
                return slots_[s].replacer;
            }
            if (slots_[s].bucket == empty_slot) {
                return -1;
            }
        }
    }

    /// Each node's defined share: 1/N.
    [[nodiscard]] auto defined_shares() const -> std::vector<double> {
        return std::vector<double>(this->size(), 1.0 / static_cast<double>(this->size()));
    }

private:
    static constexpr std::uint32_t empty_slot = ~std::uint32_t{0};
    struct slot {
        std::uint32_t bucket = empty_slot;
        std::uint32_t replacer = 0;
    };

    basic_memento() = default;

    [[nodiscard]] auto slot_of(std::uint32_t b) const noexcept -> std::size_t {
        return static_cast<std::size_t>((static_cast<std::uint64_t>(b) * 0x9E3779B97F4A7C15ULL) >> shift_);
    }

    auto assign(std::span<const node> nodes, const memento_config& config) -> detail::failure {
        detail::lazy_vector<node, basic_memento> sorted;
        if (auto f = detail::sorted_membership(nodes, sorted)) {
            return f;
        }
        if (auto f = detail::unit_weights(nodes, "memento")) {
            return f;
        }
        const std::size_t total = nodes.size() + config.removed.size();
        if (total > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
            return detail::fail(errc::too_many_nodes,
                                std::to_string(total) + " memento buckets; jump takes at most 2^31 - 1")
                .at("removed");
        }
        const auto n = static_cast<std::uint32_t>(total);
        detail::lazy_vector<std::uint32_t, basic_memento> sorted_removed(config.removed.begin(), config.removed.end());
        std::sort(sorted_removed.begin(), sorted_removed.end());
        for (std::size_t i = 0; i < sorted_removed.size(); ++i) {
            const std::uint32_t b = sorted_removed[i];
            if (b >= n || (i > 0 && sorted_removed[i - 1] == b)) {
                return detail::fail(errc::invalid_argument,
                                    "memento removed bucket " + std::to_string(b) +
                                        (b >= n ? " is outside the table of " + std::to_string(n)
                                                : std::string(" is listed twice")))
                    .at("removed");
            }
        }
        if (!config.removed.empty() && config.removed.front() == n - 1) {
            return detail::fail(errc::invalid_argument,
                                "memento removed bucket " + std::to_string(n - 1) +
                                    " is the last of an unshrunk table; removing it first shrinks the table")
                .at("removed");
        }
        n_ = n;
        this->config_ = config;
        sorted_removed_ = std::move(sorted_removed);
        this->nodes_.assign(nodes.begin(), nodes.end());
        index();
        return {};
    }

    auto assign_with(const basic_memento& from, const node& m) -> detail::failure {
        if (auto f = detail::unit_weights(std::span<const node>(&m, 1), "memento")) {
            return f;
        }
        std::uint32_t b = from.n_;
        memento_config next = from.config_;
        if (next.removed.empty()) {
            if (from.n_ == static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) {
                return detail::fail(errc::too_many_nodes, "adding " + detail::quote(m.id) +
                                                              ": jump takes at most 2^31 - 1 buckets");
            }
            n_ = from.n_ + 1;
        } else {
            b = next.removed.back();
            next.removed.pop_back();
            n_ = from.n_;
        }
        this->config_ = std::move(next);
        sorted_removed_ = from.sorted_removed_;
        sorted_removed_.erase(std::remove(sorted_removed_.begin(), sorted_removed_.end(), b), sorted_removed_.end());
        this->nodes_ = from.nodes_;
        const auto below = std::lower_bound(sorted_removed_.begin(), sorted_removed_.end(), b) - sorted_removed_.begin();
        this->nodes_.insert(this->nodes_.begin() + (static_cast<std::ptrdiff_t>(b) - below), m);
        index();
        return {};
    }

    auto assign_without(const basic_memento& from, node_index i) -> detail::failure {
        const std::uint32_t b = from.bucket_of(i);
        this->config_ = from.config_;
        sorted_removed_ = from.sorted_removed_;
        n_ = from.n_;
        if (this->config_.removed.empty() && b == n_ - 1) {
            --n_;  // plain jump shrink
        } else {
            this->config_.removed.push_back(b);
            sorted_removed_.insert(std::lower_bound(sorted_removed_.begin(), sorted_removed_.end(), b), b);
        }
        this->nodes_ = from.nodes_;
        this->nodes_.erase(this->nodes_.begin() + static_cast<std::ptrdiff_t>(i.value));
        index();
        return {};
    }

    // The replacer table: open addressing over a power of two of at least twice the memento.
    void index() {
        slots_.clear();
        const auto& removed = this->config_.removed;
        if (removed.empty()) {
            return;
        }
        std::size_t size = 2;
        unsigned bits = 1;
        while (size < 2 * removed.size()) {
            size *= 2;
            ++bits;
        }
        shift_ = 64U - bits;
        slots_.assign(size, slot{});
        for (std::size_t k = 0; k < removed.size(); ++k) {
            std::size_t s = slot_of(removed[k]);
            while (slots_[s].bucket != empty_slot) {
                s = (s + 1) & (size - 1);
            }
            slots_[s] = slot{removed[k], static_cast<std::uint32_t>(n_ - 1 - k)};
        }
    }

    std::uint32_t n_ = 0;
    unsigned shift_ = 63;
    std::vector<slot> slots_;
    std::vector<std::uint32_t> sorted_removed_;
};

/// MementoHash, the native strategy `memento`.
using memento = basic_memento<>;

KEYPLACE_NAMESPACE_END

#endif
