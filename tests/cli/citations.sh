# Every citation a clone can follow (review 11a item 1): output and docs cited
# `reference/README.md`, `reference/hardware.md` and `reference/prices.md`, a directory outside
# the repository. Now no tracked text cites a `reference/...` path, a `shared/reference` path
# or a note under docs/sources/ that the checkout lacks, and the fallback efficiencies decode
# prints on chips with no measurement of their own cite the public sources and a shipped note.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100

python3 - "$SRC" <<'PY' || fail "a citation names a path the repository lacks"
import os, re, sys
root = sys.argv[1]
dirs = ["data", "docs", "src", "include", "apps", "python", "tools", "tests/data", "web/app"]
exts = (".md", ".json", ".csv", ".cc", ".h", ".cu", ".py", ".js", ".html", ".txt")
# A reference/ path not inside a URL or another path ("rocm-docs docs/reference/..." is one).
ref = re.compile(r"(?<![\w./-])(?:\.\./)*(?:shared/)?reference/[\w.-]+")
shared = re.compile(r"shared/reference")
# The shipped notes (other docs/... paths may name files of the repositories cited).
shipped = re.compile(r"(?<![\w./-])(docs/sources/[\w.-]*\w\.md)")
bad = []
files = [os.path.join(root, "README.md")]
for d in dirs:
    for base, _, names in os.walk(os.path.join(root, d)):
        if "node_modules" in base:
            continue
        files += [os.path.join(base, n) for n in names if n.endswith(exts)]
for path in files:
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    rel = os.path.relpath(path, root)
    for n, line in enumerate(text.split("\n"), 1):
        for m in ref.finditer(line):
            bad.append(f"{rel}:{n}: cites {m.group(0)}, which is not in the repository")
        if shared.search(line) and not ref.search(line):
            bad.append(f"{rel}:{n}: cites a shared/reference path")
        for m in shipped.finditer(line):
            p = m.group(1)
            if "*" in p or "{" in p or "<" in p:
                continue
            if not os.path.exists(os.path.join(root, p)):
                bad.append(f"{rel}:{n}: cites {p}, which is not in the repository")
if bad:
    print("\n".join(bad[:40]), file=sys.stderr)
    sys.exit(1)
PY

# The notes a clone needs exist, and each fallback section the data cites is in them.
for f in README hardware prices kernel-efficiency training-and-systems models; do
  [ -s "$SRC/docs/sources/$f.md" ] || fail "docs/sources/$f.md is missing"
done
grep -q "^## Fallback efficiencies" "$SRC/docs/sources/hardware.md" || fail "hardware.md lacks 'Fallback efficiencies'"
# Every [tag] that a hardware file cites beside docs/sources/hardware.md is in its Sources list
# (the [aic-*] entry covers aiconfigurator's system files).
python3 - "$SRC" <<'PY' || fail "a hardware file cites a tag docs/sources/hardware.md does not list"
import glob, json, os, re, sys
root = sys.argv[1]
notes = open(os.path.join(root, "docs/sources/hardware.md"), encoding="utf-8").read()
defined = set(re.findall(r"\*\*\[([^\]]+)\]\*\*", notes))
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
bad = []
for path in sorted(glob.glob(os.path.join(root, "data/hardware/*.json"))):
    for s in strings(json.load(open(path))):
        if "docs/sources/hardware.md [" not in s:
            continue
        for tag in re.findall(r"docs/sources/hardware\.md[^\[]{0,40}\[([\w.-]+)\]", s):
            if tag not in defined and not (tag.startswith("aic-") and "aic-*" in defined):
                bad.append(f"{os.path.basename(path)}: [{tag}]")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
PY

# decode on a chip with no measurement of its own: the efficiency lines point at the shipped
# section, and the JSON's sources name the public ones.
for hw in a10g l4 tpu-v5e gaudi-3; do
  out=$("$CHALK" decode -m llama-3.1-8b -H "$hw" 2>&1) || fail "decode -H $hw: $out"
  case "$out" in *"reference/"*) fail "decode -H $hw still cites reference/: $out";; esac
  printf '%s\n' "$out" | tr '\n' ' ' | tr -s ' ' | grep -q "matmul 77.6% of peak (no measurement for this chip: the median of 5 chips' BF16 MAMF, 77.6%; docs/sources/hardware.md 'Fallback efficiencies'" \
    || fail "decode -H $hw: the matmul fallback's pointer: $out"
  "$CHALK" decode -m llama-3.1-8b -H "$hw" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)["assumptions"]
assert "stas00/ml-engineering @744d01e" in a["matmul_efficiency_source"], a["matmul_efficiency_source"]
assert "Azure/AI-benchmarking-guide @8fd0c6e" in a["hbm_efficiency_source"], a["hbm_efficiency_source"]
assert "reference/" not in a["matmul_efficiency_source"] + a["hbm_efficiency_source"]' || fail "decode -H $hw --json: the sources"
done
echo "citations: ok"
