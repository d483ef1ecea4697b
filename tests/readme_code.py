#!/usr/bin/env python3
"""Every ```cpp block of the documentation (README.md, CONTRIBUTING.md, doc/*.md) compiles. A block with its own main() is a translation unit
of its own; every other block is a fragment, compiled as the body of a function whose
parameters are the names the README's fragments take from their surroundings (nodes, d, s,
serving, candidate, key, log_error), with its #include lines moved to the top. Only syntax and
types are checked (-fsyntax-only); examples/quickstart.cpp, the one whole program, also runs.

usage: readme_code.py REPOSITORY_ROOT OUT_DIR COMPILER [FLAGS...]
"""
import os
import re
import subprocess
import sys

PRELUDE = """#include <keyplace/keyplace.hpp>
#include <keyplace/fleet/json.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/token_allocation.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/compat/redis_planner.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
"""

CONTEXT = ("[[maybe_unused]] const std::vector<keyplace::node>& nodes, "
           "[[maybe_unused]] const keyplace::snapshot_description& d, "
           "[[maybe_unused]] const keyplace::snapshot& s, "
           "[[maybe_unused]] std::shared_ptr<const keyplace::snapshot> serving, "
           "[[maybe_unused]] std::shared_ptr<const keyplace::snapshot> candidate, "
           "[[maybe_unused]] std::string_view key, "
           "[[maybe_unused]] void (*log_error)(const std::string&)")


def blocks(readme):
    lines = open(readme, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```cpp":
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            yield i + 1, lines[i + 1:j]
            i = j
        i += 1


def documents(root):
    """The documentation's Markdown files, README first."""
    doc = os.path.join(root, "doc")
    return [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md")] + sorted(
        os.path.join(doc, f) for f in os.listdir(doc) if f.endswith(".md"))


def main():
    root, out_dir, compiler, *flags = sys.argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    units = []
    fragments = []
    for document in documents(root):
        name = os.path.relpath(document, root)
        stem = re.sub(r"\W", "_", name[:-3])
        for line, body in blocks(document):
            where = f"{stem}_line_{line}"
            if any("main(" in b for b in body):
                units.append((f"{where}.cpp", f"// {name} line {line}\n" + "\n".join(body) + "\n"))
                continue
            includes = [b for b in body if b.startswith("#include")]
            code = [b for b in body if not b.startswith("#include")]
            fragments.append(((name, where, line), includes, code))
    text = PRELUDE + "".join(i + "\n" for _, inc, _ in fragments for i in inc)
    for (name, where, line), _, code in fragments:
        text += (f"\n// {name} line {line}\n[[maybe_unused]] static void {where}({CONTEXT}) {{\n"
                 "    {\n" + "".join("        " + c + "\n" for c in code) + "    }\n}\n")
    units.append(("readme_fragments.cpp", text))
    failed = 0
    for name, source in units:
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        run = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", *flags, path])
        failed += run.returncode != 0
    print(f"{len(fragments)} documentation fragments and {len(units) - 1} programs compiled, {failed} units failed")
    return 1 if failed or not fragments else 0


if __name__ == "__main__":
    sys.exit(main())
