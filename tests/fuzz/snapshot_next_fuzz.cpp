// Fuzz target: deriving the next epoch of a snapshot (snapshot::successor, try_successor,
// check_successor: what `keyplace-cli snapshot next` does, as a library call).
//
// Input: a snapshot document up to the first NUL; then edits, each one byte of kind and its
// operands: a weight change (node, weight), a node added (its id's bytes, as joining), a state
// change (node, state), a node dropped from the list, an override (key, node).
// Invariants (doc/snapshots.md, "Snapshots"):
//  - try_successor never throws; a refusal names the value (bounded, no control byte); with no
//    weight changes it refuses nothing, and what it gives builds (but after epoch 2^64-1) once a
//    partition table's transition is completed (joiners active, leavers left);
//  - the successor has epoch + 1, parent_epoch = epoch, the same cluster and strategy, no
//    digests and no metadata;
//  - a successor that builds verifies, and its document loads again with the same fingerprint
//    and probe digest (the fingerprint is stable on reload);
//  - check_successor accepts the built successor exactly when no node left in the snapshot comes
//    back in another state (a tombstone is never revived), and refuses going back to the earlier
//    snapshot.
// Documents whose build would be large (snapshot_bounds.hpp) are not built.
#include "fuzz_support.hpp"
#include "snapshot_bounds.hpp"
#include "snapshot_reload.hpp"

#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using keyplace_fuzz::input;

/// The weights an edit may give: the usual ones and the edges try_successor must refuse.
auto weight_of(std::uint8_t b) -> double {
    constexpr double weights[] = {1.0, 2.0, 0.5, 3.0, 0.0, -1.0, std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN(), 1e300, 4.0, 1.5, 7.0};
    return weights[b % std::size(weights)];
}

/// An id: the node of the snapshot at the byte (mod the count), or, one time in eight, an id
/// that is no node of it.
auto node_id(input& in, const keyplace::snapshot& s) -> std::string {
    const std::uint8_t b = in.byte();
    if (s.nodes().empty() || b % 8 == 7) {
        return "ghost-" + std::to_string(b);
    }
    return s.nodes()[b % s.nodes().size()].id;
}

void check_message(const keyplace::error_info& err) {
    KEYPLACE_FUZZ_CHECK(static_cast<bool>(err));
    KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
}

/// Whether next revives a node that before holds as left.
auto revives(const keyplace::snapshot& before, const keyplace::snapshot& next) -> bool {
    for (const auto& n : next.nodes()) {
        const auto* was = before.find(n.id);
        if (was != nullptr && was->state == keyplace::node_state::left && n.state != keyplace::node_state::left) {
            return true;
        }
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    const std::string_view doc = in.until('\0');
    keyplace::error_info err;
    keyplace::snapshot_description read;
    {
        const auto d = keyplace::read_description_json(doc, err);
        if (!d || !keyplace_fuzz::affordable(*d)) {
            return -1;  // the snapshot_json target covers refused documents
        }
        read = *d;
    }
    const auto before = keyplace::try_load_snapshot_json(doc, err);
    if (!before) {
        return -1;
    }

    // Weight changes first (try_successor takes them all at once), then the edits of the list.
    std::vector<std::pair<std::string, double>> weights;
    const std::size_t n_weights = in.below(4);
    for (std::size_t i = 0; i < n_weights; ++i) {
        auto id = node_id(in, *before);
        weights.emplace_back(std::move(id), weight_of(in.byte()));
    }
    std::optional<keyplace::snapshot_description> next;
    try {
        next = before->try_successor(weights, err);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "try_successor threw", {});
    }
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "successor: %s\n", next ? "ok" : err.message().c_str());
    }
    if (!next) {
        check_message(err);
        KEYPLACE_FUZZ_CHECK(!weights.empty());
        return 0;
    }
    KEYPLACE_FUZZ_CHECK(next->epoch == before->epoch() + 1);
    KEYPLACE_FUZZ_CHECK(next->parent_epoch == before->epoch());
    KEYPLACE_FUZZ_CHECK(next->cluster == before->cluster());
    KEYPLACE_FUZZ_CHECK(next->strategy == before->describe().strategy);
    KEYPLACE_FUZZ_CHECK(!next->fingerprint && !next->probe);
    KEYPLACE_FUZZ_CHECK(next->metadata == keyplace::snapshot_metadata{});
    KEYPLACE_FUZZ_CHECK(next->nodes.size() == before->nodes().size());

    // A partition successor lists pending()'s table: the snapshot that completes the transition
    // (doc/snapshots.md, "A partition table is state the snapshot carries"), so joiners become active and
    // leavers left, as a caller must make them.
    if (next->strategy.name == "partitions") {
        for (auto& n : next->nodes) {
            n.state = n.state == keyplace::node_state::joining   ? keyplace::node_state::active
                      : n.state == keyplace::node_state::leaving ? keyplace::node_state::left
                                                                 : n.state;
        }
    }
    bool edited = !weights.empty();
    for (std::size_t edits = 0; !in.empty() && edits < 16; ++edits) {
        edited = true;
        switch (in.byte() % 4) {
            case 0: {  // add a joining node
                keyplace::snapshot_node n;
                n.id = std::string(in.take(in.below(12)));
                n.state = keyplace::node_state::joining;
                next->nodes.push_back(std::move(n));
                break;
            }
            case 1: {  // change a state (perhaps a left node's)
                const std::size_t at = in.byte();
                const auto state = static_cast<keyplace::node_state>(in.byte() % 4);
                if (!next->nodes.empty()) {
                    next->nodes[at % next->nodes.size()].state = state;
                }
                break;
            }
            case 2: {  // drop a node from the list
                const std::size_t at = in.byte();
                if (!next->nodes.empty()) {
                    next->nodes.erase(next->nodes.begin() + static_cast<std::ptrdiff_t>(at % next->nodes.size()));
                }
                break;
            }
            default: {  // an override
                keyplace::key_override o;
                o.key = std::string(in.take(in.below(8)));
                o.node = node_id(in, *before);
                next->overrides.push_back(std::move(o));
                break;
            }
        }
    }
    if (!keyplace_fuzz::affordable(*next)) {
        return 0;
    }
    std::optional<keyplace::snapshot> built;
    try {
        built = keyplace::snapshot::try_build(*next, err);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "try_build threw", {});
    }
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "next: %s\n", built ? "built" : err.message().c_str());
    }
    if (!built) {
        check_message(err);
        // The successor as derived (weights aside, which may fail a partition claim or a
        // strategy's own bounds) builds, but after the last epoch.
        KEYPLACE_FUZZ_CHECK_MSG(edited || before->epoch() == std::numeric_limits<std::uint64_t>::max(),
                                err.message());
        return 0;
    }
    KEYPLACE_FUZZ_CHECK(built->epoch() == before->epoch() + 1);
    KEYPLACE_FUZZ_CHECK(built->verify());

    keyplace_fuzz::check_reload(*built);  // stable on reload

    // A successor replaces its snapshot unless it revives a tombstone; never the other way.
    const auto forward = keyplace::check_successor(*before, *built);
    KEYPLACE_FUZZ_CHECK_MSG(static_cast<bool>(forward) == revives(*before, *built), forward.message());
    if (forward) {
        KEYPLACE_FUZZ_CHECK(forward.code() == keyplace::errc::invalid_state);
        check_message(forward);
    }
    const auto backward = keyplace::check_successor(*built, *before);
    KEYPLACE_FUZZ_CHECK(static_cast<bool>(backward));
    check_message(backward);
    return 0;
}
