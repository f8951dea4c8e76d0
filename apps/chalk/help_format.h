// Help that fits the terminal (issue 11, item 3): CLI11's formatter with every description
// wrapped to terminal_width() columns. Included by main.cc only (CLI11 is costly to compile).
#pragma once

#include <algorithm>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "wrap.h"

namespace chalk::cli {

/// CLI11's Formatter whose option, command and program descriptions are wrapped to `width`
/// columns: an option's or a command's description to what is left after CLI11's name column
/// (its continuation lines indented under it), the program's description and footer (the
/// exit statuses of `plan` and `fleet`) to the full width (issue 30 item 5: those footers ran
/// to 158 and 178 columns).
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(int width) : width_(width) {}
  std::string make_option_desc(const CLI::Option* opt) const override { return wrap_words(opt->get_description(), description_width()); }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrap_words(sub->get_description(), description_width()), get_column_width());
    return out.str();
  }
  std::string make_description(const CLI::App* app) const override { return wrap_words(CLI::Formatter::make_description(app), width_); }
  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = CLI::Formatter::make_footer(app);
    return footer.empty() ? footer : wrap_words(footer, width_);
  }

 private:
  int description_width() const { return std::max(20, width_ - static_cast<int>(get_column_width())); }
  int width_;
};

}  // namespace chalk::cli
