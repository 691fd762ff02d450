#!/usr/bin/env python3
"""house-count.py: the figures of how the parts of src/ fit together, counted from the code and
the object files of a build, so that a refactoring can say before -> after with a command
anyone can run.

Usage: scripts/house-count.py [BUILD_DIR]   (default build; from the source tree's root)

- key reads: a string literal as the key of a JSON read (json_object_get, jsonx_*), per folder;
  those outside src/doc/ (the readers) are the schema spread over the tree
- files that read "stages"
- hand padding: files that pad columns themselves (printf widths on strings, %-20s or %*s, or
  a loop writing spaces up to a width) rather than through the table model
- private headers (*_private.h) and pairs of object files that call each other (each uses a
  symbol the other defines: nm), which is a cycle of two
- print calls in src/cli (printf, fprintf, fputs, puts, putc, putchar, fputc, fwrite)
- option definitions per option: how often a long option's name is written in src/cli
"""
import collections
import glob
import os
import re
import subprocess
import sys

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SRC = "src"

READ = re.compile(r'\b(?:json_object_get|jsonx_(?:num|str|count|int|object|array|bool))\s*\(\s*[^;]*?,\s*"([A-Za-z0-9_.]+)"')
PRINT = re.compile(r'\b(?:printf|fprintf|fputs|puts|putc|putchar|fputc|fwrite)\s*\(')
PAD = re.compile(r'%-?(?:\d+|\*)s|\w+ < \w*(?:cols|width|pad)\w*;\s*\w+\+\+\)\s*(?:putc|fputc)')


def sources():
    for path in sorted(glob.glob(SRC + "/**/*.[ch]", recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            yield path, f.read()


def main():
    reads = collections.Counter()
    keys = set()
    stages_files, padders, printers = [], [], 0
    for path, text in sources():
        folder = path.split("/")[1]
        for m in READ.finditer(text):
            reads[folder] += 1
            keys.add(m.group(1))
        if '"stages"' in text and re.search(r'(json_object_get|jsonx_\w+)\s*\([^;]*"stages"', text):
            stages_files.append(path)
        n = len(PAD.findall(text))
        if n:
            padders.append(f"{path} ({n})")
        if path.startswith("src/cli/"):
            printers += len(PRINT.findall(text))
    total = sum(reads.values())
    outside_doc = total - reads.get("doc", 0)
    print(f"key reads: {total} of {len(keys)} keys; outside src/doc: {outside_doc}")
    print("  by folder: " + ", ".join(f"{k} {v}" for k, v in reads.most_common()))
    print(f"files that read \"stages\": {len(stages_files)}")
    for p in stages_files:
        print("  " + p)
    print(f"hand padding in: {len(padders)} files")
    for p in padders:
        print("  " + p)
    private = sorted(glob.glob(SRC + "/**/*_private.h", recursive=True))
    print(f"*_private.h: {len(private)} " + " ".join(private))
    print(f"print calls in src/cli: {printers}")
    pairs = mutual_pairs()
    if pairs is not None:
        print(f"object files calling each other: {len(pairs)} pairs")
        for a, b in pairs:
            print(f"  {a} <-> {b}")


def mutual_pairs():
    """Pairs of object files of src/ that each use a symbol the other defines."""
    objs = sorted(glob.glob(os.path.join(BUILD, "src", "CMakeFiles", "*", "**", "*.o"),
                            recursive=True))
    if not objs:
        print(f"(no object files under {BUILD}/src: build first for the call pairs)")
        return None
    defined, used = {}, {}
    for o in objs:
        name = re.sub(r"^.*CMakeFiles/[^/]+/", "", o)[:-2]
        out = subprocess.run(["nm", "-g", o], capture_output=True, text=True).stdout
        d, u = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                u.add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRC":
                d.add(parts[2])
        defined[name], used[name] = d, u
    owner = {}
    for n, d in defined.items():
        for s in d:
            owner[s] = n
    calls = collections.defaultdict(set)
    for n, u in used.items():
        for s in u:
            if s in owner and owner[s] != n:
                calls[n].add(owner[s])
    return sorted({tuple(sorted((a, b))) for a in calls for b in calls[a] if a in calls.get(b, ())})


if __name__ == "__main__":
    main()
