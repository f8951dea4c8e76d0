#!/usr/bin/env python3
"""Fails when an #include breaks the library's layering (src/README.md).

Every library file lives in a module folder: src/<module>/ for sources, private headers
and tests, include/chalk/<module>/ for public headers. A file may include:
  - public headers ("chalk/<m>/...") of its own module and of the modules below it
    (ALLOWED below); a test (*_test.cc) may also include io, to load the real models and
    systems it checks from the catalogs, and the shared assertions "chalk_testing/<name>.h"
    (tests/support/);
  - private headers of its own folder, by bare name ("serving_replicas.h").
Anything else is a violation: a module above, a sibling, another module's private header,
a header outside any module ("chalk/roofline.h"), or a file outside any module folder.

usage: tests/layering.py [ROOT]        (ROOT defaults to the repository)
       tests/layering.py --self-test   (shows that a bad include fails the check)
"""
import os
import re
import sys
import tempfile

# Module -> the modules it may include, lowest first. The picture is in src/README.md.
ALLOWED = {
    "base": [],
    "model": ["base"],
    "hardware": ["base"],
    "io": ["base", "model", "hardware"],
    "engine": ["base", "model", "hardware"],
    "serving": ["base", "model", "hardware", "engine"],
    # prices compare asks serving for the cheapest replica at a host's speed (issue 34).
    "prices": ["base", "model", "hardware", "io", "engine", "serving"],
    "training": ["base", "model", "hardware", "engine"],
    "sim": ["base", "model", "hardware", "engine", "serving"],
    # validate sits above the analyses: it predicts published runs through them.
    "validate": ["base", "model", "hardware", "io", "engine", "serving", "training", "sim"],
    "scaleup": ["base", "model", "hardware", "engine"],
    # calibrate fits an engine's constants to a user's runs through sim; it reads the
    # measurement format of validate (issue 29).
    "calibrate": ["base", "model", "hardware", "io", "engine", "serving", "sim", "validate"],
}
TEST_EXTRA = ["io"]
# Tests may also include the shared test assertions of tests/support/chalk_testing/.
TEST_SUPPORT = "chalk_testing"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_EXT = (".h", ".hpp", ".cc", ".cpp")


def library_files(root):
    """(module or None, folder, path) for every C++ file under src/ and include/chalk/."""
    for top in ("src", os.path.join("include", "chalk")):
        base = os.path.join(root, top)
        for folder, _, names in os.walk(base):
            rel = os.path.relpath(folder, base)
            module = None if rel == "." else rel.split(os.sep)[0]
            for name in sorted(names):
                if name.endswith(SOURCE_EXT):
                    yield module, folder, os.path.join(folder, name)


def check(root):
    """Returns the violations, one line each: 'path:line: what'."""
    problems = []
    for module, folder, path in library_files(root):
        rel = os.path.relpath(path, root)
        if module not in ALLOWED:
            problems.append(f"{rel}:1: not in a module folder (one of {', '.join(ALLOWED)})")
            continue
        allowed = set(ALLOWED[module]) | {module}
        if path.endswith("_test.cc"):
            allowed |= set(TEST_EXTRA)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            inc, line = m.group(1), text.count("\n", 0, m.start()) + 1
            parts = inc.split("/")
            if parts[0] == TEST_SUPPORT and path.endswith("_test.cc"):
                continue
            if parts[0] == "chalk":
                if len(parts) < 3 or parts[1] not in ALLOWED:
                    problems.append(f'{rel}:{line}: "{inc}" is not a module header (chalk/<module>/<name>.h)')
                elif parts[1] not in allowed:
                    problems.append(f'{rel}:{line}: module {module} includes "{inc}" of module {parts[1]}, '
                                    f'which is not below it (allowed: {", ".join(sorted(allowed))})')
            elif "/" in inc or not os.path.exists(os.path.join(folder, inc)):
                problems.append(f'{rel}:{line}: "{inc}" is neither a module header nor a private header '
                                f'of {os.path.relpath(folder, root)}/')
    return problems


def self_test():
    """A tree with one good and three bad includes must report exactly the bad ones."""
    with tempfile.TemporaryDirectory() as root:
        files = {
            "include/chalk/model/model.h": '#include "chalk/base/units.h"\n',
            "include/chalk/engine/roofline.h": '#include "chalk/model/model.h"\n',
            "src/model/model.cc": '#include "chalk/model/model.h"\n#include "chalk/engine/roofline.h"\n',
            "src/engine/roofline.cc": '#include "../io/json_util.h"\n#include "chalk/roofline.h"\n',
            "src/engine/roofline_test.cc": '#include "chalk/io/io.h"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        got = check(root)
        want = ["src/engine/roofline.cc:1", "src/engine/roofline.cc:2", "src/model/model.cc:2"]
        found = sorted(p.split(": ")[0] for p in got)
        if found != want:
            print("self-test failed: expected violations at", want, "got:", *got, sep="\n  ")
            return 1
        print(f"self-test: the checker reports the {len(want)} planted violations and nothing else")
        return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} include(s) break the module order (src/README.md)")
        return 1
    count = sum(1 for _ in library_files(root))
    print(f"layering: {count} files, every include points down the module order")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
