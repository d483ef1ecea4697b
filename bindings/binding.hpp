// keyplace — which node owns a key. What the Python and WebAssembly modules expose, written once:
// a snapshot loaded from its document, its lookups (one key, a batch, a point), its reports as
// JSON text (ownership, movement, the transfer plan) and the strategy table. Each runtime wraps
// these functions in its own types and nothing more, so the three runtimes cannot place a key
// differently: they run this code. Reports are JSON text because both runtimes read JSON natively.
#ifndef KEYPLACE_BINDINGS_BINDING_HPP_INCLUDED
#define KEYPLACE_BINDINGS_BINDING_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/strategy_table.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace::binding {

/// A refusal, as the runtimes raise it: the code's number and its category's text ("table size
/// not prime"), the message naming the offending value, and the field it was found at.
struct failure : std::runtime_error {
    failure(const error_info& e)  // NOLINT: converting is the point
        : std::runtime_error(e.message()), code(static_cast<int>(e.code())), reason(e.error_code().message()),
          where(e.where()) {}
    int code;
    std::string reason;
    std::string where;
};

/// Points and indices as the runtimes hand them over.
using index_list = std::vector<std::uint32_t>;

class snapshot_ref {
public:
    /// A snapshot from its document (JSON text); a stated fingerprint must match.
    [[nodiscard]] static auto load(std::string_view document) -> snapshot_ref {
        error_info err;
        auto s = try_load_snapshot_json(document, err);
        if (!s) {
            throw failure(err);
        }
        snapshot_ref r;
        r.s_ = std::make_shared<const snapshot>(std::move(*s));
        return r;
    }

    [[nodiscard]] auto get() const noexcept -> const snapshot& { return *s_; }
    /// The canonical document: every parameter, both digests.
    [[nodiscard]] auto document() const -> std::string { return write_snapshot_json(*s_); }
    [[nodiscard]] auto fingerprint() const -> std::string { return s_->fingerprint().hex(); }
    [[nodiscard]] auto probe() const -> std::string { return s_->probe_digest().hex(); }
    [[nodiscard]] auto node_count() const noexcept -> std::size_t { return s_->nodes().size(); }
    [[nodiscard]] auto node_id(std::size_t i) const -> const std::string& { return s_->nodes()[i].id; }
    [[nodiscard]] auto in_transition() const noexcept -> bool { return s_->in_transition(); }
    [[nodiscard]] auto by_key_bytes() const noexcept -> bool { return s_->current().by_key_bytes(); }

