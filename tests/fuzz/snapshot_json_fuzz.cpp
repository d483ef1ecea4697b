// Fuzz target: the snapshot JSON reader and loader (include/keyplace/fleet/json.hpp).
//
// Input: the document's bytes.
// Invariants (doc/snapshots.md, "JSON"):
//  - read_description_json and try_load_snapshot_json never throw; a refusal has a code and a
//    message that starts with a JSON path, holds no control byte and is bounded (values are cut
//    at 64 bytes), the same message load_snapshot_json throws;
//  - what the reader accepts, written back, reads as the same description, and writing that
//    again gives the same text (the writer is canonical);
//  - a loaded snapshot verifies; written and loaded again it has the same fingerprint, probe
//    digest and description.
// Documents whose build would be large (more than 64 nodes; ring points, table slots, Envoy ring
// entries or partitions beyond small bounds; see affordable()) are read but not built.
#include "fuzz_support.hpp"
#include "snapshot_bounds.hpp"
#include "snapshot_reload.hpp"

#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace {

void check_refusal(const keyplace::error_info& err) {
    KEYPLACE_FUZZ_CHECK(static_cast<bool>(err));
    const std::string& m = err.message();
    // The path names up to 64 nested keys, each quoted and cut at 64 bytes: a message may reach
    // about 4.6 KB (corpus/snapshot_json/finding_deep_path_message), so the reader's bound
    // is that, not the 1 KiB of other messages.
    KEYPLACE_FUZZ_CHECK_MSG(!m.empty() && m.size() <= 64 * 72 + 1024 && !keyplace_fuzz::has_control(m),
                            std::to_string(m.size()) + " bytes: " + m.substr(0, 300));
    // "$: ...", "nodes[3].weight: ...", "strategy.params.vnodes: ...": a path, then ": ".
    KEYPLACE_FUZZ_CHECK_MSG(m.find(": ") != std::string::npos && m.front() != ' ', m.substr(0, 200));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    keyplace::error_info err;
    std::optional<keyplace::snapshot_description> d;
    try {
        d = keyplace::read_description_json(text, err);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "read_description_json threw", {});
    }
    if (!d) {
        check_refusal(err);
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "read: %s\n", err.message().c_str());
        }
        return 0;
    }
    // The writer is canonical: what it writes reads back the same, and writes the same again.
    const std::string written = keyplace::write_description_json(*d);
    keyplace::error_info rerr;
    const auto reread = keyplace::read_description_json(written, rerr);
    KEYPLACE_FUZZ_CHECK_MSG(reread.has_value(), rerr.message());
    KEYPLACE_FUZZ_CHECK(*reread == *d);
    KEYPLACE_FUZZ_CHECK(keyplace::write_description_json(*reread) == written);

    if (!keyplace_fuzz::affordable(*d)) {
        return 0;
    }
    std::optional<keyplace::snapshot> s;
    try {
        s = keyplace::try_load_snapshot_json(text, err);
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "try_load_snapshot_json threw", {});
    }
    try {
        const auto thrown = keyplace::load_snapshot_json(text);
        KEYPLACE_FUZZ_CHECK(s.has_value());
    } catch (const keyplace::error& e) {
        KEYPLACE_FUZZ_CHECK(!s.has_value());
        KEYPLACE_FUZZ_CHECK(e.code() == err.code() && std::string(e.what()) == err.message());
    }
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "load: %s\n", s ? "ok" : err.message().c_str());
        if (s) {
            std::fputs(keyplace::write_snapshot_json(*s).c_str(), stderr);
        }
    }
    if (!s) {
        check_refusal(err);
        return 0;
    }
    KEYPLACE_FUZZ_CHECK(s->verify());
    keyplace_fuzz::check_reload(*s);
    return 0;
}
