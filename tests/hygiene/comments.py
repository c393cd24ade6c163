#!/usr/bin/env python3
"""Comments say what the code does and why, as it is now.

Scans the comments of the C++ sources (src/, include/, cli/, testing/,
bench/) for measured figures (a share of CPU or time, "measured: N", a
speed-up factor) and for history ("used to", "previously", "before this
change"): figures belong in commit messages and results pages, history in
git. Prints file:line and the rule for each hit; exit status 1 when any.

  comments.py [ROOT]
"""
import os
import re
import sys

RULES = [
    ("a measured figure", re.compile(r"\bmeasured\b\s*(:|at|as|to be)?\s*(about\s+)?\d")),
    ("a share of CPU or time",
     re.compile(r"\d+(\.\d+)?\s*%\s+of\s+(the\s+|a\s+|an\s+|its\s+|their\s+)?[\w' -]*?\b(CPU|samples|time)\b")),
    ("a speed-up factor", re.compile(r"\b\d+(\.\d+)?x\s+(faster|slower)\b")),
    ("a change in a figure",
     re.compile(r"\b(raised|lowered|cut|reduced|improved|increased|decreased)\b[^.;]*\bby\s+(about\s+)?\d+(\.\d+)?\s*%")),
    ("a measured rate", re.compile(r"\d+(\.\d+)?k?\s*(writes|reads|ops|requests)/s\b")),
    ("history", re.compile(r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )(?<!\bwas )(?<!\bwere )\bused to\b")),
    ("history", re.compile(r"\bpreviously\b|\b(before|after) this (change|commit|fix)\b", re.I)),
]
DIRS = ["src", "include", "cli", "testing", "bench"]
EXTENSIONS = (".cc", ".h")


def comments(text):
    """Yields (line number, comment text) for // comments and /* */ blocks."""
    in_block = False
    for number, line in enumerate(text.split("\n"), 1):
        if in_block:
            end = line.find("*/")
            yield number, line if end < 0 else line[:end]
            in_block = end < 0
            continue
        # Skip string literals so that "//" inside one is not a comment.
        stripped = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        at = stripped.find("//")
        block = stripped.find("/*")
        if at >= 0 and (block < 0 or at < block):
            yield number, stripped[at + 2:]
        elif block >= 0:
            end = stripped.find("*/", block + 2)
            yield number, stripped[block + 2:] if end < 0 else stripped[block + 2:end]
            in_block = end < 0


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    hits = 0
    files = 0
    for d in DIRS:
        for base, _, names in os.walk(os.path.join(root, d)):
            for name in sorted(names):
                if not name.endswith(EXTENSIONS):
                    continue
                path = os.path.join(base, name)
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for number, comment in comments(text):
                    for rule, pattern in RULES:
                        if pattern.search(comment):
                            print(f"{os.path.relpath(path, root)}:{number}: {rule}: {comment.strip()}")
                            hits += 1
                            break
    if files == 0:
        print(f"no C++ sources under {root}", file=sys.stderr)
        return 2
    print(f"{files} files, {hits} comment(s) with figures or history")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
