// Fuzz target: keyplace-fleet's command line (fleet/fleet_options.hpp: parse over the
// option table), without running the fleet: no server is started, no file written.
//
// Input: the arguments, each ended by a NUL (at most 32).
// Invariants (doc/fleet.md, "A real cache fleet"):
//  - parse returns options, or nothing for --help, or throws a failure of status 2 whose message
//    is one line without control bytes, at most 4 KiB (values quoted and cut);
//  - what it returns holds only what the table allows: strategies and rules from their lists,
//    each once; alphas 0 (uniform) or in 0.1..3 and seeds up to 2^32-1, each once; every number
//    in its stated range; --etcd 'start' or http://IPV4:PORT.
#include "fuzz_support.hpp"

#include "fleet_options.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

template <class T>
auto distinct(const std::vector<T>& v) -> bool {
    return std::set<T>(v.begin(), v.end()).size() == v.size();
}

auto subset(const std::vector<std::string>& v, const std::vector<std::string>& of) -> bool {
    return std::all_of(v.begin(), v.end(), [&](const std::string& s) { return std::count(of.begin(), of.end(), s) == 1; });
}

void check(const keyplace_fleet::options& o) {
    KEYPLACE_FUZZ_CHECK(!o.strategies.empty() && distinct(o.strategies) &&
                        subset(o.strategies, keyplace_fleet::all_strategies));
    KEYPLACE_FUZZ_CHECK(!o.rules.empty() && distinct(o.rules) && subset(o.rules, keyplace_fleet::all_rules));
    KEYPLACE_FUZZ_CHECK(!o.alphas.empty() && distinct(o.alphas));
    for (const double a : o.alphas) {
        KEYPLACE_FUZZ_CHECK(a == 0.0 || (a >= 0.1 && a <= 3.0));
    }
    KEYPLACE_FUZZ_CHECK(!o.seeds.empty() && distinct(o.seeds));
    for (const auto s : o.seeds) {
        KEYPLACE_FUZZ_CHECK(s <= UINT32_MAX);
    }
    KEYPLACE_FUZZ_CHECK(o.keys >= 100 && o.keys <= 10000000);
    KEYPLACE_FUZZ_CHECK(o.window >= 100 && o.window <= 10000000);
    KEYPLACE_FUZZ_CHECK(o.steady >= 1 && o.steady <= 1000);
    KEYPLACE_FUZZ_CHECK(o.phase >= 1 && o.phase <= 1000);
    KEYPLACE_FUZZ_CHECK(o.warm <= 100000000);
    KEYPLACE_FUZZ_CHECK(o.prefill >= 0.0 && o.prefill <= 1.0);
    KEYPLACE_FUZZ_CHECK(o.writes >= 0.0 && o.writes <= 0.5);
    KEYPLACE_FUZZ_CHECK(o.value_size >= 16 && o.value_size <= 100000);
    KEYPLACE_FUZZ_CHECK(o.lag <= 10000000);
    KEYPLACE_FUZZ_CHECK(o.clients >= 1 && o.clients <= keyplace_fleet::max_clients);
    KEYPLACE_FUZZ_CHECK(o.late_ms <= 10000);
    KEYPLACE_FUZZ_CHECK(o.etcd.empty() || o.etcd == "start" || keyplace_fleet::is_ipv4_endpoint(o.etcd));
    KEYPLACE_FUZZ_CHECK(!o.memcached.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    keyplace_fuzz::input in(data, size);
    std::vector<std::string> args{"keyplace-fleet"};
    while (!in.empty()) {
        args.emplace_back(in.until('\0'));
        if (args.size() > 33) {
            return -1;
        }
    }
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    try {
        const auto o = keyplace_fleet::parse(static_cast<int>(args.size()), argv.data());
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "%s\n", o ? "options" : "help");
        }
        if (o) {
            check(*o);
        }
    } catch (const keyplace_fleet::failure& e) {
        const std::string_view m = e.what();
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "failure: %s\n", e.what());
        }
        KEYPLACE_FUZZ_CHECK(e.status == 2);
        KEYPLACE_FUZZ_CHECK_MSG(!m.empty() && m.size() <= 4096 && !keyplace_fuzz::has_control(m), std::string(m));
    } catch (const std::exception& e) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "parse threw", e.what());
    }
    return 0;
}
