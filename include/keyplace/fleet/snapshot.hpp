// keyplace — which node owns a key. Snapshots: an immutable, versioned placement of one cluster
// (its epoch, its strategy with every parameter, its nodes with their states), the placement now
// and after the transition it describes, the write set of a key, and the two digests a fleet
// compares to prove it agrees: the fingerprint of the built placement and the probe digest.
#ifndef KEYPLACE_FLEET_SNAPSHOT_HPP_INCLUDED
#define KEYPLACE_FLEET_SNAPSHOT_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/xxhash.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/fleet/snapshot_description.hpp>
#include <keyplace/fleet/snapshot_strategies.hpp>
#include <keyplace/fleet/strategy_table.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

namespace detail {

/// A streaming XXH3-128 over the little-endian canonical encoding (doc/contract.md, "Fingerprint").
class canonical_hasher {
public:
    canonical_hasher() {
        XXH3_INITSTATE(&state_);
        (void)XXH3_128bits_reset(&state_);
    }
    canonical_hasher(const canonical_hasher&) = delete;
    auto operator=(const canonical_hasher&) -> canonical_hasher& = delete;

    void bytes(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        while (n > 0) {
            if (used_ == buf_.size()) {
                flush();
            }
            const std::size_t take = n < buf_.size() - used_ ? n : buf_.size() - used_;
            std::memcpy(buf_.data() + used_, p, take);
            used_ += take;
            p += take;
            n -= take;
        }
    }
    void u8(std::uint8_t v) { bytes(&v, 1); }
    void le(std::uint64_t v, unsigned width) {
        unsigned char b[8];
        for (unsigned i = 0; i < width; ++i) {
            b[i] = static_cast<unsigned char>((v >> (8 * i)) & 0xffU);
        }
        bytes(b, width);
    }
    void le32(std::uint32_t v) { le(v, 4); }
    void le64(std::uint64_t v) { le(v, 8); }
    /// le32(length) then the bytes.
    void str(std::string_view s) {
        le32(static_cast<std::uint32_t>(s.size()));
        bytes(s.data(), s.size());
    }
    void digest(const digest128& d) {
        le64(d.low);
        le64(d.high);
    }
    [[nodiscard]] auto finish() -> digest128 {
        flush();
        const XXH128_hash_t h = XXH3_128bits_digest(&state_);
        return {h.high64, h.low64};
    }

private:
    void flush() {
        (void)XXH3_128bits_update(&state_, buf_.data(), used_);
        used_ = 0;
    }
    XXH3_state_t state_;
    std::array<unsigned char, 4096> buf_{};
    std::size_t used_ = 0;
};

/// A snapshot's overrides: keys in bytewise order, each with its node (index into nodes()).
struct override_table {
    std::vector<std::string> keys;
    std::vector<std::uint32_t> nodes;

    /// The node of key, or nullopt. O(log n) comparisons of strings.
    [[nodiscard]] auto find(std::string_view key) const noexcept -> std::optional<std::uint32_t> {
        const auto it = std::lower_bound(keys.begin(), keys.end(), key,
                                         [](const std::string& a, std::string_view b) { return a < b; });
        if (it == keys.end() || *it != key) {
            return std::nullopt;
        }
        return nodes[static_cast<std::size_t>(it - keys.begin())];
    }
};

template <class T>
inline constexpr bool is_arc_regions = false;
template <class S>
inline constexpr bool is_partition_table = false;
template <class U>
inline constexpr bool is_partition_table<basic_partitions<U>> = true;
/// A table of numbered buckets whose removed ones are history (AnchorHash, MementoHash).
template <class S>
inline constexpr bool is_bucket_table = false;
template <>
inline constexpr bool is_bucket_table<anchor> = true;
template <>
inline constexpr bool is_bucket_table<memento> = true;
template <class P>
inline constexpr bool is_arc_regions<arc_regions<P>> = true;

}  // namespace detail

/// One built placement of a snapshot (its placement now, or after the transition): one of the
/// strategies below, the snapshot nodes it places, and its digests. Immutable; queries are
/// const and safe from any number of threads.
class placement {
public:
    /// One alternative per engine type a row of the strategy table builds (snapshot_strategies.hpp).
    using strategy_variant = detail::bind::variant_of<detail::bind::snapshot_strategies>::type;

    /// The built strategy: visit(f) calls f(const S&) with it, for lookups at full speed.
    template <class F>
    decltype(auto) visit(F&& f) const {
        return std::visit(std::forward<F>(f), *strategy_);
    }
    [[nodiscard]] auto strategy() const noexcept -> const strategy_variant& { return *strategy_; }

