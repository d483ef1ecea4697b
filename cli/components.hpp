// keyplace-cli's optional components: the snapshot commands need nlohmann_json, the etcd commands
// the keyplace::etcd component. CMake defines KEYPLACE_CLI_SNAPSHOTS and KEYPLACE_CLI_ETCD where
// they are built and, where not, KEYPLACE_CLI_<NAME>_MISSING (what configure did not find; empty
// when the component was turned off) and KEYPLACE_CLI_<NAME>_PACKAGES (the Debian packages that
// provide it). A command of a missing component is still listed; running it says how to build it.
#ifndef KEYPLACE_CLI_COMPONENTS_HPP_INCLUDED
#define KEYPLACE_CLI_COMPONENTS_HPP_INCLUDED

#include <string>
#include <string_view>

#ifndef KEYPLACE_CLI_SNAPSHOTS_MISSING
#define KEYPLACE_CLI_SNAPSHOTS_MISSING "nlohmann_json"
#endif
#ifndef KEYPLACE_CLI_SNAPSHOTS_PACKAGES
#define KEYPLACE_CLI_SNAPSHOTS_PACKAGES "nlohmann-json3-dev"
#endif
#ifndef KEYPLACE_CLI_ETCD_MISSING
#define KEYPLACE_CLI_ETCD_MISSING "libcurl or nlohmann_json"
#endif
#ifndef KEYPLACE_CLI_ETCD_PACKAGES
#define KEYPLACE_CLI_ETCD_PACKAGES "libcurl4-openssl-dev and nlohmann-json3-dev"
#endif

namespace keyplace_cli {

/// An optional part of keyplace-cli, and the commands it brings.
enum class component { snapshots, etcd };

/// Whether this build has the component's commands.
constexpr auto is_built(component c) noexcept -> bool {
#if KEYPLACE_CLI_SNAPSHOTS
    constexpr bool snapshots = true;
#else
    constexpr bool snapshots = false;
#endif
#if KEYPLACE_CLI_ETCD
    constexpr bool etcd = true;
#else
    constexpr bool etcd = false;
#endif
    return c == component::snapshots ? snapshots : etcd;
}

/// The one line a command of a component that was not built fails with: which commands, what
/// configure did not find (missing; empty: the component was turned off) and how to build them
/// (packages: what provides the missing parts).
inline auto not_built_message(component c, std::string_view missing, std::string_view packages) -> std::string {
    const bool etcd = c == component::etcd;
    std::string out = etcd ? "etcd commands were not built: " : "snapshot commands were not built: ";
    if (missing.empty()) {
        return out + "this build was configured with -DKEYPLACE_WITH_ETCD=OFF; configure with " +
               "-DKEYPLACE_WITH_ETCD=ON (needs " + std::string(packages) + ")";
    }
    out += "this build found no " + std::string(missing) + "; ";
    out += etcd ? "configure with -DKEYPLACE_WITH_ETCD=ON" : "configure again";
    return out + " after installing " + std::string(packages);
}

/// This build's line for a component it lacks.
inline auto not_built_message(component c) -> std::string {
    return c == component::etcd ? not_built_message(c, KEYPLACE_CLI_ETCD_MISSING, KEYPLACE_CLI_ETCD_PACKAGES)
                                : not_built_message(c, KEYPLACE_CLI_SNAPSHOTS_MISSING, KEYPLACE_CLI_SNAPSHOTS_PACKAGES);
}

}  // namespace keyplace_cli

#endif
