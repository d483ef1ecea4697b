// keyplace-cli diff over every strategy: what a membership change moves.
#include "commands.hpp"
#include "strategy_impl.hpp"

#include <istream>
#include <string>
#include <type_traits>

namespace keyplace_cli {

auto diff_command::run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
    return with_strategy(a, strategy_options, [&]<class E>(std::type_identity<E>) { return diff<E>(a, io); });
}

}  // namespace keyplace_cli