    /// How many nodes it places, and node i of the strategy as the snapshot lists it.
    [[nodiscard]] auto size() const noexcept -> std::size_t { return members_.size(); }
    /// The index into snapshot::nodes() of strategy node i.
    [[nodiscard]] auto member(node_index i) const noexcept -> std::uint32_t { return members_[i.value]; }
    /// The point of a key under S's key hash.
    template <class S>
    [[nodiscard]] static auto key_point(const S&, std::string_view key) noexcept -> std::uint64_t {
        return static_cast<std::uint64_t>(hash_key(typename S::key_hash{}, key));
    }
    /// The point of a key under this strategy's key hash.
    [[nodiscard]] auto point_of(std::string_view key) const noexcept -> std::uint64_t {
        return std::visit([&](const auto& s) { return key_point(s, key); }, *strategy_);
    }
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return std::visit([&](const auto& s) { return s.pick(point); }, *strategy_);
    }
    /// The strategy's owner of a key, in one dispatch: pick(point_of(key)), or by the key's bytes
    /// where the strategy places a key by them (by_key_bytes()).
    [[nodiscard]] auto pick_key(std::string_view key) const noexcept -> node_index {
        return std::visit([&](const auto& s) { return detail::pick_of_key(s, key); }, *strategy_);
    }
    /// Whether the strategy places a key by its bytes rather than by one 64-bit point
    /// (go-mpchash hashes them twice): pick(point) and copies(point) then follow keyplace's point
    /// rule, another function, and a key's owner and copies come from pick_key, owner, copies_of
    /// and strategy_copies, which take the key.
    [[nodiscard]] auto by_key_bytes() const noexcept -> bool { return place_key_ != nullptr; }
    /// The snapshot node (index into snapshot::nodes()) that owns a key: its override if the
    /// snapshot has one for it, else the strategy's owner. O(log overrides) string comparisons
    /// more than the strategy's lookup, nothing when there are none.
    [[nodiscard]] auto owner(std::string_view key) const noexcept -> std::uint32_t {
        if (overrides_ != nullptr) {
            if (const auto o = overrides_->find(key)) {
                return *o;
            }
        }
        return member(pick_key(key));
    }
    /// The strategy's owner of a key, overrides aside (what the probe digest records).
    [[nodiscard]] auto strategy_owner(std::string_view key) const noexcept -> std::uint32_t {
        return member(pick_key(key));
    }
    /// The copies of a key: for an overridden key its node first, then the strategy's copies
    /// without it (one fewer of them; spread across failure domains is then not guaranteed),
    /// else strategy_copies(key, out).
    [[nodiscard]] auto copies_of(std::string_view key, std::span<std::uint32_t> out) const noexcept -> std::size_t {
        const auto o = overrides_ != nullptr ? overrides_->find(key) : std::nullopt;
        if (!o || out.empty()) {
            return strategy_copies(key, out);
        }
        std::array<std::uint32_t, max_snapshot_copies> theirs{};
        const std::size_t want = out.size() < width_ ? out.size() : width_;
        const std::size_t n = strategy_copies(key, std::span<std::uint32_t>(theirs.data(), want));
        std::size_t got = 0;
        out[got++] = *o;
        for (std::size_t k = 0; k < n && got < want; ++k) {
            if (theirs[k] != *o) {
                out[got++] = theirs[k];
            }
        }
        return got;
    }
    /// The strategy's copies of a key, overrides aside: copies(point_of(key), out), or for a
    /// strategy that places a key by its bytes, its copies over the order of those bytes (the
    /// first is pick_key's owner).
    [[nodiscard]] auto strategy_copies(std::string_view key, std::span<std::uint32_t> out) const noexcept
        -> std::size_t {
        if (place_key_ == nullptr) {
            return copies(point_of(key), out);
        }
        if (out.empty()) {
            return 0;
        }
        if (!placer_) {
            out[0] = member(pick_key(key));
            return 1;
        }
        std::array<node_index, max_snapshot_copies> tmp{};
        const std::size_t want = out.size() < tmp.size() ? out.size() : tmp.size();
        return members_of(tmp.data(), place_key_(placer_.get(), key_bytes(key), std::span<node_index>(tmp.data(), want)),
                          out);
    }
    /// Whether copies() can give more than one node per key (the strategy has a preference order).
    [[nodiscard]] auto ordered() const noexcept -> bool { return ordered_; }
    /// The copies of a point (snapshot node indices), with the snapshot's replication: its
    /// replica_placer, or the owner alone. Writes at most out.size() and returns how many.
    [[nodiscard]] auto copies(std::uint64_t point, std::span<std::uint32_t> out) const noexcept -> std::size_t {
        if (out.empty()) {
            return 0;
        }
        if (!place_) {
            out[0] = member(pick(point));
            return 1;
        }
        std::array<node_index, max_snapshot_copies> tmp{};
        const std::size_t want = out.size() < tmp.size() ? out.size() : tmp.size();
        return members_of(tmp.data(), place_(placer_.get(), point, std::span<node_index>(tmp.data(), want)), out);
    }
    /// Copies per key: the replication count, or 1.
    [[nodiscard]] auto width() const noexcept -> std::size_t { return width_; }

    /// XXH3-128 of the canonical encoding of the built state (doc/contract.md, "Fingerprint").
    [[nodiscard]] auto fingerprint() const noexcept -> const digest128& { return fingerprint_; }
    /// XXH3-128 of the owners of the probe keys (doc/contract.md, "Probe digest").
    [[nodiscard]] auto probe_digest() const noexcept -> const digest128& { return probe_; }

private:
    friend class snapshot;
    // out[k] = member(got[k]) for the n strategy nodes a placer wrote; returns n.
    auto members_of(const node_index* got, std::size_t n, std::span<std::uint32_t> out) const noexcept -> std::size_t {
        for (std::size_t k = 0; k < n; ++k) {
            out[k] = member(got[k]);
        }
        return n;
    }
    placement(strategy_variant s, std::vector<std::uint32_t> members)
        : strategy_(std::make_shared<const strategy_variant>(std::move(s))), members_(std::move(members)) {}

    // Held once: a replica placer (placer_) shares it rather than copying the ring or table.
    std::shared_ptr<const strategy_variant> strategy_;
    std::vector<std::uint32_t> members_;
    bool ordered_ = false;
    std::size_t width_ = 1;
    std::shared_ptr<const void> placer_;
    std::size_t (*place_)(const void*, std::uint64_t, std::span<node_index>) noexcept = nullptr;
    // Set for a strategy that places a key by its bytes (whether or not it replicates): its
    // placer's copies of key bytes, as place_ for a point.
    std::size_t (*place_key_)(const void*, std::span<const std::byte>, std::span<node_index>) noexcept = nullptr;
    digest128 fingerprint_{};
    digest128 probe_{};
    std::shared_ptr<const detail::override_table> overrides_;  // null: none
};

/// An immutable, versioned placement of one cluster. Built from a description (strict: every
/// bad value is an error naming it); it holds the placement now (current(): active and leaving
/// nodes) and after the transition (pending(): active and joining nodes) — the same object when
/// no node is joining or leaving — and its digests. Copies share the built placements.
class snapshot {
public:
    /// Throws keyplace::error as try_build reports.
    [[nodiscard]] static auto build(const snapshot_description& d) -> snapshot {
        error_info err;
        auto s = try_build(d, err);
        if (!s) {
            detail::raise(err);
        }
        return std::move(*s);
    }
    /// Fails on: a format other than major 1, a cluster outside the name grammar (check_name),
    /// epoch 0 or a parent epoch not below it (invalid_document); an unknown strategy, contract or
    /// parameter, or a parameter of the wrong kind (unknown_strategy); a node error (empty,
    /// over-long or duplicate id, weight not finite and > 0; an id, location part or override's
    /// node outside the name grammar: invalid_name); tokens or slots given to a strategy that takes none
    /// (invalid_argument); no node that owns keys now, or none after (no_owner); whatever the
    /// strategy refuses; a stated fingerprint or probe digest other than the computed one
    /// (fingerprint_mismatch). err.where() is the location in the description's JSON terms
    /// ("nodes[2].weight", "overrides[0]", "strategy.params.table-size", "replication"), and
    /// err.node() the index of the node it concerns, if one.
    [[nodiscard]] static auto try_build(const snapshot_description& d, error_info& err) -> std::optional<snapshot>;

