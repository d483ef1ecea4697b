// keyplace-cli locate over every strategy (owners, replicas, bounded loads, hot-key spreading),
// and locate --snapshot where the snapshot commands are built.
#include "commands.hpp"
#include "strategy_impl.hpp"

#if KEYPLACE_CLI_SNAPSHOTS
#include "snapshot_impl.hpp"
#endif

#include <istream>
#include <string>
#include <type_traits>

namespace keyplace_cli {

auto locate_command::run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
    if (a.has(snapshot_option.spec)) {
#if KEYPLACE_CLI_SNAPSHOTS
        return locate_snapshot(a, in, io);
#else
        usage_error("--snapshot: " + not_built_message(component::snapshots));
#endif
    }
    if (a.has(write_set_flag.spec)) {
        usage_error("--write-set needs --snapshot");
    }
    return with_strategy(a, strategy_options, [&]<class E>(std::type_identity<E>) { return locate<E>(a, in, io); });
}

}  // namespace keyplace_cli
