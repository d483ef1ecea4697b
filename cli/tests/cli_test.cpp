// Tests of keyplace-cli (cli/), run in-process on string streams. Expected owners
// come from the independent golden file (case "hand": nodes c, a, b at 4 vnodes).
#include "keyplace_catch.hpp"

#include "keyplace_cli.hpp"
#include "support.hpp"

#include <keyplace/token_allocation.hpp>

#if KEYPLACE_CLI_SNAPSHOTS
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <nlohmann/json.hpp>  // edits documents (json.hpp includes it only in header-only builds)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <ios>
#include <istream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

struct result {
    int status;
    std::string out;
    std::string err;
};

auto run_cli(std::initializer_list<std::string_view> args, const std::string& input = "") -> result {
    std::istringstream in(input);
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string_view> v(args);
    const int status = keyplace_cli::run(v, in, out, err);
    return {status, out.str(), err.str()};
}

// The same, for arguments built at run time.
auto run_cli(const std::vector<std::string_view>& args, const std::string& input = "") -> result {
    std::istringstream in(input);
    std::ostringstream out;
    std::ostringstream err;
    const int status = keyplace_cli::run(args, in, out, err);
    return {status, out.str(), err.str()};
}

// The plan command's JSON for a library object: the object, and "prepared": null (the after
// epoch is not in transition), and a newline.
auto with_prepared_null(std::string json) -> std::string {
    json.pop_back();  // the closing brace
    return json + ",\"prepared\":null}\n";
}

// A failure: the given status, nothing on stdout, exactly one line on stderr containing fragment.
void expect_failure(const result& r, int status, const std::string& fragment) {
    CHECK(r.status == status);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::Matchers::Contains(fragment));
}

auto temp_file(const std::string& name, const std::string& content) -> std::string {
    const auto path = std::filesystem::temp_directory_path() / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
}

}  // namespace

TEST_CASE("cli: hash prints one xxhsum-style digest per line", "[cli]") {
    const auto r = run_cli({"hash", "--function", "xxh3"}, "abc\n\nhello");
    CHECK(r.status == 0);
    CHECK(r.out == "78af5f94892f3950\n2d06800538d394c2\n9555e8555c62dcfd\n");
    CHECK(run_cli({"hash", "--function=xxh64"}, "abc\n").out == "44bc2cf5ad770999\n");
    // Lines are not trimmed: "abc\r" is not "abc".
    CHECK(run_cli({"hash", "--function", "xxh3"}, "abc\r\n").out != "78af5f94892f3950\n");
    CHECK(run_cli({"hash", "--function", "xxh3"}, "").out.empty());
    CHECK(run_cli({"hash", "--function", "xxh3"}, "\n").out == "2d06800538d394c2\n");
    // Redis Cluster's specification (slots) and cassandra-dtest's token table.
    CHECK(run_cli({"hash", "--function", "crc16-redis"}, "somekey\nfoo{hash_tag}\n\n").out == "11058\n2515\n0\n");
    CHECK(run_cli({"hash", "--function", "murmur3-cassandra"}, "hello\ncassandra\n\n").out ==
          "-3758069500696749310\n356242581507269238\n-9223372036854775808\n");
}

TEST_CASE("cli: hot-keys prints the hottest keys with their bounds", "[cli]") {
    // 1,000 requests: "hot" 500 times, "warm" 200, and 300 keys once each.
    std::string stream;
    for (int i = 0; i < 1000; ++i) {
        stream += i % 2 == 0 ? "hot\n" : i % 5 == 1 ? "warm\n" : "cold-" + std::to_string(i) + "\n";
    }
    const auto r = run_cli({"hot-keys", "--top", "2"}, stream);
    CHECK(r.status == 0);
    // ceil(e * 1000 / 4096) = 1: the sketch may count a key once too often, with probability e^-4.
    const std::string note = "# 1000 requests; each key's count is within [lower, upper]: lower always, upper "
                             "unless the sketch errs by more than 1 (probability at most 0.0183)\n";
    CHECK(r.out.substr(0, 16) == "lower upper key\n");
    CHECK(r.out.find("\n500 ") != std::string::npos);
    CHECK(r.out.find(" hot\n") != std::string::npos);
    CHECK(r.out.find(" warm\n") != std::string::npos);
    CHECK(r.out.substr(r.out.size() - note.size()) == note);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);
    const auto j = run_cli({"hot-keys", "--json", "--top", "1"}, "a\nb\na\n");
    CHECK(j.out == "{\"requests\":3,\"error_bound\":1,\"failure_probability\":0.0183,\"candidates\":64,"
                   "\"width\":4096,\"depth\":4,\"keys\":[{\"key\":\"a\",\"lower\":2,\"upper\":2}]}\n");
    CHECK(run_cli({"hot-keys"}, "").out.substr(0, 16) == "lower upper key\n");
    expect_failure(run_cli({"hot-keys", "--candidates", "0"}, "a\n"), 2, "--candidates '0' is not an integer from 1 to 65536");
    expect_failure(run_cli({"hot-keys", "--width", "1000"}, "a\n"), 2, "sketch width 1000 is outside");
    expect_failure(run_cli({"hot-keys", "--depth", "0"}, "a\n"), 2, "--depth '0'");
    expect_failure(run_cli({"hot-keys", "--top", "x"}, "a\n"), 2, "--top 'x'");
}

TEST_CASE("cli: locate on the ring agrees with the golden vectors", "[cli]") {
    const auto r = run_cli({"locate", "--strategy", "ring", "--nodes", "c,a,b", "--vnodes", "4"},
                           "\na\nuser:42\n");
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "a\nc\na\n");
    const auto pre = run_cli({"locate", "--strategy", "ring", "--nodes", "c,a,b", "--vnodes", "4", "--prehashed"},
                             "0\n18446744073709551615\n3877701157136391456\n3877701157136391457");
    CHECK(pre.status == 0);
    CHECK(pre.out == "a\na\nc\nb\n");
}

TEST_CASE("cli: locate with modulo, weights, locations and node files", "[cli]") {
    const auto m = run_cli({"locate", "--strategy", "modulo", "--nodes", "c,a,b", "--prehashed"}, "0\n1\n5\n");
    CHECK(m.out == "a\nb\nc\n");

    const std::string keys = "k1\nk2\nk3\nk4\nk5\nk6\nk7\nk8\n";
    const auto inline_spec =
        run_cli({"locate", "--strategy", "ring", "--nodes", "a=2@eu/eu-1/r1,b@us,10.0.0.1:11211=0.5"}, keys);
    REQUIRE(inline_spec.status == 0);
    const auto path = temp_file("keyplace_cli_nodes.txt",
                                "# cluster\n\n  a=2@eu/eu-1/r1  \nb@us\r\n   # spare\n10.0.0.1:11211=0.5\n");
    const auto from_file = run_cli({"locate", "--strategy", "ring", "--nodes", "@" + path}, keys);
    CHECK(from_file.status == 0);
    CHECK(from_file.out == inline_spec.out);
    // Weight 2 changes placement against equal weights.
    const auto equal = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,10.0.0.1:11211"}, keys);
    CHECK(equal.out.size() > 0);
    std::filesystem::remove(path);
}

TEST_CASE("cli: locate with rendezvous, jump, jump-guava and maglev", "[cli]") {
    // tests/golden/rendezvous_native_v1.txt, case "three": "" and "a" both go to a.
    CHECK(run_cli({"locate", "--strategy", "rendezvous", "--nodes", "c,a,b"}, "\na\n").out == "a\na\n");
    // tests/golden/maglev_native_v1.txt, case "seven": entries 2,1,1,0,2,0,0 over a, b, c.
    CHECK(run_cli({"locate", "--strategy", "maglev", "--nodes", "c,a,b", "--table-size", "7", "--prehashed"},
                  "0\n6\n7\n1\n")
              .out == "c\na\nc\nb\n");
    // Jump keeps the node order as bucket order: go-jump's vectors, key 1 -> 0 and
    // 0xdeadbeef -> 2 for 3 buckets.
    CHECK(run_cli({"locate", "--strategy", "jump", "--nodes", "x,y,z", "--prehashed"}, "1\n3735928559\n").out ==
          "x\nz\n");
    // A key whose first LCG state has its top 31 bits set: Guava stops at bucket 0.
    const std::string odd_key = "4626093953513826134\n";
    CHECK(run_cli({"locate", "--strategy", "jump-guava", "--nodes", "x,y,z", "--prehashed"}, odd_key).out == "x\n");
    CHECK(run_cli({"locate", "--strategy", "jump", "--nodes", "x,y,z", "--prehashed"}, odd_key).out != "x\n");
}

TEST_CASE("cli: replicas spread over zones, degraded when relaxed", "[cli]") {
    // The README's worked example: 12 nodes, 3 zones x 2 racks.
    std::string spec;
    for (int z = 0; z < 3; ++z) {
        for (int k = 0; k < 2; ++k) {
            for (int n = 0; n < 2; ++n) {
                const std::string id = "z" + std::to_string(z) + "r" + std::to_string(k) + "n" + std::to_string(n);
                spec += id + "@eu/zone-" + std::to_string(z) + "/rack-" + std::to_string(k) + "\n";
            }
        }
    }
    const auto path = temp_file("keyplace_cli_zones.txt", spec);
    const std::string keys = "user:1\nuser:2\nuser:3\nuser:4\n";
    const auto r = run_cli({"locate", "--strategy", "ring", "--nodes", "@" + path, "--copies", "3", "--spread", "zone"}, keys);
    REQUIRE(r.status == 0);
    std::istringstream lines(r.out);
    std::size_t count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
        // Ids are z<zone>r<rack>n<n>: three copies, three different zone digits, no flag.
        REQUIRE(line.size() == 3 * 6 + 2);
        const std::set<char> zones{line[1], line[8], line[15]};
        CHECK(zones.size() == 3);
    }
    CHECK(count == 4);
    // The owner comes first: the same as plain locate.
    const auto owners = run_cli({"locate", "--strategy", "ring", "--nodes", "@" + path}, keys);
    CHECK(owners.out.substr(0, 6) == r.out.substr(0, 6));
    // Four copies over three zones: relax marks every line degraded; fail refuses.
    const auto relaxed = run_cli({"locate", "--strategy", "maglev", "--nodes", "@" + path, "--copies", "4",
                                  "--spread", "zone", "--on-shortfall", "relax"}, keys);
    REQUIRE(relaxed.status == 0);
    CHECK(std::count(relaxed.out.begin(), relaxed.out.end(), '\n') == 4);
    CHECK(relaxed.out.find(" degraded\n") != std::string::npos);
    expect_failure(run_cli({"locate", "--strategy", "rendezvous", "--nodes", "@" + path, "--copies", "4", "--spread",
                            "zone"}, keys),
                   1, "spreading 4 copies over zones needs 4 zones; there are 3 ('zone-0', 'zone-1', 'zone-2')");
    std::filesystem::remove(path);
}

TEST_CASE("cli: diff reports movement against the minimum", "[cli]") {
    std::string ten;
    for (int i = 0; i < 10; ++i) {
        ten += (i == 0 ? "" : ",") + std::string("node-") + std::to_string(i);
    }
    const std::string eleven = ten + ",node-10";
    const auto ring = run_cli({"diff", "--strategy", "ring", "--nodes-before", ten, "--nodes-after", eleven, "--json"});
    REQUIRE(ring.status == 0);
    // The exact figures come from analysis.hpp (tested against theory in analysis_test.cpp):
    // here, that the report carries them: no violations, moved equal to the minimum.
    const auto r = keyplace::movement(keyplace::ring::build(keyplace_test::make_nodes(10)),
                                      keyplace::ring::build(keyplace_test::make_nodes(11)));
    CHECK_THAT(ring.out, Catch::Matchers::Contains("\"violations\":0,"));
    CHECK_THAT(ring.out, Catch::Matchers::Contains("\"moved\":" + keyplace_cli::json_number(r.moved) + ","));
    CHECK_THAT(ring.out, Catch::Matchers::Contains("\"minimum\":" + keyplace_cli::json_number(r.minimum) + ","));
    CHECK(std::abs(r.moved - r.minimum) < 1e-12);
    const auto text = run_cli({"diff", "--strategy", "ring", "--nodes-before", ten, "--nodes-after", eleven});
    CHECK_THAT(text.out, Catch::Matchers::Contains("moved/minimum  1.000"));
    CHECK_THAT(text.out, Catch::Matchers::Contains("violations     0.0000%"));
    // Modulo: about 10/11 moved, most of it between nodes present before and after.
    const auto modulo = run_cli({"diff", "--strategy", "modulo", "--nodes-before", ten, "--nodes-after", eleven});
    CHECK_THAT(modulo.out, Catch::Matchers::Contains("moved          90."));
    CHECK_THAT(modulo.out, Catch::Matchers::Contains("violations     81."));
    // Identical memberships: nothing moves, and no division by zero.
    const auto same = run_cli({"diff", "--strategy", "maglev", "--nodes-before", ten, "--nodes-after", ten, "--json"});
    CHECK_THAT(same.out, Catch::Matchers::Contains("\"moved\":0,\"minimum\":0,"));
    CHECK(same.out.find("nan") == std::string::npos);
    // With a key file.
    const auto keys = temp_file("keyplace_cli_keys.txt", "a\nb\nc\nd\n");
    const auto keyed = run_cli({"diff", "--strategy", "rendezvous", "--nodes-before", "x,y", "--nodes-after", "x,y", "--keys", keys, "--json"});
    CHECK_THAT(keyed.out, Catch::Matchers::Contains("\"keys\":4,"));
    std::filesystem::remove(keys);
}

TEST_CASE("cli: stats reports shares and load", "[cli]") {
    const auto r = run_cli({"stats", "--strategy", "maglev", "--nodes", "a,b=2,c", "--table-size", "101", "--key-count", "1000", "--json"});
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Matchers::Contains("\"share_method\":\"exact\""));
    CHECK_THAT(r.out, Catch::Matchers::Contains("\"keys\":1000,"));
    const auto text = run_cli({"stats", "--strategy", "ring", "--nodes", "a,b", "--key-count", "10"});
    CHECK_THAT(text.out, Catch::Matchers::Contains("max/mean"));
    const auto rdv = run_cli({"stats", "--strategy", "rendezvous", "--nodes", "a,b"});
    CHECK_THAT(rdv.out, Catch::Matchers::Contains("share: sampled (within 0.4"));
    const auto json_hash = run_cli({"hash", "--function", "xxh3", "--json"}, "abc\n");
    CHECK(json_hash.out == "{\"function\":\"xxh3\",\"digests\":[\"78af5f94892f3950\"]}\n");
    const auto json_locate = run_cli({"locate", "--strategy", "ring", "--nodes", "c,a,b", "--vnodes", "4", "--json"}, "a\n");
    CHECK(json_locate.out == "{\"owners\":[\"c\"]}\n");
    CHECK(keyplace_cli::json_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\u000a\"");
}

TEST_CASE("cli: diff and stats reject bad input with one line", "[cli][errors]") {
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a"}), 2, "missing required option --nodes-after");
    expect_failure(run_cli({"diff", "--strategy", "chord", "--nodes-before", "a", "--nodes-after", "b"}), 2, "unknown strategy 'chord'");
    const auto empty = temp_file("keyplace_cli_empty_keys.txt", "");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--keys", empty}), 1,
                   "has no keys");
    std::filesystem::remove(empty);
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--keys", "/nonexistent/k"}), 1,
                   "cannot read key file");
    const auto bad = temp_file("keyplace_cli_bad_after.txt", "a\nb=oops\n");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "@" + bad}), 1,
                   bad + "':2: weight 'oops'");
    std::filesystem::remove(bad);
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--key-count", "0"}), 2,
                   "--key-count '0' is not an integer from 1 to 100000000");
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a,a"}), 2, "'a' appears more than once");
}

TEST_CASE("cli: bad node specs fail with one line naming the entry", "[cli][errors]") {
    auto locate = [](const std::string& spec) {
        return run_cli({"locate", "--strategy", "ring", "--nodes", spec}, "k\n");
    };
    expect_failure(locate(""), 2, "node list is empty");
    expect_failure(locate("a,,b"), 2, "entry 2 is empty");
    expect_failure(locate("a,"), 2, "entry 2 is empty");
    expect_failure(locate("a=x"), 2, "weight 'x' of node 'a' is not a number");
    expect_failure(locate("a=0"), 2, "'a': weight 0 is not finite and > 0");
    expect_failure(locate("a=-1"), 2, "weight -1");
    expect_failure(locate("a=nan"), 2, "weight nan");
    expect_failure(locate("a=inf"), 2, "weight inf");
    expect_failure(locate("a="), 2, "weight '' of node 'a'");
    expect_failure(locate("=2"), 2, "node id is empty");
    expect_failure(locate("a b"), 2, "contains ' '");
    expect_failure(locate("a@eu/z/r/x"), 2, "more than REGION/ZONE/RACK");
    expect_failure(locate("a,b,a"), 2, "'a' appears more than once");
    expect_failure(locate("a=0.001"), 2, "rounds to 0 points");
    expect_failure(locate("@/nonexistent/keyplace-nodes"), 1, "cannot read node file");
    const auto path = temp_file("keyplace_cli_bad.txt", "a\n# ok\nb=zz\n");
    expect_failure(locate("@" + path), 1, path + "':3: weight 'zz'");
    const auto empty = temp_file("keyplace_cli_empty.txt", "# nothing\n\n");
    expect_failure(locate("@" + empty), 1, "lists no nodes");
    std::filesystem::remove(path);
    std::filesystem::remove(empty);
}

TEST_CASE("cli: bad pre-hashed lines fail with the line number, no partial output", "[cli][errors]") {
    auto pre = [](const std::string& input) {
        return run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--prehashed"}, input);
    };
    expect_failure(pre("12\nx1\n"), 1, "stdin line 2: 'x1'");
    expect_failure(pre("-1\n"), 1, "line 1: '-1'");
    expect_failure(pre("+1\n"), 1, "'+1'");
    expect_failure(pre(" 1\n"), 1, "' 1'");
    expect_failure(pre("18446744073709551616\n"), 1, "'18446744073709551616'");
    expect_failure(pre("1\n\n2\n"), 1, "line 2: ''");
    expect_failure(pre("7\r\n"), 1, "'7\\x0d'");
}

TEST_CASE("cli: bad arguments fail with exit 2 and one line", "[cli][errors]") {
    expect_failure(run_cli({}), 2, "no command");
    expect_failure(run_cli({"place"}), 2, "unknown command 'place'");
    expect_failure(run_cli({"hash"}), 2, "missing required option --function");
    expect_failure(run_cli({"hash", "--function", "md4"}), 2, "unknown hash function 'md4'");
    expect_failure(run_cli({"hash", "--function"}), 2, "--function needs a value");
    expect_failure(run_cli({"hash", "--function", "xxh3", "--function", "xxh3"}), 2, "given twice");
    expect_failure(run_cli({"hash", "--function", "xxh3", "extra"}), 2, "unexpected argument 'extra'");
    expect_failure(run_cli({"locate", "--nodes", "a"}), 2, "missing required option --strategy");
    expect_failure(run_cli({"locate", "--strategy", "ring"}), 2, "missing required option --nodes");
    expect_failure(run_cli({"locate", "--strategy", "bogus", "--nodes", "a"}), 2, "unknown strategy 'bogus'");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--vnodes", "0"}), 2, "--vnodes: vnodes 0 is outside");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--vnodes", "1e3"}), 2, "'1e3'");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--vnodes", "4294967296"}), 2,
                   "vnodes 4294967296 is outside");
    expect_failure(run_cli({"locate", "--strategy", "modulo", "--nodes", "a", "--vnodes", "4"}), 2,
                   "only to --strategy ring");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--prehashed=yes"}), 2, "takes no value");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--table-size", "7"}), 2,
                   "only to --strategy maglev");
    // The library checks table sizes and reports them as it reports a membership it refuses.
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a", "--table-size", "8"}), 2,
                   "table size 8 is not a prime");
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a", "--table-size", "4294967311"}), 2,
                   "table size 4294967311 is above the largest, 4294967291");
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a", "--table-size", "x"}), 2,
                   "--table-size 'x' is not an unsigned integer");
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a,b,c", "--table-size", "2"}, "k\n"), 2,
                   "table size 2 is smaller than the 3 nodes");
    expect_failure(run_cli({"locate", "--strategy", "jump", "--nodes", "a,b=2"}, "k\n"), 2,
                   "jump places every node with weight 1");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--count", "3"}), 2,
                   "unknown option '--count'");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--copies", "0"}), 2,
                   "--copies '0' is not a positive integer");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--copies", "2", "--spread", "planet"}),
                   2, "--spread 'planet' is not a level");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--copies", "2", "--on-shortfall", "maybe"}),
                   2, "--on-shortfall 'maybe' is not fail or relax");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread", "zone"}), 2,
                   "--spread and --on-shortfall need --copies");
    expect_failure(run_cli({"locate", "--strategy", "jump", "--nodes", "a,b", "--copies", "2"}, "k\n"), 2,
                   "--copies needs a strategy with a preference order");
    const auto help = run_cli({"--help"});
    CHECK(help.status == 0);
    CHECK_THAT(help.out, Catch::Matchers::Contains("usage:"));
}

TEST_CASE("cli: cassandra rings from tokens, with SimpleStrategy and NetworkTopologyStrategy", "[cli][cassandra]") {
    // "hello" has token -3758069500696749310 (cassandra-dtest's token table).
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", "low=-4000000000000000000,high=0"}, "hello\n").out ==
          "high\n");
    // The ring of the hand-worked NetworkTopologyStrategy case in cassandra_test.cpp.
    const std::string ring = "n1=0;30@dc1/r1,n2=10@dc1/r1,n3=20@dc1/r2,n4=5@dc2/r1,n5=15@dc2/r1";
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", ring, "--prehashed", "--copies", "dc1:3,dc2:2"},
                  "-1\n12\n")
              .out == "n1,n4,n2,n5,n3\nn5,n3,n1,n4,n2\n");
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", ring, "--prehashed", "--copies", "3"}, "-1\n").out ==
          "n1,n4,n2\n");
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", ring, "--prehashed", "--copies", "2", "--json"},
                  "-1\n")
              .out == "{\"replicas\":[[\"n1\",\"n4\"]]}\n");
    const auto file = temp_file("keyplace_cli_cassandra.txt", "# tokens\nlow=-4000000000000000000@dc1/r1\nhigh=0@dc1\n");
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", "@" + file}, "hello\n").out == "high\n");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1;x"}, "k\n"), 2, "token 'x' of node 'a'");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a"}, "k\n"), 2, "'a' has no tokens");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1@dc/r/x"}, "k\n"), 2,
                   "location 'dc/r/x' of node 'a' has more than DC/RACK");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1,b=1"}, "k\n"), 2,
                   "token 1 is owned by both 'a' and 'b'");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1", "--copies", "dc9:2"}, "k\n"), 2,
                   "datacenter 'dc9'");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1", "--copies", "0"}, "k\n"), 2,
                   "--copies '0'");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1", "--copies", "dc1:x"}, "k\n"), 2,
                   "entry 'dc1:x' is not DC:RF");
    // One --copies: cassandra reads it as Cassandra's replication, the others as a count only.
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--copies", "dc1:2"}, "k\n"), 2,
                   "--copies 'dc1:2' is not a positive integer");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=1", "--prehashed"}, "1.5\n"), 1,
                   "'1.5' is not a signed decimal 64-bit token");
}

