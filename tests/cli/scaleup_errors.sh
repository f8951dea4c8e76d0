# chalk scaleup: every bad input exits 2 with one line naming the flag.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
expect_error "--hardware: expected a comma list of systems or files, got 'h100-sxm,,b200'" scaleup -H h100-sxm,,b200
expect_error "no-such-chip" scaleup -H no-such-chip
expect_error "--weights: " scaleup --weights fp7
expect_error "--kv-dtype: " scaleup --kv-dtype bogus
expect_error "--batch: Value -1 not in range" scaleup -b -1
expect_error "--context: Value 0 not in range" scaleup -s 0
expect_error "--moe-sparsity: Value 0.5 not in range" scaleup --moe-sparsity 0.5
expect_error "--memory-reserve: Value 1 not in range" scaleup --memory-reserve 1
expect_error "/nonexistent/config.json: cannot read file" scaleup -m /nonexistent/config.json
expect_error "--json excludes --csv" scaleup --json --csv
expect_error "--plot: " scaleup --plot /nonexistent/dir/s.html
echo ok
