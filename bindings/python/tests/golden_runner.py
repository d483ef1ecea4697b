"""The golden corpus answered through the Python module (tests/golden/three_runtimes.py runs it
beside the C++ and WebAssembly runners); prints what bindings/golden_runner.cpp prints."""

import json
import sys

import keyplace


def main(path: str) -> None:
    out = sys.stdout
    with open(path, encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            if c["kind"] not in ("placement", "digest"):
                continue
            head = f"{c['source']} {c['case']} "
            try:
                s = keyplace.Snapshot(c["document"])
            except keyplace.Error as e:
                out.write(f"{head}error {e.code} {e}\n")
                continue
            if c["kind"] == "digest":
                out.write(f"{head}digest {s.fingerprint} {s.probe}\n")
                out.write(f"{head}report ownership {s._s.ownership_json()}\n")
                continue
            lines = []
            for q in c["queries"]:
                if "key" in q:
                    key = bytes.fromhex(q["key"])
                    text = f"{head}key {q['key']} {s.owner(key)}"
                    if "copies" in q:
                        text += " " + ",".join(s.copies(key))
                else:
                    point = int(q["point"])
                    text = f"{head}point {q['point']} {s.owner_at(point)}"
                    if "copies" in q:
                        text += " " + ",".join(s.copies_at(point))
                lines.append(text + "\n")
            out.write("".join(lines))
    out.flush()


if __name__ == "__main__":
    main(sys.argv[1])
