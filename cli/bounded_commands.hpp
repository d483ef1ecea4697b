// keyplace-cli: locate --load-factor, bounded loads (bounded_load.hpp, compat/haproxy_bounded.hpp,
// compat/envoy_bounded.hpp). Each input line is one request held until the end, so the output is
// the batch assignment, in input order.
#ifndef KEYPLACE_CLI_BOUNDED_COMMANDS_HPP_INCLUDED
#define KEYPLACE_CLI_BOUNDED_COMMANDS_HPP_INCLUDED

#include "args.hpp"

#include <keyplace/bounded_load.hpp>
#include <keyplace/compat/envoy_bounded.hpp>
#include <keyplace/compat/haproxy_bounded.hpp>

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keyplace_cli {

inline constexpr plain_option load_factor_option{
    {"load-factor", "C",
     "bounded loads over the preference order: c >= 1 (or inf), haproxy:F (F = 0 or > 100, over a ring) "
     "or envoy:F (F = 0 or >= 100, envoy-ring, envoy-maglev); each line is a request held to the end"}};

enum class bounded_rules : std::uint8_t { native, haproxy, envoy };

struct bounded_request {
    bounded_rules rules = bounded_rules::native;
    double load_factor = 1.25;  // native
    std::uint32_t factor = 0;   // haproxy, envoy
};

/// Parses --load-factor's value; a bad one is a usage error naming it.
inline auto parse_bounded(std::string_view text) -> bounded_request {
    bounded_request out;
    const auto rules_factor = [&](std::string_view prefix, bounded_rules r) -> bool {
        if (text.substr(0, prefix.size()) != prefix) {
            return false;
        }
        const auto f = parse_unsigned<std::uint32_t>(text.substr(prefix.size()));
        if (!f) {
            usage_error("--load-factor " + quote(text) + ": " + std::string(prefix) +
                        " takes a whole number from 0 to 4294967295");
        }
        out.rules = r;
        out.factor = *f;
        const auto e = r == bounded_rules::haproxy ? keyplace::compat::check_haproxy_balance_factor(*f)
                                                   : keyplace::compat::check_envoy_balance_factor(*f);
        if (e) {
            usage_error("--load-factor: " + e.message());
        }
        return true;
    };
    if (rules_factor("haproxy:", bounded_rules::haproxy) || rules_factor("envoy:", bounded_rules::envoy)) {
        return out;
    }
    double c = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), c);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
        usage_error("--load-factor " + quote(text) + " is not a number, haproxy:F or envoy:F");
    }
    if (const auto e = keyplace::load_caps::check({.load_factor = c})) {
        usage_error("--load-factor: " + e.message());
    }
    out.load_factor = c;
    return out;
}

/// The batch assignment of points under the rules asked for, or a usage error when the strategy
/// does not fit them (HAProxy's rules need a ring, Envoy's an Envoy strategy).
template <class S>
auto bounded_owners(const S& s, std::span<const std::uint64_t> points, const bounded_request& r,
                    std::string_view strategy) -> std::vector<keyplace::node_index> {
    switch (r.rules) {
        case bounded_rules::native:
            return keyplace::bounded_assign(s, points, {.load_factor = r.load_factor});
        case bounded_rules::haproxy:
            if constexpr (requires { s.entry_of(std::uint64_t{}); s.owners(); }) {
                return keyplace::compat::haproxy_bounded_assign(s, points, r.factor);
            } else {
                usage_error("--load-factor haproxy:F needs a ring (its points), not --strategy " +
                            std::string(strategy));
            }
        case bounded_rules::envoy:
            if constexpr (requires { s.config().locality_weights; }) {
                return keyplace::compat::envoy_bounded_assign(s, points, r.factor);
            } else {
                usage_error("--load-factor envoy:F needs --strategy envoy-ring or envoy-maglev, not " +
                            std::string(strategy));
            }
    }
    return {};
}

}  // namespace keyplace_cli

#endif
