// What the snapshot fuzz targets that read documents share: the check that a built snapshot,
// written as a document and loaded again, is the same snapshot (doc/contract.md, "Fingerprint": stable
// on reload; the writer is canonical).
#ifndef KEYPLACE_TESTS_FUZZ_SNAPSHOT_RELOAD_HPP_INCLUDED
#define KEYPLACE_TESTS_FUZZ_SNAPSHOT_RELOAD_HPP_INCLUDED

#include "fuzz_support.hpp"

#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <string>

namespace keyplace_fuzz {

/// s written and loaded again: the same fingerprint, probe digest and description, and the same
/// document written again.
inline void check_reload(const keyplace::snapshot& s) {
    const std::string doc = keyplace::write_snapshot_json(s);
    keyplace::error_info err;
    const auto again = keyplace::try_load_snapshot_json(doc, err);
    KEYPLACE_FUZZ_CHECK_MSG(again.has_value(), err.message());
    KEYPLACE_FUZZ_CHECK(again->fingerprint() == s.fingerprint());
    KEYPLACE_FUZZ_CHECK(again->probe_digest() == s.probe_digest());
    KEYPLACE_FUZZ_CHECK(again->describe() == s.describe());
    KEYPLACE_FUZZ_CHECK(keyplace::write_snapshot_json(*again) == doc);
}

}  // namespace keyplace_fuzz

#endif
