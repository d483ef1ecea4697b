// keyplace-cli stats over every strategy: each node's share of the hash space and of keys.
#include "commands.hpp"
#include "strategy_impl.hpp"

#include <istream>
#include <string>
#include <type_traits>

namespace keyplace_cli {

auto stats_command::run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
    return with_strategy(a, strategy_options, [&]<class E>(std::type_identity<E>) { return stats<E>(a, io); });
}

}  // namespace keyplace_cli