    [[nodiscard]] auto format() const noexcept -> std::string_view { return snapshot_format; }
    [[nodiscard]] auto cluster() const noexcept -> const std::string& { return d_.cluster; }
    [[nodiscard]] auto epoch() const noexcept -> std::uint64_t { return d_.epoch; }
    [[nodiscard]] auto parent_epoch() const noexcept -> std::uint64_t { return d_.parent_epoch; }
    /// The strategy with every parameter (defaults filled in).
    [[nodiscard]] auto strategy() const noexcept -> const strategy_spec& { return d_.strategy; }
    [[nodiscard]] auto replication() const noexcept -> const replication_spec& { return d_.replication; }
    [[nodiscard]] auto metadata() const noexcept -> const snapshot_metadata& { return d_.metadata; }
    /// The nodes in the order the description gave them.
    [[nodiscard]] auto nodes() const noexcept -> std::span<const snapshot_node> { return d_.nodes; }
    /// The node with this id, or nullptr.
    [[nodiscard]] auto find(std::string_view id) const noexcept -> const snapshot_node* {
        const auto it = std::lower_bound(id_order_.begin(), id_order_.end(), id,
                                         [&](std::uint32_t m, std::string_view v) { return d_.nodes[m].id < v; });
        return it != id_order_.end() && d_.nodes[*it].id == id ? &d_.nodes[*it] : nullptr;
    }

    /// The placement now, and after the transition (the same object when nothing moves).
    [[nodiscard]] auto current() const noexcept -> const placement& { return *current_; }
    [[nodiscard]] auto pending() const noexcept -> const placement& { return *pending_; }
    /// Whether a node is joining, leaving or read-only (current() and pending() differ).
    [[nodiscard]] auto in_transition() const noexcept -> bool { return current_ != pending_; }

    /// The snapshot's fingerprint: XXH3-128 over the fingerprints of current() and pending().
    [[nodiscard]] auto fingerprint() const noexcept -> const digest128& { return fingerprint_; }
    /// Whether a stated fingerprint (a document's, etcd's current value) is this snapshot's:
    /// fingerprint(), or the one fingerprint contract 1 gave it, which left out the node
    /// locations that spread copies (doc/contract.md, "Fingerprint"); the two differ only for snapshots
    /// whose copies spread over racks, zones or regions.
    [[nodiscard]] auto fingerprint_matches(const digest128& stated) const -> bool;
    /// Recomputes every fingerprint from the built placements (not from the description) and
    /// compares: whether this snapshot is whole. O(size of the built state).
    [[nodiscard]] auto verify() const -> bool;
    /// The probe digest of current().
    [[nodiscard]] auto probe_digest() const noexcept -> const digest128& { return current_->probe_digest(); }

    /// The node that owns a key now, and the one that owns it after the transition.
    [[nodiscard]] auto owner(std::string_view key) const noexcept -> const snapshot_node& {
        return d_.nodes[current_->owner(key)];
    }
    [[nodiscard]] auto next_owner(std::string_view key) const noexcept -> const snapshot_node& {
        return d_.nodes[pending_->owner(key)];
    }
    /// Every node a write (or an invalidation) of the key must reach while the transition is
    /// open: the copies now, then those after that are not among them, as indices into
    /// nodes() (an overridden key's node first: placement::copies_of). Writes at most
    /// out.size() (2 * current().width() always suffice) and returns how many. Outside a
    /// transition it is the copies now. A read-only node in it takes the invalidation only:
    /// delete the key there, store no value (takes_values(state) is false). It is also the
    /// order in which a read looks: the copies now, which hold every value written since the
    /// transition began (a read-only one by those invalidations), then the copies after; a miss
    /// is filled only on nodes that take values.
    [[nodiscard]] auto write_set(std::string_view key, std::span<std::uint32_t> out) const noexcept -> std::size_t {
        std::size_t got = current_->copies_of(key, out);
        if (!in_transition()) {
            return got;
        }
        std::array<std::uint32_t, max_snapshot_copies> after{};
        const std::size_t n = pending_->copies_of(key, std::span<std::uint32_t>(after.data(), pending_->width()));
        for (std::size_t k = 0; k < n && got < out.size(); ++k) {
            bool seen = false;
            for (std::size_t j = 0; j < got; ++j) {
                seen = seen || out[j] == after[k];
            }
            if (!seen) {
                out[got++] = after[k];
            }
        }
        return got;
    }
    /// write_set as a list of nodes.
    [[nodiscard]] auto write_set(std::string_view key) const -> std::vector<const snapshot_node*> {
        std::vector<std::uint32_t> idx(2 * current_->width() + 2 * pending_->width());
        idx.resize(write_set(key, idx));
        std::vector<const snapshot_node*> out;
        for (const auto i : idx) {
            out.push_back(&d_.nodes[i]);
        }
        return out;
    }

    /// The overrides, in bytewise order of key.
    [[nodiscard]] auto overrides() const noexcept -> std::span<const key_override> { return d_.overrides; }

    /// The description this snapshot was built from, with every parameter and both digests.
    [[nodiscard]] auto describe() const -> snapshot_description {
        snapshot_description d = d_;
        d.fingerprint = fingerprint_;
        d.probe = probe_digest();
        return d;
    }
    /// The description of the next epoch: this one with epoch + 1, parent_epoch = epoch, no
    /// digests and no metadata (after epoch 2^64-1, epoch 0, which a build refuses as an
    /// overflow); for strategy "partitions", the nodes list pending()'s table (the table once the
    /// transition completes). Change its nodes, then build it.
    [[nodiscard]] auto successor() const -> snapshot_description;
    /// successor() with these nodes' weights changed (id, weight); for strategy "partitions" the
    /// table listed is pending()'s claimed again for the new weights (partitions::transitioned:
    /// slots move only to or from the reweighted nodes, as few as the claim rules allow). Throws
    /// as try_successor reports.
    [[nodiscard]] auto successor(std::span<const std::pair<std::string, double>> weights) const
        -> snapshot_description {
        error_info err;
        auto d = try_successor(weights, err);
        if (!d) {
            detail::raise(err);
        }
        return std::move(*d);
    }
    /// Fails on an id that is not a node of the snapshot, or named twice (unknown_id,
    /// duplicate_id), and a weight that is not finite and > 0 (invalid_weight); and as the claim
    /// does (weights summing to 2^48 or more).
    [[nodiscard]] auto try_successor(std::span<const std::pair<std::string, double>> weights, error_info& err) const
        -> std::optional<snapshot_description>;

private:
    snapshot() = default;

