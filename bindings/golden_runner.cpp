// The golden corpus answered in C++ (tests/golden/three_runtimes.py runs it beside the Python
// and WebAssembly runners). Reads the corpus as JSON Lines, each document as JSON text, and prints
// one line per query and per digest case, in the format every runner prints:
//   SOURCE CASE key HEX OWNER [COPIES]     SOURCE CASE point DECIMAL OWNER [COPIES]
//   SOURCE CASE digest FINGERPRINT PROBE   SOURCE CASE error CODE MESSAGE
//   SOURCE CASE report ownership JSON      (after each digest: the shares as the library writes them)
// COPIES are comma-separated, present where the query states copies. The report lines have no
// golden value; the runtimes must print them alike (the doubles' text included).
#include "binding.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace {

auto from_hex(const std::string& hex) -> std::string {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return out;
}

auto joined(const std::vector<std::string>& ids) -> std::string {
    std::string out;
    for (const auto& id : ids) {
        out += (out.empty() ? "" : ",") + id;
    }
    return out;
}

}  // namespace

auto main(int argc, char** argv) -> int {
    if (argc != 2) {
        std::cerr << "usage: keyplace_golden CORPUS.jsonl (documents as JSON text)\n";
        return 2;
    }
    try {
        std::ifstream in(argv[1]);
        if (!in) {
            std::cerr << "keyplace_golden: cannot read " << argv[1] << "\n";
            return 2;
        }
        std::string line;
        std::string out;
        while (std::getline(in, line)) {
            const auto c = nlohmann::json::parse(line);
            const std::string kind = c.at("kind");
            if (kind != "placement" && kind != "digest") {
                continue;
            }
            const std::string head = c.at("source").get<std::string>() + " " + c.at("case").get<std::string>() + " ";
            try {
                const auto s = keyplace::binding::snapshot_ref::load(c.at("document").get<std::string>());
                if (kind == "digest") {
                    out += head + "digest " + s.fingerprint() + " " + s.probe() + "\n";
                    out += head + "report ownership " + s.ownership_json() + "\n";
                    continue;
                }
                for (const auto& q : c.at("queries")) {
                    const bool with_copies = q.contains("copies");
                    if (q.contains("key")) {
                        const std::string hex = q.at("key");
                        const auto key = from_hex(hex);
                        out += head + "key " + hex + " " + s.owner(key) + (with_copies ? " " + joined(s.copies(key)) : "") + "\n";
                    } else {
                        const std::string dec = q.at("point");
                        const auto point = std::stoull(dec);
                        out += head + "point " + dec + " " + s.owner_at(point) +
                               (with_copies ? " " + joined(s.copies_at(point)) : "") + "\n";
                    }
                }
            } catch (const keyplace::binding::failure& f) {
                out += head + "error " + std::to_string(f.code) + " " + f.what() + "\n";
            }
            std::fwrite(out.data(), 1, out.size(), stdout);
            out.clear();
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
        if (std::fflush(stdout) != 0) {
            std::cerr << "keyplace_golden: cannot write the results\n";
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "keyplace_golden: " << e.what() << "\n";
        return 1;
    }
}
