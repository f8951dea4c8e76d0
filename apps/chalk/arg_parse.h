// Strict parsing of the CLI's numbers and lists, one place for every flag (issue 12):
// a number is the whole argument or an error, never a prefix ("8k" is not 8).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace chalk::cli {

/// A decimal integer, the whole text: an optional '-' and digits, within int64, or a whole
/// number in scientific notation ("1e9", "2.5e3": review 11a item 8, as the number options
/// read it). Anything else ("8k", " 8", "+8", "0x10", "1.5", "1.5e0", "", out of int64)
/// throws InputError(field, "expected an integer, got '<text>'..."), the text cut at 40
/// characters.
int64_t parse_integer(std::string_view text, const std::string& field);

/// A finite decimal number, the whole text ("2", "0.5", "1e-3"). "8k", "inf", "nan",
/// hex floats, spaces, "" and values beyond a double throw InputError(field, ...).
double parse_number(std::string_view text, const std::string& field);

/// A comma list of integers ("1,8,64"), or ranges "a:b" for the powers of two times a from
/// a to b ("1:65536"), each within [lo, hi]. Throws
/// InputError naming `field`.
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& field, int64_t lo, int64_t hi);

/// A comma list of positive finite numbers ("0.5,1,2"). Throws InputError naming `field`.
std::vector<double> parse_positive_list(const std::string& text, const std::string& field);

/// Makes every integer and number option of `app` and its subcommands, recursively, parse
/// with parse_integer / parse_number before CLI11 converts it (CLI11 alone reads "0x10" as
/// 16 and "010" as octal 8, and accepts "inf" and "nan" for numbers); an integer reaches
/// CLI11 as its canonical decimal ("010" -> 10). A bad value exits 2 naming the flag.
void strict_numbers(CLI::App& app);

/// Marks `opt` as taking a file or folder name and returns it (issue 30 item 4: `simulate
/// ... --plot --help` wrote a 0.9 MB page to a file named "--help"): a value that starts with
/// '-' is refused as a misplaced option, exit 2 with "<flag>: expected a file name, got
/// '<value>' ...". A file whose name starts with '-' is still reachable as ./-name. Used on
/// every option that names a file to write or read.
CLI::Option* file_name_option(CLI::Option* opt);

}  // namespace chalk::cli
