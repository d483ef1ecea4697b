// keyplace_partitions_history: replays a history of partition tables for tests/swift_oracle.py.
// Reads commands from stdin, one a line:
//   config Q n spread contract      the table's configuration (first)
//   node ID WEIGHT REGION ZONE RACK  a member of the first build (before `build`)
//   build                            claims a fresh table
//   join ID WEIGHT REGION ZONE RACK  with()
//   leave ID                         without()
//   weight ID WEIGHT                 reweighted()
// and after each table prints one line: the node ids of every partition's replicas, rank by rank,
// partitions separated by ';', replicas by ','. Errors go to stderr, exit status 1.
#include <keyplace/partitions.hpp>

#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace partitions_history {

auto print(const keyplace::partitions& t) -> void {
    std::string out;
    for (std::uint32_t p = 0; p < t.partition_count(); ++p) {
        out += p == 0 ? "" : ";";
        for (std::uint32_t r = 0; r < t.replica_count(); ++r) {
            out += (r == 0 ? "" : ",") + t.node(t.owner(p, r)).id;
        }
    }
    std::cout << out << '\n';
}

auto read_node(std::istringstream& in) -> keyplace::node {
    keyplace::node n;
    in >> n.id >> n.weight >> n.where.region >> n.where.zone >> n.where.rack;
    return n;
}

}  // namespace partitions_history

auto main() -> int {
    using namespace partitions_history;
    keyplace::partitions_config config;
    std::vector<keyplace::node> nodes;
    std::optional<keyplace::partitions> table;
    std::string line;
    try {
        while (std::getline(std::cin, line)) {
            std::istringstream in(line);
            std::string cmd;
            in >> cmd;
            if (cmd == "config") {
                std::string spread;
                in >> config.partitions >> config.replicas >> spread >> config.contract;
                config.spread = keyplace::parse_failure_domain(spread).value();
            } else if (cmd == "node") {
                nodes.push_back(read_node(in));
            } else if (cmd == "build") {
                table = keyplace::partitions::build(nodes, config);
            } else if (cmd == "join") {
                table = table->with(read_node(in));
            } else if (cmd == "leave") {
                std::string id;
                in >> id;
                table = table->without(id);
            } else if (cmd == "weight") {
                std::string id;
                double w = 0;
                in >> id >> w;
                table = table->reweighted(id, w);
            } else if (cmd.empty()) {
                continue;
            } else {
                std::cerr << "unknown command " << cmd << '\n';
                return 1;
            }
            if (cmd != "config" && cmd != "node") {
                print(*table);
            }
        }
    } catch (const std::exception& e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
    return 0;
}
