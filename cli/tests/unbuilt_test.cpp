// keyplace-cli as a build without its optional components sees it (no KEYPLACE_CLI_SNAPSHOTS,
// no KEYPLACE_CLI_ETCD): their commands are listed and documented, and running one fails with
// one line saying it was not built and how to build it, status 2.
#include "keyplace_catch.hpp"

#include "commands.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct refusal {
    int status = 0;
    std::string what;
};

template <class C>
auto run_unbuilt(std::vector<std::string_view> args) -> refusal {
    std::istringstream in;
    try {
        (void)keyplace_cli::run_command<C>(args, in);
    } catch (const keyplace_cli::cli_error& e) {
        return {e.status, e.what()};
    }
    return {};
}

}  // namespace

static_assert(!keyplace_cli::is_built(keyplace_cli::component::etcd));
static_assert(!keyplace_cli::is_built(keyplace_cli::component::snapshots));

TEST_CASE("cli unbuilt: an etcd command says it was not built, and how to build it", "[cli]") {
    const auto r = run_unbuilt<keyplace_cli::etcd_current_command>(
        {"--endpoints", "http://127.0.0.1:2379", "--cluster", "c"});
    CHECK(r.status == keyplace_cli::exit_usage);
    CHECK(r.what ==
          "etcd commands were not built: this build found no libcurl; configure with -DKEYPLACE_WITH_ETCD=ON "
          "after installing libcurl4-openssl-dev");
    // Before its arguments are looked at: the same line for a command line it would refuse.
    CHECK(run_unbuilt<keyplace_cli::etcd_watch_command>({"--bogus"}).what == r.what);
}

TEST_CASE("cli unbuilt: a snapshot command says it was not built, and how to build it", "[cli]") {
    for (const auto& r : {run_unbuilt<keyplace_cli::snapshot_verify_command>({"s.json"}),
                          run_unbuilt<keyplace_cli::snapshot_create_command>({"--strategy", "ring", "--nodes", "a"}),
                          run_unbuilt<keyplace_cli::shadow_command>({"a.json", "b.json"})}) {
        CHECK(r.status == keyplace_cli::exit_usage);
        CHECK(r.what ==
              "snapshot commands were not built: this build found no nlohmann_json; configure again after "
              "installing nlohmann-json3-dev");
    }
}

TEST_CASE("cli unbuilt: the commands are listed and their help still works", "[cli]") {
    const auto names = keyplace_cli::entry_names(keyplace_cli::commands{});
    for (const std::string_view n : {"snapshot create", "shadow", "plan", "etcd publish", "etcd watch"}) {
        CHECK(std::find(names.begin(), names.end(), n) != names.end());
    }
    std::istringstream in;
    const std::vector<std::string_view> args{"-h"};
    const auto help = keyplace_cli::run_command<keyplace_cli::etcd_publish_command>(args, in);
    CHECK(help.starts_with("usage: keyplace-cli etcd publish --endpoints URL,..."));
}

TEST_CASE("cli unbuilt: a component turned off says how to turn it on", "[cli]") {
    CHECK(keyplace_cli::not_built_message(keyplace_cli::component::etcd, "",
                                          "libcurl4-openssl-dev and nlohmann-json3-dev") ==
          "etcd commands were not built: this build was configured with -DKEYPLACE_WITH_ETCD=OFF; configure with "
          "-DKEYPLACE_WITH_ETCD=ON (needs libcurl4-openssl-dev and nlohmann-json3-dev)");
}
