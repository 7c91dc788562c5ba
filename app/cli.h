// Command-line parsing into an attn::Config plus the run options; one line and exit 2 on bad input.
#pragma once
#include <string>

#include "model/config.h"

namespace attn {

struct RunOptions {
    Config cfg;
    std::string data_path = "assets/tinyshakespeare.txt";
    bool headless = false;
    bool validation = false;
    int device = -1;
    bool list_devices = false;
    std::string metrics_path;  // CSV of evals
    bool quiet = false;        // no progress line
};

// Returns -1 to go on, or an exit code (0 after --help, 2 after an error already printed).
int parse_cli(int argc, char** argv, RunOptions& out);

}  // namespace attn