TEST_CASE("cli: redis slot maps from ranges or an even split", "[cli][redis]") {
    // somekey is slot 11058, foo{hash_tag} slot 2515 (redis.io's cluster specification).
    CHECK(run_cli({"locate", "--strategy", "redis", "--nodes", "a=0-5460,b=5461-10922,c=10923-16383"},
                  "somekey\nfoo{hash_tag}\n")
              .out == "c\na\n");
    CHECK(run_cli({"locate", "--strategy", "redis", "--nodes", "a=0-100;200-16383,b=101-199"}, "somekey\n").out == "a\n");
    // Even split: floor(i * 16384 / 3): a 0-5460, b 5461-10921, c 10922-16383.
    CHECK(run_cli({"locate", "--strategy", "redis", "--nodes", "c,a,b"}, "somekey\nfoo{hash_tag}\n").out == "c\na\n");
    expect_failure(run_cli({"locate", "--strategy", "redis", "--nodes", "a=0-5460,b"}, "k\n"), 2, "on every node or on none");
    expect_failure(run_cli({"locate", "--strategy", "redis", "--nodes", "a=0-x"}, "k\n"), 2, "slot range '0-x' of node 'a'");
    expect_failure(run_cli({"locate", "--strategy", "redis", "--nodes", "a=0-16000"}, "k\n"), 2, "16001");
}

TEST_CASE("cli: redis create and rebalance plan as redis-cli does", "[cli][redis][planner]") {
    // The plans a real redis-cli 7.0.15 printed on loopback.
    CHECK(run_cli({"redis", "create", "--nodes", "127.0.0.1:7221,127.0.0.1:7222,127.0.0.1:7223"}).out ==
          "127.0.0.1:7221=0-5460\n127.0.0.1:7222=5461-10922\n127.0.0.1:7223=10923-16383\n");
    const std::string map = "127.0.0.1:7221=0-5460,127.0.0.1:7222=5461-10922,127.0.0.1:7223=10923-16383";
    CHECK(run_cli({"redis", "rebalance", "--nodes", map, "--weights", "127.0.0.1:7223=1.1"}).out ==
          "Moving 177 slots from 127.0.0.1:7222 to 127.0.0.1:7223: 5461-5637\n"
          "Moving 176 slots from 127.0.0.1:7221 to 127.0.0.1:7223: 0-175\n");
    CHECK(run_cli({"redis", "rebalance", "--nodes", map}).out ==
          "No rebalancing needed: every master is within the 2% threshold\n");
    // A master added without slots (ID=) takes part with --use-empty-masters.
    CHECK(run_cli({"redis", "rebalance", "--nodes", map + ",127.0.0.1:7224="}).out.substr(0, 22) == "No rebalancing needed:");
    CHECK(run_cli({"redis", "rebalance", "--nodes", map + ",127.0.0.1:7224=", "--use-empty-masters"}).out ==
          "Moving 1366 slots from 127.0.0.1:7222 to 127.0.0.1:7224: 5461-6826\n"
          "Moving 1365 slots from 127.0.0.1:7223 to 127.0.0.1:7224: 10923-12287\n"
          "Moving 1365 slots from 127.0.0.1:7221 to 127.0.0.1:7224: 0-1364\n");
    const auto empty = run_cli({"redis", "rebalance", "--nodes", map, "--weights", "127.0.0.1:7223=2", "--json"});
    CHECK(empty.out ==
          "{\"needed\":true,\"balances\":[{\"node\":\"127.0.0.1:7221\",\"balance\":1365},"
          "{\"node\":\"127.0.0.1:7222\",\"balance\":1366},{\"node\":\"127.0.0.1:7223\",\"balance\":-2731}],"
          "\"moves\":[{\"from\":\"127.0.0.1:7222\",\"to\":\"127.0.0.1:7223\",\"count\":1366,"
          "\"slots\":[[5461,6826]]},{\"from\":\"127.0.0.1:7221\",\"to\":\"127.0.0.1:7223\",\"count\":1365,"
          "\"slots\":[[0,1364]]}]}\n");
    expect_failure(run_cli({"redis", "create", "--nodes", "a:1,b:1"}), 2, "requires at least 3");
    expect_failure(run_cli({"redis", "rebalance", "--nodes", map, "--weights", "x"}), 2, "--weights entry 'x' is not ID=WEIGHT");
    expect_failure(run_cli({"redis", "rebalance", "--nodes", map, "--weights", "zz=1"}), 2, "no such master node 'zz'");
    expect_failure(run_cli({"redis", "rebalance", "--nodes", map, "--threshold", "two"}), 2, "--threshold 'two' is not a number");
    expect_failure(run_cli({"redis", "rebalance", "--nodes", "a,b,c"}), 2, "give each master its slot ranges");
    expect_failure(run_cli({"redis"}), 2, "redis needs a subcommand: create or rebalance");
}

TEST_CASE("cli: allocate proposes tokens that the ring then uses", "[cli][allocate]") {
    // Three racks, RF 3 in dc1: Cassandra allocates over racks (racks == RF: per rack, RF 1).
    const std::string ring = "n1=-6000000000000000000;3000000000000000000@dc1/r1,"
                             "n2=-3000000000000000000;6000000000000000000@dc1/r2,"
                             "n3=0;9000000000000000000@dc1/r3";
    const auto r = run_cli({"allocate", "--strategy", "cassandra", "--nodes", ring, "--add", "n4@dc1/r1", "--tokens",
                            "4", "--copies", "dc1:3"});
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("n4=", 0) == 0);
    CHECK_THAT(r.out, Catch::Matchers::EndsWith("@dc1/r1\n"));
    CHECK(std::count(r.out.begin(), r.out.end(), ';') == 3);
    // The entry printed joins the ring as it is.
    const auto grown = ring + "," + r.out.substr(0, r.out.size() - 1);
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--nodes", grown}, "k\n").status == 0);
    // Same inputs, same tokens; --json gives them with Cassandra's initial_token line.
    CHECK(run_cli({"allocate", "--strategy", "cassandra", "--nodes", ring, "--add", "n4@dc1/r1", "--tokens", "4",
                   "--copies", "dc1:3"})
              .out == r.out);
    const auto json = run_cli({"allocate", "--strategy", "cassandra", "--nodes", ring, "--add", "n4@dc1/r1",
                               "--tokens", "4", "--copies", "dc1:3", "--json"});
    CHECK_THAT(json.out, Catch::Matchers::Contains("\"initial_token\":\""));
    // Two racks for RF 3: Cassandra refuses, and so do we.
    expect_failure(run_cli({"allocate", "--strategy", "cassandra", "--nodes", "n1=0@dc1/r1,n2=100@dc1/r2", "--add",
                            "n3@dc1/r1", "--copies", "dc1:3"}),
                   2, "racks");
    // The native ring of chosen tokens, RF 2 over racks.
    const auto t = run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1000;9000000000000000000@eu/z/r1,b=5000000000000000000@eu/z/r2",
                            "--add", "c@eu/z/r3", "--tokens", "3", "--copies", "2", "--spread", "rack"});
    REQUIRE(t.status == 0);
    CHECK(t.out.rfind("c=", 0) == 0);
    CHECK(std::count(t.out.begin(), t.out.end(), ';') == 2);
    CHECK(run_cli({"locate", "--strategy", "tokens", "--nodes",
                   "a=1000;9000000000000000000@eu/z/r1,b=5000000000000000000@eu/z/r2," + t.out.substr(0, t.out.size() - 1)},
                  "k\n")
              .status == 0);
    expect_failure(run_cli({"allocate", "--strategy", "ring", "--nodes", "a", "--add", "b", "--copies", "1"}), 2,
                   "allocate --strategy 'ring' is not cassandra or tokens");
    expect_failure(run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1", "--add", "b", "--copies", "dc1:2"}),
                   2, "--copies for --strategy tokens is RF");
    expect_failure(run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1", "--add", "a", "--copies", "1"}), 2,
                   "'a'");
    expect_failure(run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1", "--add", "b", "--copies", "1",
                            "--tokens", "0"}),
                   2, "--tokens");
    expect_failure(run_cli({"locate", "--strategy", "tokens", "--nodes", "a=x"}, "k\n"), 2,
                   "token 'x' of node 'a' is not an unsigned decimal 64-bit integer");
    expect_failure(run_cli({"locate", "--strategy", "tokens", "--nodes", "a"}, "k\n"), 2, "has no tokens");
}

TEST_CASE("cli: allocate starts a tokens ring from nothing, as the library does", "[cli][allocate]") {
    // The tokens the library gives the first node of an empty ring, then the second joining it.
    const auto entry = [](const keyplace::node& n, const std::vector<std::uint64_t>& tokens) {
        std::string e = n.id + "=";
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            e += (i == 0 ? "" : ";") + std::to_string(tokens[i]);
        }
        return e + "@" + n.where.region + "/" + n.where.zone + "/" + n.where.rack;
    };
    const keyplace::node a{"a", 1.0, {"eu", "z", "r1"}};
    const keyplace::node b{"b", 1.0, {"eu", "z", "r2"}};
    const keyplace::token_replication rf2{2, keyplace::failure_domain::rack};
    std::vector<keyplace::token_holder> ring;
    ring.push_back({a, keyplace::allocate_tokens(ring, a, 4, rf2, 42)});
    const auto first = entry(a, ring[0].tokens);
    const auto second = entry(b, keyplace::allocate_tokens(ring, b, 4, rf2, 42));
    const auto r = run_cli({"allocate", "--strategy", "tokens", "--nodes", "", "--add", "a@eu/z/r1", "--tokens", "4",
                            "--copies", "2", "--spread", "rack", "--seed", "42"});
    CHECK(r.err.empty());
    CHECK(r.status == 0);
    CHECK(r.out == first + "\n");
    // A node file that lists no node yet is the same empty ring.
    const auto empty = temp_file("keyplace_cli_allocate_empty.txt", "# no node yet\n\n");
    CHECK(run_cli({"allocate", "--strategy", "tokens", "--nodes", "@" + empty, "--add", "a@eu/z/r1", "--tokens", "4",
                   "--copies", "2", "--spread", "rack", "--seed", "42"})
              .out == first + "\n");
    // The entry printed is the ring the next node joins.
    CHECK(run_cli({"allocate", "--strategy", "tokens", "--nodes", first, "--add", "b@eu/z/r2", "--tokens", "4",
                   "--copies", "2", "--spread", "rack", "--seed", "42"})
              .out == second + "\n");
    // A Cassandra ring is built from at least one node (the library's cassandra_ring): refused by name.
    expect_failure(run_cli({"allocate", "--strategy", "cassandra", "--nodes", "", "--add", "n1@dc1/r1",
                            "--copies", "dc1:1"}),
                   2, "--strategy cassandra needs at least one node");
}

TEST_CASE("cli: partitions place by table, with replicas per partition", "[cli][partitions]") {
    // Q = 4, three nodes: quotas 1..2 each; the prehashed points' top two bits name the partition.
    const auto owners = run_cli({"locate", "--strategy", "partitions", "--partitions", "4", "--nodes", "a,b,c",
                                 "--prehashed"},
                                "0\n4611686018427387904\n9223372036854775808\n13835058055282163712\n");
    REQUIRE(owners.status == 0);
    CHECK(std::count(owners.out.begin(), owners.out.end(), '\n') == 4);
    const auto copies = run_cli({"locate", "--strategy", "partitions", "--partitions", "64", "--nodes",
                                 "a@x/z1/r1,b@x/z1/r2,c@x/z2/r3,d@x/z2/r4", "--copies", "2", "--spread", "zone"},
                                "k1\nk2\nk3\n");
    REQUIRE(copies.status == 0);
    std::istringstream lines(copies.out);
    for (std::string line; std::getline(lines, line);) {
        const auto comma = line.find(',');
        REQUIRE(comma != std::string::npos);
        const std::string first = line.substr(0, comma);
        const std::string second = line.substr(comma + 1);
        // One copy in each zone.
        CHECK(((first < "c") != (second < "c")));
    }
    expect_failure(run_cli({"locate", "--strategy", "partitions", "--partitions", "12", "--nodes", "a,b"}, "k\n"), 2,
                   "12");
    // diff derives the after table from the before one (the table is state): a fourth node takes
    // its quota of 256 / 4 = 64 partitions, a quarter of the keys, and nothing else moves.
    const auto moved = run_cli({"diff", "--strategy", "partitions", "--partitions", "256", "--nodes-before", "a,b,c",
                                "--nodes-after", "a,b,c,d", "--json"});
    CHECK_THAT(moved.out, Catch::Matchers::Contains("\"moved\":0.25,\"minimum\":0.25,"));
    CHECK_THAT(moved.out, Catch::Matchers::Contains("\"violations\":0,"));
    // A leave, a join and a weight change at once: one claim, still exactly the minimum.
    const auto mixed = run_cli({"diff", "--strategy", "partitions", "--partitions", "256", "--nodes-before", "a,b,c,d",
                                "--nodes-after", "a,c,d,e=2"});
    CHECK_THAT(mixed.out, Catch::Matchers::Contains("moved/minimum  1.000\n"));
}

TEST_CASE("cli: envoy ring hash and Maglev match Envoy's own test vectors", "[cli][envoy]") {
    // envoyproxy/envoy's ring_hash_lb_test.cc (Basic, BasicWithMurmur2) and
    // (maglev_lb_test.cc Basic, M = 7, table [2, 4, 0, 1, 5, 0, 3]).
    const std::string hosts90 = "127.0.0.1:90,127.0.0.1:91,127.0.0.1:92,127.0.0.1:93,127.0.0.1:94,127.0.0.1:95";
    CHECK(run_cli({"locate", "--strategy", "envoy-ring", "--min-ring-size", "12", "--prehashed", "--nodes", hosts90},
                  "0\n18446744073709551615\n3551244743356806947\n3551244743356806948\n16117243373044804880\n")
              .out == "127.0.0.1:94\n127.0.0.1:94\n127.0.0.1:95\n127.0.0.1:93\n127.0.0.1:90\n");
    const std::string hosts80 = "127.0.0.1:80,127.0.0.1:81,127.0.0.1:82,127.0.0.1:83,127.0.0.1:84,127.0.0.1:85";
    CHECK(run_cli({"locate", "--strategy", "envoy-ring", "--hash", "murmur2-envoy", "--min-ring-size", "12",
                   "--prehashed", "--nodes", hosts80},
                  "0\n1358027074129602069\n10150910876324007730\n")
              .out == "127.0.0.1:85\n127.0.0.1:83\n127.0.0.1:82\n");
    // Maglev sorts hosts by key, so their order in SPEC does not matter.
    const std::string shuffled = "127.0.0.1:95,127.0.0.1:91,127.0.0.1:90,127.0.0.1:93,127.0.0.1:94,127.0.0.1:92";
    CHECK(run_cli({"locate", "--strategy", "envoy-maglev", "--table-size", "7", "--prehashed", "--nodes", shuffled},
                  "0\n1\n2\n3\n4\n5\n6\n13\n")
              .out == "127.0.0.1:92\n127.0.0.1:94\n127.0.0.1:90\n127.0.0.1:91\n127.0.0.1:95\n127.0.0.1:90\n127.0.0.1:93\n"
                      "127.0.0.1:93\n");
    // libstdc++'s std::hash<std::string>("127.0.0.1:85_0"), the first entry of the Murmur2 ring.
    CHECK(run_cli({"hash", "--function", "murmur2-envoy"}, "127.0.0.1:85_0\n").out == "1358027074129602068\n");
    expect_failure(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a", "--min-ring-size", "20",
                            "--max-ring-size", "10"}, "k\n"),
                   2, "minimum_ring_size (20) > maximum_ring_size (10)");
    expect_failure(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a", "--hash", "md5"}, "k\n"), 2,
                   "--hash: parameter 'hash' of 'envoy-ring': 'md5' is not one of xxh64, murmur2-envoy");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--hash", "xxh64"}, "k\n"), 2,
                   "--hash applies only to --strategy envoy-ring");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--min-ring-size", "8"}, "k\n"), 2,
                   "--min-ring-size applies only to --strategy envoy-ring, not to ring");
    expect_failure(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a", "--min-ring-size", "x"}, "k\n"), 2,
                   "--min-ring-size 'x'");
    expect_failure(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a,b=1.5"}, "k\n"), 2, "1.5");
}

TEST_CASE("cli: ketama dialects place keys as libmemcached and libketama do", "[cli][ketama]") {
    // libmemcached's fixture servers and sample rows (weighted
    // and spy), libketama's test.sh first keys, and the rows run on libmemcached 1.1.4.
    const std::string fixture =
        "10.0.1.1:11211=600,10.0.1.2:11211=300,10.0.1.3:11211=200,10.0.1.4:11211=350,"
        "10.0.1.5:11211=1000,10.0.1.6:11211=800,10.0.1.7:11211=950,10.0.1.8:11211=100";
    CHECK(run_cli({"locate", "--strategy", "ketama", "--nodes", fixture}, "SVa_]_V41)\nERR:EC58G>\n1I=cTMNTKF\n").out ==
          "10.0.1.7:11211\n10.0.1.7:11211\n10.0.1.5:11211\n");
    CHECK(run_cli({"locate", "--strategy", "ketama-spy", "--nodes", fixture}, "SVa_]_V41)\n1I=cTMNTKF\n").out ==
          "10.0.1.2:11211\n10.0.1.4:11211\n");
    CHECK(run_cli({"locate", "--strategy", "libketama", "--nodes", fixture}, "0\n1\n2\n").out ==
          "10.0.1.1:11211\n10.0.1.5:11211\n10.0.1.6:11211\n");
    // Python hash_ring: node-hashring's hash_ring.txt fixture (tests/golden/ketama), keys 0..9.
    CHECK(run_cli({"locate", "--strategy", "hash-ring", "--nodes", "0.0.0.1=1,0.0.0.2=2,0.0.0.3=3,0.0.0.4=4,0.0.0.5=5"},
                  "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n")
              .out == "0.0.0.4\n0.0.0.5\n0.0.0.4\n0.0.0.3\n0.0.0.5\n0.0.0.2\n0.0.0.5\n0.0.0.2\n0.0.0.5\n0.0.0.4\n");
    const std::string three = "10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11212";
    const std::string keys = "test\nfoo\nbar\nhello\n0\n1\n2\n3\nkey1\nkey2\n";
    auto ids = [](const std::string& indices) {
        std::string out;
        for (const char c : indices) {
            out += "10.0.0." + std::string(1, static_cast<char>(c + 1)) + (c == '2' ? ":11212\n" : ":11211\n");
        }
        return out;
    };
    CHECK(run_cli({"locate", "--strategy", "ketama-unweighted", "--nodes", three}, keys).out == ids("1101000101"));
    CHECK(run_cli({"locate", "--strategy", "ketama-unweighted", "--hash", "md5-ketama", "--nodes", three}, keys).out ==
          ids("2212221101"));
    CHECK(run_cli({"locate", "--strategy", "ketama", "--nodes", three}, keys).out == ids("0111222120"));
    // The default port is implied: "10.0.0.1" is 10.0.0.1:11211.
    CHECK(run_cli({"locate", "--strategy", "ketama", "--nodes", "10.0.0.1,10.0.0.2,10.0.0.3:11212"}, keys).out ==
          ids("0111222120"));
    CHECK(run_cli({"hash", "--function", "md5-ketama"}, "test\nfoo\n\n").out == "3446378249\n3675831724\n3649838548\n");
    CHECK(run_cli({"hash", "--function", "one-at-a-time"}, "hello\n").out == "3372029979\n");
    expect_failure(run_cli({"locate", "--strategy", "ketama", "--nodes", "a=1.5"}, "k\n"), 2,
                   "ketama weight 1.5 of server 'a' is not a whole number");
    expect_failure(run_cli({"locate", "--strategy", "ketama-unweighted", "--nodes", "a=2,b"}, "k\n"), 2, "weight");
    expect_failure(run_cli({"locate", "--strategy", "ketama", "--nodes", "a:99999"}, "k\n"), 2, "99999");
    expect_failure(run_cli({"locate", "--strategy", "ketama-unweighted", "--nodes", "a", "--hash", "xxh64"}, "k\n"), 2,
                   "'xxh64' is not one of one-at-a-time, md5-ketama");
    expect_failure(run_cli({"locate", "--strategy", "ketama", "--nodes", "a", "--hash", "md5-ketama"}, "k\n"), 2,
                   "--hash applies only to");
}

TEST_CASE("cli: points and factors beyond a mode's range are refused or capped", "[cli][errors]") {
    // Cassandra allows an RF above the node count: every node once, no giant buffer.
    CHECK(run_cli({"locate", "--strategy", "cassandra", "--prehashed", "--nodes", "a=0,b=10", "--copies", "4000000000"},
                  "-1\n")
              .out == "a,b\n");
    // A pre-hashed point the strategy would truncate is an input error naming the line.
    expect_failure(run_cli({"locate", "--strategy", "redis", "--prehashed", "--nodes", "a,b"}, "16383\n16384\n"), 1,
                   "stdin line 2: point '16384' is above 16383");
    CHECK(run_cli({"locate", "--strategy", "redis", "--prehashed", "--nodes", "a,b"}, "16383\n").out == "b\n");
    expect_failure(run_cli({"locate", "--strategy", "ketama", "--prehashed", "--nodes", "a,b"}, "4294967296\n"), 1,
                   "point '4294967296' is above 4294967295");
    CHECK(run_cli({"locate", "--strategy", "ketama", "--prehashed", "--nodes", "a,b"}, "4294967295\n").status == 0);
}

TEST_CASE("cli: --version prints the library and placement contract versions", "[cli]") {
    const auto v = keyplace::version;
    const auto r = run_cli({"--version"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "keyplace-cli " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                       std::to_string(v.patch) + " (placement contract " + std::to_string(v.contract) + ")\n");
    expect_failure(run_cli({"--version", "x"}), 2, "unexpected argument 'x'");
}

TEST_CASE("cli: a failed write and anything thrown are failures with one line", "[cli][errors]") {
    std::istringstream in("abc\n");
    std::ostringstream out;
    std::ostringstream err;
    out.setstate(std::ios::badbit);
    const std::vector<std::string_view> args{"hash", "--function", "xxh3"};
    CHECK(keyplace_cli::run(args, in, out, err) == 1);
    CHECK(err.str() == "keyplace-cli: cannot write the output\n");
    // More keys than a vector can hold: refused before anything is allocated.
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--key-count", "18446744073709551615"}), 2,
                   "--key-count");
}

namespace {

// A SPEC every strategy of the registry builds from: tokens for the token ring, bare ids
// (hosts, an even slot split) for the rest.
auto spec_for(std::string_view strategy) -> std::string {
    if (strategy == "tokens") {
        return "a=3000000000000000000,b=9000000000000000000,c=15000000000000000000";
    }
    return strategy == "cassandra" ? "a=-3000000000000000000,b=0,c=3000000000000000000" : "a,b,c";
}

}  // namespace

