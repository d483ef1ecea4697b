#!/usr/bin/env python3
"""One golden corpus, three runtimes: every placement vector and snapshot digest the golden files
state at snapshot level (tests/golden/corpus.py) is answered by the C++ library, the Python module
and the WebAssembly module, and each runtime's output must equal, byte for byte, the text the
golden files' expected values make. Equal to one text, the three are equal to each other.

usage: three_runtimes.py --cpp BUILD/bindings/keyplace_golden [--python-path BUILD/python]
                         [--wasm-dir BUILD/wasm] [--python PYTHON] [--node NODE]
Exit 0: all three ran and matched; 1: a mismatch or a runner failed; 77 (ctest's skip): a runtime
was not built here (no pybind11 or no emscripten), and the others matched.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def expected_lines(cases):
    """The text every runner must print, from the corpus's expected values alone."""
    out = []
    for c in cases:
        head = f"{c['source']} {c['case']} "
        if c["kind"] == "digest":
            out.append(f"{head}digest {c['fingerprint']} {c['probe']}\n")
            continue
        for q in c["queries"]:
            text = f"{head}key {q['key']} {q['owner']}" if "key" in q else f"{head}point {q['point']} {q['owner']}"
            if "copies" in q:
                text += " " + ",".join(q["copies"])
            out.append(text + "\n")
    return "".join(out)


def first_difference(got, want):
    g, w = got.splitlines(), want.splitlines()
    bad = sum(1 for a, b in zip(g, w) if a != b) + abs(len(g) - len(w))
    for i, (a, b) in enumerate(zip(g, w)):
        if a != b:
            return bad, f"line {i + 1}: got {a[:200]!r}, want {b[:200]!r}"
    return bad, f"{len(g)} lines, want {len(w)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp")
    ap.add_argument("--python-path")
    ap.add_argument("--wasm-dir")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--node", default="node")
    a = ap.parse_args()

    # corpus.py is the one reader of the golden files.
    r = subprocess.run([sys.executable, os.path.join(HERE, "corpus.py")], capture_output=True, check=True)
    lines = [json.loads(line) for line in r.stdout.decode("utf-8").splitlines()]
    summary = lines[-1]
    cases = [c for c in lines if c["kind"] in ("placement", "digest")]
    want = expected_lines(cases)
    queries = sum(len(c.get("queries", ())) for c in cases)
    digests = sum(1 for c in cases if c["kind"] == "digest")
    print(f"corpus: {len(cases) - digests} placement cases, {queries} queries, {digests} digest cases; "
          f"{len(summary['skipped'])} cases skipped and {len(summary['not_covered'])} parts not at snapshot level "
          "(tests/golden/corpus.py says which and why)")

    runners = {
        "c++": [a.cpp] if a.cpp else None,
        "python": [a.python, os.path.join(ROOT, "bindings", "python", "tests", "golden_runner.py")] if a.python_path else None,
        "wasm": [a.node, os.path.join(ROOT, "bindings", "wasm", "golden_runner.mjs"), a.wasm_dir] if a.wasm_dir else None,
    }
    failed = False
    missing = []
    with tempfile.TemporaryDirectory() as tmp:
        # The runners take each document as JSON text, so that 64-bit tokens and points reach the
        # library exactly in every runtime (JavaScript numbers would round them).
        path = os.path.join(tmp, "corpus.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for c in cases:
                f.write(json.dumps({**c, "document": json.dumps(c["document"])}) + "\n")
        outputs = {}
        for name, argv in runners.items():
            if argv is None:
                print(f"{name:7} not built here: not run")
                missing.append(name)
                continue
            env = dict(os.environ)
            if name == "python":
                env["PYTHONPATH"] = a.python_path
            t0 = time.monotonic()
            r = subprocess.run(argv + [path], capture_output=True, env=env)
            took = time.monotonic() - t0
            if r.returncode != 0:
                print(f"{name:7} FAILED (exit {r.returncode}, {took:.1f} s): {r.stderr.decode(errors='replace')[-800:]}")
                failed = True
                continue
            text = r.stdout.decode("utf-8", errors="replace")
            outputs[name] = text
            # Report lines (each digest case's ownership, as the library writes doubles) have no
            # golden value: they are compared between the runtimes below.
            got = "".join(line for line in text.splitlines(keepends=True) if " report " not in line)
            if got == want:
                print(f"{name:7} {len(want.splitlines())} lines equal the golden values ({took:.1f} s)")
            else:
                bad, where = first_difference(got, want)
                print(f"{name:7} {bad} MISMATCHES; first at {where}")
                failed = True
        if len(outputs) > 1:
            same = len(set(outputs.values())) == 1
            reports = sum(1 for line in next(iter(outputs.values())).splitlines() if " report " in line)
            print(f"runtimes {', '.join(outputs)}: outputs, with {reports} ownership reports, "
                  f"{'byte-identical' if same else 'DIFFER'}")
            failed = failed or not same
    if failed:
        print("FAILED")
        return 1
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not built (the others: 0 mismatches)")
        return 77
    print("ok: 0 mismatches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
