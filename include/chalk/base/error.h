// The one error type of chalk's library (DESIGN.md section 3, "Errors").
#pragma once

#include <stdexcept>
#include <string>

namespace chalk {

/// Bad input: a missing file, malformed JSON, a missing or unknown field, a value out of
/// range, an unknown name. `field()` is the path of the offending field ("config.json:
/// hidden_size", "--batch"); `what()` is "<field>: <message>", one line, naming the value
/// and what was expected. Front ends print it once (CLI: "chalk: error: ...", exit 2).
/// A valid but infeasible setup (does not fit in HBM) is never an InputError: it is a
/// value in the report.
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, const std::string& message)
      : std::runtime_error(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace chalk
