// Prose that fits the terminal (issue 11, item 3: default output fits 100 columns). Tables
// fit by hiding columns (print_table); the labelled lines above and below them ("model
// ...", "efficiency ...", notes) are wrapped here, with the continuation aligned under the
// text, so that no line of a command's default output is wider than terminal_width().
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace chalk::cli {

/// Wraps one line of prose to `width` display columns (UTF-8 code points): breaks at spaces,
/// continuation lines indented to where the text starts (after the last "label  " gap of two
/// or more spaces, when it ends within the first half of `width`; else 2 for a line from the
/// margin and the line's own indent + 4 for an indented one, so a continuation never starts
/// where the next item of a list, or one of its own items, does). A line that fits, or that looks like a table
/// row (three or more gaps of two spaces or more), is returned unchanged; a word longer
/// than the width stays whole. Returns the lines joined by '\n', without a final one.
std::string wrap_line(const std::string& line, int width);

/// Wraps `text` to `width` display columns at spaces, keeping its own line breaks (each
/// continuation starts at column 0: CLI11's help indents it). A word that starts with '-'
/// never begins a line, so a wrapped help description is never read as an option line.
/// Runs of spaces collapse to one. A width under 20 returns `text` unchanged.
std::string wrap_words(const std::string& text, int width);

/// While alive, every line written to `out` passes through wrap_line(line, width); the
/// destructor flushes a last partial line and restores the stream. Used by main for a
/// command's human-readable output (not --json, --csv or --wide).
class WrapOutput {
 public:
  WrapOutput(std::ostream& out, int width);
  ~WrapOutput();
  WrapOutput(const WrapOutput&) = delete;
  WrapOutput& operator=(const WrapOutput&) = delete;

 private:
  class Buf : public std::streambuf {
   public:
    Buf(std::streambuf* dest, int width) : dest_(dest), width_(width) {}
    void flush_partial();

   protected:
    int_type overflow(int_type c) override;
    int sync() override;

   private:
    std::streambuf* dest_;
    int width_;
    std::string line_;
  };
  std::ostream& out_;
  Buf buf_;
  std::streambuf* saved_;
};

}  // namespace chalk::cli
