#!/usr/bin/env python3
"""Fails when a test calls a program that scripts/setup does not install (issue 28).

The README's test command must pass on a fresh Debian 12 (debootstrap --variant=minbase,
plus git and ca-certificates), where only Debian's "required" packages are present. CI runs
on a machine with more installed, so a test that calls curl passes there and fails on the
fresh machine. This check reads what the tests run and what scripts/setup installs:

  1. Every program named in command position in the shell scripts the test command runs
     (scripts/test and what it calls, tests/**/*.sh, tests/**/*.bash), every literal first
     argument of execFileSync/spawn in tests/**/*.mjs and of subprocess.run in tests/ and
     python/tests/, is in PROGRAMS below, which names the Debian package that ships it.
  2. That package is in scripts/setup's package list, or is one a fresh root already has
     (FRESH: Priority required in Debian 12, plus what fresh-debian.sh adds).
  3. The program is on PATH now (scripts/setup has run), so a test cannot skip for want of it.
  4. Where dpkg knows the file, its package is the one PROGRAMS names.

usage: tests/setup_guard.py ROOT          (ctest: setup.guard)
       tests/setup_guard.py --self-test   (shows that a planted call to an unlisted program fails)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Packages a fresh Debian 12 root has: debootstrap --variant=minbase installs Priority
# "required" (bookworm's list, `dpkg-query -W -f='${Package} ${Priority}\n' | grep required`
# in the root fresh-debian.sh makes), and fresh-debian.sh adds git and ca-certificates.
FRESH = {
    "bash", "coreutils", "dash", "diffutils", "findutils", "grep", "gzip", "hostname",
    "login", "mawk", "ncurses-bin", "perl-base", "sed", "tar", "util-linux", "debianutils",
    "dpkg", "apt", "bsdutils", "mount", "procps", "git", "ca-certificates", "libc-bin",
}

# Program -> the Debian package that ships it. A program a test calls that is not here fails
# the check: add it here and its package to scripts/setup.
PROGRAMS = {
    # the fresh root's own
    "awk": "mawk", "basename": "coreutils", "cat": "coreutils", "chmod": "coreutils",
    "cmp": "diffutils", "cp": "coreutils", "cut": "coreutils", "date": "coreutils",
    "diff": "diffutils", "dirname": "coreutils", "env": "coreutils", "find": "findutils",
    "grep": "grep", "head": "coreutils", "ln": "coreutils", "ls": "coreutils",
    "mkdir": "coreutils", "mkfifo": "coreutils", "mktemp": "coreutils", "mv": "coreutils",
    "nproc": "coreutils", "od": "coreutils", "paste": "coreutils", "readlink": "coreutils",
    "realpath": "coreutils", "rm": "coreutils", "rmdir": "coreutils", "sed": "sed",
    "seq": "coreutils", "sleep": "coreutils", "sort": "coreutils", "stat": "coreutils",
    "tail": "coreutils", "taskset": "util-linux", "tee": "coreutils", "timeout": "coreutils",
    "touch": "coreutils", "tr": "coreutils", "truncate": "coreutils", "uniq": "coreutils",
    "wc": "coreutils", "xargs": "findutils", "yes": "coreutils",
    "bash": "bash", "sh": "dash", "dpkg": "dpkg", "apt-get": "apt", "id": "coreutils",
    "kill": "procps", "ps": "procps", "pkill": "procps", "tac": "coreutils", "du": "coreutils",
    "gzip": "gzip", "tar": "tar", "printf": "coreutils", "true": "coreutils",
    "false": "coreutils", "git": "git", "ldd": "libc-bin",
    # what scripts/setup installs
    "cmake": "cmake", "ctest": "cmake", "ninja": "ninja-build", "g++": "g++",
    "python3": "python3", "clang": "clang", "clang++": "clang", "chromium": "chromium",
    "wrk": "wrk", "curl": "curl", "pkg-config": "pkg-config", "node": "nodejs",
    "npm": "npm", "sudo": "sudo",
}

# Other packages that may own a program (NodeSource's nodejs bundles npm; scripts/setup
# accepts any npm on PATH).
ALSO = {"npm": {"nodejs"}}

# Programs the tests run without naming them in command position: each with where.
INDIRECT = {
    "node": "ctest runs tests/web/*.mjs with it (cmake/web_app.cmake)",
    "chromium": "tests/web/browser_test.mjs launches /usr/bin/chromium through playwright-core",
    "taskset": "tests/web/load.sh pins the server with it",
    "clang": "the asan preset and scripts/fuzz compile with it (CMakePresets.json)",
    "ninja": "every preset's generator (CMakePresets.json)",
    "g++": "the release preset's compiler",
}

BUILTINS = set("""
alias bg bind break builtin caller cd command compgen complete continue declare dirs disown
echo enable eval exec exit export fc fg getopts hash help history jobs let local logout
mapfile popd pushd pwd read readarray readonly return set shift shopt source suspend test
times trap type typeset ulimit umask unalias unset wait . : [ [[ ]] ]]
if then else elif fi case esac for select while until do done in function time coproc
{ } ! true false printf kill
""".split())

# Words that open a command after which the next word is the program (`timeout 5 prog`).
PREFIXES = {"exec": 0, "command": 0, "nohup": 0, "env": 0, "sudo": 0, "time": 0,
            "timeout": 1, "taskset": 0}


def opt_free(words, skip):
    """True when the `skip` positional words (a duration, a mask) are there to drop."""
    return skip > 0 and len(words) > skip


def setup_packages(root):
    """Package names in scripts/setup's pkgs=(...) array, plus nodejs/npm (installed when no npm)."""
    text = open(os.path.join(root, "scripts", "setup"), encoding="utf-8").read()
    # comments first: one that ends in ')' must not close the array
    code = "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in text.splitlines())
    m = re.search(r"^pkgs=\((.*?)\)", code, re.S | re.M)
    if not m:
        raise SystemExit("setup.guard: scripts/setup has no pkgs=( ... ) array")
    pkgs = set(m.group(1).split())
    if re.search(r"missing\+=\(nodejs npm\)", text):
        pkgs |= {"nodejs", "npm"}
    return pkgs


