// Placeholder for issue 5; replaced by the command's implementation.
#include "commands.h"

namespace chalk::cli {

void register_validate(CLI::App&, Action&) {}

}  // namespace chalk::cli
