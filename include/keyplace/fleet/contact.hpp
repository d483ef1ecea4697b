// keyplace — which node owns a key. Whom to ask: for a key of a snapshot, an operation and a
// consistency level, which copies to contact and in what order, how many answers make a success,
// and a small tracker that says, answer by answer, whether the request succeeded, failed, or needs
// one more copy contacted. Written from the semantics Grafana dskit documents for its ring
// (max errors, minimize requests, hedging, preferring a zone) and Cassandra's consistency levels.
#ifndef KEYPLACE_FLEET_CONTACT_HPP_INCLUDED
#define KEYPLACE_FLEET_CONTACT_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/failure_domain.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// How many copies' answers make a request succeed (Cassandra's levels). n is the key's copies now
/// (the snapshot's replication), n_z those in zone z; a write during a transition also needs each
/// copy it gains (a pending copy), as Cassandra adds pending replicas to what it blocks for.
enum class consistency : std::uint8_t {
    one,           ///< 1 answer
    quorum,        ///< n / 2 + 1 answers
    all,           ///< n answers
    local_quorum,  ///< n_z / 2 + 1 answers from the caller's zone (a read asks only its copies, a write sends to all)
    each_quorum,   ///< n_z / 2 + 1 answers in every zone that holds a copy now (a zone holding only
                   ///< copies a write gains in a transition needs those)
};

[[nodiscard]] constexpr auto to_string(consistency c) noexcept -> std::string_view {
    switch (c) {
        case consistency::one: return "ONE";
        case consistency::quorum: return "QUORUM";
        case consistency::all: return "ALL";
        case consistency::local_quorum: return "LOCAL_QUORUM";
        case consistency::each_quorum: return "EACH_QUORUM";
    }
    return "?";
}

/// A level by its name, in any case ("quorum", "LOCAL_QUORUM"), or nullopt.
[[nodiscard]] inline auto parse_consistency(std::string_view s) noexcept -> std::optional<consistency> {
    for (const auto c : {consistency::one, consistency::quorum, consistency::all, consistency::local_quorum,
                         consistency::each_quorum}) {
        const auto name = to_string(c);
        bool same = name.size() == s.size();
        for (std::size_t i = 0; same && i < s.size(); ++i) {
            const char ch = s[i] >= 'a' && s[i] <= 'z' ? static_cast<char>(s[i] - 'a' + 'A') : s[i];
            same = ch == name[i];
        }
        if (same) {
            return c;
        }
    }
    return std::nullopt;
}

enum class contact_op : std::uint8_t {
    read,   ///< the copies now, which hold every value written since a transition began
    write,  ///< the write set: the copies now, then the copies the key gains in a transition
};

/// What the caller knows of a node. A node the snapshot lists as read_only is read-only whatever
/// this says, unless it says down.
enum class node_health : std::uint8_t {
    up,
    down,       ///< not contacted; its copy counts as unavailable
    read_only,  ///< answers reads; for a write it takes the invalidation only, which does not count
};

/// One request's planning input.
struct contact_request {
    contact_op op = contact_op::read;
    consistency level = consistency::quorum;
    /// The caller's zone (or region, by `locality`): its copies come first, and LOCAL_QUORUM asks
    /// only them. Empty: no zone is preferred (LOCAL_QUORUM then refused).
    std::string_view zone{};
    /// What a zone is: failure_domain::zone (the default) or region. Others are refused.
    failure_domain locality = failure_domain::zone;
    /// Each node's health, by snapshot node index (nodes() order); empty: every node up.
    std::span<const node_health> health{};
    /// Reads: contact only as many copies as the level needs at first, and one more on each
    /// failure or hedge (dskit's MinimizeRequests); false: every copy at once. Writes always
    /// go to every copy that takes values (the level counts acknowledgements).
    bool minimize = true;
    /// After this long without an outcome the caller calls contact_tracker::hedge() and contacts
    /// the copy it names (0: no hedging). Carried in the plan; the planner keeps no clock.
    std::chrono::nanoseconds hedge{0};
};

