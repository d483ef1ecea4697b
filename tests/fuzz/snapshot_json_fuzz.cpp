// Fuzz target: the snapshot JSON reader and loader (include/keyplace/json.hpp).
//
// Input: the document's bytes.
// Invariants (README, "JSON"):
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

#include <keyplace/json.hpp>
#include <keyplace/snapshot.hpp>

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

auto number_param(const keyplace::snapshot_description& d, std::string_view name, std::uint64_t fallback)
    -> std::uint64_t {
    const auto it = d.strategy.params.find(name);
    if (it == d.strategy.params.end() || !std::holds_alternative<std::uint64_t>(it->second)) {
        return fallback;
    }
    return std::get<std::uint64_t>(it->second);
}

/// Whether building d is cheap enough for one fuzz execution.
auto affordable(const keyplace::snapshot_description& d) -> bool {
    if (d.nodes.size() > 64) {
        return false;
    }
    double sum = 0;
    double least = std::numeric_limits<double>::infinity();
    for (const auto& n : d.nodes) {
        if (std::isfinite(n.weight) && n.weight > 0) {
            sum += n.weight;
            least = std::min(least, n.weight);
        }
    }
    const std::string& s = d.strategy.name;
    if (s == "ring") {
        return static_cast<double>(number_param(d, "vnodes", 160)) * sum <= 262144.0;
    }
    if (s == "maglev" || s == "envoy-maglev") {
        return number_param(d, "table-size", 65537) <= 131072;
    }
    if (s == "envoy-ring") {
        const auto min = static_cast<double>(number_param(d, "min-ring-size", 1024));
        const auto max = static_cast<double>(number_param(d, "max-ring-size", 8 * 1024 * 1024));
        const double estimate = d.nodes.empty() ? min : min * sum / least;
        return min <= 65536 && std::min(estimate, max) <= 262144.0;
    }
    if (s == "partitions") {
        return number_param(d, "partitions", 1024) <= 16384 && number_param(d, "replicas", 1) <= 16;
    }
    return true;
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

    if (!affordable(*d)) {
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
    const std::string doc = keyplace::write_snapshot_json(*s);
    keyplace::error_info lerr;
    const auto again = keyplace::try_load_snapshot_json(doc, lerr);
    KEYPLACE_FUZZ_CHECK_MSG(again.has_value(), lerr.message());
    KEYPLACE_FUZZ_CHECK(again->fingerprint() == s->fingerprint());
    KEYPLACE_FUZZ_CHECK(again->probe_digest() == s->probe_digest());
    KEYPLACE_FUZZ_CHECK(again->describe() == s->describe());
    KEYPLACE_FUZZ_CHECK(keyplace::write_snapshot_json(*again) == doc);
    return 0;
}
