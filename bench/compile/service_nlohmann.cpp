// The service's twin without keyplace (bench/compile_time.sh --o2): the same program parsing the
// document with nlohmann_json alone, publishing its node list and picking one node for a key.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct members {
    std::vector<std::string> ids;
};

int main(int argc, char** argv) {
    if (argc < 3) {
        return 2;
    }
    std::ifstream in(argv[1]);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto doc = nlohmann::json::parse(text);
    auto m = std::make_shared<members>();
    for (const auto& n : doc.at("nodes")) {
        m->ids.push_back(n.at("id").get<std::string>());
    }
    std::mutex mu;
    std::shared_ptr<const members> published;
    {
        const std::lock_guard lock(mu);
        published = std::move(m);
    }
    if (published->ids.empty()) {
        return 1;
    }
    std::puts(published->ids[std::hash<std::string>{}(argv[2]) % published->ids.size()].c_str());
}
