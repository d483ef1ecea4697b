// The service translation unit bench/compile_time.sh --o2 measures: load a snapshot document,
// publish it, look up one key. Compiled header-only, and with KEYPLACE_COMPILED (keyplace::compiled).
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        return 2;
    }
    std::ifstream in(argv[1]);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    keyplace::publisher pub(std::make_shared<const keyplace::snapshot>(keyplace::load_snapshot_json(text)));
    auto reader = pub.make_reader();
    std::puts(reader.get().owner(argv[2]).id.c_str());
}