    using variant = placement::strategy_variant;

    auto assign(const snapshot_description& d) -> detail::failure;
    auto build_placement(const std::vector<std::uint32_t>& members, std::shared_ptr<const placement>& out,
                         const placement* from = nullptr) const -> detail::failure;
    /// The fingerprint of one placement; `locations` false gives the encoding of fingerprint
    /// contract 1, which left the location block out (doc/contract.md, "Fingerprint").
    auto placement_fingerprint(const placement& p, bool locations = true) const -> digest128;
    static auto combined_fingerprint(const digest128& now, const digest128& after,
                                     std::span<const key_override> overrides,
                                     std::span<const snapshot_node> nodes) -> digest128;
    auto check_overrides() -> detail::failure;

    snapshot_description d_;  // normalized: every parameter; no stated digests
    std::vector<std::uint32_t> id_order_;  // node indices in id order, for find()
    std::shared_ptr<const placement> current_;
    std::shared_ptr<const placement> pending_;
    std::shared_ptr<const detail::override_table> overrides_;  // null: none
    digest128 fingerprint_{};
};

/// Whether `next` may replace `current` in one process: same cluster, a newer epoch (the same
/// epoch with the same fingerprint is the same snapshot again), no tombstone that returns, and no
/// joining or newly listed node that becomes read_only (it holds nothing to serve reads from).
/// Returns stale_epoch, wrong_cluster, split_brain or invalid_state, each naming both values.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto check_successor(const snapshot& current, const snapshot& next) -> error_info;

// The definitions: here in a header-only build; in keyplace::compiled's source where
// KEYPLACE_COMPILED is defined (config.hpp).
#if KEYPLACE_DETAIL_DEFINE

namespace detail {

/// Replica placement of S, type-erased for placement::copies.
template <class S>
auto place_copies(const void* p, std::uint64_t point, std::span<node_index> out) noexcept -> std::size_t {
    return static_cast<const replica_placer<S>*>(p)->place(point, out).placed;
}
/// place_copies for key bytes, for a strategy S that places a key by them.
template <class S>
auto place_key_copies(const void* p, std::span<const std::byte> key, std::span<node_index> out) noexcept
    -> std::size_t {
    return static_cast<const replica_placer<S>*>(p)->place_key(key, out).placed;
}

/// How S's built state enters the fingerprint: what encode_state writes for it.
template <class S>
constexpr auto encoding_of() -> state_encoding {
    if constexpr (is_partition_table<S>) {
        return state_encoding::partition_table;
    } else if constexpr (is_bucket_table<S>) {
        return state_encoding::buckets;
    } else if constexpr (region_strategy<S>) {
        return is_arc_regions<std::remove_cvref_t<decltype(std::declval<const S&>().regions())>>
                   ? state_encoding::arcs
                   : state_encoding::residues;
    } else {
        return state_encoding::members;
    }
}

/// Whether the strategy table's row for a name states what the engine S is: its node order, its
/// derivations, its fingerprint encoding and whether it has a preference order.
template <class S>
constexpr auto row_states(std::string_view name) -> bool {
    const strategy_row* row = find_strategy(name);
    if (row == nullptr || row->encoding != encoding_of<S>() ||
        row->preference_order != ordered_placement_strategy<S> || row->by_key_bytes != needs_key_bytes<S>) {
        return false;
    }
    if constexpr (requires { S::lifecycle_order; }) {
        return row->order == S::lifecycle_order && row->derives == S::lifecycle_derivation;
    } else {
        return true;
    }
}

/// The canonical encoding of a built strategy's state: the ring's points and owners, the
/// table's (or modulus's) owner of every residue, or the node list (doc/contract.md, "Fingerprint").
template <class S>
void encode_state(canonical_hasher& h, const S& s, std::span<const std::uint32_t> rank) {
    h.u8(static_cast<std::uint8_t>(encoding_of<S>()));
    if constexpr (is_partition_table<S>) {
        // Every rank of every partition: the regions carry only the owners.
        h.le32(s.partition_count());
        h.le32(s.replica_count());
        for (std::uint32_t p = 0; p < s.partition_count(); ++p) {
            for (std::uint32_t r = 0; r < s.replica_count(); ++r) {
                h.le32(rank[s.owner(p, r).value]);
            }
        }
    } else if constexpr (is_bucket_table<S>) {
        // The table size, the removed buckets in removal order, then the node of each working
        // bucket in ascending bucket order (the strategy's node order).
        if constexpr (std::is_same_v<S, anchor>) {
            h.le32(s.capacity());
        } else {
            h.le32(s.table_size());
        }
        h.le32(static_cast<std::uint32_t>(s.removed().size()));
        for (const auto b : s.removed()) {
            h.le32(b);
        }
        for (std::size_t i = 0; i < s.size(); ++i) {
            h.le32(rank[i]);
        }
    } else if constexpr (region_strategy<S>) {
        const auto r = s.regions();
        if constexpr (is_arc_regions<std::remove_cvref_t<decltype(r)>>) {
            using P = std::remove_cvref_t<decltype(r.points[0])>;
            h.u8(static_cast<std::uint8_t>(sizeof(P)));
            h.u8(r.rule == lookup_rule::at_or_after ? 0 : 1);
            h.le64(r.points.size());
            for (std::size_t i = 0; i < r.points.size(); ++i) {
                h.le(static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<P>>(r.points[i])), sizeof(P));
                h.le32(rank[r.owners[i].value]);
            }
        } else {
            h.le64(r.modulus);
            for (std::uint64_t x = 0; x < r.modulus; ++x) {
                h.le32(rank[s.pick(x).value]);
            }
        }
    } else {
        h.le32(static_cast<std::uint32_t>(s.size()));
        for (std::size_t i = 0; i < s.size(); ++i) {
            h.le32(rank[i]);
            std::uint64_t bits = 0;
            const double w = s.node(node_index{static_cast<std::uint32_t>(i)}).weight;
            std::memcpy(&bits, &w, sizeof bits);
            h.le64(bits);
        }
    }
}

