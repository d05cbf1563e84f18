// check-examples FLAVOUR EXAMPLE...: ONNX's full checker, check_model(model,
// full_check=true), on each example of a proposal (tests/golden/proposals/), compared with
// the verdict the example states for that build of ONNX in a line
//   # UPSTREAM FLAVOUR: pass
//   # UPSTREAM FLAVOUR: fail: TEXT        (TEXT must occur in the checker's message)
// Built against the ONNX under test only (no shapeprop): the example is read by ONNX's
// own parser. Prints one line per example; exit 0 when every verdict is as stated, 1
// otherwise, 2 on bad usage or an example that cannot be read.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "onnx/checker.h"
#include "onnx/defs/parser.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: check-examples FLAVOUR EXAMPLE...\n";
    return 2;
  }
  const std::string marker = std::string("# UPSTREAM ") + argv[1] + ": ";
  int failed = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cerr << path << ": cannot be read\n";
      return 2;
    }
    std::string expected;
    for (std::string line; std::getline(text, line);)
      if (line.rfind(marker, 0) == 0) expected = line.substr(marker.size());
    if (expected.empty()) continue;  // no verdict stated for this build

    onnx::ModelProto model;
    const auto status = onnx::OnnxParser::Parse(model, text.str().c_str());
    if (!status.IsOK()) {
      std::cerr << path << ": ONNX's parser: " << status.ErrorMessage() << '\n';
      return 2;
    }
    std::string error;
    try {
      onnx::checker::check_model(model, /*full_check=*/true);
    } catch (const std::exception& e) {
      error = e.what();
    }
    const bool ok = expected == "pass" ? error.empty()
                    : expected.rfind("fail: ", 0) == 0 ? !error.empty() && error.find(expected.substr(6)) != std::string::npos
                                                      : false;
    std::cout << (ok ? "PASS " : "FAIL ") << path << " (stated: " << expected << ")";
    if (!ok) std::cout << "\n     the checker " << (error.empty() ? "passed it" : "said: " + error.substr(0, error.find("\n\n")));
    std::cout << '\n';
    failed += ok ? 0 : 1;
  }
  return failed ? 1 : 0;
}