/// One copy to contact.
struct contact {
    std::uint32_t node = 0;   ///< index into the snapshot's nodes()
    std::uint16_t group = 0;  ///< index of its zone among the plan's zones (contact_plan::zone_name)
    bool local = false;       ///< in the caller's zone
    bool counts = true;       ///< its answer counts toward the level (false: an invalidation of a read-only copy)
    bool pending = false;     ///< a copy the key gains in the transition, not one it has now
};

/// The most copies a plan lists: a write set during a transition.
inline constexpr std::size_t max_contacts = 2 * max_snapshot_copies;

/// A plan: the copies to contact in order (contacts()), the first wave (the first initial() of
/// them), and how many answers each requirement needs. Fixed size, no allocation.
class contact_plan {
public:
    [[nodiscard]] auto contacts() const noexcept -> std::span<const contact> { return {contacts_.data(), size_}; }
    /// The first wave: contacts()[0, initial()). Those after it are released one at a time.
    [[nodiscard]] auto initial() const noexcept -> std::size_t { return initial_; }
    [[nodiscard]] auto level() const noexcept -> consistency { return level_; }
    [[nodiscard]] auto op() const noexcept -> contact_op { return op_; }
    [[nodiscard]] auto hedge() const noexcept -> std::chrono::nanoseconds { return hedge_; }
    /// Answers needed in all: the sum of every requirement's.
    [[nodiscard]] auto need() const noexcept -> std::size_t {
        std::size_t n = 0;
        for (std::size_t r = 0; r < requirements_; ++r) {
            n += need_[r];
        }
        return n;
    }
    /// Failures the request survives: the counting contacts minus need() (for EACH_QUORUM, per
    /// zone: the least over the zones).
    [[nodiscard]] auto max_failures() const noexcept -> std::size_t {
        std::size_t least = max_contacts;
        for (std::size_t r = 0; r < requirements_; ++r) {
            least = std::min<std::size_t>(least, static_cast<std::size_t>(members_[r] - need_[r]));
        }
        return requirements_ == 0 ? 0 : least;
    }
    /// Zones whose contacts may all fail with the request still able to succeed (dskit's max
    /// unavailable zones, here for one key): among the zones holding contacts that count, the
    /// most whose contacts can be taken away leaving at least need(); 0 for EACH_QUORUM. Copies
    /// already down are not contacts, so their zones are not counted again.
    [[nodiscard]] auto max_unavailable_zones() const noexcept -> std::size_t {
        if (requirements_ != 1 || level_ == consistency::each_quorum) {
            return 0;
        }
        std::array<std::uint16_t, max_contacts> by_zone{};
        std::size_t total = 0;
        for (std::size_t i = 0; i < size_; ++i) {
            if (contacts_[i].counts) {
                ++by_zone[contacts_[i].group];
                ++total;
            }
        }
        std::sort(by_zone.begin(), by_zone.begin() + static_cast<std::ptrdiff_t>(zones_));
        std::size_t lost = 0;
        for (std::size_t g = 0; g < zones_ && total - by_zone[g] >= need_[0]; ++g) {
            total -= by_zone[g];
            lost += by_zone[g] != 0 ? 1U : 0U;
        }
        return lost;
    }
    /// The zones of the contacts, by group index.
    [[nodiscard]] auto zones() const noexcept -> std::size_t { return zones_; }
    [[nodiscard]] auto zone_name(std::size_t group) const noexcept -> std::string_view { return zone_names_[group]; }
    /// Contacts of the first wave outside the caller's zone (all of them when no zone is given).
    [[nodiscard]] auto cross_zone_initial() const noexcept -> std::size_t {
        std::size_t n = 0;
        for (std::size_t i = 0; i < initial_; ++i) {
            n += contacts_[i].local ? 0U : 1U;
        }
        return n;
    }

private:
    friend class contact_planner;
    friend class contact_tracker;
    // What a refused plan holds: no contact and an answer it can never have, so that a tracker
    // built on it by mistake reports failed, never succeeded.
    void refuse() noexcept {
        size_ = 0;
        initial_ = 0;
        zones_ = 0;
        requirements_ = 1;
        need_[0] = 1;
        members_[0] = 0;
    }
    // Which requirement a contact's answer counts for, or none.
    [[nodiscard]] auto requirement_of(const contact& c) const noexcept -> std::size_t {
        if (!c.counts) {
            return none;
        }
        return level_ == consistency::each_quorum ? c.group : 0;
    }
    static constexpr std::size_t none = max_contacts;