// The strategy table states each engine (a row that disagrees with its engine does not compile),
// and its defaults are the engines' configuration defaults.
template <class... T>
constexpr auto row_states_all(std::string_view name, bind::types<T...>) -> bool {
    return (row_states<T>(name) && ...);
}
template <class... B>
constexpr auto rows_state_engines(bind::types<B...>) -> bool {
    return (row_states_all(B::name, typename B::built{}) && ...);
}
static_assert(rows_state_engines(bind::snapshot_strategies{}));
// The table's defaults equal the configurations' (their default member initializers: a
// constant expression where the configurations are literal types, which a string or vector member
// makes them only with C++20's constexpr std::string and std::vector, absent from libc++ before 15).
#if !defined(_LIBCPP_VERSION) || _LIBCPP_VERSION >= 15000
static_assert(find_strategy("anchor")->param("capacity")->number_default == anchor_config{}.capacity &&
              find_strategy("anchor")->param("capacity")->max == anchor_max_capacity &&
              find_strategy("anchor")->param("removed")->max == anchor_max_capacity - 1);
static_assert(find_strategy("ring")->param("vnodes")->number_default == ring_config{}.vnodes &&
              find_strategy("ring")->param("vnodes")->max == ring_max_points);
static_assert(find_strategy("maglev")->param("table-size")->number_default == maglev_config{}.table_size &&
              find_strategy("maglev")->param("table-size")->max == maglev_max_table_size);
static_assert(find_strategy("multiprobe")->param("probes")->number_default == multiprobe_config{}.probes &&
              find_strategy("multiprobe")->param("probes")->max == multiprobe_max_probes);
static_assert(find_strategy("mpchash")->params.data() == find_strategy("multiprobe")->params.data());
static_assert(find_strategy("envoy-ring")->param("min-ring-size")->number_default ==
                  compat::envoy_ring_hash_config{}.min_ring_size &&
              find_strategy("envoy-ring")->param("max-ring-size")->number_default ==
                  compat::envoy_ring_hash_config{}.max_ring_size);
static_assert(find_strategy("envoy-maglev")->param("table-size")->number_default ==
              compat::envoy_maglev_config{}.table_size);
static_assert(find_strategy("partitions")->param("partitions")->number_default == partitions_config{}.partitions &&
              find_strategy("partitions")->param("partitions")->max == max_partitions &&
              find_strategy("partitions")->param("replicas")->number_default == partitions_config{}.replicas &&
              find_strategy("partitions")->param("replicas")->max == max_partition_replicas &&
              find_strategy("partitions")->param("contract")->min == min_partitions_contract &&
              find_strategy("partitions")->param("contract")->max == max_partitions_contract &&
              find_strategy("partitions")->param("contract")->number_stated == partitions_config{}.contract);
#endif

/// Each snapshot node's partitions in a table: runs of consecutive partitions at one rank.
inline void write_partition_spans(const partitions& table, const placement& p, std::vector<snapshot_node>& nodes) {
    for (auto& n : nodes) {
        n.partitions.clear();
    }
    for (std::uint32_t r = 0; r < table.replica_count(); ++r) {
        for (std::uint32_t q = 0; q < table.partition_count(); ++q) {
            auto& spans = nodes[p.member(table.owner(q, r))].partitions;
            if (!spans.empty() && spans.back().rank == r && spans.back().last + 1 == q) {
                spans.back().last = q;
            } else {
                spans.push_back({q, q, r});
            }
        }
    }
}

}  // namespace detail

namespace detail {

/// A bucket table as the next epoch's document states it: its removed buckets (and capacity),
/// and its nodes first in bucket order, then the others (tombstones, leavers) as they were.
template <class S>
void write_bucket_state(const S& table, const placement& p, snapshot_description& d) {
    std::vector<std::uint64_t> removed(table.removed().begin(), table.removed().end());
    d.strategy.params["removed"] = std::move(removed);
    if constexpr (std::is_same_v<S, anchor>) {
        d.strategy.params["capacity"] = std::uint64_t{table.capacity()};
    }
    std::vector<snapshot_node> ordered;
    std::vector<bool> placed(d.nodes.size(), false);
    for (std::uint32_t i = 0; i < p.size(); ++i) {
        placed[p.member(node_index{i})] = true;
        ordered.push_back(std::move(d.nodes[p.member(node_index{i})]));
    }
    for (std::size_t i = 0; i < d.nodes.size(); ++i) {
        if (!placed[i]) {
            ordered.push_back(std::move(d.nodes[i]));
        }
    }
    d.nodes = std::move(ordered);
}

}  // namespace detail

KEYPLACE_DETAIL_INLINE auto snapshot::successor() const -> snapshot_description {
    snapshot_description d = d_;
    d.parent_epoch = d_.epoch;
    d.epoch = d_.epoch + 1;
    d.metadata = {};
    if (const auto* table = std::get_if<partitions>(&pending_->strategy())) {
        detail::write_partition_spans(*table, *pending_, d.nodes);
    }
    pending_->visit([&](const auto& s) {
        using S = std::remove_cvref_t<decltype(s)>;
        if constexpr (detail::is_bucket_table<S>) {
            detail::write_bucket_state(s, *pending_, d);
        }
    });
    return d;
}

KEYPLACE_DETAIL_INLINE auto snapshot::try_successor(std::span<const std::pair<std::string, double>> weights, error_info& err) const
    -> std::optional<snapshot_description> {
    snapshot_description d = successor();
    const auto failed = [&](detail::failure f) {
        err = f;
        return std::nullopt;
    };
    for (std::size_t k = 0; k < weights.size(); ++k) {
        const auto& [id, w] = weights[k];
        for (std::size_t e = 0; e < k; ++e) {
            if (weights[e].first == id) {
                return failed(detail::fail(errc::duplicate_id, "node id " + detail::quote(id) + " is named twice"));
            }
        }
        const snapshot_node* n = find(id);
        if (n == nullptr) {
            return failed(detail::fail(errc::unknown_id, "node id " + detail::quote(id) + " is not a node of the snapshot"));
        }
        const std::string& wanted = weights[k].first;  // (clang 14 cannot capture a structured binding)
        auto& mine =
            *std::find_if(d.nodes.begin(), d.nodes.end(), [&](const snapshot_node& x) { return x.id == wanted; });
        mine.weight = w;
        if (auto f = detail::check_node(detail::as_node(mine))) {
            return failed(f);
        }
    }
    if (const auto* table = std::get_if<partitions>(&pending_->strategy())) {
        std::vector<node> members;
        for (std::uint32_t i = 0; i < table->size(); ++i) {
            members.push_back(detail::as_node(d.nodes[pending_->member(node_index{i})]));
        }
        auto next = table->try_transitioned(members, err);
        if (!next) {
            return std::nullopt;
        }
        detail::write_partition_spans(*next, *pending_, d.nodes);
    }
    return d;
}

