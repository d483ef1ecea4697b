#!/usr/bin/env python3
"""Every link of the documentation resolves: README.md, CONTRIBUTING.md and doc/*.md. A link to
a file names one that exists in the repository; a link with #anchor names a heading of its file
(GitHub's anchors: the heading lowercased, punctuation dropped, spaces made hyphens). Links to
other sites are not followed (CI has no network to the world), and no document cites a file
outside the repository (a path that leaves it, such as ../shared/, is an error).

usage: doc_links.py REPOSITORY_ROOT
"""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+\s+(.*)$")


def slug(heading):
    heading = re.sub(r"`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def prose(text):
    """The lines outside fenced code blocks."""
    fenced = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


def main():
    root = os.path.abspath(sys.argv[1])
    documents = ["README.md", "CONTRIBUTING.md"] + sorted(
        "doc/" + f for f in os.listdir(os.path.join(root, "doc")) if f.endswith(".md"))
    anchors = {}
    for doc in documents:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            anchors[doc] = {slug(m.group(1)) for m in map(HEADING.match, prose(f.read())) if m}
    failures = 0
    checked = 0
    for doc in documents:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        for number, line in enumerate(text.split("\n"), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                where = f"{doc}:{number}: {target}"
                if resolved.startswith(".."):
                    print(f"{where}: leaves the repository")
                    failures += 1
                elif not os.path.exists(os.path.join(root, resolved)):
                    print(f"{where}: no file {resolved}")
                    failures += 1
                elif anchor and anchor not in anchors.get(resolved, set()):
                    print(f"{where}: {resolved} has no heading #{anchor}")
                    failures += 1
    print(f"{checked} links in {len(documents)} documents, {failures} broken")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
