// The command line's whole job, for the executable and for `python -m shapeprop`.
#pragma once

#include <filesystem>
#include <string_view>

namespace cli {

// Runs onnx-infer-shapes with these arguments (argv[0] is not read) and returns its exit code: 0 ok, 1 problems found by a check, 2 bad usage or unreadable input. The
// result goes to stdout or -o, messages to stderr (file descriptors 1 and 2). With
// `own_process`, the process is the tool's alone: C++ streams leave C's stdio, and the
// heap is settled for the run's size (heap/huge_pages.h); a host process (Python) keeps both.
// `shipped_rules`: the folder of the shipped rules (empty: where the library finds them, beside
// the executable; a Python package passes its own copy). `program`: what the usage line, the
// errors and the summary lines call the program (`python -m shapeprop` passes its own name).
int run_command_line(int argc, char** argv, bool own_process, const std::filesystem::path& shipped_rules = {},
                     std::string_view program = "onnx-infer-shapes");

}  // namespace cli