namespace {

// What the registry says of each entry, gathered once: the tests below loop over it at run time,
// so their bodies are compiled once, not once per strategy and command.
struct option_fact {
    std::string name;  // without "--"
    std::string described;
    std::string fallback;  // the documented default, or empty
    std::vector<std::string> choices;  // a choice option's entries
};

struct strategy_fact {
    std::string name;
    bool ordered = false;
    std::vector<option_fact> build_options;
    std::vector<option_fact> locate_options;
    [[nodiscard]] auto options(keyplace_cli::strategy_use use) const -> const std::vector<option_fact>& {
        return use == keyplace_cli::strategy_use::locate ? locate_options : build_options;
    }
    [[nodiscard]] auto takes(std::string_view option, keyplace_cli::strategy_use use) const -> bool {
        const auto& own = options(use);
        return std::any_of(own.begin(), own.end(), [&](const option_fact& o) { return o.name == option; });
    }
};

struct command_fact {
    std::string name;
    keyplace_cli::strategy_use use;
    bool is_hash = false;
    std::vector<std::string> options;
};

template <class E>
auto options_of(keyplace_cli::strategy_use use) -> std::vector<option_fact> {
    std::vector<option_fact> out;
    keyplace_cli::for_each_option<E>(use, [&](const auto& o) {
        option_fact f{std::string(o.spec.name), o.describe(), o.default_text(), {}};
        if constexpr (requires { typename std::remove_cvref_t<decltype(o)>::list; }) {
            for (const auto choice : keyplace_cli::entry_names(typename std::remove_cvref_t<decltype(o)>::list{})) {
                f.choices.emplace_back(choice);
            }
        } else if constexpr (requires { o.param->names; }) {  // a strategy-table parameter
            for (const auto choice : o.param->names) {
                f.choices.emplace_back(choice);
            }
        }
        out.push_back(std::move(f));
    });
    return out;
}

auto strategy_facts() -> const std::vector<strategy_fact>& {
    static const auto facts = [] {
        std::vector<strategy_fact> out;
        keyplace_cli::for_each_entry(keyplace_cli::strategies{}, [&]<class E>(std::type_identity<E>) {
            out.push_back({std::string(E::name), keyplace_cli::has_order<E>,
                           options_of<E>(keyplace_cli::strategy_use::build),
                           options_of<E>(keyplace_cli::strategy_use::locate)});
        });
        return out;
    }();
    return facts;
}

auto command_facts() -> std::vector<command_fact> {
    std::vector<command_fact> out;
    keyplace_cli::for_each_entry(keyplace_cli::commands{}, [&]<class C>(std::type_identity<C>) {
        command_fact f{std::string(C::name), C::strategy_options, std::is_same_v<C, keyplace_cli::hash_command>, {}};
        keyplace_cli::for_each_in(C::options(), [&](const auto& o) { f.options.emplace_back(o.spec.name); });
        out.push_back(std::move(f));
    });
    return out;
}

auto hash_function_names() -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto n : keyplace_cli::entry_names(keyplace_cli::hash_functions{})) {
        out.emplace_back(n);
    }
    return out;
}

}  // namespace

TEST_CASE("cli: the registry facts the tests loop over are every entry", "[cli]") {
    // The run-time lists below stand for the compile-time registry: same entries, same order.
    const auto strategies = keyplace_cli::entry_names(keyplace_cli::strategies{});
    REQUIRE(strategy_facts().size() == strategies.size());
    for (std::size_t i = 0; i < strategies.size(); ++i) {
        CHECK(strategy_facts()[i].name == strategies[i]);
    }
    REQUIRE(command_facts().size() == keyplace_cli::entry_names(keyplace_cli::commands{}).size());
    std::vector<std::string_view> ordered;
    for (const auto& e : strategy_facts()) {
        if (e.ordered) {
            ordered.push_back(e.name);
        }
    }
    CHECK(ordered == keyplace_cli::ordered_strategy_names());
    CHECK(!ordered.empty());
}

TEST_CASE("cli: COMMAND --help prints the command's options and every entry, to stdout", "[cli]") {
    using keyplace_cli::strategy_use;
    for (const auto& c : command_facts()) {
        INFO(c.name);
        const auto r = run_cli({c.name, "--help"});
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(r.out.rfind("usage: keyplace-cli " + c.name + " ", 0) == 0);
        for (const auto& o : c.options) {
            CHECK_THAT(r.out, Catch::Matchers::Contains("--" + o));
        }
        if (c.is_hash) {
            for (const auto& h : hash_function_names()) {
                CHECK_THAT(r.out, Catch::Matchers::Contains("\n  " + h + " "));
            }
        } else if (c.use != strategy_use::none) {
            for (const auto& e : strategy_facts()) {
                CHECK_THAT(r.out, Catch::Matchers::Contains("\n  " + e.name + " "));
                for (const auto& o : e.options(c.use)) {
                    CHECK_THAT(r.out, Catch::Matchers::Contains(o.described));
                }
            }
        }
        // --help wins over whatever follows it, and over missing required options.
        CHECK(run_cli({c.name, "--help", "--bogus"}).out == r.out);
        CHECK(run_cli({c.name, "-h"}).out == r.out);
    }
    CHECK_THAT(run_cli({"locate", "--help"}).out, Catch::Matchers::Contains("--vnodes V"));
    CHECK_THAT(run_cli({"locate", "--help"}).out, Catch::Matchers::Contains("(default 160)"));
    // --copies is a locate option, in cassandra's replication form under cassandra.
    CHECK_THAT(run_cli({"locate", "--help"}).out, Catch::Matchers::Contains("--copies N"));
    CHECK_THAT(run_cli({"locate", "--help"}).out, Catch::Matchers::Contains("--copies RF|DC:RF,..."));
    CHECK_THAT(run_cli({"stats", "--help"}).out, !Catch::Matchers::Contains("--copies"));
    // The overall usage names every command, strategy and hash function.
    const auto usage = run_cli({"--help"});
    CHECK(usage.status == 0);
    for (const auto& list : {keyplace_cli::entry_names(keyplace_cli::commands{}),
                            keyplace_cli::entry_names(keyplace_cli::strategies{}),
                            keyplace_cli::entry_names(keyplace_cli::hash_functions{})}) {
        for (const auto n : list) {
            CHECK_THAT(usage.out, Catch::Matchers::Contains("\n  " + std::string(n) + " "));
        }
    }
}

TEST_CASE("cli: an option a strategy does not take is a usage error naming both", "[cli][errors]") {
    expect_failure(run_cli({"stats", "--strategy", "maglev", "--nodes", "a", "--vnodes", "4"}), 2,
                   "--vnodes applies only to --strategy ring, not to maglev");
    expect_failure(run_cli({"locate", "--strategy", "jump", "--nodes", "a", "--table-size", "7"}, "k\n"), 2,
                   "--table-size applies only to --strategy maglev and envoy-maglev, not to jump");
    // Every strategy against every option of the others, in every command that takes it.
    using keyplace_cli::strategy_use;
    for (const auto use : {strategy_use::build, strategy_use::locate}) {
        const char* command = use == strategy_use::locate ? "locate" : "stats";
        for (const auto& e : strategy_facts()) {
            for (const auto& o : keyplace_cli::all_strategy_options(use)) {
                // --copies is every ordered strategy's (cassandra takes it in its own form).
                if (e.takes(o.name, use) || o.name == keyplace_cli::copies_name) {
                    continue;
                }
                const std::string option = "--" + std::string(o.name);
                INFO(e.name << " " << option);
                expect_failure(run_cli({command, "--strategy", e.name, "--nodes", spec_for(e.name), option, "1"}, "k\n"),
                               2, option + " applies only to --strategy ");
                CHECK_THAT(run_cli({command, "--strategy", e.name, "--nodes", spec_for(e.name), option, "1"}).err,
                           Catch::Matchers::EndsWith(", not to " + e.name + "\n"));
            }
        }
    }
    // Replica options exist in locate only; cassandra's --copies is its replication, which no
    // --spread or --on-shortfall shapes.
    expect_failure(run_cli({"stats", "--strategy", "cassandra", "--nodes", "a=0", "--copies", "1"}), 2,
                   "unknown option '--copies'");
    expect_failure(run_cli({"locate", "--strategy", "cassandra", "--nodes", "a=0", "--copies", "1", "--spread", "zone"},
                           "k\n"),
                   2, "--spread and --on-shortfall do not apply to a strategy whose --copies is its own replication");
}

TEST_CASE("cli: every registry entry is reachable, and each option's default is its default", "[cli]") {
    const std::string keys = "a\nb\nuser:42\n\n";
    for (const auto& e : strategy_facts()) {
        const std::string spec = spec_for(e.name);
        INFO(e.name);
        const auto located = run_cli({"locate", "--strategy", e.name, "--nodes", spec}, keys);
        REQUIRE(located.status == 0);
        CHECK(located.err.empty());
        std::istringstream lines(located.out);
        std::size_t count = 0;
        for (std::string line; std::getline(lines, line); ++count) {
            // One of the nodes, as the strategy names it (libmemcached adds the default port).
            const auto id = line.substr(0, line.find(":11211"));
            CHECK((id == "a" || id == "b" || id == "c"));
        }
        CHECK(count == 4);
        const auto stats = run_cli({"stats", "--strategy", e.name, "--nodes", spec, "--key-count", "300"});
        CHECK(stats.status == 0);
        CHECK(stats.out.rfind("strategy " + e.name + ": 3 nodes", 0) == 0);
        const auto diff = run_cli({"diff", "--strategy", e.name, "--nodes-before", spec, "--nodes-after", spec, "--json"});
        CHECK(diff.status == 0);
        CHECK_THAT(diff.out, Catch::Matchers::Contains("\"moved\":0,"));
        if (e.ordered) {
            const auto copies = run_cli({"locate", "--strategy", e.name, "--nodes", spec, "--copies", "2"}, keys);
            CHECK(copies.status == 0);
            CHECK(std::count(copies.out.begin(), copies.out.end(), ',') == 4);
        }
        // Giving an option its documented default changes nothing; every choice is accepted.
        for (const auto& o : e.locate_options) {
            const std::string option = "--" + o.name;
            if (!o.fallback.empty()) {
                CHECK(run_cli({"locate", "--strategy", e.name, "--nodes", spec, option, o.fallback}, keys).out ==
                      located.out);
            }
            for (const auto& choice : o.choices) {
                CHECK(run_cli({"locate", "--strategy", e.name, "--nodes", spec, option, choice}, keys).status == 0);
            }
        }
    }
    for (const auto& h : hash_function_names()) {
        INFO(h);
        const auto r = run_cli({"hash", "--function", h}, keys);
        CHECK(r.status == 0);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);
    }
}

TEST_CASE("cli: the strategies are the strategy table's rows, with the table's options, defaults and checks", "[cli]") {
    // The rows in the table's order.
    std::vector<std::string> rows;
    for (const auto& row : keyplace::strategy_table) {
        rows.emplace_back(row.name);
    }
    std::vector<std::string> listed;
    for (const auto& e : strategy_facts()) {
        listed.push_back(e.name);
    }
    CHECK(listed == rows);
    const auto help = run_cli({"locate", "--help"}).out;
    for (const auto& e : strategy_facts()) {
        const auto* row = keyplace::find_strategy(e.name);
        if (row == nullptr) {
            continue;
        }
        INFO(e.name);
        CHECK_THAT(help, Catch::Matchers::Contains(std::string(row->summary)));
        std::size_t options = 0;
        for (const auto& p : row->params) {
            const bool option = p.kind != keyplace::param_kind::numbers && !p.from_copies;
            CHECK(e.takes(p.name, keyplace_cli::strategy_use::build) == option);
            if (!option) {
                continue;
            }
            ++options;
            const auto& o = *std::find_if(e.build_options.begin(), e.build_options.end(),
                                          [&](const option_fact& f) { return f.name == p.name; });
            CHECK_THAT(o.described, Catch::Matchers::Contains(std::string(p.meaning)));
            CHECK_THAT(help, Catch::Matchers::Contains("--" + std::string(p.name) + " " + std::string(p.symbol)));
            CHECK_FALSE(p.symbol.empty());
            const std::string fallback =
                p.kind == keyplace::param_kind::name
                    ? std::string(p.name_default)
                    : std::to_string(p.implicit_default ? p.number_stated : p.number_default);
            CHECK(o.fallback == fallback);
            // A value outside the table's range: refused by the table's check, naming the option.
            if (p.kind == keyplace::param_kind::number && p.range_checked) {
                const std::string above = std::to_string(p.max + 1);
                const auto r = run_cli({"locate", "--strategy", e.name, "--nodes", spec_for(e.name),
                                        "--" + std::string(p.name), above},
                                       "k\n");
                expect_failure(r, 2, "--" + std::string(p.name) + ": ");
                CHECK_THAT(r.err, Catch::Matchers::Contains(above));
            }
        }
        CHECK(e.build_options.size() == options);
    }
    // Anchor's capacity 0 is the row's default: the node count, as a document's 0 is.
    const std::string keys = "a\nb\nuser:42\n";
    CHECK(run_cli({"locate", "--strategy", "anchor", "--nodes", "a,b,c", "--capacity", "0"}, keys).out ==
          run_cli({"locate", "--strategy", "anchor", "--nodes", "a,b,c", "--capacity", "3"}, keys).out);
    // Redis: ID= on every node gives no node a slot (bare ids are the even split).
    expect_failure(run_cli({"locate", "--strategy", "redis", "--nodes", "a=,b="}, "k\n"), 2, "no node holds a slot");
}

TEST_CASE("cli: a node list is read once, so a pipe serves as a node file", "[cli]") {
    // A FIFO yields its text to the first open only. The writer thread then offers an immediate
    // end of file to any second reader for half a second: a second read of the list would see
    // no nodes and fail, rather than hang.
    const auto fifo = (std::filesystem::temp_directory_path() / "kp_cli_nodes.fifo").string();
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const char* strategy : {"ketama", "ring", "hash-ring"}) {
        INFO(strategy);
        std::thread writer([&] {
            {
                std::ofstream out(fifo);
                out << "a\nb\nc\n";
            }
            for (int i = 0; i < 50; ++i) {
                const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
                if (fd >= 0) {  // a second reader is waiting: give it the end of the file
                    ::close(fd);
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        });
        const auto r = run_cli({"stats", "--strategy", strategy, "--nodes", "@" + fifo, "--key-count", "300"});
        writer.join();
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK_THAT(r.out, Catch::Matchers::Contains("3 nodes"));
    }
    std::filesystem::remove(fifo);
}

#if KEYPLACE_CLI_SNAPSHOTS
// ---- the snapshot commands ------------------------------------------------------------------

TEST_CASE("cli: a partition table through snapshot create, next and plan", "[cli][snapshot][partitions]") {
    const auto s1 = run_cli({"snapshot", "create", "--strategy", "partitions", "--partitions", "64", "--nodes",
                             "a@eu/z1/r1,b@eu/z1/r2,c@eu/z2/r3", "--cluster", "eu", "--copies", "2", "--spread",
                             "zone"});
    REQUIRE(s1.status == 0);
    CHECK_THAT(s1.out, Catch::Matchers::Contains("\"replicas\": 2"));
    CHECK_THAT(s1.out, Catch::Matchers::Contains("\"spread\": \"zone\""));
    const auto p1 = temp_file("kp_cli_p1.json", s1.out);
    // next: d joins (epoch 2); the table is carried, and pending() claims d's quota.
    const auto s2 = run_cli({"snapshot", "next", p1, "--add", "d@eu/z2/r4", "--reason", "add d"});
    REQUIRE(s2.status == 0);
    CHECK_THAT(s2.out, Catch::Matchers::Contains("\"epoch\": 2"));
    CHECK_THAT(s2.out, Catch::Matchers::Contains("\"state\": \"joining\""));
    const auto p2 = temp_file("kp_cli_p2.json", s2.out);
    // The next epoch with d active lists pending()'s table; the library agrees.
    const auto s3 = run_cli({"snapshot", "next", p2, "--states", "d=active"});
    REQUIRE(s3.status == 0);
    const auto p3 = temp_file("kp_cli_p3.json", s3.out);
    const auto two = keyplace::load_snapshot_json(s2.out);
    const auto three = keyplace::load_snapshot_json(s3.out);
    CHECK(three.current().fingerprint() == two.pending().fingerprint());
    // plan s1 -> s3: partition by partition, d takes its 32 of the 128 slots, the minimum.
    const auto plan = run_cli({"plan", p1, p3, "--json"});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::Contains("\"moved\":32,\"minimum\":32,"));
    const auto text = run_cli({"plan", p1, p3, "--max-ranges", "3"});
    CHECK(text.out.rfind("32 partitions change: 32 copies to make", 0) == 0);
    CHECK_THAT(text.out, Catch::Matchers::Contains("... 29 more"));
    expect_failure(run_cli({"snapshot", "next", p1, "--states", "zz=active"}), 2,
                   "--states names 'zz', which is not in the snapshot or --add");
    expect_failure(run_cli({"snapshot", "next", p1, "--add", "a"}), 1, "'a'");
}

TEST_CASE("cli: contact plans whom to ask for a key at a consistency level", "[cli][snapshot][contact]") {
    // 3 zones x 4 nodes (a*, b*, c* in z0, z1, z2), 3 copies a key, one in each zone.
    const std::string all = "a0@eu/z0/r0,a1@eu/z0/r0,a2@eu/z0/r1,a3@eu/z0/r1,b0@eu/z1/r2,b1@eu/z1/r2,b2@eu/z1/r3,"
                            "b3@eu/z1/r3,c0@eu/z2/r4,c1@eu/z2/r4,c2@eu/z2/r5,c3@eu/z2/r5";
    const auto made = run_cli({"snapshot", "create", "--strategy", "maglev", "--cluster", "c", "--copies", "3",
                               "--spread", "zone", "--nodes", all});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_contact.json", made.out);
    // QUORUM from z1: its copy first (a b node), then one other: one cross-zone contact.
    const auto q = run_cli({"contact", path, "--key", "user:42", "--zone", "z1"});
    REQUIRE(q.status == 0);
    CHECK(q.out.rfind("QUORUM read of 'user:42' from zone 'z1': 2 answers needed, 1 failure survived\nfirst wave: b", 0) == 0);
    CHECK_THAT(q.out, Catch::Matchers::Contains(" (z1, local), "));
    CHECK_THAT(q.out, Catch::Matchers::Contains("\ncross-zone contacts in the first wave: 1\n"));
    const auto every = run_cli({"contact", path, "--key", "user:42", "--zone", "z1", "--all-copies", "--json"});
    REQUIRE(every.status == 0);
    CHECK_THAT(every.out, Catch::Matchers::Contains("\"need\":2,\"max_failures\":1,\"cross_zone_initial\":2,"));
    CHECK_THAT(every.out, Catch::Matchers::Contains("\"then\":[]"));
    const auto local = run_cli({"contact", path, "--key", "user:42", "--zone", "z2", "--level", "local_quorum", "--json"});
    REQUIRE(local.status == 0);
    CHECK_THAT(local.out, Catch::Matchers::Contains("\"need\":1,\"max_failures\":0,\"cross_zone_initial\":0,\"initial\":[{\"id\":\"c"));
    // A write goes to every copy; a read-only copy takes the invalidation only.
    const auto w = run_cli({"contact", path, "--key", "user:42", "--op", "write", "--read-only", "a0,a1,a2,a3", "--json"});
    REQUIRE(w.status == 0);
    CHECK_THAT(w.out, Catch::Matchers::Contains("\"need\":2,\"max_failures\":0,"));
    CHECK_THAT(w.out, Catch::Matchers::Contains("\"zone\":\"z0\",\"local\":false,\"counts\":false"));
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--level", "TWO"}), 2,
                   "--level 'TWO' is not ONE, QUORUM, ALL, LOCAL_QUORUM or EACH_QUORUM");
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--zone", "z9"}), 2, "contact plan: no node is in zone 'z9'");
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--level", "local_quorum"}), 2,
                   "contact plan: LOCAL_QUORUM needs the caller's zone");
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--op", "delete"}), 2, "--op 'delete' is not read or write");
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--down", "a0,zz"}), 2,
                   "--down: 'zz' is not a node of the snapshot");
    expect_failure(run_cli({"contact", path, "--key", "user:42", "--down", all.substr(0, 0) + "a0,a1,a2,a3,b0,b1,b2,b3"}), 1,
                   "contact plan: QUORUM read of 'user:42' needs 2 answers, 1 copies can give one ('");
    expect_failure(run_cli({"contact", path}), 2, "--key");
}

TEST_CASE("cli: shard gives a tenant its shuffle shard, several with an overlap bound", "[cli][snapshot][shuffle_shard]") {
    const auto made = run_cli({"snapshot", "create", "--strategy", "rendezvous", "--cluster", "c", "--nodes",
                               "a0@eu/z0,a1@eu/z0,a2@eu/z0,a3@eu/z0,b0@eu/z1,b1@eu/z1,b2@eu/z1,b3@eu/z1,c0@eu/z2,"
                               "c1@eu/z2,c2@eu/z2,c3@eu/z2"});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_shard.json", made.out);
    const auto one = run_cli({"shard", path, "--tenant", "acme", "--size", "6"});
    REQUIRE(one.status == 0);
    CHECK(one.out.rfind("acme: ", 0) == 0);
    for (const char* zone : {"@z0", "@z1", "@z2"}) {  // two in each zone
        std::size_t n = 0;
        for (auto at = one.out.find(zone); at != std::string::npos; at = one.out.find(zone, at + 1)) {
            ++n;
        }
        CHECK(n == 2);
    }
    // The same shard again (it depends only on the tenant and the nodes).
    CHECK(run_cli({"shard", path, "--tenant", "acme", "--size", "6"}).out == one.out);
    const auto several = run_cli({"shard", path, "--tenant", "t1,t2,t3", "--size", "3", "--max-overlap", "1", "--json"});
    REQUIRE(several.status == 0);
    CHECK_THAT(several.out, Catch::Matchers::Contains("{\"size\":3,\"max_overlap\":1,\"shards\":[{\"tenant\":\"t1\",\"nodes\":[{\"id\":"));
    expect_failure(run_cli({"shard", path, "--tenant", "acme", "--size", "13"}), 2,
                   "shuffle shard: size 13 for tenant 'acme' is outside 1..12 (the snapshot's active nodes)");
    expect_failure(run_cli({"shard", path, "--tenant", "a,b", "--size", "2"}), 2,
                   "--tenant lists 2 tenants: several need --max-overlap");
    expect_failure(run_cli({"shard", path, "--tenant", "a,,b", "--size", "2", "--max-overlap", "1"}), 2,
                   "shuffle shard: the tenant is empty");
    expect_failure(run_cli({"shard", path, "--tenant", "a,b", "--size", "12", "--max-overlap", "0"}), 1,
                   "shuffle shard: no shard of 12 nodes for tenant 'b' overlaps every assigned shard in at most 0");
    expect_failure(run_cli({"shard", path, "--tenant", "acme"}), 2, "--size");
}