    std::array<contact, max_contacts> contacts_;
    std::array<std::string_view, max_contacts> zone_names_;
    std::array<std::uint16_t, max_contacts> need_{};     // by requirement
    std::array<std::uint16_t, max_contacts> members_{};  // counting contacts by requirement
    std::size_t size_ = 0;
    std::size_t initial_ = 0;
    std::size_t zones_ = 0;
    std::size_t requirements_ = 0;
    consistency level_ = consistency::quorum;
    contact_op op_ = contact_op::read;
    std::chrono::nanoseconds hedge_{0};
};

/// Plans contacts for the keys of one snapshot. Built once per snapshot (it keeps the snapshot's
/// zones, sorted, to check a caller's zone without scanning the nodes); plan() allocates nothing
/// and is safe from many threads at once.
class contact_planner {
public:
    /// The planner of `s`, which must outlive it.
    explicit contact_planner(const snapshot& s) : s_(&s) {
        for (const auto& n : s.nodes()) {
            zones_.push_back(n.where.zone);
            regions_.push_back(n.where.region);
        }
        for (auto* v : {&zones_, &regions_}) {
            std::sort(v->begin(), v->end());
            v->erase(std::unique(v->begin(), v->end()), v->end());
        }
    }

    [[nodiscard]] auto snapshot_of() const noexcept -> const snapshot& { return *s_; }

