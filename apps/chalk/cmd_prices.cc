// Placeholder for issue 4; replaced by the command's implementation.
#include "commands.h"

namespace chalk::cli {

void register_prices(CLI::App&, Action&) {}

}  // namespace chalk::cli