KEYPLACE_DETAIL_INLINE auto snapshot::build_placement(const std::vector<std::uint32_t>& members,
                                      std::shared_ptr<const placement>& out, const placement* from) const
    -> detail::failure {
    const strategy_row& row = *find_strategy(d_.strategy.name);
    std::vector<node> plain;
    for (const auto m : members) {
        plain.push_back(detail::as_node(d_.nodes[m]));
    }
    // Strategy node i is members[i], except in a bucket table derived from the one now (its nodes
    // are in bucket order): found by id as in the sorted strategies.
    const bool as_given = row.order == node_order::as_given && (from == nullptr || row.encoding != state_encoding::buckets);
    const detail::bind::build_input<variant> in{d_, members, plain, from == nullptr ? nullptr : &from->strategy()};
    std::optional<variant> built;
    detail::failure f;
    // check_strategy found the row, and every row has a binding (snapshot_strategies.hpp).
    if (!detail::bind::build_named(detail::bind::snapshot_strategies{}, row.name, in, built, f)) {
        return detail::fail(fleet_errc::unknown_strategy, "strategy " + detail::quote(row.name) + " has no build")
            .at("strategy.name");
    }
    if (f) {
        return f;
    }
    // Strategy node i -> snapshot node, and each node's rank in id order (the canonical index).
    std::vector<std::uint32_t> map(members.size());
    std::vector<std::uint32_t> by_id(members);  // the members in id order, for the sorted strategies
    if (!as_given) {
        std::sort(by_id.begin(), by_id.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return d_.nodes[a].id < d_.nodes[b].id; });
    }
    std::visit(
        [&](const auto& s) {
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (as_given) {
                    map[i] = members[i];
                } else {
                    const auto& id = s.node(node_index{static_cast<std::uint32_t>(i)}).id;
                    map[i] = *std::lower_bound(by_id.begin(), by_id.end(), id, [&](std::uint32_t m, const std::string& v) {
                        return d_.nodes[m].id < v;
                    });
                }
            }
        },
        *built);
    placement p(std::move(*built), std::move(map));
    p.fingerprint_ = placement_fingerprint(p);

    // Replication.
    const auto& rep = d_.replication;
    p.width_ = rep.count == 0 ? 1 : rep.count;
    detail::failure rf;
    std::visit(
        [&](const auto& s) {
            using S = std::remove_cvref_t<decltype(s)>;
            if constexpr (detail::needs_key_bytes<S>) {
                p.place_key_ = &detail::place_key_copies<S>;
            }
            if constexpr (ordered_placement_strategy<S>) {
                p.ordered_ = true;
                if (rep.count > 0) {
                    replica_policy policy;
                    policy.count = rep.count;
                    policy.spread = rep.spread;
                    policy.on_shortfall = rep.on_shortfall;
                    error_info e;
                    // The placer shares the placement's strategy (an aliasing pointer into it).
                    auto placer = replica_placer<S>::try_build(std::shared_ptr<const S>(p.strategy_, &s), policy, e);
                    if (!placer) {
                        // Its node is one of the strategy's: p maps it to the description's.
                        rf = e.node() ? detail::error_access::renumbered(
                                            std::move(e), p.member(node_index{static_cast<std::uint32_t>(*e.node())}))
                                      : std::move(e).at("replication");
                        return;
                    }
                    p.placer_ = std::make_shared<const replica_placer<S>>(std::move(*placer));
                    p.place_ = &detail::place_copies<S>;
                }
            } else if (rep.count > 1) {
                rf = detail::fail(errc::invalid_argument, "strategy " + detail::quote(d_.strategy.name) +
                                                              " has no preference order: replication " +
                                                              std::to_string(rep.count) + " is not possible")
                         .at("replication");
            }
        },
        *p.strategy_);
    if (rf) {
        return rf;
    }

    // Probe digest: the owner ids of the probe keys, in order.
    detail::canonical_hasher probe;
    for (std::size_t i = 0; i < probe_key_count; ++i) {
        probe.str(d_.nodes[p.strategy_owner(probe_key(i))].id);
    }
    p.probe_ = probe.finish();
    p.overrides_ = overrides_;
    out = std::make_shared<const placement>(std::move(p));
    return {};
}