    /// Plans a request for `key`. Errors (nothing written to `out` that the caller may use):
    /// invalid_argument for a health list whose size is not the node count or a locality other
    /// than zone or region; unknown_domain for a caller's zone no node is in; invalid_argument for
    /// LOCAL_QUORUM without a zone; replica_shortfall when fewer copies can answer than the level
    /// needs (LOCAL_QUORUM: none in the caller's zone), naming the level, the counts and the
    /// copies that cannot answer. Each message names the key (quoted, cut at 64 bytes). A refused
    /// plan holds no contact, and a tracker on it reports failed.
    auto try_plan(std::string_view key, const contact_request& r, contact_plan& out, error_info& err) const -> bool {
        if (plan_into(key, r, out, err)) {
            return true;
        }
        out.refuse();
        return false;
    }
    /// try_plan, reporting through detail::raise.
    [[nodiscard]] auto plan(std::string_view key, const contact_request& r) const -> contact_plan {
        contact_plan p;
        error_info err;
        if (!try_plan(key, r, p, err)) {
            detail::raise(err);
        }
        return p;
    }

private:
    auto plan_into(std::string_view key, const contact_request& r, contact_plan& out, error_info& err) const -> bool {
        const snapshot& s = *s_;
        const auto nodes = s.nodes();
        if (!r.health.empty() && r.health.size() != nodes.size()) {
            err = detail::fail(errc::invalid_argument, "contact plan: health for " + std::to_string(r.health.size()) +
                                                           " nodes, the snapshot lists " + std::to_string(nodes.size()));
            return false;
        }
        if (r.locality != failure_domain::zone && r.locality != failure_domain::region) {
            err = detail::fail(errc::invalid_argument, "contact plan: locality " + std::string(to_string(r.locality)) +
                                                           " is not zone or region");
            return false;
        }
        const bool by_region = r.locality == failure_domain::region;
        if (r.zone.empty() && r.level == consistency::local_quorum) {
            err = detail::fail(errc::invalid_argument, "contact plan: LOCAL_QUORUM needs the caller's zone");
            return false;
        }
        // The copies: now, then (a write in a transition) those gained.
        std::array<std::uint32_t, max_contacts> copies;
        const std::size_t now = s.current().copies_of(key, std::span<std::uint32_t>(copies.data(), s.current().width()));
        const std::size_t all = r.op == contact_op::write ? s.write_set(key, copies) : now;
        const auto zone_of = [&](std::uint32_t i) -> std::string_view {
            return by_region ? std::string_view(nodes[i].where.region) : std::string_view(nodes[i].where.zone);
        };
        // Group by zone and count what the level asks over the copies now (and gained, writes).
        out.size_ = 0;
        out.zones_ = 0;
        out.level_ = r.level;
        out.op_ = r.op;
        out.hedge_ = r.hedge;
        std::array<std::uint16_t, max_contacts> group;   // by copy position
        std::array<std::uint16_t, max_contacts> base;    // copies now, by zone (set as each is found)
        std::array<std::uint16_t, max_contacts> gained;  // copies gained, by zone
        std::size_t base_local = 0;
        std::size_t gained_local = 0;
        // The caller's zone's group, once a copy is found in it (no zone string is compared twice).
        std::size_t local_group = contact_plan::none;
        for (std::size_t k = 0; k < all; ++k) {
            const std::string_view z = zone_of(copies[k]);
            std::size_t g = 0;
            while (g < out.zones_ && out.zone_names_[g] != z) {
                ++g;
            }
            if (g == out.zones_) {
                out.zone_names_[g] = z;
                base[g] = gained[g] = 0;
                ++out.zones_;
                if (!r.zone.empty() && z == r.zone) {
                    local_group = g;
                }
            }
            group[k] = static_cast<std::uint16_t>(g);
            const bool local = g == local_group;
            if (k < now) {
                ++base[g];
                base_local += local ? 1U : 0U;
            } else {
                ++gained[g];
                gained_local += local ? 1U : 0U;
            }
        }
        // A caller's zone that holds no copy of the key must still be a zone of the snapshot.
        if (!r.zone.empty() && local_group == contact_plan::none) {
            const auto& known = by_region ? regions_ : zones_;
            if (!std::binary_search(known.begin(), known.end(), r.zone)) {
                err = detail::fail(errc::unknown_domain, "contact plan: no node is in " +
                                                             std::string(by_region ? "region " : "zone ") +
                                                             detail::quote(r.zone));
                return false;
            }
        }
        // Who can answer: a read from up and read-only copies; a write from up copies that take
        // values (a read-only one is sent the invalidation, which does not count).
        const auto state_of = [&](std::uint32_t i) {
            const node_health h = r.health.empty() ? node_health::up : r.health[i];
            if (h == node_health::down) {
                return node_health::down;
            }
            return h == node_health::read_only || !takes_values(nodes[i].state) ? node_health::read_only : node_health::up;
        };
        // Requirements.
        const auto quorum = [](std::size_t n) { return n / 2 + 1; };
        const std::size_t n_now = now;
        const std::size_t n_gained = all - now;
        std::size_t requirements = 1;
        switch (r.level) {
            case consistency::one: out.need_[0] = static_cast<std::uint16_t>(1 + n_gained); break;
            case consistency::quorum: out.need_[0] = static_cast<std::uint16_t>(quorum(n_now) + n_gained); break;
            case consistency::all: out.need_[0] = static_cast<std::uint16_t>(n_now + n_gained); break;
            case consistency::local_quorum:
                out.need_[0] = static_cast<std::uint16_t>(base_local == 0 ? 0 : quorum(base_local) + gained_local);
                break;
            case consistency::each_quorum:
                requirements = out.zones_;
                for (std::size_t g = 0; g < out.zones_; ++g) {
                    out.need_[g] = static_cast<std::uint16_t>(base[g] == 0 ? gained[g] : quorum(base[g]) + gained[g]);
                }
                break;
        }
        out.requirements_ = requirements;
        // The contacts in preference order: local copies first, then the placement's order.
        // Copies that cannot answer are left out; a LOCAL_QUORUM read asks only local copies, and
        // a LOCAL_QUORUM write counts only their acknowledgements. With minimizing (reads), each
        // requirement's first `need` contacts form the first wave, at the front (invalidations
        // with them); the others follow in order.
        const bool writing = r.op == contact_op::write;
        const bool minimizing = r.minimize && !writing;
        for (std::size_t q = 0; q < requirements; ++q) {
            out.members_[q] = 0;
        }
        std::array<std::uint16_t, max_contacts> later;  // copy positions k after the first wave
        std::size_t n_later = 0;
        // Writes the contact of copy k into `to` field by field (no temporary to copy).
        const auto make = [&](contact& to, std::size_t k, bool local, node_health h) {
            to.node = copies[k];
            to.group = group[k];
            to.local = local;
            to.counts = (!writing || h == node_health::up) && (r.level != consistency::local_quorum || local);
            to.pending = k >= now;
        };
        for (int pass = 0; pass < 2; ++pass) {
            for (std::size_t k = 0; k < all; ++k) {
                const bool local = group[k] == local_group;
                if (local != (pass == 0)) {
                    continue;
                }
                const node_health h = state_of(copies[k]);
                if (h == node_health::down || (!writing && r.level == consistency::local_quorum && !local)) {
                    continue;
                }
                contact& c = out.contacts_[out.size_];
                make(c, k, local, h);
                const auto q = out.requirement_of(c);
                if (q != contact_plan::none) {
                    ++out.members_[q];
                }
                if (!minimizing || q == contact_plan::none || out.members_[q] <= out.need_[q]) {
                    ++out.size_;
                } else {
                    later[n_later++] = static_cast<std::uint16_t>(k);
                }
            }
        }
        out.initial_ = out.size_;
        for (std::size_t j = 0; j < n_later; ++j) {
            const std::size_t k = later[j];
            make(out.contacts_[out.size_++], k, group[k] == local_group, state_of(copies[k]));
        }
        for (std::size_t q = 0; q < requirements; ++q) {
            if (out.members_[q] < out.need_[q] || (r.level == consistency::local_quorum && base_local == 0)) {
                err = shortfall(key, r, out, q, copies, all, zone_of, state_of);
                return false;
            }
        }
        return true;
    }

