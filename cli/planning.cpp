// keyplace-cli's planning commands: allocate, redis create and redis rebalance.
#include "commands.hpp"
#include "planning_commands.hpp"

#include <istream>
#include <string>

namespace keyplace_cli {

auto allocate_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(allocate_nodes_option.spec)}, [&] { return allocate(a); });
}

auto redis_create_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(masters_option.spec)}, [&] { return redis_create(a); });
}

auto redis_rebalance_command::run(const parsed_args& a, std::istream&) -> std::string {
    return from_specs({a.value(slot_map_option.spec)}, [&] { return redis_rebalance(a); });
}

}  // namespace keyplace_cli