TEST_CASE("cli: what-if loses a zone, two zones or nodes of a snapshot and refuses what it does not have",
          "[cli][snapshot][what_if]") {
    // 3 zones x 4 nodes, 3 copies a key, one in each zone.
    const auto made = run_cli({"snapshot", "create", "--strategy", "maglev", "--cluster", "c", "--copies", "3",
                               "--spread", "zone", "--nodes",
                               "a0@eu/z0/r0,a1@eu/z0/r0,a2@eu/z0/r1,a3@eu/z0/r1,b0@eu/z1/r2,b1@eu/z1/r2,b2@eu/z1/r3,"
                               "b3@eu/z1/r3,c0@eu/z2/r4,c1@eu/z2/r4,c2@eu/z2/r5,c3@eu/z2/r5"});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_what_if.json", made.out);
    const auto zone = run_cli({"what-if", path, "--lose", "zone=z1"});
    REQUIRE(zone.status == 0);
    CHECK(zone.out.rfind("what-if: losing zone z1 (4 owning nodes: b0,b1,b2,b3), exact over 65537 regions\n", 0) == 0);
    CHECK_THAT(zone.out, Catch::Matchers::Contains("0.0000% are left with no copy and 0.0000% with one"));
    CHECK_THAT(zone.out, Catch::Matchers::Contains("\na0: "));
    CHECK(zone.out.find("\nb0: ") == std::string::npos);
    // Two zones of three: every key is down to one copy, its copy in z0.
    const auto two = run_cli({"what-if", "--snapshot", path, "--lose", "zone=z1,z2", "--json"});
    REQUIRE(two.status == 0);
    CHECK_THAT(two.out, Catch::Matchers::Contains("\"level\":\"zone\",\"names\":[\"z1\",\"z2\"],\"exact\":true"));
    CHECK_THAT(two.out, Catch::Matchers::Contains("\"no_copy\":0,\"one_copy\":1,"));
    const auto rack = run_cli({"what-if", path, "--lose", "rack=r0", "--json"});
    CHECK_THAT(rack.out, Catch::Matchers::Contains("\"lost\":[\"a0\",\"a1\"]"));
    expect_failure(run_cli({"what-if", path, "--lose", "shelf=a"}), 2, "--lose: 'shelf' is not region, zone, rack or nodes");
    expect_failure(run_cli({"what-if", path, "--lose", "zone=z9"}), 2, "--lose: no node is in zone 'z9'");
    expect_failure(run_cli({"what-if", path, "--lose", "nodes=a0,zz"}), 2, "--lose: no node has the id 'zz'");
    expect_failure(run_cli({"what-if", path, "--lose", "zone=z0,z0"}), 2, "--lose: zone 'z0' is named twice");
    expect_failure(run_cli({"what-if", path, "--lose", "zone"}), 2, "--lose 'zone' is not LEVEL=NAME,...");
    expect_failure(run_cli({"what-if", path, "--lose", "zone=z0,"}), 2, "--lose 'zone=z0,' has an empty name");
    expect_failure(run_cli({"what-if", path, "--lose", "region=eu"}), 2,
                   "--lose: losing region 'eu' leaves no node that owns keys");
    expect_failure(run_cli({"what-if", path}), 2, "--lose");
    // A snapshot in transition is refused as input.
    const auto moving = run_cli({"snapshot", "next", path, "--states", "a0=leaving"});
    REQUIRE(moving.status == 0);
    expect_failure(run_cli({"what-if", temp_file("kp_cli_what_if2.json", moving.out), "--lose", "zone=z1"}), 1,
                   "what-if: epoch 2 is in transition");
}

TEST_CASE("cli: metrics prints a snapshot's families and, with --hot-keys, the key stream's", "[cli][snapshot][metrics]") {
    const auto made = run_cli({"snapshot", "create", "--strategy", "ring", "--cluster", "eu", "--nodes",
                               "a@eu/z1,b@eu/z2,c@eu/z2", "--states", "c=joining"});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_metrics.json", made.out);
    const auto m = run_cli({"metrics", path});
    REQUIRE(m.status == 0);
    CHECK(m.out.rfind("# HELP keyplace_snapshot_epoch ", 0) == 0);
    CHECK_THAT(m.out, Catch::Matchers::Contains("\nkeyplace_members{cluster=\"eu\",state=\"joining\",zone=\"z2\"} 1\n"));
    CHECK_THAT(m.out, Catch::Matchers::Contains("\nkeyplace_snapshot_in_transition{cluster=\"eu\"} 1\n"));
    CHECK(m.out.find("node=\"c\"") == std::string::npos);  // joining: owns nothing yet
    CHECK(m.out.find("keyplace_hot_key") == std::string::npos);
    const auto h = run_cli({"metrics", path, "--hot-keys"}, "x\ny\nx\n");
    REQUIRE(h.status == 0);
    CHECK_THAT(h.out, Catch::Matchers::Contains("\nkeyplace_hot_keys_observed_total 3\n"));
    CHECK_THAT(h.out, Catch::Matchers::Contains("\nkeyplace_hot_key_requests_lower{key=\"x\"} 2\n"));
    expect_failure(run_cli({"metrics", "/nonexistent/kp.json"}), 1, "/nonexistent/kp.json");
    expect_failure(run_cli({"metrics"}), 2, "--snapshot");
}

TEST_CASE("cli: etcd watch --metrics refuses an address that is not IPv4:PORT before connecting", "[cli][etcd][metrics]") {
#if defined(KEYPLACE_CLI_ETCD) && defined(KEYPLACE_CLI_HTTPLIB)
    for (const char* bad : {"127.0.0.1", "127.0.0.1:", "localhost:9100", "1.2.3:80", "127.0.0.1:65536", "127.0.0.1:9x"}) {
        expect_failure(run_cli({"etcd", "watch", "--endpoints", "http://127.0.0.1:1", "--cluster", "c", "--metrics", bad}),
                       2, "--metrics '" + std::string(bad) + "' is not ADDRESS:PORT");
    }
#elif defined(KEYPLACE_CLI_ETCD)
    expect_failure(run_cli({"etcd", "watch", "--endpoints", "http://127.0.0.1:1", "--cluster", "c", "--metrics",
                            "127.0.0.1:0"}),
                   2, "--metrics: this keyplace-cli is built without cpp-httplib (Debian: libcpp-httplib-dev)");
#else
    SUCCEED("built without the etcd commands");
#endif
}

TEST_CASE("cli: advise recommends the least parameter for a target and forecasts a given one", "[cli][skew_advisor]") {
    // Partitions over 10 nodes, p99 <= 1.05: 128 (13 partitions where 12.8 are fair: 1.0156).
    const auto parts = run_cli({"advise", "--strategy", "partitions", "--nodes", "10", "--target", "1.05"});
    REQUIRE(parts.status == 0);
    CHECK(parts.out.rfind("partitions, 10 nodes, target p99 <= 1.0500: advised partitions 128\n"
                          "busiest node's share over its fair share: p50 1.0156, p99 1.0156 (exact: the same for every "
                          "membership)\nmemory: ", 0) == 0);
    const auto maglev = run_cli({"advise", "--strategy", "maglev", "--nodes", "3", "--target", "1.1", "--table-size", "7",
                                 "--json"});
    REQUIRE(maglev.status == 0);
    // 7 entries over 3 nodes: 3 for the busiest where 7/3 are fair, 9/7.
    CHECK_THAT(maglev.out, Catch::Matchers::Contains("\"parameter\":\"table_size\",\"value\":7,\"p50\":1.2857142857142858"));
    CHECK_THAT(maglev.out, Catch::Matchers::Contains("\"meets_target\":false"));
    const auto ring = run_cli({"advise", "--strategy", "ring", "--weights", "1,2,1", "--target", "1.5", "--vnodes", "160"});
    REQUIRE(ring.status == 0);
    CHECK_THAT(ring.out, Catch::Matchers::Contains("(forecast over 20000 memberships)\nmeets the target\n"));
    expect_failure(run_cli({"advise", "--strategy", "ring", "--nodes", "3", "--target", "0.9"}), 2,
                   "--target '0.9' is below 1 (1 is perfect balance)");
    expect_failure(run_cli({"advise", "--strategy", "jump", "--nodes", "3", "--target", "1.1"}), 2,
                   "skew advisor: strategy 'jump' is not ring, maglev, partitions or tokens");
    expect_failure(run_cli({"advise", "--strategy", "ring", "--target", "1.1"}), 2, "give the nodes: --nodes N or --weights W,...");
    expect_failure(run_cli({"advise", "--strategy", "ring", "--nodes", "3", "--weights", "1,1", "--target", "1.1"}), 2,
                   "--nodes and --weights both give the nodes: give one");
    expect_failure(run_cli({"advise", "--strategy", "ring", "--weights", "1,0", "--target", "1.1"}), 2,
                   "--weights: '0' is not a weight above 0 (up to 10^9)");
    expect_failure(run_cli({"advise", "--strategy", "ring", "--nodes", "3", "--target", "1.1", "--table-size", "7"}), 2,
                   "--table-size is not a parameter of 'ring'");
    expect_failure(run_cli({"advise", "--strategy", "maglev", "--nodes", "4", "--target", "1"}), 2,
                   "skew target 1.000000 is out of reach: no prime Maglev table of at most 16777216 entries meets it");
    expect_failure(run_cli({"advise", "--strategy", "maglev", "--nodes", "3", "--target", "1.1", "--table-size", "8"}), 2,
                   "8");
    // Allocated tokens: one a node over 100 nodes halves the largest range each join, so the
    // busiest holds 1/64 of the circle where 1/100 is fair; 4 tokens meet 1.10 and 3 do not
    // (tests/skew_advisor_test.cpp).
    const auto one = run_cli({"advise", "--strategy", "tokens", "--nodes", "100", "--target", "1.1", "--tokens", "1"});
    REQUIRE(one.status == 0);
    CHECK(one.out == "tokens, 100 nodes, target p99 <= 1.1000: tokens 1\n"
                     "busiest node's share over its fair share: p50 1.5625, p99 1.5625 (forecast over 5 growths)\n"
                     "misses the target\n");
    const auto tokens = run_cli({"advise", "--strategy", "tokens", "--nodes", "100", "--target", "1.1", "--json"});
    REQUIRE(tokens.status == 0);
    CHECK_THAT(tokens.out, Catch::Matchers::Contains("\"parameter\":\"tokens\",\"value\":4,"));
    CHECK_THAT(tokens.out, Catch::Matchers::Contains("\"meets_target\":true"));
    expect_failure(run_cli({"advise", "--strategy", "ring", "--nodes", "3", "--target", "1.1", "--tokens", "16"}), 2,
                   "--tokens is not a parameter of 'ring'");
    expect_failure(run_cli({"advise", "--strategy", "tokens", "--nodes", "3", "--target", "1.1", "--tokens", "0"}), 2,
                   "--tokens");
}

TEST_CASE("cli: a weight change in a partition table: refused by hand, claimed by snapshot next --weights",
          "[cli][snapshot][partitions][errors]") {
    // 5 nodes, 128 partitions x 2 copies: 256 slots, 51 or 52 a node.
    const auto s1 = run_cli({"snapshot", "create", "--strategy", "partitions", "--partitions", "128", "--nodes",
                             "n1,n2,n3,n4,n5", "--cluster", "c", "--copies", "2"});
    REQUIRE(s1.status == 0);
    const auto p1 = temp_file("kp_cli_w1.json", s1.out);
    const auto s2 = run_cli({"snapshot", "next", p1});
    REQUIRE(s2.status == 0);
    // n3's weight edited to 3 in the document (its digests removed): verify and plan refuse it.
    auto doc = nlohmann::json::parse(s2.out);
    doc.erase("fingerprint");
    doc.erase("probe");
    std::uint32_t had = 0;
    for (auto& n : doc["nodes"]) {
        if (n["id"] == "n3") {
            n["weight"] = 3.0;
            for (const auto& span : n["partitions"]) {
                had += span[1].get<std::uint32_t>() - span[0].get<std::uint32_t>() + 1;
            }
        }
    }
    REQUIRE((had == 51 || had == 52));
    const auto edited = temp_file("kp_cli_w2e.json", doc.dump());
    const std::string refusal = "node 'n3' holds " + std::to_string(had) + " partition slots where its weight 3 gives it 1";
    expect_failure(run_cli({"snapshot", "verify", edited}), 1, refusal);
    expect_failure(run_cli({"plan", p1, edited}), 1, refusal);
    expect_failure(run_cli({"snapshot", "next", edited}), 1, refusal);
    // snapshot next --weights claims the table again, as diff --strategy partitions does: n3
    // takes its quota of 256 * 3 / 7 = 109.7 slots, every other node keeps 256 / 7 = 36.6.
    const auto s2w = run_cli({"snapshot", "next", p1, "--weights", "n3=3"});
    REQUIRE(s2w.status == 0);
    const auto two = keyplace::load_snapshot_json(s2w.out);
    const auto& table = std::get<keyplace::partitions>(two.current().strategy());
    for (std::uint32_t i = 0; i < table.size(); ++i) {
        const auto have = table.slots(keyplace::node_index{i});
        INFO(table.node(keyplace::node_index{i}).id << " holds " << have);
        const bool reweighted = table.node(keyplace::node_index{i}).id == "n3";
        CHECK((reweighted ? (have == 109 || have == 110) : (have == 36 || have == 37)));
    }
    CHECK(two.find("n3")->weight == 3.0);
    const auto plan = run_cli({"plan", p1, temp_file("kp_cli_w2.json", s2w.out), "--json"});
    REQUIRE(plan.status == 0);
    const std::string minimum = "\"minimum\":" + std::to_string(table.slots(*table.find("n3")) - had) + ",";
    CHECK_THAT(plan.out, Catch::Matchers::Contains(minimum));
    expect_failure(run_cli({"snapshot", "next", p1, "--weights", "zz=2"}), 2,
                   "--weights: node id 'zz' is not a node of the snapshot");
    expect_failure(run_cli({"snapshot", "next", p1, "--weights", "n1=0"}), 2, "--weights: ");
    expect_failure(run_cli({"snapshot", "next", p1, "--weights", "n1=x"}), 2, "--weights 'x' is not a number");
}

TEST_CASE("cli: snapshot create --on-shortfall relax builds the best-effort partition table", "[cli][snapshot][partitions]") {
    // Three copies over two zones: fail (the default) refuses, relax builds the table locate builds.
    const std::vector<std::string_view> create{"snapshot", "create", "--strategy", "partitions", "--partitions", "16",
                                               "--nodes", "a@x/z1,b@x/z1,c@x/z2,d@x/z2", "--cluster", "c",
                                               "--copies", "3", "--spread", "zone"};
    // (exit 2: every SPEC was inline, so bad nodes are bad arguments.)
    expect_failure(run_cli(create), 2, "spreading 3 copies over zones needs 3 zones; there are 2");
    auto relax_args = create;
    relax_args.insert(relax_args.end(), {"--on-shortfall", "relax"});
    const auto relaxed = run_cli(relax_args);
    REQUIRE(relaxed.status == 0);
    CHECK_THAT(relaxed.out, Catch::Matchers::Contains("\"on_shortfall\": \"relax\""));
    std::string keys;
    for (int i = 0; i < 100; ++i) {
        keys += "key:" + std::to_string(i) + "\n";
    }
    const auto by_snapshot =
        run_cli({"locate", "--snapshot", temp_file("kp_cli_relax.json", relaxed.out), "--write-set"}, keys);
    const auto by_locate = run_cli({"locate", "--strategy", "partitions", "--partitions", "16", "--nodes",
                                    "a@x/z1,b@x/z1,c@x/z2,d@x/z2", "--copies", "3", "--spread", "zone",
                                    "--on-shortfall", "relax"},
                                   keys);
    REQUIRE(by_snapshot.status == 0);
    REQUIRE(by_locate.status == 0);
    std::string copies = by_locate.out;  // without locate's " degraded" marks
    for (auto at = copies.find(" degraded"); at != std::string::npos; at = copies.find(" degraded")) {
        copies.erase(at, 9);
    }
    CHECK(by_snapshot.out == copies);
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--on-shortfall", "relax"}),
                   2, "--on-shortfall needs --copies");
    std::string maybe = relaxed.out;
    maybe.replace(maybe.find("\"relax\""), 7, "\"maybe\"");
    expect_failure(run_cli({"snapshot", "verify", temp_file("kp_cli_maybe.json", maybe)}), 1,
                   "replication.on_shortfall: 'maybe' is not fail or relax");
    auto bad = create;
    bad.insert(bad.end(), {"--on-shortfall", "maybe"});
    expect_failure(run_cli(bad), 2, "--on-shortfall 'maybe' is not fail or relax");
}

TEST_CASE("cli: snapshot create writes a document that verify reads back with the same digests",
          "[cli][snapshot]") {
    const auto created = run_cli({"snapshot", "create", "--strategy", "ring", "--vnodes", "100", "--nodes",
                                  "a,b,c=2,d", "--cluster", "eu", "--epoch", "5", "--states", "d=joining",
                                  "--addresses", "a=10.0.0.1:11211", "--reason", "add d"});
    REQUIRE(created.status == 0);
    // The library's own snapshot of the same description: the CLI only translates options.
    keyplace::snapshot_description d;
    d.cluster = "eu";
    d.epoch = 5;
    d.parent_epoch = 4;
    d.strategy.params["vnodes"] = std::uint64_t{100};
    d.nodes = {{"a", "10.0.0.1:11211"}, {"b"}, {"c", "", 2}, {"d", "", 1, {}, keyplace::node_state::joining}};
    const auto s = keyplace::snapshot::build(d);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"" + s.fingerprint().hex() + "\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"reason\": \"add d\""));
    const auto path = temp_file("kp_cli_s5.json", created.out);
    const auto v = run_cli({"snapshot", "verify", path});
    REQUIRE(v.status == 0);
    CHECK(v.out == "ok: cluster eu, epoch 5 (parent 4), strategy ring\nnodes        4 (3 active, 1 joining), in "
                   "transition\nfingerprint  " +
                       s.fingerprint().hex() + "\nprobe        " + s.probe_digest().hex() + "\n");
    const auto vj = run_cli({"snapshot", "verify", "--json", "--snapshot", path});
    CHECK_THAT(vj.out, Catch::Matchers::Contains("\"in_transition\":true"));
    // --write-set: the owner now, then the owner after d joins when it differs.
    std::string keys;
    std::string want;
    for (int i = 0; i < 200; ++i) {
        const std::string key = "user:" + std::to_string(i);
        keys += key + "\n";
        const auto ws = s.write_set(key);
        for (std::size_t k = 0; k < ws.size(); ++k) {
            want += (k > 0 ? "," : "") + ws[k]->id;
        }
        want += "\n";
    }
    CHECK(want.find(",d\n") != std::string::npos);  // some keys have two destinations
    CHECK(run_cli({"locate", "--snapshot", path, "--write-set"}, keys).out == want);
    const auto owners = run_cli({"locate", "--snapshot", path}, "user:1\n");
    CHECK(owners.out == s.owner("user:1").id + "\n");
}

TEST_CASE("cli: a multiprobe snapshot: created, verified, located as the engine locates, and carried by next",
          "[cli][snapshot]") {
    // multiprobe_k5_joining of tests/golden/snapshot_digests_v2.txt: the fingerprint and probe
    // digest come from the independent generator.
    const auto created = run_cli({"snapshot", "create", "--strategy", "multiprobe", "--probes", "5", "--nodes",
                                  "n2,n10,n1,n3", "--states", "n3=joining", "--cluster", "mp"});
    REQUIRE(created.status == 0);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"5b91430bf949c55853b4037697a7269c\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"probe\": \"865d21f4480e3ea2906bd06dbf1147dc\""));
    const auto path = temp_file("kp_cli_mp.json", created.out);
    const auto v = run_cli({"snapshot", "verify", path});
    REQUIRE(v.status == 0);
    CHECK_THAT(v.out, Catch::Matchers::Contains("strategy multiprobe"));
    std::string keys;
    for (int i = 0; i < 500; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    // Owners now (n3 joining owns nothing yet) are the engine's over the active nodes.
    const auto engine = run_cli({"locate", "--strategy", "multiprobe", "--probes", "5", "--nodes", "n2,n10,n1"}, keys);
    REQUIRE(engine.status == 0);
    CHECK(run_cli({"locate", "--snapshot", path}, keys).out == engine.out);
    // The next epoch activates n3: owners are then the engine's over all four.
    const auto next = run_cli({"snapshot", "next", path, "--states", "n3=active"});
    REQUIRE(next.status == 0);
    const auto next_path = temp_file("kp_cli_mp2.json", next.out);
    const auto engine4 =
        run_cli({"locate", "--strategy", "multiprobe", "--probes", "5", "--nodes", "n2,n10,n1,n3"}, keys);
    CHECK(run_cli({"locate", "--snapshot", next_path}, keys).out == engine4.out);
    CHECK(engine4.out != engine.out);
    // A plan between the two moves keys only to n3 (multi-probe moves nothing else on a join).
    const auto plan = run_cli({"plan", path, next_path});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::Contains("n3"));
    // probes outside 1..1024 is refused naming the value.
    const auto bad = run_cli({"snapshot", "create", "--strategy", "multiprobe", "--probes", "0", "--nodes", "a,b"});
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::Matchers::Contains("0"));
}

TEST_CASE("cli: a jumpback snapshot: created, located as the engine locates, and carried by next",
          "[cli][snapshot]") {
    // jumpback_joining of tests/golden/snapshot_digests_v2.txt: the generator's digests.
    const auto created = run_cli({"snapshot", "create", "--strategy", "jumpback", "--nodes", "s0,s1,s2,s3,s4",
                                  "--states", "s4=joining", "--cluster", "jb"});
    REQUIRE(created.status == 0);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"8d1e244f18eeb6d1d7f93b26df07c1c4\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"probe\": \"13ad82fde34eddc067be259ad1fee552\""));
    const auto path = temp_file("kp_cli_jumpback.json", created.out);
    REQUIRE(run_cli({"snapshot", "verify", path}).status == 0);
    std::string keys;
    for (int i = 0; i < 500; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    const auto engine = run_cli({"locate", "--strategy", "jumpback", "--nodes", "s0,s1,s2,s3"}, keys);
    REQUIRE(engine.status == 0);
    CHECK(run_cli({"locate", "--snapshot", path}, keys).out == engine.out);
    const auto next = run_cli({"snapshot", "next", path, "--states", "s4=active"});
    REQUIRE(next.status == 0);
    const auto next_path = temp_file("kp_cli_jumpback2.json", next.out);
    const auto engine5 = run_cli({"locate", "--strategy", "jumpback", "--nodes", "s0,s1,s2,s3,s4"}, keys);
    CHECK(run_cli({"locate", "--snapshot", next_path}, keys).out == engine5.out);
    CHECK(engine5.out != engine.out);
    const auto plan = run_cli({"plan", path, next_path});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::Contains("s4"));
}

