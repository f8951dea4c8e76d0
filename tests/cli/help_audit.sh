# The help is honest (issue 11, item 4): every path a help text names exists in the
# repository; every command and subcommand it lists runs its --help; every option a command's
# help lists is accepted by that command's parser (never "not expected" or "not a valid
# option" for an option the help offered); the standard metrics keep their standard names.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export COLUMNS=100  # help wraps to the terminal; without one, to 100 columns (checked below)
# Every command path: the top-level list, then each group's own subcommands.
"$CHALK" --help > "$tmp/top" || fail "chalk --help exited $?"
subs() { awk '/^Subcommands:/{on=1; next} /^[A-Za-z]+:/{on=0} on && /^  [a-z]/{print $1}' "$1"; }
mapfile -t top < <(subs "$tmp/top")
[ "${#top[@]}" -ge 10 ] || fail "chalk --help lists ${#top[@]} commands, expected every one (decode, prefill, models, ...)"
paths=()
for c in "${top[@]}"; do
  "$CHALK" "$c" --help > "$tmp/h" || fail "chalk $c --help exited $? though chalk --help lists '$c'"
  cat "$tmp/h" >> "$tmp/groups"
  mapfile -t inner < <(subs "$tmp/h")
  if [ "${#inner[@]}" -eq 0 ]; then paths+=("$c"); fi
  for s in "${inner[@]}"; do
    "$CHALK" "$c" "$s" --help > /dev/null || fail "chalk $c $s --help exited $? though chalk $c --help lists '$s'"
    paths+=("$c $s")
  done
done
[ "${#paths[@]}" -ge 20 ] || fail "only ${#paths[@]} commands found: ${paths[*]}"
: > "$tmp/all"
for p in "${paths[@]}"; do
  # shellcheck disable=SC2086
  "$CHALK" $p --help > "$tmp/h" || fail "chalk $p --help exited $?"
  { echo "== $p"; cat "$tmp/h"; } >> "$tmp/all"
  # Each long option the help lists must be known to the parser: given with --help after it,
  # an unknown one is refused before help; a known one prints help (exit 0).
  grep -oE '^ +(-[a-zA-Z],)?--[a-z][a-z0-9-]*' "$tmp/h" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | while read -r opt; do
    [ "$opt" = "--help" ] && continue
    # shellcheck disable=SC2086
    err=$("$CHALK" $p "$opt" --help 2>&1 >/dev/null)
    case "$err" in *"not expected"*|*"doesn't"*|*"not a valid"*|*"unrecognized"*) fail "chalk $p: help lists $opt but the parser refuses it: $err";; esac
  done || exit 1
done
"$CHALK" --help >> "$tmp/all"
# Every help fits 100 columns (issue 30 item 5: the exit-status footers of `plan` and `fleet`
# ran to 158 and 178 columns): each command's, each group's and the top level's.
cat "$tmp/groups" >> "$tmp/all"
widest=$(LC_ALL=C.UTF-8 wc -L < "$tmp/all")
[ "$widest" -le 100 ] || fail "a help line is $widest columns wide (at most 100): $(LC_ALL=C.UTF-8 awk 'length($0) > 100' "$tmp/all" | head -1)"
# Paths named in help: a word starting with a top folder of the repository.
grep -oE '(docs|data|web|tests|scripts|src|include|apps|bench|tools|cmake)/[A-Za-z0-9_./<>-]*[A-Za-z0-9_/]' "$tmp/all" | sort -u > "$tmp/paths"
[ -s "$tmp/paths" ] || fail "no repository path found in any help text (expected docs/formulas.md at least)"
while read -r path; do
  case "$path" in *"<"*) path="${path%%<*}";; esac   # a pattern (docs/<name>.md): its folder
  [ -e "$SRC/$path" ] || fail "help names '$path', which is not in the repository"
done < "$tmp/paths"
# Paths of the shared reference folder are not in the repository: help must not send users there.
if grep -nE '(^|[ (])reference/' "$tmp/all"; then fail "help names reference/..., which is not in the repository (use docs/ or data/)"; fi
# Standard metric names: TPOT is time per output token, ITL inter-token latency, TTFT time to
# first token; tokens/s says what it counts.
grep -q "TTFT" "$tmp/all" || fail "no help text names TTFT"
grep -q "TPOT: time per output token after the first" "$tmp/all" || fail "no help text defines TPOT as time per output token after the first"
if grep -niE "time per token" "$tmp/all"; then fail "'time per token' is not TPOT: say time per output token"; fi
grep -q "tok/s counts output tokens" "$tmp/all" || fail "decode's help must say its tok/s counts output tokens"
grep -q "tok/s counts input (prompt) tokens" "$tmp/all" || fail "prefill's help must say its tok/s counts input tokens"
# An unknown command gets a did-you-mean; a real one never does.
expect_error "unknown command 'decod'; did you mean 'decode'" decod
echo "help_audit: ${#paths[@]} commands, $(wc -l < "$tmp/paths") paths checked; all passed"
