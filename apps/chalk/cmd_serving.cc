// Placeholder for issue 3; replaced by the command's implementation.
#include "commands.h"

namespace chalk::cli {

void register_serving(CLI::App&, Action&) {}

}  // namespace chalk::cli