TEST_CASE("cli: anchor and memento snapshots: created, located as the engine locates, and carried by next",
          "[cli][snapshot]") {
    // anchor_cap8_joining and memento_leaving_last_joining of tests/golden/snapshot_digests_v2.txt:
    // the digests come from the independent generator.
    const auto created = run_cli({"snapshot", "create", "--strategy", "anchor", "--capacity", "8", "--nodes",
                                  "n2,n10,n1,n3", "--states", "n3=joining", "--cluster", "an"});
    REQUIRE(created.status == 0);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"6e8ad1f326375a0de87ad79e1a1f9892\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"probe\": \"542596a6f02ab71a838f75f7a883d1c7\""));
    const auto path = temp_file("kp_cli_anchor.json", created.out);
    REQUIRE(run_cli({"snapshot", "verify", path}).status == 0);
    std::string keys;
    for (int i = 0; i < 500; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    const auto engine = run_cli({"locate", "--strategy", "anchor", "--capacity", "8", "--nodes", "n2,n10,n1"}, keys);
    REQUIRE(engine.status == 0);
    CHECK(run_cli({"locate", "--snapshot", path}, keys).out == engine.out);
    // The next epoch: n3 active at bucket 3, the removed stack [7,6,5,4] stated.
    const auto next = run_cli({"snapshot", "next", path, "--states", "n3=active"});
    REQUIRE(next.status == 0);
    CHECK_THAT(next.out, Catch::Matchers::Contains("\"capacity\": 8"));
    CHECK_THAT(next.out, Catch::Matchers::Contains("7,\n        6,\n        5,\n        4\n"));
    const auto next_path = temp_file("kp_cli_anchor2.json", next.out);
    const auto engine4 =
        run_cli({"locate", "--strategy", "anchor", "--capacity", "8", "--nodes", "n2,n10,n1,n3"}, keys);
    CHECK(run_cli({"locate", "--snapshot", next_path}, keys).out == engine4.out);
    const auto plan = run_cli({"plan", path, next_path});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::Contains("n3"));
    // Full: a fourth node cannot join a capacity of 3.
    const auto full = run_cli({"snapshot", "create", "--strategy", "anchor", "--capacity", "3", "--nodes", "a,b,c,d",
                               "--states", "d=joining", "--cluster", "an"});
    CHECK(full.status != 0);
    CHECK_THAT(full.err, Catch::Matchers::Contains("anchor"));

    const auto memento = run_cli({"snapshot", "create", "--strategy", "memento", "--nodes", "k0,k1,k2,k3,k9",
                                  "--states", "k2=leaving,k3=joining,k9=left", "--cluster", "me"});
    REQUIRE(memento.status == 0);
    CHECK_THAT(memento.out, Catch::Matchers::Contains("\"fingerprint\": \"fe3167ae37091404e9d3b3fc157e0b90\""));
    CHECK_THAT(memento.out, Catch::Matchers::Contains("\"probe\": \"4727c09f754fd5b58d5134ecc9fcb218\""));
    // A document whose removed stack names a bucket twice is refused where it is.
    const auto bad = temp_file("kp_cli_memento_bad.json",
                               "{\"format\":\"keyplace.snapshot/1\",\"cluster\":\"me\",\"epoch\":1,"
                               "\"parent_epoch\":0,\"strategy\":{\"name\":\"memento\",\"contract\":1,"
                               "\"params\":{\"removed\":[1,1]}},\"nodes\":[{\"id\":\"a\"},{\"id\":\"b\"}]}");
    const auto refused = run_cli({"snapshot", "verify", bad});
    CHECK(refused.status != 0);
    CHECK_THAT(refused.err, Catch::Matchers::Contains("strategy.params.removed"));
    CHECK_THAT(refused.err, Catch::Matchers::Contains("memento removed bucket 1 is listed twice"));
    const auto bad_item = temp_file("kp_cli_memento_bad2.json",
                                    "{\"format\":\"keyplace.snapshot/1\",\"cluster\":\"me\",\"epoch\":1,"
                                    "\"parent_epoch\":0,\"strategy\":{\"name\":\"memento\",\"contract\":1,"
                                    "\"params\":{\"removed\":[1,\"x\"]}},\"nodes\":[{\"id\":\"a\"}]}");
    const auto refused_item = run_cli({"snapshot", "verify", bad_item});
    CHECK(refused_item.status != 0);
    CHECK_THAT(refused_item.err, Catch::Matchers::Contains("strategy.params.removed[1]"));
}

TEST_CASE("cli: snapshot diff, shadow and plan over two documents", "[cli][snapshot]") {
    const auto a = run_cli({"snapshot", "create", "--strategy", "maglev", "--table-size", "251", "--nodes", "a,b,c",
                            "--cluster", "eu", "--epoch", "1"});
    const auto b = run_cli({"snapshot", "create", "--strategy", "maglev", "--table-size", "251", "--nodes",
                            "a,b,c,d", "--cluster", "eu", "--epoch", "2"});
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    const auto pa = temp_file("kp_cli_a.json", a.out);
    const auto pb = temp_file("kp_cli_b.json", b.out);
    const auto before = keyplace::load_snapshot_json(a.out);
    const auto after = keyplace::load_snapshot_json(b.out);
    const auto exact = keyplace::detail::snapshot_movement(before, after);
    const auto diff = run_cli({"snapshot", "diff", pa, pb});
    REQUIRE(diff.status == 0);
    CHECK_THAT(diff.out, Catch::Matchers::Contains("exact, over the whole hash space"));
    CHECK_THAT(diff.out, Catch::Matchers::Contains("residues modulo 251"));
    const auto plan = run_cli({"plan", "--before", pa, "--after", pb, "--json"});
    CHECK(plan.out == with_prepared_null(keyplace::plan_transfer(before, after).to_json()));
    std::string keys;
    for (int i = 0; i < 20000; ++i) {
        keys += "k" + std::to_string(i) + "\n";
    }
    const auto sh = run_cli({"shadow", "--before", pa, "--after", pb, "--json"}, keys);
    REQUIRE(sh.status == 0);
    CHECK_THAT(sh.out, Catch::Matchers::Contains("\"keys_sampled\":20000"));
    CHECK_THAT(sh.out, Catch::Matchers::Contains("\"expected_moved\":" + keyplace::detail::json_number(exact.moved)));
}

TEST_CASE("cli: snapshot ramp writes a chain of epochs that ends where the one-shot join does, and refuses bad input",
          "[cli][snapshot][ramp]") {
    const auto a = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu",
                            "--epoch", "4"});
    const auto b = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c,d", "--cluster", "eu",
                            "--epoch", "5"});
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    const auto pa = temp_file("kp_cli_ramp_a.json", a.out);
    const auto pb = temp_file("kp_cli_ramp_b.json", b.out);
    const auto dir = std::filesystem::temp_directory_path() / ("kp_cli_ramp_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto r = run_cli({"snapshot", "ramp", pa, pb, "--steps", "4", "--out", dir.string(), "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["node"] == "d");
    CHECK(j["from_epoch"] == 4);
    CHECK(j["monotone"] == true);
    REQUIRE(j["epochs"].size() == 4);
    // The chain moves what the one-epoch change moves, which snapshot diff measures on its own.
    const auto exact = keyplace::detail::snapshot_movement(keyplace::load_snapshot_json(a.out),
                                                           keyplace::load_snapshot_json(b.out));
    CHECK(std::fabs(j["total_moved"].get<double>() - exact.moved) < 1e-12);
    double sum = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& e = j["epochs"][i];
        CHECK(e["epoch"] == 5 + i);
        CHECK(e["weight"].get<double>() == 0.25 * static_cast<double>(i + 1));
        sum += e["moved"].get<double>();
        const std::string file = e["file"];
        CHECK(file == (dir / ("epoch-" + std::to_string(5 + i) + ".json")).string());
        const auto verify = run_cli({"snapshot", "verify", file, "--json"});
        REQUIRE(verify.status == 0);
        CHECK_THAT(verify.out, Catch::Matchers::Contains("\"epoch\":" + std::to_string(5 + i)));
    }
    CHECK(std::fabs(sum - exact.moved) < 1e-12);
    // The last epoch places keys as the one-shot document does.
    const auto last = keyplace::load_snapshot_json(
        std::string(std::istreambuf_iterator<char>(std::ifstream(dir / "epoch-8.json").rdbuf()), {}));
    CHECK(last.fingerprint() == keyplace::load_snapshot_json(b.out).fingerprint());
    const auto text = run_cli({"snapshot", "ramp", "--before", pa, "--after", pb, "--max-moved", "5%"});
    REQUIRE(text.status == 0);
    CHECK_THAT(text.out, Catch::Matchers::StartsWith("ramp of 'd' by its weight: "));
    CHECK_THAT(text.out, Catch::Matchers::Contains("each key moves at most once, toward or away from 'd'"));
    // --announce: epoch 5 has d joining (its document says so), the ramp follows from epoch 6.
    const auto ann = run_cli({"snapshot", "ramp", pa, pb, "--steps", "4", "--announce", "--json"});
    REQUIRE(ann.status == 0);
    const auto ja = nlohmann::json::parse(ann.out);
    CHECK(ja["announced"] == true);
    REQUIRE(ja["epochs"].size() == 5);
    CHECK(ja["epochs"][0]["epoch"] == 5);
    CHECK(ja["epochs"][0]["moved"] == 0.0);
    for (std::size_t i = 1; i < 5; ++i) {
        CHECK(ja["epochs"][i]["epoch"] == 5 + i);
        CHECK(ja["epochs"][i]["moved"] == j["epochs"][i - 1]["moved"]);
    }
    const auto ann_text = run_cli({"snapshot", "ramp", pa, pb, "--steps", "4", "--announce"});
    REQUIRE(ann_text.status == 0);
    CHECK_THAT(ann_text.out, Catch::Matchers::Contains("\n5      0       0.0000%  'd' joining: announces the ramp\n"));
    const auto heavier = run_cli({"snapshot", "next", pb, "--weights", "d=2"});
    REQUIRE(heavier.status == 0);
    expect_failure(run_cli({"snapshot", "ramp", pb, temp_file("kp_cli_ramp_heavier.json", heavier.out), "--steps", "2",
                            "--announce"}),
                   1, "ramp: node 'd' changes its share, and only a join or a leave can be announced");

    expect_failure(run_cli({"snapshot", "ramp", pa, pb}), 2, "give --steps N or --max-moved F, not neither");
    expect_failure(run_cli({"snapshot", "ramp", pa, pb, "--steps", "2", "--max-moved", "0.1"}), 2,
                   "give --steps N or --max-moved F, not both");
    expect_failure(run_cli({"snapshot", "ramp", pa, pb, "--steps", "0"}), 2, "--steps '0' is not an integer from 1 to 1000");
    expect_failure(run_cli({"snapshot", "ramp", pa, pb, "--max-moved", "150%"}), 2,
                   "--max-moved '150%' is not a fraction in (0, 1] or a percentage in (0%, 100%]");
    expect_failure(run_cli({"snapshot", "ramp", pa, pb, "--steps", "2", "--out", (dir / "missing").string()}), 1,
                   "is not a directory");
    const auto c = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "us",
                            "--epoch", "5"});
    expect_failure(run_cli({"snapshot", "ramp", pa, temp_file("kp_cli_ramp_c.json", c.out), "--steps", "2"}), 1,
                   "ramp: a ramp across clusters: 'eu' and 'us'");
    const auto two = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c,d,e", "--cluster", "eu",
                              "--epoch", "5"});
    expect_failure(run_cli({"snapshot", "ramp", pa, temp_file("kp_cli_ramp_two.json", two.out), "--steps", "2"}), 1,
                   "these change 2: 'd', 'e'");
    const auto j1 = run_cli({"snapshot", "create", "--strategy", "jump", "--nodes", "a,b,c", "--cluster", "eu"});
    const auto j2 = run_cli({"snapshot", "create", "--strategy", "jump", "--nodes", "a,b,c,d", "--cluster", "eu",
                             "--epoch", "2"});
    expect_failure(run_cli({"snapshot", "ramp", temp_file("kp_cli_ramp_j1.json", j1.out),
                            temp_file("kp_cli_ramp_j2.json", j2.out), "--steps", "2"}),
                   1, "strategy 'jump' cannot ramp: its nodes have no weights");
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli: snapshot rollback from a ramp step returns in one epoch and names what to invalidate and drop",
          "[cli][snapshot][rollback]") {
    const auto a = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu"});
    const auto b = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c,d", "--cluster", "eu",
                            "--epoch", "2"});
    const auto pa = temp_file("kp_cli_rb_a.json", a.out);
    const auto pb = temp_file("kp_cli_rb_b.json", b.out);
    const auto dir = std::filesystem::temp_directory_path() / ("kp_cli_rb_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    REQUIRE(run_cli({"snapshot", "ramp", pa, pb, "--steps", "4", "--out", dir.string()}).status == 0);
    const std::string step2 = (dir / "epoch-3.json").string();  // the ramp's second epoch
    const auto r = run_cli({"snapshot", "rollback", step2, pa, "--json", "--out", dir.string()});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["from_epoch"] == 3);
    CHECK(j["to_epoch"] == 1);
    REQUIRE(j["epochs"].size() == 1);
    CHECK(j["epochs"][0]["epoch"] == 4);
    // The rollback moves back what the ramp's first two epochs moved, and d relinquishes exactly that.
    const auto ramp = keyplace::plan_ramp(keyplace::load_snapshot_json(a.out), keyplace::load_snapshot_json(b.out),
                                          {.steps = 4});
    const double taken = ramp.moved[0] + ramp.moved[1];
    CHECK(std::fabs(j["epochs"][0]["moved"].get<double>() - taken) < 1e-12);
    double invalidated = 0;
    for (const auto& t : j["totals"]) {
        if (t["node"] == "d") {
            CHECK(std::fabs(t["relinquish"].get<double>() - taken) < 1e-12);
        } else {
            invalidated += t["invalidate"].get<double>();
        }
    }
    CHECK(std::fabs(invalidated - taken) < 1e-12);
    const auto written = keyplace::load_snapshot_json(
        std::string(std::istreambuf_iterator<char>(std::ifstream(dir / "epoch-4.json").rdbuf()), {}));
    CHECK(written.fingerprint() == keyplace::load_snapshot_json(a.out).fingerprint());
    const auto text = run_cli({"snapshot", "rollback", "--from", step2, "--to", pa, "--max-ranges", "1"});
    REQUIRE(text.status == 0);
    CHECK_THAT(text.out, Catch::Matchers::StartsWith("rollback from epoch 3 to the placement of epoch 1: 1 epoch; exact"));
    CHECK_THAT(text.out, Catch::Matchers::Contains("more ranges (--max-ranges, --json)"));

    expect_failure(run_cli({"snapshot", "rollback", step2, pa, "--steps", "2", "--max-moved", "0.1"}), 2,
                   "give --steps N or --max-moved F, not both");
    const auto joining = run_cli({"snapshot", "next", pa, "--add", "d"});
    const auto pj = temp_file("kp_cli_rb_j.json", joining.out);
    expect_failure(run_cli({"snapshot", "rollback", pa, pj}), 1, "roll back to a settled epoch");
    expect_failure(run_cli({"snapshot", "rollback", pj, pa, "--steps", "2"}), 1, "is a transition: roll it back in one epoch");
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a read_only node: its state in documents and the write set", "[cli][snapshot][read_only]") {
    const auto created = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu",
                                  "--states", "c=read_only"});
    REQUIRE(created.status == 0);
    const auto s = keyplace::load_snapshot_json(created.out);
    REQUIRE(s.find("c") != nullptr);
    CHECK(s.find("c")->state == keyplace::node_state::read_only);
    const auto path = temp_file("kp_cli_read_only.json", created.out);
    std::string keys;
    std::vector<std::string> list;
    for (int i = 0; i < 200; ++i) {
        list.push_back("user:" + std::to_string(i));
        keys += list.back() + "\n";
    }
    const auto ws = run_cli({"locate", "--snapshot", path, "--write-set"}, keys);
    REQUIRE(ws.status == 0);
    std::istringstream wl(ws.out);
    std::string w;
    std::size_t drained = 0;
    for (const auto& key : list) {
        REQUIRE(std::getline(wl, w));
        if (s.owner(key).id == "c") {
            ++drained;
            CHECK(w == "c," + s.next_owner(key).id);  // c takes the invalidation, the next owner the value
        } else {
            CHECK(w == s.owner(key).id);
        }
    }
    CHECK(drained > 20);
    const auto verify = run_cli({"snapshot", "verify", path});
    CHECK_THAT(verify.out, Catch::Matchers::Contains("1 read_only"));
    // A node that was never listed may not arrive read_only: it holds nothing to read.
    expect_failure(run_cli({"snapshot", "next", path, "--add", "d", "--states", "d=read_only"}), 1,
                   "node 'd' is not listed at epoch 1 and holds nothing to serve reads from");
}

TEST_CASE("cli: overrides through snapshot create and next, honored by locate --snapshot, plan and shadow",
          "[cli][snapshot][overrides]") {
    const auto created = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu",
                                  "--override", "hot:1=b,q=x=c"});
    REQUIRE(created.status == 0);
    keyplace::snapshot_description d;
    d.cluster = "eu";
    d.nodes = {{"a"}, {"b"}, {"c"}};
    d.overrides = {{"hot:1", "b"}, {"q=x", "c"}};  // split at the last '=': the key keeps its own
    const auto s = keyplace::snapshot::build(d);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"" + s.fingerprint().hex() + "\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"overrides\": ["));
    const auto p1 = temp_file("kp_cli_o1.json", created.out);
    CHECK(run_cli({"locate", "--snapshot", p1}, "hot:1\nq=x\nuser:7\n").out ==
          "b\nc\n" + s.owner("user:7").id + "\n");
    // next: move hot:1 to a, drop q=x; the plan lists the two keys that change.
    const auto next = run_cli({"snapshot", "next", p1, "--override", "hot:1=a", "--drop-override", "q=x"});
    REQUIRE(next.status == 0);
    const auto two = keyplace::load_snapshot_json(next.out);
    REQUIRE(two.overrides().size() == 1);
    CHECK(two.overrides()[0] == keyplace::key_override{"hot:1", "a"});
    CHECK(two.owner("q=x").id == s.nodes()[s.current().strategy_owner("q=x")].id);  // the strategy's again
    const auto p2 = temp_file("kp_cli_o2.json", next.out);
    CHECK(run_cli({"locate", "--snapshot", p2}, "hot:1\n").out == "a\n");
    const auto plan = run_cli({"plan", p1, p2, "--json"});
    REQUIRE(plan.status == 0);
    CHECK(plan.out == with_prepared_null(keyplace::plan_transfer(s, two).to_json()));
    CHECK_THAT(plan.out, Catch::Matchers::Contains("{\"key\":\"hot:1\",\"before\":[\"b\"],\"after\":[\"a\"]"));
    const auto sh = run_cli({"shadow", p1, p2, "--json"}, "hot:1\nhot:1\nuser:7\n");
    REQUIRE(sh.status == 0);
    CHECK_THAT(sh.out, Catch::Matchers::Contains("\"keys_moved\":1,\"requests_moved\":2"));
    // Refusals: the library's, naming the value, and the CLI's own.
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--override", "k=zz"}),
                   2, "override of key 'k': node 'zz' is not in the snapshot");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--states", "b=joining", "--override", "k=b"}),
                   2, "node 'b' is joining; an override names an active node");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--override", "=a"}),
                   2, "the key is empty");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--override", "k"}),
                   2, "--override entry 'k' is not KEY=ID");
    expect_failure(run_cli({"snapshot", "next", p1, "--drop-override", "nope"}), 2,
                   "--drop-override: key 'nope' has no override in the snapshot");
    // locate --snapshot reads the snapshot's own placement: the strategy-mode options are refused,
    // not silently ignored.
    for (const auto& extra : std::vector<std::vector<std::string_view>>{{"--spread-reads", "2"},
                                                                         {"--salt", "1"},
                                                                         {"--load-factor", "1.25"},
                                                                         {"--spread", "rack"},
                                                                         {"--on-shortfall", "relax"}}) {
        std::vector<std::string_view> args{"locate", "--snapshot", p1};
        args.insert(args.end(), extra.begin(), extra.end());
        std::istringstream in("k\n");
        std::ostringstream out;
        std::ostringstream err;
        CHECK(keyplace_cli::run(args, in, out, err) == 2);
        CHECK(out.str().empty());
        CHECK(err.str() == "keyplace-cli: --snapshot and " + std::string(extra[0]) + " exclude each other\n");
    }
    expect_failure(run_cli({"snapshot", "next", p1, "--states", "b=leaving"}), 1,
                   "override of key 'hot:1': node 'b' is leaving");
}

TEST_CASE("cli: bad snapshot arguments and documents fail in one line", "[cli][snapshot][errors]") {
    expect_failure(run_cli({"snapshot"}), 2, "snapshot needs a subcommand: create, next, verify or diff");
    expect_failure(run_cli({"snapshot", "frob"}), 2, "unknown command 'snapshot frob'");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b"}), 2,
                   "missing required option --cluster");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--states", "b=gone"}),
                   2, "'gone' of node 'b' is not joining, active, leaving, read_only or left");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--states", "z=left"}),
                   2, "--states names 'z', which is not in --nodes");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c",
                            "--states", "a=joining,b=joining"}),
                   2, "no node owns keys now");
    expect_failure(run_cli({"snapshot", "verify", "/nonexistent/kp.json"}), 1, "cannot read snapshot");
    const auto bad = temp_file("kp_cli_bad.json", "{\"format\":\"keyplace.snapshot/1\",\"cluster\":\"c\",\"epoch\":1,"
                                                  "\"strategy\":{\"name\":\"ring\",\"contract\":1},"
                                                  "\"nodes\":[{\"id\":\"a\",\"weight\":-1}]}");
    expect_failure(run_cli({"snapshot", "verify", bad}), 1, "nodes[0].weight");
    expect_failure(run_cli({"snapshot", "verify", bad, "extra"}), 2, "unexpected argument 'extra'");
    expect_failure(run_cli({"locate", "--write-set", "--strategy", "ring", "--nodes", "a"}, "k\n"), 2,
                   "--write-set needs --snapshot");
    const auto good = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b", "--cluster", "c"});
    const auto path = temp_file("kp_cli_good.json", good.out);
    expect_failure(run_cli({"locate", "--snapshot", path, "--nodes", "a"}, "k\n"), 2,
                   "--snapshot and --nodes exclude each other");
    expect_failure(run_cli({"shadow", "--before", path, "--after", path, "--sample-per-million", "1000001"}), 2,
                   "--sample-per-million '1000001'");
}
#endif

// ---- hardening (issue 18): every failure one bounded line, the right status ------------------

namespace {

// A stdin whose read fails as a directory's does (std::cin's filebuf throws from underflow).
struct unreadable_buf : std::streambuf {
    auto underflow() -> int_type override {
        throw std::ios_base::failure("read", std::make_error_code(std::errc::is_a_directory));
    }
};

}  // namespace

TEST_CASE("cli: huge key counts are refused up front, unreadable input names the OS's reason",
          "[cli][errors]") {
    for (const char* n : {"18446744073709551615", "1000000000000", "100000001"}) {
        expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--key-count", n}), 2,
                       "--key-count '" + std::string(n) + "' is not an integer from 1 to 100000000");
    }
    const auto dir = std::filesystem::temp_directory_path().string();
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--keys", dir}), 1,
                   "cannot read key file '" + dir + "': Is a directory");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--keys", "/nonexistent/k"}),
                   1, "cannot read key file '/nonexistent/k': No such file or directory");
    unreadable_buf buf;
    std::istream in(&buf);
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string_view> args{"hash", "--function", "xxh3"};
    CHECK(keyplace_cli::run(args, in, out, err) == 1);
    CHECK(out.str().empty());
    CHECK(err.str() == "keyplace-cli: cannot read stdin: Is a directory\n");
}