    /// The owner now (overrides first), as an index into the document's nodes.
    [[nodiscard]] auto owner_index(std::string_view key) const noexcept -> std::uint32_t {
        return s_->current().owner(key);
    }
    [[nodiscard]] auto owner(std::string_view key) const -> const std::string& { return node_id(owner_index(key)); }
    /// The key's copies now, owner first (the replication count, or the owner alone).
    [[nodiscard]] auto copies(std::string_view key) const -> std::vector<std::string> {
        std::array<std::uint32_t, max_snapshot_copies> idx{};
        const auto& p = s_->current();
        return ids(idx.data(), p.copies_of(key, std::span<std::uint32_t>(idx.data(), p.width())));
    }
    /// Every node a write must reach while a transition is open (snapshot::write_set).
    [[nodiscard]] auto write_set(std::string_view key) const -> std::vector<std::string> {
        std::array<std::uint32_t, 2 * max_snapshot_copies> idx{};
        return ids(idx.data(), s_->write_set(key, idx));
    }
    /// The key's 64-bit point under the current strategy's key hash.
    [[nodiscard]] auto point_of(std::string_view key) const noexcept -> std::uint64_t {
        return s_->current().point_of(key);
    }
    /// Refuses point lookups where the strategy places a key by its bytes (go-mpchash hashes
    /// them twice): its pick(point) follows another rule, so a point's owner is no key's.
    void check_points() const {
        if (by_key_bytes()) {
            throw failure(error_info(errc::invalid_argument,
                                     "strategy " + detail::quote(s_->strategy().name) +
                                         " places a key by its bytes, not by one point: look up keys, not points"));
        }
    }
    /// The owner of a point (overrides do not apply to points).
    [[nodiscard]] auto owner_index_at(std::uint64_t point) const noexcept -> std::uint32_t {
        const auto& p = s_->current();
        return p.member(p.pick(point));
    }
    [[nodiscard]] auto owner_at(std::uint64_t point) const -> const std::string& {
        check_points();
        return node_id(owner_index_at(point));
    }
    [[nodiscard]] auto copies_at(std::uint64_t point) const -> std::vector<std::string> {
        check_points();
        std::array<std::uint32_t, max_snapshot_copies> idx{};
        const auto& p = s_->current();
        return ids(idx.data(), p.copies(point, std::span<std::uint32_t>(idx.data(), p.width())));
    }
    /// The first n distinct nodes of the key's preference order under the current strategy
    /// (locate_n), overrides aside: at most the nodes that hold keys. A strategy without a
    /// preference order (jump, modulo, the bucket tables, Redis) has only its owner.
    [[nodiscard]] auto locate_n(std::string_view key, std::size_t n) const -> std::vector<std::string> {
        const auto& p = s_->current();
        std::vector<node_index> got(n);
        std::size_t k = 0;
        bool ordered = true;
        p.visit([&](const auto& x) {
            if constexpr (ordered_placement_strategy<std::remove_cvref_t<decltype(x)>>) {
                k = keyplace::locate_n(x, key, std::span<node_index>(got));
            } else {
                ordered = false;
            }
        });
        if (!ordered) {
            if (n > 1) {
                throw failure(error_info(errc::invalid_argument,
                                         "strategy " + detail::quote(s_->strategy().name) +
                                             " has no preference order: locate_n takes at most 1 node, not " +
                                             std::to_string(n)));
            }
            got.assign(n, p.pick_key(key));
            k = n;
        }
        std::vector<std::string> out;
        for (std::size_t i = 0; i < k; ++i) {
            out.push_back(node_id(p.member(got[i])));
        }
        return out;
    }
    /// Each key's owner index; keys and out have one length. Touches no runtime object, so a
    /// runtime may call it without its interpreter lock.
    void owners_of(std::span<const std::string_view> keys, std::span<std::uint32_t> out) const noexcept {
        const auto& p = s_->current();
        for (std::size_t i = 0; i < keys.size(); ++i) {
            out[i] = p.owner(keys[i]);
        }
    }
    /// The owners at out.size() evenly spaced points of the strategy's key hash space, or,
    /// where the strategy places a key by its bytes, of the sample keys "keyplace.sample.<i>":
    /// what a picture of the hash space draws. The space is the one its regions describe: a
    /// table's or modulus's residues (i * M / n; Redis: its 16,384 slots), a ring's points of
    /// their width (i * 2^32 / n for the 32-bit ketama continuums), else 64-bit points.
    void owners_across(std::span<std::uint32_t> out) const {
        const auto& p = s_->current();
        const auto [modulus, bits] = picture_space();
        const std::uint64_t n = out.size();
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (p.by_key_bytes()) {
                out[i] = p.owner(sample_key(i));
                continue;
            }
            // i * space / n, with space = modulus, 2^bits, or 2^64 (as a 128-bit numerator).
            const std::uint64_t point =
                modulus != 0 ? detail::div_floor(detail::mul_wide(std::uint64_t{i}, modulus), n)
                : bits < 64  ? detail::div_floor(detail::u128{0, std::uint64_t{i} << bits}, n)
                             : detail::div_floor(detail::u128{std::uint64_t{i}, 0}, n);
            out[i] = owner_index_at(point);
        }
    }
    /// Where a key falls in owners_across's picture, as a fraction of it in [0, 1); -1 where the
    /// strategy places a key by its bytes (the picture is of sample keys, in no point order).
    [[nodiscard]] auto position_of(std::string_view key) const noexcept -> double {
        if (by_key_bytes()) {
            return -1;
        }
        const auto [modulus, bits] = picture_space();
        const std::uint64_t point = point_of(key);
        return modulus != 0 ? static_cast<double>(point % modulus) / static_cast<double>(modulus)
                            : static_cast<double>(point) / (bits < 64 ? static_cast<double>(std::uint64_t{1} << bits)
                                                                      : 18446744073709551616.0);
    }

    /// The current placement's members' shares: {"method", "error_bound", "nodes":[{"id",
    /// "weight", "share"}]} in the placement's order.
    [[nodiscard]] auto ownership_json() const -> std::string {
        const auto& p = s_->current();
        ownership_report owned;
        p.visit([&](const auto& x) { owned = ownership(x); });
        detail::json_writer w;
        w.begin_object().member("method", method_name(owned.method)).member("error_bound", owned.error_bound);
        w.key("nodes").begin_array();
        for (std::uint32_t i = 0; i < p.size(); ++i) {
            const auto& n = s_->nodes()[p.member(node_index{i})];
            w.begin_object().member("id", n.id).member("weight", n.weight).member("share", owned.share[i]).end_object();
        }
        return std::move(w.end_array().end_object()).str();
    }

    /// How the copies spread load on failure: the distinct copy sets and the node pairs sharing
    /// one, over the 2^17 sample points (or sample keys where keys are placed by their bytes):
    /// {"copysets", "pairs", "pair_fraction", "exact": false, "regions"}.
    [[nodiscard]] auto coownership_json() const -> std::string {
        const auto& p = s_->current();
        std::set<std::vector<std::uint32_t>> sets;
        std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
        std::array<std::uint32_t, max_snapshot_copies> idx{};
        const std::span<std::uint32_t> out(idx.data(), p.width());
        const auto points = analysis_sample();
        for (std::size_t i = 0; i < points.size(); ++i) {
            const std::size_t n = p.by_key_bytes() ? p.strategy_copies(sample_key(i), out) : p.copies(points[i], out);
            std::vector<std::uint32_t> set(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n));
            std::sort(set.begin(), set.end());
            for (std::size_t a = 0; a < n; ++a) {
                for (std::size_t b = a + 1; b < n; ++b) {
                    pairs.emplace(set[a], set[b]);
                }
            }
            sets.insert(std::move(set));
        }
        const double m = static_cast<double>(p.size());
        detail::json_writer w;
        w.begin_object()
            .member("copysets", sets.size())
            .member("pairs", pairs.size())
            .member("pair_fraction", m < 2 ? 0.0 : static_cast<double>(pairs.size()) / (m * (m - 1) / 2))
            .member("exact", false)
            .member("regions", points.size());
        return std::move(w.end_object()).str();
    }

    /// The space owners_across draws: {modulus, 64} for a table's or modulus's residues, {0, bits}
    /// for points of that width (64 but for the 32-bit ketama continuums).
    [[nodiscard]] auto picture_space() const noexcept -> std::pair<std::uint64_t, unsigned> {
        std::uint64_t modulus = 0;
        unsigned bits = 64;
        s_->current().visit([&](const auto& x) {
            if constexpr (region_strategy<std::remove_cvref_t<decltype(x)>>) {
                const auto r = x.regions();
                if constexpr (std::is_same_v<std::remove_cvref_t<decltype(r)>, residue_regions>) {
                    modulus = r.modulus;
                } else {
                    bits = static_cast<unsigned>(8 * sizeof(typename decltype(r.points)::value_type));
                }
            }
        });
        return {modulus, bits};
    }