KEYPLACE_DETAIL_INLINE auto snapshot::placement_fingerprint(const placement& p, bool locations) const -> digest128 {
    const auto& spec = d_.strategy;
    // Each strategy node's rank in id order: its canonical index.
    std::vector<std::uint32_t> by_id(p.members_.size());
    for (std::size_t i = 0; i < by_id.size(); ++i) {
        by_id[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(by_id.begin(), by_id.end(), [&](std::uint32_t a, std::uint32_t b) {
        return d_.nodes[p.members_[a]].id < d_.nodes[p.members_[b]].id;
    });
    std::vector<std::uint32_t> rank(by_id.size());
    for (std::size_t r = 0; r < by_id.size(); ++r) {
        rank[by_id[r]] = static_cast<std::uint32_t>(r);
    }
    // Header, strategy, parameters, replication, node ids in id order, built state.
    detail::canonical_hasher h;
    h.bytes("keyplace.fingerprint/1", 22);
    h.str(spec.name);
    h.le32(spec.contract);
    // Parameters the built state encodes (a bucket table's) are left to it.
    const strategy_row& row = *find_strategy(spec.name);
    const auto stated = [&](const std::string& pname) { return !row.param(pname)->in_state; };
    h.le32(static_cast<std::uint32_t>(
        std::count_if(spec.params.begin(), spec.params.end(), [&](const auto& kv) { return stated(kv.first); })));
    for (const auto& [pname, value] : spec.params) {
        if (!stated(pname)) {
            continue;
        }
        h.str(pname);
        if (std::holds_alternative<std::uint64_t>(value)) {
            h.u8(0);
            h.le64(std::get<std::uint64_t>(value));
        } else if (std::holds_alternative<std::string>(value)) {
            h.u8(1);
            h.str(std::get<std::string>(value));
        } else {
            const auto& items = std::get<std::vector<std::uint64_t>>(value);
            h.u8(2);
            h.le32(static_cast<std::uint32_t>(items.size()));
            for (const auto v : items) {
                h.le64(v);
            }
        }
    }
    h.le32(static_cast<std::uint32_t>(d_.replication.count));
    h.u8(static_cast<std::uint8_t>(d_.replication.spread));
    h.le32(static_cast<std::uint32_t>(by_id.size()));
    for (const auto i : by_id) {
        h.str(d_.nodes[p.members_[i]].id);
    }
    std::visit([&](const auto& s) { detail::encode_state(h, s, rank); }, *p.strategy_);
    // Copies spread over a level go to distinct domains there, so which nodes share a domain
    // decides every copy after the first; the domains' names do not (only the partition of the
    // nodes into domains, labelled by first appearance in rank order). The placer reads a finer
    // level only where the coarser ones have fewer domains among the nodes that hold keys than
    // there are copies (never under shortfall::fail, which refuses such a snapshot).
    if (locations && d_.replication.count > 1 && d_.replication.spread != failure_domain::node) {
        h.u8(5);
        const auto holds = [&](std::uint32_t i) {
            return std::visit(
                [&](const auto& s) {
                    if constexpr (requires { s.holds(node_index{}); }) {
                        return s.holds(node_index{i});
                    } else {
                        return true;
                    }
                },
                *p.strategy_);
        };
        for (auto level = static_cast<int>(d_.replication.spread); level >= static_cast<int>(failure_domain::rack);
             --level) {
            std::map<std::string, std::uint32_t, std::less<>> domains;
            std::map<std::uint32_t, bool> held;
            for (const auto i : by_id) {
                const auto path = detail::domain_path(detail::as_node(d_.nodes[p.members_[i]]),
                                                      static_cast<failure_domain>(level));
                const auto d = domains.emplace(path, static_cast<std::uint32_t>(domains.size())).first->second;
                h.le32(d);
                if (holds(i)) {
                    held[d] = true;
                }
            }
            if (held.size() >= d_.replication.count) {
                break;
            }
        }
    }
    return h.finish();
}

KEYPLACE_DETAIL_INLINE auto snapshot::combined_fingerprint(const digest128& now, const digest128& after,
                                           std::span<const key_override> overrides,
                                           std::span<const snapshot_node> nodes) -> digest128 {
    detail::canonical_hasher h;
    h.bytes("keyplace.snapshot/1", 19);
    h.digest(now);
    h.digest(after);
    if (!overrides.empty()) {  // none: the bytes of a snapshot without overrides, unchanged
        h.le32(static_cast<std::uint32_t>(overrides.size()));
        for (const auto& o : overrides) {
            h.str(o.key);
            h.str(o.node);
        }
    }
    // Read-only nodes place keys as leaving ones do but take no new values: their ids, in bytewise
    // order, after the marker LE32(0xffffffff) (no override count is that large). None: the bytes
    // of a snapshot without read-only nodes, unchanged.
    std::vector<std::string_view> read_only;
    for (const auto& n : nodes) {
        if (n.state == node_state::read_only) {
            read_only.push_back(n.id);
        }
    }
    if (!read_only.empty()) {
        std::sort(read_only.begin(), read_only.end());
        h.le32(0xffffffffU);
        h.le32(static_cast<std::uint32_t>(read_only.size()));
        for (const auto id : read_only) {
            h.str(id);
        }
    }
    return h.finish();
}

/// Sorts the overrides by key and checks them: the count, each key (not empty, not over-long,
/// not twice) and each node (in the snapshot, active).
KEYPLACE_DETAIL_INLINE auto snapshot::check_overrides() -> detail::failure {
    auto& list = d_.overrides;
    if (list.size() > max_overrides) {
        return detail::fail(fleet_errc::invalid_override, std::to_string(list.size()) + " overrides; a snapshot holds at most " +
                                                        std::to_string(max_overrides))
            .at("overrides");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& o = list[i];
        const std::string at = "overrides[" + std::to_string(i) + "]";
        if (o.key.empty()) {
            return detail::fail(fleet_errc::invalid_override, "override of node " + detail::quote(o.node) + ": the key is empty")
                .at(at);
        }
        if (o.key.size() > max_override_key_length) {
            return detail::fail(fleet_errc::invalid_override, "override of key " + detail::quote(o.key) + ": the key is " +
                                                            std::to_string(o.key.size()) + " bytes, above " +
                                                            std::to_string(max_override_key_length))
                .at(at);
        }
        // A document holds the key as a JSON string: one that is not UTF-8 would be written
        // otherwise than it is hashed, and the document would not load as this snapshot.
        if (const auto bad = detail::invalid_utf8_at(o.key)) {
            return detail::fail(fleet_errc::invalid_override, "override of key " + detail::quote(o.key) +
                                                            ": the key is not UTF-8 (byte " + std::to_string(*bad) + ")")
                .at(at);
        }
        if (auto f = check_name(name_kind::node_id, o.node)) {
            return detail::fail(f.code(), "override of key " + detail::quote(o.key) + ": " + f.message()).at(at);
        }
        const snapshot_node* n = find(o.node);
        if (n == nullptr) {
            return detail::fail(errc::unknown_id, "override of key " + detail::quote(o.key) + ": node " +
                                                      detail::quote(o.node) + " is not in the snapshot")
                .at(at);
        }
        if (n->state != node_state::active) {
            return detail::fail(fleet_errc::invalid_state, "override of key " + detail::quote(o.key) + ": node " +
                                                         detail::quote(o.node) + " is " +
                                                         std::string(to_string(n->state)) +
                                                         "; an override names an active node (one that owns keys now "
                                                         "and after the transition)")
                .at(at);
        }
    }
    if (auto f = detail::check_unique_override_keys(list)) {
        return f;
    }
    std::sort(list.begin(), list.end(), [](const key_override& a, const key_override& b) { return a.key < b.key; });
    if (list.empty()) {
        return {};
    }
    // Both placements consult the same table: its nodes are active, so in both.
    auto table = std::make_shared<detail::override_table>();
    for (const auto& o : list) {
        table->keys.push_back(o.key);
        table->nodes.push_back(static_cast<std::uint32_t>(find(o.node) - d_.nodes.data()));
    }
    overrides_ = std::move(table);
    return {};
}

KEYPLACE_DETAIL_INLINE auto snapshot::fingerprint_matches(const digest128& stated) const -> bool {
    if (stated == fingerprint_) {
        return true;
    }
    const digest128 now = placement_fingerprint(*current_, false);
    const digest128 after = pending_ == current_ ? now : placement_fingerprint(*pending_, false);
    return stated == combined_fingerprint(now, after, d_.overrides, d_.nodes);
}

KEYPLACE_DETAIL_INLINE auto snapshot::verify() const -> bool {
    const digest128 now = placement_fingerprint(*current_);
    const digest128 after = pending_ == current_ ? now : placement_fingerprint(*pending_);
    return now == current_->fingerprint() && after == pending_->fingerprint() &&
           combined_fingerprint(now, after, d_.overrides, d_.nodes) == fingerprint_;
}

KEYPLACE_DETAIL_INLINE auto snapshot::assign(const snapshot_description& d) -> detail::failure {
    if (auto f = detail::check_header(d)) {
        return f;
    }
    d_ = d;
    d_.format = std::string(snapshot_format);
    d_.fingerprint.reset();
    d_.probe.reset();
    if (auto f = check_strategy(d_.strategy)) {
        return f;  // where() names the field
    }
    fill_defaults(d_.strategy);
    const strategy_row& row = *find_strategy(d_.strategy.name);
    if (d_.replication.count <= 1) {  // one owner, whatever the spread
        d_.replication = {};
    }
    if (d_.replication.count > max_snapshot_copies) {
        return detail::fail(errc::invalid_replica_count, "replication count " + std::to_string(d_.replication.count) +
                                                             " is above " + std::to_string(max_snapshot_copies))
            .at("replication");
    }
    // Every node on its own, ids unique (whatever the state: a tombstone keeps its id).
    for (std::size_t i = 0; i < d_.nodes.size(); ++i) {
        const auto& n = d_.nodes[i];
        if (auto f = detail::check_id_length(n.id)) {
            return std::move(f).at_node(i, "id");
        }
        if (auto f = detail::check_weight(detail::as_node(n))) {
            return std::move(f).at_node(i, "weight");
        }
        if (auto f = check_name(name_kind::node_id, n.id)) {
            return std::move(f).at_node(i, "id");
        }
        if (auto f = check_location(n.where)) {
            return detail::fail(f.code(), "node " + detail::quote(n.id) + ": " + f.message()).at_node(i, f.where());
        }
        if (!is_node_state(n.state)) {
            return detail::fail(fleet_errc::invalid_state, "node " + detail::quote(n.id) + ": state " +
                                                         std::to_string(static_cast<unsigned>(n.state)) + " is not " +
                                                         std::string(node_state_names))
                .at_node(i, "state");
        }
        if (auto f = check_node_data(row, n, i)) {
            return f;  // where() names the node's field
        }
    }
    if (auto f = detail::check_unique_ids(d_.nodes, id_order_)) {
        return f;
    }
    std::vector<std::uint32_t> now;
    std::vector<std::uint32_t> after;
    for (std::size_t i = 0; i < d_.nodes.size(); ++i) {
        if (owns_now(d_.nodes[i].state)) {
            now.push_back(static_cast<std::uint32_t>(i));
        }
        if (owns_after(d_.nodes[i].state)) {
            after.push_back(static_cast<std::uint32_t>(i));
        }
    }
    if (now.empty() || after.empty()) {
        return detail::fail(fleet_errc::no_owner, std::string("no node owns keys ") +
                                                (now.empty() ? "now (none is active, leaving or read_only)"
                                                             : "after the transition (none is active or joining)"))
            .at("nodes");
    }
    if (auto f = check_overrides()) {
        return f;
    }
    if (auto f = build_placement(now, current_)) {
        return f;
    }
    if (after == now) {
        pending_ = current_;
    } else if (auto f = build_placement(after, pending_, current_.get())) {
        return f;
    }
    fingerprint_ = combined_fingerprint(current_->fingerprint(), pending_->fingerprint(), d_.overrides, d_.nodes);
    if (d.fingerprint && !fingerprint_matches(*d.fingerprint)) {
        return detail::fail(fleet_errc::fingerprint_mismatch, "the document states fingerprint " + d.fingerprint->hex() +
                                                            "; the placement built here has " + fingerprint_.hex() +
                                                            " (keyplace " + std::to_string(version.major) + "." +
                                                            std::to_string(version.minor) + "." +
                                                            std::to_string(version.patch) + ")")
            .at("fingerprint");
    }
    if (d.probe && *d.probe != probe_digest()) {
        return detail::fail(fleet_errc::fingerprint_mismatch, "the document states probe digest " + d.probe->hex() +
                                                            "; the placement built here has " + probe_digest().hex())
            .at("probe");
    }
    return {};
}

KEYPLACE_DETAIL_INLINE auto snapshot::try_build(const snapshot_description& d, error_info& err)
    -> std::optional<snapshot> {
    snapshot s;
    err = s.assign(d);
    if (err) {
        return std::nullopt;
    }
    return s;
}

KEYPLACE_DETAIL_INLINE auto check_successor(const snapshot& current, const snapshot& next) -> error_info {
    if (next.cluster() != current.cluster()) {
        return detail::fail(fleet_errc::wrong_cluster, "snapshot of cluster " + detail::quote(next.cluster()) +
                                                     "; this process serves cluster " +
                                                     detail::quote(current.cluster()));
    }
    if (next.epoch() == current.epoch() && next.fingerprint() != current.fingerprint()) {
        return detail::fail(fleet_errc::split_brain, "split brain: epoch " + std::to_string(next.epoch()) +
                                                   " has fingerprint " + next.fingerprint().hex() +
                                                   " here but " + current.fingerprint().hex() +
                                                   " in the snapshot already published");
    }
    if (next.epoch() < current.epoch()) {
        return detail::fail(fleet_errc::stale_epoch, "epoch " + std::to_string(next.epoch()) +
                                                   " is not newer than the current epoch " +
                                                   std::to_string(current.epoch()));
    }
    for (const auto& n : next.nodes()) {
        const snapshot_node* was = current.find(n.id);
        if (was != nullptr && was->state == node_state::left && n.state != node_state::left) {
            return detail::fail(fleet_errc::invalid_state, "node " + detail::quote(n.id) + " left at epoch " +
                                                         std::to_string(current.epoch()) + " and may not return as " +
                                                         std::string(to_string(n.state)) + "; give it a new id");
        }
        if ((was == nullptr || was->state == node_state::joining) && n.state == node_state::read_only) {
            return detail::fail(fleet_errc::invalid_state, "node " + detail::quote(n.id) +
                                                         (was == nullptr ? " is not listed" : " is joining") +
                                                         " at epoch " + std::to_string(current.epoch()) +
                                                         " and holds nothing to serve reads from: it may not "
                                                         "become read_only");
        }
    }
    return {};
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