TEST_CASE("cli: node file read errors name the OS's reason, and node files are bounded", "[cli][errors]") {
    auto locate = [](const std::string& spec) {
        return run_cli({"locate", "--strategy", "ring", "--nodes", spec}, "k\n");
    };
    const auto dir = std::filesystem::temp_directory_path().string();
    expect_failure(locate("@" + dir), 1, "cannot read node file '" + dir + "': Is a directory");
    expect_failure(locate("@/nonexistent/kp"), 1, "cannot read node file '/nonexistent/kp': No such file or directory");
    if (std::filesystem::exists("/proc/self/mem")) {
        expect_failure(locate("@/proc/self/mem"), 1, "cannot read node file '/proc/self/mem': Input/output error");
    }
    if (std::filesystem::exists("/dev/zero")) {
        expect_failure(locate("@/dev/zero"), 1, "node file '/dev/zero' is larger than 64 MiB");
    }
    const auto empty = temp_file("keyplace_cli_no_nodes.txt", "# none\n\n");
    expect_failure(locate("@" + empty), 1, "node file '" + empty + "' lists no nodes");
    std::filesystem::remove(empty);
}

TEST_CASE("cli: one id and location grammar in every strategy's SPEC", "[cli][errors]") {
    auto locate = [](const char* strategy, const std::string& spec) {
        return run_cli({"locate", "--strategy", strategy, "--nodes", spec}, "k1\nk2\n");
    };
    struct bad_entry {
        const char* strategy;
        std::string spec;
        std::string fragment;
    };
    const bad_entry cases[] = {
        // Ids with a newline, a space or '@' are refused by every family, naming entry and form.
        {"redis", "a\nb,c", "--nodes entry 1: node id 'a\\x0ab' contains '\\x0a' (expected ID=FIRST-LAST"},
        {"redis", "a@eu,b", "node id 'a@eu' contains '@'"},
        {"redis", "a b=0-16383", "node id 'a b' contains ' '"},
        {"cassandra", "x\ny=5,z=10",
         "node id 'x\\x0ay' contains '\\x0a' in 'x\\x0ay=5' (expected ID=TOKEN[;TOKEN...][@DC[/RACK]])"},
        {"cassandra", "a b=5", "node id 'a b' contains ' '"},
        {"cassandra", "a=5@dc=1", "datacenter 'dc=1' contains '='"},
        {"cassandra", "a=5@", "datacenter is empty"},
        {"cassandra", "a=1@dc/r/x", "location 'dc/r/x' of node 'a' has more than DC/RACK"},
        {"tokens", "a\tb=1", "node id 'a\\x09b' contains '\\x09'"},
        {"tokens", "a=1@eu//r", "zone is empty"},
        // ID@LOCATION=WEIGHT, stray '@' and empty location parts.
        {"ring", "a@eu=2,b",
         "--nodes entry 1: region 'eu=2' contains '=' in 'a@eu=2' (expected ID[=WEIGHT][@REGION[/ZONE[/RACK]]])"},
        {"ring", "a@x@y", "region 'x@y' contains '@' in 'a@x@y'"},
        {"ring", "a@", "region is empty in 'a@'"},
        {"ring", "a@//", "region is empty in 'a@//'"},
        {"ring", "a@eu/z/", "rack is empty in 'a@eu/z/'"},
        // An elided list is not a node named "...": ids are not only dots.
        {"ring", "a,...,b", "--nodes entry 2: node id '...' is only dots"},
        {"rendezvous", "a,.", "node id '.' is only dots"},
    };
    for (const auto& c : cases) {
        INFO(c.strategy << " " << c.spec);
        expect_failure(locate(c.strategy, c.spec), 2, c.fragment);
    }
    expect_failure(run_cli({"redis", "create", "--nodes", "a:1,b :1,c:1"}), 2, "address 'b :1' contains ' '");
    CHECK(locate("ring", "a.b,.c,d..").status == 0);
    // The same lines in a node file are bad input (1), named by file and line.
    const auto path = temp_file("keyplace_cli_grammar.txt", "a\nb@eu=2\n");
    expect_failure(locate("ring", "@" + path), 1, "'" + path + "':2: region 'eu=2' contains '='");
    std::filesystem::remove(path);
}

TEST_CASE("cli: ids are UTF-8, so text and JSON output hold them as given", "[cli][errors]") {
    const auto path = temp_file("keyplace_cli_latin1.txt", "ok\ncaf\xe9\n");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "@" + path, "--json"}, "k\n"), 1,
                   "'" + path + "':2: node id 'caf\\xe9' is not UTF-8 (byte 3)");
    std::filesystem::remove(path);
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b\xc3", "--json"}, "k\n"), 2,
                   "node id 'b\\xc3' is not UTF-8 (byte 1)");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,\xed\xa0\x80"}, "k\n"), 2,
                   "is not UTF-8 (byte 0)");  // a surrogate
    const auto r = run_cli({"locate", "--strategy", "ring", "--nodes", "caf\xc3\xa9", "--json"}, "k\n");
    CHECK(r.status == 0);
    CHECK(r.out == "{\"owners\":[\"caf\xc3\xa9\"]}\n");
}

TEST_CASE("cli: messages quote what they echo, one line of bounded length", "[cli][errors]") {
    using keyplace_cli::quote;
    CHECK(quote("a'b\\c\n\x7f") == "'a\\x27b\\x5cc\\x0a\\x7f'");
    CHECK(quote("caf\xc3\xa9 caf\xe9") == "'caf\xc3\xa9 caf\\xe9'");
    CHECK(quote(std::string(64, 'x')) == "'" + std::string(64, 'x') + "'");
    CHECK(quote(std::string(65, 'x')) == "'" + std::string(64, 'x') + "'... (65 bytes)");
    // A character the cut would split is left out whole.
    CHECK(quote(std::string(63, 'x') + "\xc3\xa9") == "'" + std::string(63, 'x') + "'... (65 bytes)");
    expect_failure(run_cli({"hash", "--func\ntion", "xxh3"}), 2, "unknown option '--func\\x0ation'");
    const std::string line(1'000'000, '7');
    const auto big = run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--prehashed"}, "1\n" + line + "x\n");
    expect_failure(big, 1, "stdin line 2: '" + std::string(64, '7') + "'... (1000001 bytes) is not");
    CHECK(big.err.size() < 200);
    const auto zeros = std::string(1'000'000, '0') + "16384\n";
    const auto redis = run_cli({"locate", "--strategy", "redis", "--nodes", "a", "--prehashed"}, zeros);
    expect_failure(redis, 1, "... (1000005 bytes) is above 16383");
    CHECK(redis.err.size() < 200);
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", std::string(60'000, 'n') + "=x"}), 2,
                   "(60000 bytes) is not a number");
}

TEST_CASE("cli: --vnodes states its one range", "[cli][errors]") {
    // The strategy table's range and words, as a document's strategy.params.vnodes gets them.
    for (const char* v : {"4294967296", "4294967295", "268435457", "0"}) {
        expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--vnodes", v}, "k\n"), 2,
                       "--vnodes: vnodes " + std::string(v) + " is outside 1..268435456");
    }
}

TEST_CASE("cli: argument errors exit 2, bad data from files and stdin 1", "[cli][errors]") {
    // What the library refuses in a membership given inline is an argument error...
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,a"}, "k\n"), 2,
                   "'a' appears more than once");
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a,b,c", "--table-size", "2"}, "k\n"), 2,
                   "table size 2 is smaller than the 3 nodes");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--copies", "3"}, "k\n"), 2,
                   "replica count 3 is more than the 2 nodes");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,a"}), 2,
                   "'a' appears more than once");
    expect_failure(run_cli({"stats", "--strategy", "jump", "--nodes", "a,b=2"}), 2, "weight 1");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a=x"}, "k\n"), 2, "weight 'x'");
    expect_failure(run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1", "--add", "a b", "--copies", "1"}),
                   2, "node id 'a b' contains ' '");
    // ... and the same from a node file is bad input.
    const auto path = temp_file("keyplace_cli_dup.txt", "a\nb\na\n");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "@" + path}, "k\n"), 1,
                   "'a' appears more than once");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "@" + path}), 1,
                   "'a' appears more than once");
    std::filesystem::remove(path);
    const auto two = temp_file("keyplace_cli_two.txt", "a\nb\n");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "@" + two, "--copies", "3"}, "k\n"), 1,
                   "replica count 3 is more than the 2 nodes");
    std::filesystem::remove(two);
    // Bad stdin lines stay bad input.
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--prehashed"}, "x\n"), 1, "stdin line 1");
}
// ---- streaming, progress and the CLI's conventions (issue 18) ----------------------------------

namespace {

// run_cli with the streaming knobs turned down (or progress on).
auto run_streamed(std::initializer_list<std::string_view> args, const std::string& input,
                  const keyplace_cli::stream_options& options) -> result {
    std::istringstream in(input);
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string_view> v(args);
    const int status = keyplace_cli::run(v, in, out, err, options);
    return {status, out.str(), err.str()};
}

// Tiny blocks and a tiny memory limit: every few lines a block, the output in a temporary file.
constexpr keyplace_cli::stream_options tiny{keyplace_cli::progress_mode::off, 3, 16};

// What args print on input, checked to be the same whole and with the tiny knobs; its lines.
auto streamed_same(const std::vector<std::string_view>& args, const std::string& input) -> std::size_t {
    std::istringstream in1(input);
    std::istringstream in2(input);
    std::ostringstream whole;
    std::ostringstream streamed;
    std::ostringstream err;
    CHECK(keyplace_cli::run(args, in1, whole, err) == 0);
    CHECK(keyplace_cli::run(args, in2, streamed, err, tiny) == 0);
    CHECK(err.str().empty());
    const std::string text = whole.str();
    CHECK(streamed.str() == text);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

auto numbered_keys(std::size_t n) -> std::string {
    std::string keys;
    for (std::size_t i = 0; i < n; ++i) {
        keys += i % 7 == 3 ? "\n" : "user:" + std::to_string(i) + "\n";  // empty keys among them
    }
    return keys;
}

}  // namespace

TEST_CASE("cli: hash and locate stream in blocks through a temporary file with the same output", "[cli][stream]") {
    const std::string keys = numbered_keys(200);
    std::string points;
    for (std::size_t i = 0; i < 200; ++i) {
        points += std::to_string(i * 92233720368547758ULL) + "\n";
    }
    const std::vector<std::pair<std::vector<std::string_view>, const std::string*>> lines{
        {{"hash", "--function", "xxh3"}, &keys},
        {{"hash", "--function", "murmur3-cassandra", "--json"}, &keys},
        {{"locate", "--strategy", "ring", "--nodes", "a,b=2,c"}, &keys},
        {{"locate", "--strategy", "maglev", "--nodes", "a,b,c", "--json"}, &keys},
        {{"locate", "--strategy", "ring", "--nodes", "a@x,b@y,c@z", "--copies", "2", "--spread", "region"}, &keys},
        {{"locate", "--strategy", "rendezvous", "--nodes", "a,b,c", "--copies", "3", "--json"}, &keys},
        {{"locate", "--strategy", "jump", "--nodes", "a,b,c", "--prehashed"}, &points},
    };
    for (const auto& [args, input] : lines) {
        INFO(args.front() << " " << args.back());
        CHECK(streamed_same(args, *input) == (args.back() == "--json" ? 1u : 200u));
    }
    // Against the library, past the default block of 65536 lines, and without a final newline.
    std::string many;
    std::string expected;
    for (std::size_t i = 0; i < 70'000; ++i) {
        const std::string key = "k" + std::to_string(i);
        many += key + (i + 1 < 70'000 ? "\n" : "");
        expected += keyplace_cli::hex64(keyplace::xxh3{}(key)) + "\n";
    }
    const auto r = run_cli({"hash", "--function", "xxh3"}, many);
    CHECK(r.status == 0);
    CHECK(r.out == expected);
    const auto json = run_streamed({"hash", "--function", "xxh3", "--json"}, "a\nb", tiny);
    CHECK(json.out == "{\"function\":\"xxh3\",\"digests\":[\"" + keyplace_cli::hex64(keyplace::xxh3{}("a")) + "\",\"" +
                          keyplace_cli::hex64(keyplace::xxh3{}("b")) + "\"]}\n");
    CHECK(run_streamed({"locate", "--strategy", "ring", "--nodes", "a", "--json"}, "", tiny).out == "{\"owners\":[]}\n");
    CHECK(run_streamed({"hash", "--function", "xxh3"}, "", tiny).out.empty());
    CHECK(run_streamed({"hash", "--function", "xxh3"}, "\n\n", tiny).out == "2d06800538d394c2\n2d06800538d394c2\n");
}

TEST_CASE("cli: a bad line in a late block leaves stdout empty", "[cli][stream][errors]") {
    std::string input;
    for (int i = 1; i < 95; ++i) {
        input += std::to_string(i) + "\n";
    }
    input += "x95\n96\n";
    for (const auto& options : {tiny, keyplace_cli::stream_options{}}) {
        expect_failure(run_streamed({"locate", "--strategy", "ring", "--nodes", "a,b", "--prehashed"}, input, options), 1,
                       "stdin line 95: 'x95' is not an unsigned decimal 64-bit point");
        expect_failure(run_streamed({"locate", "--strategy", "cassandra", "--nodes", "a=0", "--prehashed", "--json"},
                                    input, options),
                       1, "stdin line 95: 'x95' is not a signed decimal 64-bit token");
    }
    // The output cannot be held: a failure, and still nothing on stdout.
    const char* old = std::getenv("TMPDIR");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("TMPDIR", "/nonexistent/keyplace-tmp", 1);
    expect_failure(run_streamed({"hash", "--function", "xxh3"}, numbered_keys(50), tiny), 1,
                   "cannot create a temporary file for the output");
    if (old != nullptr) {
        ::setenv("TMPDIR", saved.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
    // A read error on stdin is an input failure.
    std::istringstream broken("a\nb\n");
    broken.setstate(std::ios::badbit);
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string_view> args{"hash", "--function", "xxh3"};
    CHECK(keyplace_cli::run(args, broken, out, err) == 1);
    CHECK(out.str().empty());
    CHECK(err.str() == "keyplace-cli: cannot read stdin\n");
}

TEST_CASE("cli: progress goes to stderr only, and not at all with --quiet", "[cli][progress]") {
    using keyplace_cli::progress_mode;
    const keyplace_cli::stream_options lines{progress_mode::lines, 10, 1 << 22};
    const std::string keys = numbered_keys(25);
    const std::string ten = "n0,n1,n2,n3,n4,n5,n6,n7,n8,n9";
    const std::string eleven = ten + ",n10";
    struct command {
        std::vector<std::string_view> args;
        std::string input;
        std::string shown;
    };
    const std::vector<command> commands{
        {{"hash", "--function", "xxh3"}, keys, "keyplace-cli: hash, 20 keys\n"},
        {{"locate", "--strategy", "ring", "--nodes", ten}, keys, "keyplace-cli: locate, 25 keys\n"},
        {{"diff", "--strategy", "ring", "--nodes-before", ten, "--nodes-after", eleven}, "",
         "keyplace-cli: diff: building --nodes-before\n"},
        {{"stats", "--strategy", "ring", "--nodes", ten, "--key-count", "25"}, "", "keyplace-cli: stats: hashing the keys, 20 keys\n"},
    };
    for (const auto& c : commands) {
        INFO(c.args.front());
        const auto run_with = [&](std::vector<std::string_view> args, const keyplace_cli::stream_options& o) {
            std::istringstream in(c.input);
            std::ostringstream out;
            std::ostringstream err;
            const int status = keyplace_cli::run(args, in, out, err, o);
            return result{status, out.str(), err.str()};
        };
        const auto plain = run_with(c.args, {});
        const auto shown = run_with(c.args, lines);
        auto quiet_args = c.args;
        quiet_args.emplace_back("--quiet");
        const auto quiet = run_with(quiet_args, lines);
        REQUIRE(plain.status == 0);
        CHECK(plain.err.empty());
        CHECK(shown.status == 0);
        CHECK(shown.out == plain.out);
        CHECK_THAT(shown.err, Catch::Matchers::Contains(c.shown));
        CHECK_THAT(shown.err, Catch::Matchers::Contains("keyplace-cli: " + std::string(c.args.front()) + ": done in "));
        CHECK(quiet.status == 0);
        CHECK(quiet.out == plain.out);
        CHECK(quiet.err.empty());
        // The terminal form: quiet for about a second, so a quick command shows nothing, or
        // (on a slow machine) a status line it erases.
        const auto terminal = run_with(c.args, {progress_mode::terminal});
        CHECK(terminal.out == plain.out);
        CHECK((terminal.err.empty() || terminal.err.ends_with("\r\x1b[K")));
    }
    // A failure after progress: its line is the last on stderr, and stdout stays empty.
    const auto bad = run_streamed({"locate", "--strategy", "ring", "--nodes", "a", "--prehashed"}, "1\n2\nx\n", lines);
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK_THAT(bad.err, Catch::Matchers::EndsWith("keyplace-cli: stdin line 3: 'x' is not an unsigned decimal 64-bit point\n"));
}

TEST_CASE("cli: --help after any command, help COMMAND, and a hint without a command", "[cli]") {
    expect_failure(run_cli({}), 2, "no command given; try 'keyplace-cli --help'");
    const auto help = run_cli({"locate", "--help"});
    REQUIRE(help.status == 0);
    // Whatever else is on the line, even what would be an error.
    for (const auto& args : std::vector<std::vector<std::string_view>>{
             {"locate", "--strategy", "ring", "--help"},
             {"locate", "--bogus", "--help"},
             {"locate", "--strategy", "nope", "-h"},
             {"locate", "stray", "--help"},
             {"help", "locate"}}) {
        std::istringstream in;
        std::ostringstream out;
        std::ostringstream err;
        CHECK(keyplace_cli::run(args, in, out, err) == 0);
        CHECK(out.str() == help.out);
        CHECK(err.str().empty());
    }
    CHECK(run_cli({"help"}).out == run_cli({"--help"}).out);
    // A two-word family lists its subcommands; each subcommand has its own help.
    const auto redis = run_cli({"redis", "--help"});
    CHECK(redis.status == 0);
    CHECK_THAT(redis.out, Catch::Matchers::Contains("  redis create "));
    CHECK_THAT(redis.out, Catch::Matchers::Contains("  redis rebalance "));
    CHECK(run_cli({"help", "redis", "create"}).out == run_cli({"redis", "create", "--help"}).out);
    CHECK(run_cli({"redis", "create", "--nodes", "--help"}).out == run_cli({"redis", "create", "--help"}).out);
    expect_failure(run_cli({"redis"}), 2, "redis needs a subcommand: create or rebalance");
    expect_failure(run_cli({"help", "place"}), 2, "unknown command 'place'");
}

TEST_CASE("cli: --keys is a key file in every command, --key-count a count", "[cli]") {
    const auto keys = temp_file("keyplace_cli_stats_keys.txt", "user:1\nuser:2\nuser:3\n\n");
    const auto located = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c"}, "user:1\nuser:2\nuser:3\n\n");
    const auto r = run_cli({"stats", "--strategy", "ring", "--nodes", "a,b,c", "--keys", keys, "--json"});
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Matchers::Contains("\"keys\":4,\"basis\":\"4 keys from '" + keys + "'\""));
    // The load is over the file's keys: each node holds as many as locate sends it.
    for (const std::string id : {"a", "b", "c"}) {
        const auto n = std::count(located.out.begin(), located.out.end(), id[0]);
        CHECK_THAT(r.out, Catch::Matchers::Contains("{\"id\":\"" + id + "\",\"weight\":1,") &&
                              Catch::Matchers::Contains("\"keys\":" + std::to_string(n) + "}"));
    }
    const auto text = run_cli({"stats", "--strategy", "ring", "--nodes", "a,b,c", "--keys", keys});
    CHECK_THAT(text.out, Catch::Matchers::StartsWith("strategy ring: 3 nodes; share: exact; keys: 4 keys from '" + keys + "'\n"));
    CHECK_THAT(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--key-count", "5"}).out,
               Catch::Matchers::Contains("keys: \"key-0\" ... \"key-4\"\n"));
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--keys", keys, "--key-count", "5"}), 2,
                   "--keys FILE and --key-count N exclude each other");
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--keys", "1000"}), 1,
                   "cannot read key file '1000': No such file or directory (a count is --key-count N)");
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--key-count", "5"}), 2,
                   "unknown option '--key-count'");
    CHECK_THAT(run_cli({"stats", "--help"}).out, Catch::Matchers::Contains("--keys FILE") &&
                                                    Catch::Matchers::Contains("--key-count N"));
    std::filesystem::remove(keys);
}

TEST_CASE("cli: diff and stats --prehashed read --keys FILE as points", "[cli]") {
    std::string lines;
    for (std::uint64_t i = 0; i < 500; ++i) {
        lines += std::to_string(i * 36893488147419103ULL) + "\n";
    }
    const auto points = temp_file("keyplace_cli_points.txt", lines);
    const auto before = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c", "--prehashed"}, lines);
    const auto after = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c,d", "--prehashed"}, lines);
    REQUIRE(before.status == 0);
    std::istringstream b(before.out);
    std::istringstream a(after.out);
    std::size_t moved = 0;
    for (std::string x, y; std::getline(b, x) && std::getline(a, y);) {
        moved += x != y ? 1 : 0;
    }
    const auto diff = run_cli({"diff", "--strategy", "ring", "--nodes-before", "a,b,c", "--nodes-after", "a,b,c,d", "--keys", points,
                               "--prehashed", "--json"});
    REQUIRE(diff.status == 0);
    CHECK_THAT(diff.out, Catch::Matchers::Contains("\"keys\":500,\"moved\":" +
                                                   keyplace_cli::json_number(static_cast<double>(moved) / 500) + ","));
    CHECK_THAT(diff.out, Catch::Matchers::Contains("\"basis\":\"500 points from '"));
    const auto stats = run_cli({"stats", "--strategy", "ring", "--nodes", "a,b,c", "--keys", points, "--prehashed", "--json"});
    REQUIRE(stats.status == 0);
    const auto n = std::count(before.out.begin(), before.out.end(), 'a');
    CHECK_THAT(stats.out, Catch::Matchers::Contains("{\"id\":\"a\",\"weight\":1,"));
    CHECK_THAT(stats.out, Catch::Matchers::Contains(",\"keys\":" + std::to_string(n) + "}"));
    // Without a key file there are no lines to read as points; a bad point names its line.
    expect_failure(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a", "--nodes-after", "a,b", "--prehashed"}), 2,
                   "--prehashed needs --keys FILE");
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--prehashed"}), 2,
                   "--prehashed needs --keys FILE");
    const auto bad = temp_file("keyplace_cli_bad_points.txt", "1\n2\nthree\n");
    expect_failure(run_cli({"stats", "--strategy", "ring", "--nodes", "a", "--keys", bad, "--prehashed"}), 1,
                   "key file '" + bad + "' line 3: 'three' is not an unsigned decimal 64-bit point");
    std::filesystem::remove(points);
    std::filesystem::remove(bad);
}