private:
    static auto method_name(share_method m) -> std::string_view {
        switch (m) {
            case share_method::exact: return "exact";
            case share_method::expected: return "expected";
            case share_method::sampled: return "sampled";
        }
        return "?";
    }
    auto ids(const std::uint32_t* idx, std::size_t n) const -> std::vector<std::string> {
        std::vector<std::string> out;
        out.reserve(n);
        for (std::size_t k = 0; k < n; ++k) {
            out.push_back(node_id(idx[k]));
        }
        return out;
    }
    std::shared_ptr<const snapshot> s_;
};

/// Movement between two snapshots' current placements, by node id (what keyplace-cli snapshot
/// diff reports): {"moved", "minimum", "fair_minimum", "violations", "exact", "keys", "flows"}.
[[nodiscard]] inline auto movement_json(const snapshot_ref& before, const snapshot_ref& after) -> std::string {
    const auto m = detail::snapshot_movement(before.get(), after.get());
    detail::json_writer w;
    w.begin_object()
        .member("moved", m.moved)
        .member("minimum", m.minimum)
        .member("fair_minimum", m.fair_minimum)
        .member("violations", m.violations)
        .member("exact", m.exact)
        .member("keys", m.keys);
    w.key("flows").begin_array();
    for (const auto& f : m.flows) {
        w.begin_object().member("id", f.id).member("inflow", f.inflow).member("outflow", f.outflow).end_object();
    }
    return std::move(w.end_array().end_object()).str();
}

/// The transfer plan from before to after, as keyplace-cli plan --json prints it.
[[nodiscard]] inline auto plan_json(const snapshot_ref& before, const snapshot_ref& after) -> std::string {
    return plan_transfer(before.get(), after.get()).to_json();
}

/// The strategy table, one object a row: what a runtime offers is what a snapshot can hold.
[[nodiscard]] inline auto strategies_json() -> std::string {
    static constexpr std::string_view kinds[] = {"number", "name", "numbers"};
    detail::json_writer w;
    w.begin_array();
    for (const auto& row : strategy_table) {
        w.begin_object()
            .member("name", row.name)
            .member("summary", row.summary)
            .member("perNode", to_string(row.per_node))
            .member("preferenceOrder", row.preference_order)
            .member("minimalChange", row.minimal_change)
            .member("byKeyBytes", row.by_key_bytes)
            .member("wholeWeights", row.whole_weights)
            .member("nodeOrder", row.order == node_order::as_given ? "as_given" : "by_id");
        w.key("params").begin_array();
        for (const auto& p : row.params) {
            w.begin_object().member("name", p.name).member("kind", kinds[static_cast<std::size_t>(p.kind)]);
            switch (p.kind) {
                case param_kind::number: w.member("default", p.number_default); break;
                case param_kind::name: w.member("default", p.name_default); break;
                case param_kind::numbers: w.key("default").begin_array().end_array(); break;
            }
            w.member("min", p.min).member("max", p.max).key("names").array(p.names).member("meaning", p.meaning);
            w.member("fromCopies", p.from_copies).end_object();
        }
        w.end_array().end_object();
    }
    return std::move(w.end_array()).str();
}

[[nodiscard]] inline auto version() -> std::string {
    return std::to_string(KEYPLACE_VERSION_MAJOR) + "." + std::to_string(KEYPLACE_VERSION_MINOR) + "." +
           std::to_string(KEYPLACE_VERSION_PATCH);
}

}  // namespace keyplace::binding

#endif
