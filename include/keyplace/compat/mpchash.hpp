// keyplace — which node owns a key. go-mpchash's multi-probe consistent hash
// (github.com/dgryski/go-mpchash, checked against its testdata/compat.out): a configuration of
// basic_multiprobe (multiprobe.hpp) with SipHash-2-4 points and probes.
#ifndef KEYPLACE_COMPAT_MPCHASH_HPP_INCLUDED
#define KEYPLACE_COMPAT_MPCHASH_HPP_INCLUDED

#include <keyplace/detail/siphash.hpp>
#include <keyplace/multiprobe.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// go-mpchash's hash H(b, s): SipHash-2-4 of b under the key (k0 = s, k1 = 0), as dchest/siphash's
/// Hash(s, 0, b) computes it in go-mpchash's compat_test.go.
[[nodiscard]] constexpr auto mpchash_hash(std::span<const std::byte> bytes, std::uint64_t seed) noexcept
    -> std::uint64_t {
    return detail::siphash24(seed, 0, bytes);
}

/// The key hash go-mpchash's first probe starts from: H(key, 1).
struct mpchash_key_hash {
    [[nodiscard]] auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint64_t {
        return mpchash_hash(bytes, 1);
    }
};

/// go-mpchash as compat_test.go builds it (New(buckets, siphash, {1, 2}, 21)): bucket b's point
/// is H(b, 0); a key's probes are H(key, 1) + i * H(key, 2); strict successor, earliest probe
/// on a tie; two buckets on one point: the later in the list given owns it (Go's map keeps the
/// last write). Buckets stay in the order given.
///
/// go-mpchash hashes a key's bytes twice, so a 64-bit point cannot carry what a key lookup needs:
/// pick_key / keyplace::locate / locate_n take the key bytes and are go-exact; pick(point)
/// (--prehashed in the CLI, sampled analysis) takes the point as H(key, 1) and steps by
/// H(le64(point), 2), a rule of keyplace's, not go-mpchash's.
struct mpchash_traits {
    using key_hash = mpchash_key_hash;
    static constexpr std::string_view name = "mpchash";
    static constexpr detail::node_order order = detail::node_order::as_given;
    static constexpr shared_point on_shared = shared_point::last_wins;

    [[nodiscard]] static auto node_point(std::string_view id) -> std::uint64_t {
        return mpchash_hash(std::as_bytes(std::span<const char>(id.data(), id.size())), 0);
    }
    [[nodiscard]] static auto key_probes(std::span<const std::byte> key) noexcept -> probe_sequence {
        return {mpchash_hash(key, 1), mpchash_hash(key, 2)};
    }
    [[nodiscard]] static auto point_probes(std::uint64_t point) noexcept -> probe_sequence {
        std::array<std::byte, 8> le{};
        for (std::size_t b = 0; b < le.size(); ++b) {
            le[b] = static_cast<std::byte>(point >> (8 * b));
        }
        return {point, mpchash_hash(le, 2)};
    }
};

/// go-mpchash (K = 21 by default; multiprobe_config::probes is New's k).
using mpchash = basic_multiprobe<mpchash_traits>;

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