TEST_CASE("cli: diff --json carries moved/minimum", "[cli]") {
    const auto ring = run_cli({"diff", "--strategy", "ring", "--nodes-before", "a,b,c", "--nodes-after", "a,b,c,d", "--json"});
    REQUIRE(ring.status == 0);
    const auto modulo = run_cli({"diff", "--strategy", "modulo", "--nodes-before", "a,b,c", "--nodes-after", "a,b,c,d", "--json"});
    const auto field = [](const std::string& json, const std::string& name) {
        const auto at = json.find("\"" + name + "\":");
        REQUIRE(at != std::string::npos);
        return std::stod(json.substr(at + name.size() + 3));
    };
    for (const auto* out : {&ring.out, &modulo.out}) {
        CHECK(field(*out, "moved_over_minimum") == Approx(field(*out, "moved") / field(*out, "minimum")));
    }
    CHECK(field(modulo.out, "moved_over_minimum") > 2);
    // Nothing moved and nothing had to: 1, as the text says.
    CHECK_THAT(run_cli({"diff", "--strategy", "ring", "--nodes-before", "a,b", "--nodes-after", "a,b", "--json"}).out,
               Catch::Matchers::Contains("\"minimum\":0,\"moved_over_minimum\":1,"));
}

#if KEYPLACE_CLI_SNAPSHOTS
TEST_CASE("cli: locate --snapshot streams as locate does", "[cli][stream][snapshot]") {
    const auto doc = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c,d", "--cluster", "eu",
                              "--epoch", "2", "--states", "d=joining"});
    REQUIRE(doc.status == 0);
    const auto path = temp_file("keyplace_cli_stream_snapshot.json", doc.out);
    const std::string keys = numbered_keys(100);
    for (const auto& extra : {std::vector<std::string_view>{}, {"--write-set"}, {"--json"}, {"--write-set", "--json"}}) {
        std::vector<std::string_view> args{"locate", "--snapshot", path};
        args.insert(args.end(), extra.begin(), extra.end());
        CHECK(streamed_same(args, keys) == (extra.empty() || extra.back() != "--json" ? 100u : 1u));
    }
    CHECK(run_cli({"locate", "--snapshot", path, "--json"}, "").out == "{\"owners\":[],\"epoch\":2}\n");
    std::filesystem::remove(path);
}
#endif

TEST_CASE("cli: locate --load-factor assigns the input as one batch of held requests", "[cli][bounded]") {
    // Maglev M = 7 over a, b, c (tests/golden/maglev_native_v1.txt, case "seven": entries
    // 2,1,1,0,2,0,0, so slot 0 is c, slots 1 and 2 b, slot 3 a). Three requests at point 0 with
    // c = 1: caps ceil(T/3) = 1 for T = 1, 2, 3; the first takes c, the second finds c full and
    // walks to slot 1 (b), the third passes c and b (slots 1 and 2) and takes a (slot 3).
    const std::vector<std::string_view> base{"locate", "--strategy", "maglev", "--nodes", "c,a,b", "--table-size",
                                             "7", "--prehashed", "--load-factor"};
    const auto with = [&](std::string_view c) {
        auto args = base;
        args.push_back(c);
        return run_cli(args, "0\n0\n0\n");
    };
    CHECK(with("1").out == "c\nb\na\n");
    CHECK(with("inf").out == "c\nc\nc\n");
    // 1.25: caps ceil(1.25 T / 3) = 1, 1, 2: c, b, then c again.
    CHECK(with("1.25").out == "c\nb\nc\n");
    // Envoy's rules, factor 0, are the plain Envoy strategy; HAProxy's run over a ring.
    const std::string keys = numbered_keys(50);
    CHECK(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a,b,c", "--load-factor", "envoy:0"}, keys).out ==
          run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a,b,c"}, keys).out);
    const auto h = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c", "--load-factor", "haproxy:150"}, keys);
    CHECK(h.status == 0);
    CHECK(std::count(h.out.begin(), h.out.end(), '\n') == 50);
    CHECK(run_cli({"locate", "--strategy", "envoy-maglev", "--nodes", "a,b,c", "--load-factor", "envoy:125", "--json"},
                  "k\n")
              .out.rfind("{\"owners\":[\"", 0) == 0);
}

TEST_CASE("cli: --load-factor is refused where it does not apply, naming the value", "[cli][bounded][errors]") {
    expect_failure(run_cli({"locate", "--strategy", "jump", "--nodes", "a,b", "--load-factor", "1.25"}, "k\n"), 2,
                   "--load-factor needs a strategy with a preference order");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--load-factor", "0.5"}, "k\n"), 2,
                   "load factor 0.5 is below 1");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--load-factor", "nan"}, "k\n"), 2,
                   "load factor nan is not a number");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--load-factor", "lots"}, "k\n"), 2,
                   "--load-factor 'lots' is not a number");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--load-factor", "haproxy:100"}, "k\n"),
                   2, "must be 0 or greater than 100");
    expect_failure(run_cli({"locate", "--strategy", "maglev", "--nodes", "a,b", "--load-factor", "haproxy:150"}, "k\n"),
                   2, "haproxy:F needs a ring");
    expect_failure(run_cli({"locate", "--strategy", "envoy-ring", "--nodes", "a,b", "--load-factor", "envoy:99"}, "k\n"),
                   2, "hash_balance_factor 99 is below 100");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--load-factor", "envoy:125"}, "k\n"), 2,
                   "envoy:F needs --strategy envoy-ring or envoy-maglev");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a=1.5,b", "--load-factor", "haproxy:150"}, "k\n"),
                   2, "weight 1.5 is not a whole number from 1 to 256");
    expect_failure(
        run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--copies", "2", "--load-factor", "1.25"}, "k\n"),
        2, "--load-factor and --copies exclude each other");
}

TEST_CASE("cli: locate --spread-reads serves each read from the golden table's node", "[cli][spread]") {
    // tests/golden/spread_native_v1.txt, its first strategy (ring, 160 vnodes, node-a ... node-e)
    // and key "user:42": the node serving each (SALT, K). Line i of the input is read with salt i.
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> served;  // (K, SALT) -> ID
    bool first_strategy = false;
    for (const auto& f : keyplace_test::golden_records("spread_native_v1.txt")) {
        if (f[0] == "strategy") {
            first_strategy = !first_strategy && served.empty() && f[1] == "ring" && f[2] == "160" &&
                             f[3] == "node-a,node-b,node-c,node-d,node-e";
        } else if (f[0] == "pick" && first_strategy && f[1] == "757365723a3432") {
            served[{keyplace_test::parse_u64(f[3]), keyplace_test::parse_u64(f[2])}] = f[4];
        }
    }
    REQUIRE(served.size() >= 20);
    const std::vector<std::string_view> base{"locate", "--strategy", "ring", "--nodes",
                                             "node-a,node-b,node-c,node-d,node-e", "--spread-reads"};
    std::set<std::uint64_t> widths;
    std::uint64_t salts = 0;
    for (const auto& [ks, id] : served) {
        widths.insert(ks.first);
        salts = std::max(salts, ks.second + 1);
    }
    std::string reads;
    for (std::uint64_t i = 0; i < salts; ++i) {
        reads += "user:42\n";
    }
    for (const auto k : widths) {
        const std::string width = std::to_string(k);
        INFO("K " << width);
        auto args = base;
        args.push_back(width);
        const auto r = run_cli(args, reads);
        REQUIRE(r.status == 0);
        std::istringstream lines(r.out);
        std::string line;
        for (std::uint64_t salt = 0; std::getline(lines, line); ++salt) {
            if (const auto e = served.find({k, salt}); e != served.end()) {
                CHECK(line == e->second);
            }
        }
        // --salt S: every read with salt S.
        for (const auto& [ks, id] : served) {
            if (ks.first != k) {
                continue;
            }
            const std::string salt = std::to_string(ks.second);
            auto fixed = args;
            fixed.insert(fixed.end(), {"--salt", salt});
            CHECK(run_cli(fixed, "user:42\nuser:42\n").out == id + "\n" + id + "\n");
        }
    }
    // K = 1 is the owner, whatever the salt; --json names the servers.
    const std::string keys = numbered_keys(200);
    CHECK(run_cli({"locate", "--strategy", "rendezvous", "--nodes", "a,b,c,d", "--spread-reads", "1"}, keys).out ==
          run_cli({"locate", "--strategy", "rendezvous", "--nodes", "a,b,c,d"}, keys).out);
    CHECK(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "2", "--json"}, "k\n")
              .out.rfind("{\"servers\":[\"", 0) == 0);
}

TEST_CASE("cli: --spread-reads and --salt are refused where they do not apply, naming the value", "[cli][spread][errors]") {
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "0"}, "k\n"), 2,
                   "--spread-reads '0' is not an integer from 1 to 64");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "65"}, "k\n"), 2,
                   "--spread-reads '65' is not an integer from 1 to 64");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "2", "--salt", "-1"},
                           "k\n"),
                   2, "--salt '-1' is not an unsigned integer");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--salt", "3"}, "k\n"), 2,
                   "--salt needs --spread-reads");
    expect_failure(run_cli({"locate", "--strategy", "jump", "--nodes", "a,b", "--spread-reads", "2"}, "k\n"), 2,
                   "--spread-reads needs a strategy with a preference order");
    expect_failure(
        run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "2", "--copies", "2"}, "k\n"), 2,
        "--spread-reads and --copies exclude each other");
    expect_failure(
        run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--spread-reads", "2", "--load-factor", "2"}, "k\n"),
        2, "--spread-reads and --load-factor exclude each other");
}

// ---- issue 35: values the planners took without a word ----------------------------------------

TEST_CASE("cli: redis create takes HOST:PORT addresses only, naming the one that is not", "[cli][redis][errors]") {
    const std::string good = "127.0.0.1:7001,127.0.0.1:7002";
    expect_failure(run_cli({"redis", "create", "--nodes", good + ",127.0.0.1:0"}), 2,
                   "--nodes entry 3: port '0' of address '127.0.0.1:0' is not a port from 1 to 65535");
    expect_failure(run_cli({"redis", "create", "--nodes", good + ",a:b:c"}), 2,
                   "--nodes entry 3: port 'c' of address 'a:b:c' is not a port from 1 to 65535");
    expect_failure(run_cli({"redis", "create", "--nodes", good + ",host"}), 2,
                   "--nodes entry 3: address 'host' has no port (expected HOST:PORT)");
    expect_failure(run_cli({"redis", "create", "--nodes", good + ",:7003"}), 2,
                   "--nodes entry 3: address ':7003' has no host (expected HOST:PORT)");
    expect_failure(run_cli({"redis", "create", "--nodes", good + ",h:65536"}), 2, "port '65536' of address 'h:65536'");
    // IPv6 hosts: the port follows the last colon, as redis-cli reads it (masters interleaved by host).
    CHECK(run_cli({"redis", "create", "--nodes", good + ",::1:7003"}).out ==
          "127.0.0.1:7001=0-5460\n::1:7003=5461-10922\n127.0.0.1:7002=10923-16383\n");
}

TEST_CASE("cli: a repeated --weights master and an empty --add location are refused by name",
          "[cli][redis][allocate][errors]") {
    const std::string map = "m1=0-8191,m2=8192-16383";
    expect_failure(run_cli({"redis", "rebalance", "--nodes", map, "--weights", "m1=1,m1=2"}), 2,
                   "--weights names master 'm1' twice");
    for (const char* strategy : {"cassandra", "tokens"}) {
        INFO(strategy);
        const std::string ring = std::string(strategy) == "cassandra" ? "n1=0@dc1/r1" : "n1=0@eu/z/r1";
        expect_failure(run_cli({"allocate", "--strategy", strategy, "--nodes", ring, "--add", "n4@", "--copies",
                                "1"}),
                       2, "--add: location of node 'n4' is empty");
    }
}

TEST_CASE("cli: a UTF-8 byte-order mark opens a node file, not its first id", "[cli][errors]") {
    const std::string bom = "\xef\xbb\xbf";
    std::string keys;
    for (int k = 0; k < 20; ++k) {
        keys += "k" + std::to_string(k) + "\n";
    }
    const auto plain = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b"}, keys);
    REQUIRE(plain.status == 0);
    const auto file = temp_file("keyplace_cli_bom_nodes.txt", bom + "a\nb\n");
    CHECK(run_cli({"locate", "--strategy", "ring", "--nodes", "@" + file}, keys).out == plain.out);
    // Only the file's first bytes: a mark inside a file is a character of the id it is in.
    const auto inner = temp_file("keyplace_cli_bom_inner.txt", "a\n" + bom + "b\n");
    CHECK(run_cli({"locate", "--strategy", "ring", "--nodes", "@" + inner}, keys).out != plain.out);
    // Key lines are bytes, not text: a leading mark is part of the first key.
    CHECK(run_cli({"hash", "--function", "xxh3"}, bom + "abc\n").out != "78af5f94892f3950\n");
}

TEST_CASE("cli: snapshot ids that break the name grammar are refused by every command that reads them",
          "[cli][snapshot][names]") {
    const auto made = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n0,n1,n2", "--cluster", "eu"});
    REQUIRE(made.status == 0);
    std::string doc = made.out;
    const auto at = doc.find("\"id\": \"n1\"");
    REQUIRE(at != std::string::npos);
    doc.replace(at, 10, "\"id\": \"n\\n1\"");  // a newline: locate printed a line per id line
    const auto path = temp_file("kp_cli_names.json", doc);
    std::string keys;
    for (int i = 0; i < 20; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    for (const std::vector<std::string_view>& args :
         {std::vector<std::string_view>{"locate", "--snapshot", path}, {"snapshot", "verify", path},
          {"snapshot", "next", path}}) {
        expect_failure(run_cli(args, keys), 1, "nodes[1].id: node id 'n\\x0a1' contains '\\x0a'");
    }
    doc = made.out;
    doc.replace(doc.find("\"id\": \"n1\""), 10, "\"id\": \"a,b\"");
    expect_failure(run_cli({"locate", "--snapshot", temp_file("kp_cli_names2.json", doc), "--write-set"}, keys), 1,
                   "node id 'a,b' contains ','");
    // --nodes holds to the same grammar, through the library.
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n0,n#1", "--cluster", "eu"}), 2,
                   "node id 'n#1' contains '#'");
    expect_failure(run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n0", "--cluster", "e u"}), 2,
                   "cluster 'e u' contains ' '");
}

TEST_CASE("cli: a document followed by a NUL byte, and one past the size cap, are refused", "[cli][snapshot][names]") {
    const auto made = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n0,n1", "--cluster", "eu"});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_nul.json", made.out + std::string("\0garbage{", 9));
    expect_failure(run_cli({"snapshot", "verify", path}), 1, "a NUL byte");
    expect_failure(run_cli({"locate", "--snapshot", path}, "k\n"), 1, "a NUL byte");
    // /dev/zero: read up to the cap and one byte more, not until memory runs out.
    expect_failure(run_cli({"snapshot", "verify", "/dev/zero"}), 1, "is larger than 64 MiB");
}

TEST_CASE("cli: snapshot next refuses a node that left returning, and the overflow of the last epoch",
          "[cli][snapshot][names]") {
    const auto made = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n1,n2,n3,n4", "--cluster",
                               "eu", "--states", "n4=left"});
    REQUIRE(made.status == 0);
    const auto path = temp_file("kp_cli_left.json", made.out);
    expect_failure(run_cli({"snapshot", "next", path, "--states", "n4=active"}), 1,
                   "node 'n4' left at epoch 1 and may not return as active; give it a new id");
    expect_failure(run_cli({"snapshot", "next", path, "--states", "n4=joining"}), 1, "node 'n4' left at epoch 1");
    CHECK(run_cli({"snapshot", "next", path, "--states", "n3=leaving"}).status == 0);
    const auto last = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "n1", "--cluster", "eu",
                               "--epoch", "18446744073709551615"});
    REQUIRE(last.status == 0);
    expect_failure(run_cli({"snapshot", "next", temp_file("kp_cli_last.json", last.out)}), 1,
                   "the epoch would overflow");
}

TEST_CASE("cli: strategy tokens refuses a token listed twice", "[cli][names]") {
    expect_failure(run_cli({"locate", "--strategy", "tokens", "--nodes", "a=1,b=1"}, "k\n"), 2,
                   "token 1 is owned by both 'a' and 'b'");
    expect_failure(run_cli({"locate", "--strategy", "tokens", "--nodes", "a=1;1,b=2"}, "k\n"), 2,
                   "node 'a' lists token 1 twice");
    CHECK(run_cli({"locate", "--strategy", "tokens", "--nodes", "a=1,b=2"}, "k\n").status == 0);
}

#if KEYPLACE_CLI_ETCD
TEST_CASE("cli: etcd commands refuse a cluster or client id outside the name grammar before any request",
          "[cli][etcd][names]") {
    // Port 9 (discard) on loopback: nothing answers there; a refusal must come before any request.
    const std::string_view endpoint = "http://127.0.0.1:9";
    const std::string long_name(300, 'c');
    for (const std::string_view cluster : {std::string_view("bar/clients"), std::string_view(""),
                                           std::string_view(long_name), std::string_view("a b")}) {
        for (const std::string_view command : {"current", "status"}) {
            expect_failure(run_cli({"etcd", command, "--endpoints", endpoint, "--cluster", cluster}), 2, "--cluster: ");
        }
        expect_failure(run_cli({"etcd", "watch", "--endpoints", endpoint, "--cluster", cluster, "--count", "1"}), 2,
                       "--cluster: cluster '");
        expect_failure(run_cli({"etcd", "publish", "--endpoints", endpoint, "--cluster", cluster, "--snapshot", "x.json"}),
                       2, "--cluster: cluster '");
    }
    expect_failure(run_cli({"etcd", "current", "--endpoints", endpoint, "--cluster", "bar/clients"}), 2,
                   "--cluster: cluster 'bar/clients' contains '/'");
    for (const std::string_view id : {"a\nb", "", "a/b"}) {
        expect_failure(run_cli({"etcd", "watch", "--endpoints", endpoint, "--cluster", "eu", "--client-id", id,
                                "--count", "1"}),
                       2, "--client-id: client id '");
    }
    expect_failure(run_cli({"etcd", "watch", "--endpoints", endpoint, "--cluster", "eu", "--cache", "", "--count", "1"}),
                   2, "--cache: an empty file name");
}
#endif

TEST_CASE("cli: snapshot create takes a partition table's copies from --copies alone, and next adds a slotless Redis master", "[cli][snapshot]") {
    // --spread shapes the copies --copies asks for; without --copies it changes nothing (a table
    // of one replica, spread over nodes), as before the CLI read its strategies from the table.
    const std::vector<std::string_view> plain{"snapshot", "create", "--strategy", "partitions", "--partitions", "64",
                                              "--nodes", "a,b,c", "--cluster", "c"};
    auto spread = plain;
    spread.insert(spread.end(), {"--spread", "rack"});
    const auto without = run_cli(plain);
    const auto with = run_cli(spread);
    REQUIRE(without.status == 0);
    CHECK(with.status == 0);
    CHECK(with.out == without.out);
    // snapshot next --add ID=: a master that holds no slot joins a map whose nodes hold them all.
    const auto map = run_cli({"snapshot", "create", "--strategy", "redis", "--nodes", "a=0-8191,b=8192-16383",
                              "--cluster", "c"});
    REQUIRE(map.status == 0);
    const auto next = run_cli({"snapshot", "next", temp_file("kp_cli_redis1.json", map.out), "--add", "c="});
    CHECK(next.status == 0);
    CHECK(next.err.empty());
    CHECK_THAT(next.out, Catch::Matchers::Contains("\"id\": \"c\""));
    // Every node listed ID= in one list gives no node a slot: refused, not split evenly.
    expect_failure(run_cli({"snapshot", "create", "--strategy", "redis", "--nodes", "a=,b=", "--cluster", "c"}), 2,
                   "no node holds a slot");
}

TEST_CASE("cli: partitions documents record their claim contract, and next keeps it", "[cli][snapshot][partitions]") {
    const std::vector<std::string_view> create{"snapshot", "create", "--strategy", "partitions", "--partitions", "64",
                                               "--nodes", "a@eu/z1,b@eu/z1,c@eu/z2,d@eu/z3", "--cluster", "c",
                                               "--copies", "3", "--spread", "zone"};
    // New documents record contract 2.
    const auto two = run_cli(create);
    REQUIRE(two.status == 0);
    CHECK_THAT(two.out, Catch::Matchers::Contains("\"contract\": 2"));
    // --contract 1: the document of the first release, which states none.
    auto one_args = create;
    one_args.insert(one_args.end(), {"--contract", "1"});
    const auto one = run_cli(one_args);
    REQUIRE(one.status == 0);
    CHECK_THAT(one.out, !Catch::Matchers::Contains("\"contract\": 2"));  // (strategy.contract is 1 in both)
    const auto d1 = keyplace::load_snapshot_json(one.out);
    CHECK_FALSE(d1.strategy().params.contains("contract"));
    CHECK(std::get<keyplace::partitions>(d1.current().strategy()).config().contract == 1);
    // snapshot next keeps a document's contract: moving to 2 re-claims the whole table (it moves
    // partitions), which is a new snapshot create, not a successor.
    const auto next = run_cli({"snapshot", "next", temp_file("kp_cli_c1.json", one.out), "--add", "e@eu/z3"});
    REQUIRE(next.status == 0);
    const auto d2 = keyplace::load_snapshot_json(next.out);
    CHECK_FALSE(d2.strategy().params.contains("contract"));
    CHECK(std::get<keyplace::partitions>(d2.pending().strategy()).config().contract == 1);
    auto bad = create;
    bad.insert(bad.end(), {"--contract", "3"});
    // (exit 2: every SPEC was inline, so what the library refuses is a bad argument.)
    expect_failure(run_cli(bad), 2, "partitions implements contract 1 to 2, not 3");
    expect_failure(run_cli({"locate", "--strategy", "partitions", "--partitions", "4", "--nodes", "a,b",
                            "--contract", "0"},
                           "k\n"),
                   2, "partitions implements contract 1 to 2, not 0");
}

TEST_CASE("cli: an mpchash snapshot: created with the generator's digests, located as go-mpchash locates, carried by next",
          "[cli][snapshot][mpchash]") {
    // mpchash_k5_joining of tests/golden/snapshot_digests_v2.txt: the generator's digests.
    const auto created = run_cli({"snapshot", "create", "--strategy", "mpchash", "--probes", "5", "--nodes",
                                  "g2,g10,g1,g3", "--states", "g3=joining", "--cluster", "go"});
    REQUIRE(created.status == 0);
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"fingerprint\": \"8a69516ec81398bd1841bf54e18bd436\""));
    CHECK_THAT(created.out, Catch::Matchers::Contains("\"probe\": \"8b17828fb77dcdf6d37bdf6c3ec0a77e\""));
    const auto path = temp_file("kp_cli_mpchash.json", created.out);
    REQUIRE(run_cli({"snapshot", "verify", path}).status == 0);
    std::string keys;
    for (int i = 0; i < 500; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    const auto engine = run_cli({"locate", "--strategy", "mpchash", "--probes", "5", "--nodes", "g2,g10,g1"}, keys);
    REQUIRE(engine.status == 0);
    CHECK(run_cli({"locate", "--snapshot", path}, keys).out == engine.out);
    const auto next = run_cli({"snapshot", "next", path, "--states", "g3=active"});
    REQUIRE(next.status == 0);
    const auto next_path = temp_file("kp_cli_mpchash2.json", next.out);
    const auto engine4 =
        run_cli({"locate", "--strategy", "mpchash", "--probes", "5", "--nodes", "g2,g10,g1,g3"}, keys);
    CHECK(run_cli({"locate", "--snapshot", next_path}, keys).out == engine4.out);
    CHECK(engine4.out != engine.out);
    const auto plan = run_cli({"plan", path, next_path});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::Contains("sampled"));
    CHECK_THAT(plan.out, Catch::Matchers::Contains("g3"));
    const auto diff = run_cli({"snapshot", "diff", path, next_path});
    REQUIRE(diff.status == 0);
    CHECK_THAT(diff.out, Catch::Matchers::Contains("strategy mpchash -> mpchash: 3 -> 4 nodes; sampled, 131072 keys"));
    // Shadow compare over every key: it moves exactly the keys whose engine owner changed.
    std::size_t changed = 0;
    {
        std::istringstream a(engine.out);
        std::istringstream b(engine4.out);
        for (std::string x, y; std::getline(a, x) && std::getline(b, y);) {
            changed += x != y ? 1U : 0U;
        }
    }
    REQUIRE(changed > 0);
    const auto sh = run_cli({"shadow", "--before", path, "--after", next_path, "--sample-per-million", "1000000",
                             "--json"},
                            keys);
    REQUIRE(sh.status == 0);
    CHECK_THAT(sh.out, Catch::Matchers::Contains("\"keys_moved\":" + std::to_string(changed) + ","));
    CHECK_THAT(sh.out, Catch::Matchers::Contains("\"survivor_keys_moved\":0,"));
}