    template <class ZoneOf, class StateOf>
    auto shortfall(std::string_view key, const contact_request& r, const contact_plan& p, std::size_t q,
                          const std::array<std::uint32_t, max_contacts>& copies, std::size_t all, ZoneOf zone_of,
                          StateOf state_of) const -> error_info;

    const snapshot* s_;
    std::vector<std::string> zones_;
    std::vector<std::string> regions_;
};

template <class ZoneOf, class StateOf>
auto contact_planner::shortfall(std::string_view key, const contact_request& r, const contact_plan& p, std::size_t q,
                                const std::array<std::uint32_t, max_contacts>& copies, std::size_t all, ZoneOf zone_of,
                                StateOf state_of) const -> error_info {
    const auto nodes = s_->nodes();
    std::string what = std::string(to_string(r.level)) + (r.op == contact_op::write ? " write" : " read") + " of " +
                       detail::quote(key);
    if (r.level == consistency::local_quorum && p.need_[0] == 0) {
        return detail::fail(errc::replica_shortfall, "contact plan: " + what + " has no copy in zone " +
                                                         detail::quote(r.zone) + " to ask");
    }
    std::string out;
    for (std::size_t k = 0; k < all; ++k) {
        const auto h = state_of(copies[k]);
        const bool in = r.level != consistency::each_quorum || zone_of(copies[k]) == p.zone_names_[q];
        const bool local_only = r.level == consistency::local_quorum;
        if (!in || (local_only && zone_of(copies[k]) != r.zone)) {
            continue;
        }
        if (h == node_health::down || (r.op == contact_op::write && h == node_health::read_only)) {
            out += (out.empty() ? "" : ", ") + detail::quote(nodes[copies[k]].id) +
                   (h == node_health::down ? " down" : " read-only");
        }
    }
    const std::string where =
        r.level == consistency::each_quorum ? " in zone " + detail::quote(p.zone_names_[q])
        : r.level == consistency::local_quorum ? " in zone " + detail::quote(r.zone)
                                               : std::string();
    return detail::fail(errc::replica_shortfall, "contact plan: " + what + " needs " + std::to_string(p.need_[q]) +
                                                     " answers" + where + ", " + std::to_string(p.members_[q]) +
                                                     " copies can give one (" + out + ")");
}

