#!/usr/bin/env python3
"""The documentation's keyplace-cli sessions are true (README.md, CONTRIBUTING.md, doc/*.md):
every fenced block of "$ command" lines (indented ones in list items too) is run
with keyplace-cli on PATH, in a scratch directory holding examples/nodes.txt, and what each
command prints (stdout and stderr) must be the lines under it. A line "..." stands for any
number of lines; a command with nothing under it must print nothing, unless it ends in a
comment saying what it prints (then it is not run). Blocks that talk to etcd are left to the
etcd tests, which start a server.

usage: readme_commands.py REPOSITORY_ROOT DIR_OF_KEYPLACE_CLI EXAMPLES_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def sessions(readme):
    """(command, expected lines) for every checked command of a session block."""
    lines = open(readme, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        # A fence may be indented (a block inside a list item): its lines lose that indent.
        fence = re.match(r"( *)```", lines[i])
        if fence is None:
            i += 1
            continue
        indent = len(fence.group(1))
        j = i + 1
        while j < len(lines) and not lines[j].lstrip(" ").startswith("```"):
            j += 1
        block = [b[indent:] if b[:indent].strip() == "" else b for b in lines[i + 1:j]]
        i = j + 1
        if not block or not block[0].startswith("$ ") or any("etcd " in b for b in block if b.startswith("$ ")):
            continue
        k = 0
        while k < len(block):
            command = block[k][2:]
            while command.endswith("\\"):
                k += 1
                command = command[:-1] + block[k].strip()
            k += 1
            expected = []
            while k < len(block) and not block[k].startswith("$ "):
                expected.append(block[k])
                k += 1
            if expected or re.search(r"#\s*prints\b", command) is None:
                yield command, expected


def matches(expected, actual):
    """Line-wise match where an expected "..." line stands for any number of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[n:]) for n in range(len(actual) + 1))
    return bool(actual) and actual[0] == expected[0] and matches(expected[1:], actual[1:])


def main():
    root, cli_dir, examples = (os.path.abspath(a) for a in sys.argv[1:4])
    doc = os.path.join(root, "doc")
    documents = [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md")] + sorted(
        os.path.join(doc, f) for f in os.listdir(doc) if f.endswith(".md"))
    failures = 0
    count = 0
    with tempfile.TemporaryDirectory() as scratch:
        for shipped in ("nodes.txt", "ring.txt"):
            shutil.copy(os.path.join(examples, shipped), scratch)
        env = dict(os.environ, PATH=cli_dir + os.pathsep + os.environ.get("PATH", ""))
        for document, command, expected in ((d, c, e) for d in documents for c, e in sessions(d)):
            count += 1
            run = subprocess.run(["sh", "-c", "{ " + command + "\n} 2>&1"], cwd=scratch, env=env,
                                 capture_output=True, text=True, errors="replace")
            actual = run.stdout.split("\n")
            if actual and actual[-1] == "":
                actual.pop()
            if not matches(expected, actual):
                failures += 1
                print(f"{os.path.relpath(document, root)}: command differs: $ {command}\n--- documented\n" + "\n".join(expected)
                      + "\n--- keyplace-cli\n" + "\n".join(actual) + "\n")
    print(f"{count} documented commands run, {failures} differ")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