TEST_CASE("cli: mpchash copies, stats and diff --keys take each key's bytes, bounded loads are refused",
          "[cli][mpchash]") {
    // go-mpchash's compat.out: line i is the owner of shard-(i+1) over shard-1 .. shard-6000.
    const auto want = keyplace_test::golden_lines("mpchash/compat.out");
    REQUIRE(want.size() == 6000);
    std::string nodes;
    std::string keys;
    for (int i = 1; i <= 6000; ++i) {
        nodes += (i > 1 ? "," : "") + ("shard-" + std::to_string(i));
        keys += "shard-" + std::to_string(i) + "\n";
    }
    const auto lines = [](const std::string& out) {
        std::vector<std::string> v;
        std::istringstream s(out);
        for (std::string line; std::getline(s, line);) {
            v.push_back(line);
        }
        return v;
    };
    const auto owners = run_cli({"locate", "--strategy", "mpchash", "--nodes", nodes}, keys);
    REQUIRE(owners.status == 0);
    CHECK(lines(owners.out) == want);
    // Before, --replicas placed copies by the key's point: the first copy was another node for
    // most keys.
    const auto copies = run_cli({"locate", "--strategy", "mpchash", "--nodes", nodes, "--copies", "2"}, keys);
    REQUIRE(copies.status == 0);
    const auto got = lines(copies.out);
    REQUIRE(got.size() == 6000);
    std::size_t first = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        first += got[i].substr(0, got[i].find(',')) == want[i] ? 1U : 0U;
    }
    CHECK(first == 6000);
    // stats --keys counts each node's keys as compat.out does.
    const auto key_path = temp_file("kp_cli_mpchash_keys.txt", keys);
    const auto stats = run_cli({"stats", "--strategy", "mpchash", "--nodes", nodes, "--keys", key_path, "--json"});
    REQUIRE(stats.status == 0);
    std::map<std::string, std::size_t> count;
    for (const auto& w : want) {
        ++count[w];
    }
    const auto busiest = std::max_element(count.begin(), count.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [id, n] : {*busiest, *count.begin()}) {
        INFO(id);
        const auto at = stats.out.find("{\"id\":\"" + id + "\",");
        REQUIRE(at != std::string::npos);
        const auto k = stats.out.find("\"keys\":", at);
        CHECK(stats.out.substr(k + 7, stats.out.find('}', k) - k - 7) == std::to_string(n));
    }
    // stats --key-count places "key-0" ... by their bytes too: the counts locate gives.
    std::string generated;
    for (int i = 0; i < 3000; ++i) {
        generated += "key-" + std::to_string(i) + "\n";
    }
    std::map<std::string, std::size_t> per_node;
    for (const auto& id : lines(run_cli({"locate", "--strategy", "mpchash", "--nodes", "a,b,c"}, generated).out)) {
        ++per_node[id];
    }
    const auto counted = run_cli({"stats", "--strategy", "mpchash", "--nodes", "a,b,c", "--key-count", "3000", "--json"});
    REQUIRE(counted.status == 0);
    for (const auto& [id, n] : per_node) {
        INFO(id);
        CHECK_THAT(counted.out, Catch::Matchers::Contains("{\"id\":\"" + id + "\",") &&
                                    Catch::Matchers::Contains(",\"keys\":" + std::to_string(n) + "}"));
    }
    // diff --keys: the busiest bucket leaves, exactly its keys move.
    std::string rest;
    for (int i = 1; i <= 6000; ++i) {
        if ("shard-" + std::to_string(i) != busiest->first) {
            rest += (rest.empty() ? "" : ",") + ("shard-" + std::to_string(i));
        }
    }
    const auto diff =
        run_cli({"diff", "--strategy", "mpchash", "--nodes-before", nodes, "--nodes-after", rest, "--keys", key_path, "--json"});
    REQUIRE(diff.status == 0);
    std::ostringstream moved;
    moved << "\"moved\":" << keyplace_cli::json_number(static_cast<double>(busiest->second) / 6000.0);
    CHECK_THAT(diff.out, Catch::Matchers::Contains(moved.str()));
    CHECK_THAT(diff.out, Catch::Matchers::Contains("\"violations\":0,"));
    // Bounded loads walk a point's order: refused, as hot-key spreading is.
    const auto bounded = run_cli({"locate", "--strategy", "mpchash", "--nodes", "a,b,c", "--load-factor", "1.25"}, "k\n");
    CHECK(bounded.status == 2);
    CHECK_THAT(bounded.err, Catch::Matchers::Contains(
                                "--load-factor needs a strategy whose key point decides its order, not --strategy mpchash"));
}

TEST_CASE("cli: native multiprobe spreads reads over its key point's order: K = 1 is locate", "[cli][multiprobe]") {
    // Its pick_key is pick of the key's point, so its order is the point's; before, it was
    // refused as go-mpchash is.
    std::string keys;
    for (int i = 0; i < 300; ++i) {
        keys += "user:" + std::to_string(i) + "\n";
    }
    const auto owners = run_cli({"locate", "--strategy", "multiprobe", "--nodes", "a,b,c,d,e"}, keys);
    REQUIRE(owners.status == 0);
    const auto one = run_cli({"locate", "--strategy", "multiprobe", "--nodes", "a,b,c,d,e", "--spread-reads", "1"}, keys);
    REQUIRE(one.status == 0);
    CHECK(one.out == owners.out);
    const auto two = run_cli({"locate", "--strategy", "multiprobe", "--nodes", "a,b,c,d,e", "--spread-reads", "2"}, keys);
    REQUIRE(two.status == 0);
    CHECK(two.out != owners.out);
    const auto go = run_cli({"locate", "--strategy", "mpchash", "--nodes", "a,b,c,d,e", "--spread-reads", "1"}, keys);
    CHECK(go.status == 2);
}

// ---- -h, "did you mean", progress estimates, optional components (issue 29) --------------------

TEST_CASE("cli: -h is --help wherever --help works", "[cli]") {
    const std::vector<std::vector<std::string_view>> lines = {
        {"--help"},
        {"locate", "--help"},
        {"locate", "--strategy", "ring", "--help"},
        {"snapshot", "--help"},
        {"snapshot", "create", "--help"},
        {"snapshot", "verify", "s.json", "--help"},
        {"etcd", "watch", "--help"},
        {"help", "stats"},
    };
    for (const auto& line : lines) {
        const auto with_long = run_cli(line);
        auto short_line = line;
        std::replace(short_line.begin(), short_line.end(), std::string_view("--help"), std::string_view("-h"));
        const auto with_short = run_cli(short_line);
        CHECK(with_long.status == 0);
        CHECK(with_short.status == 0);
        CHECK(with_short.out == with_long.out);
        CHECK(with_short.err.empty());
        CHECK_FALSE(with_long.out.empty());
    }
    CHECK(run_cli({"-h"}).out == run_cli({"help"}).out);
}

TEST_CASE("cli: a mistyped command, option or name says what was meant", "[cli]") {
    expect_failure(run_cli({"locat"}), 2, "unknown command 'locat' (did you mean 'locate'?)");
    expect_failure(run_cli({"lcoate", "--strategy", "ring"}), 2, "unknown command 'lcoate' (did you mean 'locate'?)");
    expect_failure(run_cli({"snapshot", "creat"}), 2, "unknown command 'snapshot creat' (did you mean 'snapshot create'?)");
    expect_failure(run_cli({"locate", "--strateg", "ring", "--nodes", "a"}), 2,
                   "unknown option '--strateg' (did you mean '--strategy'?)");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--node", "a"}), 2,
                   "unknown option '--node' (did you mean '--nodes'?)");
    expect_failure(run_cli({"locate", "--strategy", "rign", "--nodes", "a"}), 2,
                   "unknown strategy 'rign' (did you mean 'ring'?)");
    expect_failure(run_cli({"hash", "--function", "xxh4"}), 2, "unknown hash function 'xxh4' (did you mean 'xxh3'?)");
    // Nothing close: every name, as before.
    const auto far = run_cli({"place"});
    expect_failure(far, 2, "unknown command 'place' (known: hash, hot-keys, locate, diff, stats,");
    CHECK_THAT(far.err, !Catch::Matchers::Contains("did you mean"));
    expect_failure(run_cli({"locate", "--frobnicate", "1"}), 2, "unknown option '--frobnicate'\n");
}

TEST_CASE("cli: the suggestion is the closest name within a quarter of the typo's length", "[cli]") {
    using keyplace_cli::closest_name;
    using keyplace_cli::edit_distance;
    CHECK(edit_distance("locate", "locate") == 0);
    CHECK(edit_distance("locat", "locate") == 1);
    CHECK(edit_distance("lcoate", "locate") == 1);  // a swap of two neighbours is one edit
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("kitten", "sitting") == 3);
    const std::vector<std::string_view> names{"hash", "locate", "diff", "stats"};
    CHECK(closest_name("stat", names) == std::optional<std::string_view>("stats"));
    CHECK(closest_name("hsah", names) == std::optional<std::string_view>("hash"));
    CHECK_FALSE(closest_name("plot", names).has_value());
    CHECK_FALSE(closest_name("locate", names).has_value());  // not a typo
}

TEST_CASE("cli: a progress estimate needs a known total and a first count", "[cli][progress]") {
    using keyplace_cli::eta_text;
    CHECK(eta_text(0, 100, 1000).empty());
    CHECK(eta_text(10, 0, 1000).empty());
    CHECK(eta_text(25, 100, 1000) == ", 25% of 100, about 3 s left");
    CHECK(eta_text(50, 100, 1000) == ", 50% of 100, about 1 s left");
    CHECK(eta_text(100, 100, 5000) == ", 100% of 100, about 0 s left");
    CHECK(eta_text(200, 100, 1000).empty());
}

TEST_CASE("cli: this build's optional commands run, and the line a missing one gives names the fix", "[cli]") {
    using keyplace_cli::component;
    // The etcd and snapshot commands of this build are built (CI installs what they need), so
    // they fail on their own terms, not as unbuilt.
    if (keyplace_cli::is_built(component::snapshots)) {
        const auto r = run_cli({"snapshot", "verify", "/nonexistent/s.json"});
        CHECK(r.status == 1);
        CHECK_THAT(r.err, !Catch::Matchers::Contains("not built"));
    }
    if (keyplace_cli::is_built(component::etcd)) {
        const auto r = run_cli({"etcd", "current", "--cluster", "c"});
        expect_failure(r, 2, "missing required option --endpoints");
    }
    CHECK(keyplace_cli::not_built_message(component::etcd, "libcurl", "libcurl4-openssl-dev") ==
          "etcd commands were not built: this build found no libcurl; configure with -DKEYPLACE_WITH_ETCD=ON after "
          "installing libcurl4-openssl-dev");
    CHECK(keyplace_cli::not_built_message(component::snapshots, "nlohmann_json", "nlohmann-json3-dev") ==
          "snapshot commands were not built: this build found no nlohmann_json; configure again after installing "
          "nlohmann-json3-dev");
}

TEST_CASE("cli: the man page and the completion script list every command", "[cli]") {
    const auto page = run_cli({"help", "--roff"});
    const auto script = run_cli({"help", "--bash-completion"});
    REQUIRE(page.status == 0);
    REQUIRE(script.status == 0);
    for (const auto name : keyplace_cli::entry_names(keyplace_cli::commands{})) {
        std::string roff_name;
        for (const char c : name) {
            roff_name += c == '-' ? std::string("\\-") : std::string(1, c);
        }
        CHECK_THAT(page.out, Catch::Matchers::Contains(".B " + roff_name + " "));
        CHECK_THAT(script.out, Catch::Matchers::Contains("'" + std::string(name) + "')"));
    }
    // Hidden: the usage does not offer them.
    CHECK_THAT(run_cli({"--help"}).out, !Catch::Matchers::Contains("--roff"));
}

// ---- one vocabulary: --copies, --snapshot, --nodes-before/--nodes-after, --keys, --addresses ----

TEST_CASE("cli: the old spellings work with one deprecation line each, and the new ones print nothing on stderr",
          "[cli][vocabulary]") {
    const std::string keys = "a\nuser:42\nb\n";
    const auto now = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c", "--copies", "2"}, keys);
    REQUIRE(now.status == 0);
    CHECK(now.err.empty());
    const auto old = run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c", "--replicas", "2"}, keys);
    CHECK(old.status == 0);
    CHECK(old.out == now.out);
    CHECK(old.err == "keyplace-cli: --replicas is deprecated and will be removed in 0.3.0; use --copies\n");
    // --name=value is respelled too.
    CHECK(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b,c", "--replicas=2"}, keys).out == now.out);

    const auto diff_now = run_cli({"diff", "--strategy", "ring", "--nodes-before", "a,b", "--nodes-after", "a,b,c"});
    REQUIRE(diff_now.status == 0);
    CHECK(diff_now.err.empty());
    const auto diff_old = run_cli({"diff", "--strategy", "ring", "--before", "a,b", "--after", "a,b,c"});
    CHECK(diff_old.out == diff_now.out);
    CHECK(diff_old.err == "keyplace-cli: --before is deprecated and will be removed in 0.3.0; use --nodes-before\n"
                          "keyplace-cli: --after is deprecated and will be removed in 0.3.0; use --nodes-after\n");

    const auto alloc_now = run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1@eu/z/r1", "--add", "b@eu/z/r2",
                                    "--tokens", "2", "--copies", "1"});
    REQUIRE(alloc_now.status == 0);
    const auto alloc_old = run_cli({"allocate", "--strategy", "tokens", "--nodes", "a=1@eu/z/r1", "--add", "b@eu/z/r2",
                                    "--tokens", "2", "--replication", "1"});
    CHECK(alloc_old.out == alloc_now.out);
    CHECK(alloc_old.err == "keyplace-cli: --replication is deprecated and will be removed in 0.3.0; use --copies\n");

    // A misspelling that is no old spelling is still an unknown option, with its suggestion.
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a", "--copie", "2"}, "k\n"), 2,
                   "unknown option '--copie' (did you mean '--copies'?)");
}

#if KEYPLACE_CLI_SNAPSHOTS
TEST_CASE("cli: --snapshot names one snapshot document everywhere, --before and --after two, and --file is deprecated",
          "[cli][vocabulary][snapshot]") {
    const auto created =
        run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu", "--epoch", "3"});
    REQUIRE(created.status == 0);
    const auto path = temp_file("kp_cli_vocabulary.json", created.out);
    const auto now = run_cli({"snapshot", "verify", "--snapshot", path});
    REQUIRE(now.status == 0);
    CHECK(now.err.empty());
    const auto old = run_cli({"snapshot", "verify", "--file", path});
    CHECK(old.out == now.out);
    CHECK(old.err == "keyplace-cli: --file is deprecated and will be removed in 0.3.0; use --snapshot\n");
    // plan's --before and --after are files, as they always were: nothing to respell.
    const auto plan = run_cli({"plan", "--before", path, "--after", path});
    CHECK(plan.status == 0);
    CHECK(plan.err.empty());
    // snapshot next --addresses: the added node's address, and an existing node's new one.
    const auto next = run_cli({"snapshot", "next", path, "--add", "d", "--addresses", "d=10.0.0.4:11211,a=10.0.0.1:1"});
    REQUIRE(next.status == 0);
    CHECK_THAT(next.out, Catch::Matchers::Contains("\"address\": \"10.0.0.4:11211\""));
    CHECK_THAT(next.out, Catch::Matchers::Contains("\"address\": \"10.0.0.1:1\""));
    expect_failure(run_cli({"snapshot", "next", path, "--add", "d", "--addresses", "e=10.0.0.5:1"}), 2,
                   "--addresses names 'e', which is not in the snapshot or --add");
    std::filesystem::remove(path);
}
#endif

#if KEYPLACE_CLI_SNAPSHOTS
/// The figure after "moved" on the first line that starts so in text ("moved          25.1234%").
auto moved_figure(const std::string& text, std::size_t from = 0) -> std::string {
    const auto at = text.find("\nmoved ", from);
    REQUIRE(at != std::string::npos);
    const auto start = text.find_first_not_of(' ', at + 7);
    return text.substr(start, text.find('%', start) - start);
}

TEST_CASE("cli: a transition epoch's diff, plan and shadow show what completing it moves, and next --complete completes it",
          "[cli][snapshot][transition]") {
    const auto s1 = run_cli({"snapshot", "create", "--strategy", "ring", "--nodes", "a,b,c", "--cluster", "eu"});
    REQUIRE(s1.status == 0);
    const auto p1 = temp_file("kp_cli_t1.json", s1.out);
    const auto s2 = run_cli({"snapshot", "next", p1, "--add", "d"});
    REQUIRE(s2.status == 0);
    const auto p2 = temp_file("kp_cli_t2.json", s2.out);
    // The one-shot join, measured by diff over node lists: the figure the transition prepares.
    const auto join = run_cli({"diff", "--strategy", "ring", "--nodes-before", "a,b,c", "--nodes-after", "a,b,c,d"});
    REQUIRE(join.status == 0);
    const std::string join_moved = moved_figure("\n" + join.out);
    CHECK(join_moved != "0.0000");

    const auto diff = run_cli({"snapshot", "diff", p1, p2});
    REQUIRE(diff.status == 0);
    CHECK(moved_figure("\n" + diff.out) == "0.0000");  // nothing moves now: d owns nothing yet
    const auto note = diff.out.find("epoch 2 is a transition");
    REQUIRE(note != std::string::npos);
    CHECK(moved_figure(diff.out, note) == join_moved);
    const auto diff_json = run_cli({"snapshot", "diff", p1, p2, "--json"});
    CHECK_THAT(diff_json.out, Catch::Matchers::Contains("\"prepared\":{\"strategy\":\"ring\""));
    // A stable pair has nothing prepared.
    CHECK_THAT(run_cli({"snapshot", "diff", p1, p1, "--json"}).out, Catch::Matchers::EndsWith("\"prepared\":null}\n"));
    CHECK(run_cli({"snapshot", "diff", p1, p1}).out.find("is a transition") == std::string::npos);

    const auto plan = run_cli({"plan", p1, p2});
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.out, Catch::Matchers::StartsWith("plan: exact, points64; 0 ranges"));
    CHECK_THAT(plan.out, Catch::Matchers::Contains("epoch 2 is a transition"));
    CHECK_THAT(plan.out, Catch::Matchers::Contains(join_moved + "% of the key space changes copies"));
    CHECK_THAT(run_cli({"plan", p1, p2, "--json"}).out, !Catch::Matchers::Contains("\"prepared\":null"));

    const auto shadow = run_cli({"shadow", p1, p2}, "user:1\nuser:2\nuser:3\n");
    REQUIRE(shadow.status == 0);
    CHECK_THAT(shadow.out, Catch::Matchers::Contains("note             epoch 2 is a transition: these are the owners now; "
                                                     "completing it moves " + join_moved + "%"));

    // next --complete: d active, epoch 3, and the same placement as marking d active by hand.
    const auto s3 = run_cli({"snapshot", "next", p2, "--complete"});
    REQUIRE(s3.status == 0);
    const auto by_hand = run_cli({"snapshot", "next", p2, "--states", "d=active"});
    REQUIRE(by_hand.status == 0);
    const auto fingerprint = [](const std::string& doc) {
        const auto at = doc.find("\"fingerprint\": \"");
        return doc.substr(at, 50);
    };
    CHECK(fingerprint(s3.out) == fingerprint(by_hand.out));
    const auto p3 = temp_file("kp_cli_t3.json", s3.out);
    CHECK_THAT(run_cli({"snapshot", "verify", p3}).out, Catch::Matchers::Contains("nodes        4 (4 active)\n"));
    // A leaving node completes to left.
    const auto s4 = run_cli({"snapshot", "next", p3, "--states", "a=leaving"});
    const auto p4 = temp_file("kp_cli_t4.json", s4.out);
    const auto s5 = run_cli({"snapshot", "next", p4, "--complete"});
    REQUIRE(s5.status == 0);
    const auto p5 = temp_file("kp_cli_t5.json", s5.out);
    CHECK_THAT(run_cli({"snapshot", "verify", p5}).out, Catch::Matchers::Contains("(3 active, 1 left)"));
    // Nothing to complete: refused, naming the epoch, and nothing written.
    expect_failure(run_cli({"snapshot", "next", p1, "--complete"}), 1,
                   "--complete: epoch 1 of cluster 'eu' is not in transition (no joining or leaving node)");
    for (const auto& p : {p1, p2, p3, p4, p5}) {
        std::filesystem::remove(p);
    }
}
#endif

TEST_CASE("cli: locate and hash read --keys FILE as they read stdin, and name the file in errors",
          "[cli][vocabulary]") {
    const std::string keys = "a\nuser:42\n\nb\n";
    const auto path = temp_file("kp_cli_keys.txt", keys);
    const auto from_stdin = run_cli({"locate", "--strategy", "maglev", "--nodes", "a,b,c", "--copies", "2"}, keys);
    REQUIRE(from_stdin.status == 0);
    const auto from_file =
        run_cli({"locate", "--strategy", "maglev", "--nodes", "a,b,c", "--copies", "2", "--keys", path}, "ignored\n");
    CHECK(from_file.status == 0);
    CHECK(from_file.out == from_stdin.out);
    CHECK(run_cli({"hash", "--function", "xxh3", "--keys", path}).out == run_cli({"hash", "--function", "xxh3"}, keys).out);
    expect_failure(run_cli({"hash", "--function", "xxh3", "--keys", "/nonexistent/keys"}), 1,
                   "cannot read key file '/nonexistent/keys': No such file or directory");
    const auto bad = temp_file("kp_cli_bad_points.txt", "1\nx\n");
    expect_failure(run_cli({"locate", "--strategy", "ring", "--nodes", "a,b", "--prehashed", "--keys", bad}), 1,
                   "key file '" + bad + "' line 2");
    std::filesystem::remove(path);
    std::filesystem::remove(bad);
}