/// Where a request stands.
enum class contact_state : std::uint8_t { running, succeeded, failed };

/// Follows one request through its plan: start() the first wave, then report each answer; each
/// call returns the contacts to start now (at most one), and state() says when the request has
/// succeeded (every requirement met: the caller may cancel what is outstanding) or failed (one can
/// no longer be met). Answers for a contact not started, or answered already, are ignored. No
/// allocation; not synchronized (one request, one thread, or a lock).
class contact_tracker {
public:
    explicit contact_tracker(const contact_plan& p) noexcept : p_(&p) {
        for (std::size_t q = 0; q < p.requirements_; ++q) {
            ok_[q] = 0;
            lost_[q] = 0;
        }
        for (std::size_t i = 0; i < p.size_; ++i) {
            status_[i] = unstarted;
        }
        update();
    }
    /// The first wave. Call once, first.
    auto start() noexcept -> std::span<const contact> {
        for (std::size_t i = 0; i < p_->initial_; ++i) {
            status_[i] = in_flight;
        }
        started_ = p_->initial_;
        return p_->contacts().first(p_->initial_);
    }
    /// contacts()[i] answered.
    auto succeeded(std::size_t i) noexcept -> std::span<const contact> { return answer(i, true); }
    /// contacts()[i] failed (an error, a timeout the caller decided on).
    auto failed(std::size_t i) noexcept -> std::span<const contact> { return answer(i, false); }
    /// The hedging delay passed: the next contact a requirement still short of answers can use.
    auto hedge() noexcept -> std::span<const contact> {
        if (state_ != contact_state::running) {
            return {};
        }
        for (std::size_t i = 0; i < p_->size_; ++i) {
            const auto q = p_->requirement_of(p_->contacts_[i]);
            if (status_[i] == unstarted && q != contact_plan::none && ok_[q] < p_->need_[q]) {
                return release(i);
            }
        }
        return {};
    }
    [[nodiscard]] auto state() const noexcept -> contact_state { return state_; }
    /// Contacts started so far (the first wave and each one released).
    [[nodiscard]] auto started() const noexcept -> std::size_t { return started_; }
    /// Whether contacts()[i] has been started.
    [[nodiscard]] auto is_started(std::size_t i) const noexcept -> bool { return i < p_->size_ && status_[i] != unstarted; }

private:
    enum : std::uint8_t { unstarted, in_flight, answered };

    auto release(std::size_t i) noexcept -> std::span<const contact> {
        status_[i] = in_flight;
        ++started_;
        return p_->contacts().subspan(i, 1);
    }
    auto answer(std::size_t i, bool ok) noexcept -> std::span<const contact> {
        if (i >= p_->size_ || status_[i] != in_flight) {
            return {};
        }
        status_[i] = answered;
        const auto q = p_->requirement_of(p_->contacts_[i]);
        if (q == contact_plan::none) {
            return {};
        }
        (ok ? ok_ : lost_)[q] += 1;
        const auto before = state_;
        update();
        if (ok || before != contact_state::running || state_ != contact_state::running) {
            return {};
        }
        // A failure releases the next unstarted contact of its requirement, if any.
        for (std::size_t j = 0; j < p_->size_; ++j) {
            if (status_[j] == unstarted && p_->requirement_of(p_->contacts_[j]) == q) {
                return release(j);
            }
        }
        return {};
    }
    void update() noexcept {
        bool all_met = true;
        for (std::size_t q = 0; q < p_->requirements_; ++q) {
            if (p_->members_[q] - lost_[q] < p_->need_[q]) {
                state_ = contact_state::failed;
                return;
            }
            all_met = all_met && ok_[q] >= p_->need_[q];
        }
        state_ = all_met ? contact_state::succeeded : contact_state::running;
    }

    const contact_plan* p_;
    std::array<std::uint8_t, max_contacts> status_;
    std::array<std::uint16_t, max_contacts> ok_;
    std::array<std::uint16_t, max_contacts> lost_;
    std::size_t started_ = 0;
    contact_state state_ = contact_state::running;
};

KEYPLACE_NAMESPACE_END

#endif
