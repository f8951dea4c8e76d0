# Every option that names a file refuses a value starting with '-' (issue 30 item 4:
# `simulate ... --plot --help` wrote a 0.9 MB page to a file named "--help" and exited 0):
# exit 2, one line naming the flag and the value, and no file written.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || fail "cannot enter $tmp"
want="expected a file name, got '--help'"
# Files written: the simulator's and scale-up's charts, the serving and training plots, the
# calibrated engine profile, the plan's launch folder.
expect_error "--plot: $want" simulate -m llama-3.1-8b -H h100-sxm --rate 1 --requests 10 --plot --help
expect_error "--plot: $want" scaleup --plot --help
expect_error "--output: $want" serving plot -o --help
expect_error "--output: $want" train plot run -o --help
expect_error "--output: $want" calibrate -o --help
expect_error "--launch-dir: $want" plan --launch-dir --help
# Files read: a trace, an engine profile, a price sheet.
expect_error "--trace: $want" simulate --trace --help
expect_error "--engine-profile: $want" simulate --engine-profile --help
expect_error "--engine-profile: $want" validate --engine-profile --help
expect_error "--compare: $want" prices forward --compare --help
# A short option's value too, and the way to name such a file.
expect_error "--output: expected a file name, got '-x'" serving plot -o -x
expect_error "as ./-x" serving plot -o -x
[ -z "$(ls -A)" ] || fail "a refused file option still wrote: $(ls -A)"
# An ordinary name still works.
expect_ok scaleup -m llama-3.1-8b -H h100-sxm --plot chart.html
[ -s chart.html ] || fail "scaleup --plot chart.html wrote no chart"
echo "file_options: all passed"