def lex(text):
    """The shell text with quoted data blanked to Q, comments and heredoc bodies dropped, and
    command substitutions ($( ), backquotes) inside double quotes kept as code, on ';'-ended
    segments. Enough of bash's grammar to find command positions, not a full parser."""
    out, i, n = [], 0, len(text)
    stack = []                  # states to return to: 'dq' inside "...", 'sub' inside $( )
    pending_heredoc = []
    line_start = True
    while i < n:
        c = text[i]
        state = stack[-1] if stack else None
        if state == "dq":
            if c == "\\":
                i += 2; continue
            if c == '"':
                stack.pop(); out.append("Q"); i += 1; continue
            if text.startswith("$(", i) and not text.startswith("$((", i):
                stack.append("sub"); out.append(" ; "); i += 2; continue
            if c == "`":
                stack.append("bq"); out.append(" ; "); i += 1; continue
            i += 1; continue
        if state == "bq" and c == "`":
            stack.pop(); out.append(" ; "); i += 1; continue
        if c == "\\":
            out.append(" "); i += 2; continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            out.append("Q"); continue
        if c == '"':
            stack.append("dq"); i += 1; continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;(|&"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("$((", i):
            stack.append("arith"); out.append("Q"); i += 3; continue
        if state == "arith" and text.startswith("))", i):
            stack.pop(); i += 2; continue
        if state == "arith":
            i += 1; continue
        if text.startswith("$(", i):
            stack.append("sub"); out.append(" ; "); i += 2; continue
        if c == "`":
            stack.append("bq"); out.append(" ; "); i += 1; continue
        if c == "(" and state == "sub":
            stack.append("paren"); out.append(" ; "); i += 1; continue
        if c == ")" and state in ("sub", "paren"):
            stack.pop(); out.append(" ; "); i += 1; continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.match(r"<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?", text[i:])
            if m:
                pending_heredoc.append(m.group(1)); out.append(" "); i += m.end(); continue
        if c == "\n":
            out.append(" ;\n"); i += 1
            while pending_heredoc:      # skip each heredoc body up to its delimiter line
                tag = pending_heredoc.pop(0)
                m = re.compile(r"^[ \t]*" + re.escape(tag) + r"[ \t]*$", re.M).search(text, i)
                i = n if not m else m.end()
            continue
        out.append(c); i += 1
    return "".join(out)


def shell_commands(text):
    """Program names in command position in a bash script."""
    names = set()
    functions = set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", text, re.M))
    code = lex(text)
    for seg in re.split(r"\|\||&&|[|;&(){}]|\bthen\b|\bdo\b|\belse\b|\bif\b|\belif\b|\bwhile\b|\buntil\b|!|\n", code):
        words = seg.split()
        while words and re.match(r"^[A-Za-z_]\w*(\[[^]]*\])?\+?=", words[0]):
            words.pop(0)                              # VAR=value prefixes
        while words and words[0] in PREFIXES:
            skip = PREFIXES[words.pop(0)]
            while words and words[0].startswith("-"):
                opt = words.pop(0)
                if opt in ("-c", "-k", "-s", "--signal", "--kill-after") and words:
                    words.pop(0)                      # an option with its argument
            words = words[skip:] if opt_free(words, skip) else words
        if not words:
            continue
        w = words[0]
        if not re.match(r"^[a-z][a-z0-9_.+-]*$", w) or w in BUILTINS or w in functions:
            continue
        names.add(w)
    return names


def literal_spawns(text, patterns):
    names = set()
    for pat in patterns:
        for m in re.finditer(pat, text):
            names.add(m.group(1))
    return names


def scan(root):
    """(program -> [files]) for every program the test command runs."""
    found = {}
    def add(name, path):
        found.setdefault(name, []).append(os.path.relpath(path, root))
    # scripts/setup itself is the installer (apt-get, dpkg, npm), checked by running it
    shells = [os.path.join(root, "scripts", n) for n in ("test", "fuzz", "python-install", "run")]
    shells.append(os.path.join(root, ".ci", "run"))
    for base in ("tests", "python"):
        for d, _, files in os.walk(os.path.join(root, base)):
            if "node_modules" in d:
                continue
            for f in files:
                p = os.path.join(d, f)
                if f.endswith((".sh", ".bash")):
                    shells.append(p)
                elif f.endswith(".mjs"):
                    text = open(p, encoding="utf-8").read()
                    for n in literal_spawns(text, [r"(?:execFileSync|execFile|spawnSync|spawn)\(\s*['\"]([\w.+-]+)['\"]"]):
                        add(n, p)
                elif f.endswith(".py") and f != "setup_guard.py":
                    text = open(p, encoding="utf-8").read()
                    for n in literal_spawns(text, [r"subprocess\.\w+\(\s*\[\s*['\"]([\w.+-]+)['\"]",
                                                   r"shutil\.which\(\s*['\"]([\w.+-]+)['\"]"]):
                        add(n, p)
    for name, why in INDIRECT.items():
        found.setdefault(name, []).append(why)
    shells = [p for p in shells if os.path.exists(p)]
    texts = {p: open(p, encoding="utf-8").read() for p in shells}
    # functions defined in any script (tests/cli/lib.bash is sourced by the others)
    functions = set()
    for text in texts.values():
        functions |= set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", text, re.M))
    for p, text in texts.items():
        for n in shell_commands(text) - functions:
            add(n, p)
    return found


def dpkg_owners(paths):
    """{path: Debian package} for the paths dpkg knows, in one `dpkg -S` call (one call per
    path cost 90 s on a busy 2-core machine)."""
    paths = sorted(set(paths))
    if not paths or shutil.which("dpkg") is None:
        return {}
    try:
        out = subprocess.run(["dpkg", "-S", *paths], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    owners = {}
    for line in out.stdout.splitlines():
        pkg, sep, path = line.partition(": ")
        if sep and path.strip() in paths:
            owners[path.strip()] = pkg.strip()
    return owners


def check(root, require_present=True):
    errors = []
    found_paths = {}
    pkgs = setup_packages(root)
    for name, where in sorted(scan(root).items()):
        files = ", ".join(sorted(set(where))[:3])
        if name not in PROGRAMS:
            errors.append(f"{name} (called in {files}) is not in tests/setup_guard.py's PROGRAMS: "
                          "name its Debian package there and install it in scripts/setup")
            continue
        pkg = PROGRAMS[name]
        if pkg not in pkgs and pkg not in FRESH:
            errors.append(f"{name} (called in {files}) comes from Debian package {pkg}, which "
                          "scripts/setup does not install and a fresh Debian 12 lacks")
        if not require_present:
            continue
        path = shutil.which(name)
        if path is None and name != "sudo":
            errors.append(f"{name} (called in {files}) is not on PATH after scripts/setup")
            continue
        if path:
            found_paths[name] = path
    # Where dpkg knows the file (its real path, or the /usr/bin twin of a /bin link), its
    # package is the one PROGRAMS names (a versioned flavour, python3.11-minimal, will do).
    candidates = {}
    for name, path in found_paths.items():
        real = os.path.realpath(path)
        candidates[name] = [real, path] + (["/usr" + path] if not path.startswith("/usr") else [])
    owners = dpkg_owners([p for c in candidates.values() for p in c])
    for name, cands in sorted(candidates.items()):
        owner = next((owners[c] for c in cands if c in owners), None)
        pkg = PROGRAMS[name]
        if owner and owner.split(",")[0] != pkg and pkg not in owner and owner not in ALSO.get(name, ()):
            if not owner.startswith(pkg.rstrip("0123456789")):
                errors.append(f"{name}: {cands[0]} belongs to Debian package {owner}, PROGRAMS says {pkg}")
    return errors


def self_test():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "scripts"))
        os.makedirs(os.path.join(tmp, "tests", "cli"))
        with open(os.path.join(root, "scripts", "setup"), encoding="utf-8") as f:
            setup = f.read()
        with open(os.path.join(tmp, "scripts", "setup"), "w", encoding="utf-8") as f:
            f.write(setup.replace(" curl ", " "))     # a set-up that forgot curl
        with open(os.path.join(tmp, "tests", "cli", "planted.sh"), "w", encoding="utf-8") as f:
            f.write("#!/usr/bin/env bash\nstatus=$(curl -s http://127.0.0.1/ | chalk-fake-filter .x)\n"
                    "cat <<'EOF'\nnotacommand here\nEOF\nif grep -q x y; then sleep 1; fi\n")
        errors = check(tmp, require_present=False)
    text = "\n".join(errors)
    assert "curl (called in tests/cli/planted.sh) comes from Debian package curl" in text, text
    assert "chalk-fake-filter (called in tests/cli/planted.sh) is not in" in text, text
    assert "notacommand" not in text and "grep" not in text and "sleep" not in text, text
    print("setup.guard self-test: a set-up without curl and an unlisted program are caught")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errs = check(root)
    for e in errs:
        print("FAIL: " + e)
    if errs:
        sys.exit(1)
    print(f"setup.guard: every program the tests call is installed by scripts/setup ({len(scan(root))} programs)")
