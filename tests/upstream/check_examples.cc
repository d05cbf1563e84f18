// check-examples ROOT FLAVOUR EXAMPLE...: ONNX's full checker, check_model(model,
// full_check=true), on each example of a proposal (tests/golden/proposals/), compared with
// the verdict the example states for that build of ONNX in a line
//   # UPSTREAM FLAVOUR: pass
//   # UPSTREAM FLAVOUR: fail: TEXT        (TEXT must occur in the checker's message)
// An example with lines
//   # UPSTREAM-MODEL: PATH                (relative to ROOT, the checkout; a glob)
// states the verdict of the models those name (text or binary) instead of its own.
// Built against the ONNX under test only (no shapeprop): a text model is read by ONNX's
// own parser. Prints one line per model; exit 0 when every verdict is as stated, 1
// otherwise, 2 on bad usage, a model that cannot be read, or no verdict for FLAVOUR.
#include <glob.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/checker.h"
#include "onnx/defs/parser.h"

static bool ReadFile(const std::string& path, std::string& bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  bytes = text.str();
  return static_cast<bool>(in);
}

// The model at `path`: binary when it ends in .onnx, ONNX's text syntax otherwise.
static bool LoadModel(const std::string& path, const std::string& bytes, onnx::ModelProto& model) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) {
    if (model.ParseFromString(bytes)) return true;
    std::cerr << path << ": not a binary ONNX model\n";
    return false;
  }
  const auto status = onnx::OnnxParser::Parse(model, bytes.c_str());
  if (status.IsOK()) return true;
  std::cerr << path << ": ONNX's parser: " << status.ErrorMessage() << '\n';
  return false;
}

static std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> paths;
  glob_t found{};
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
    for (size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  globfree(&found);
  return paths;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: check-examples ROOT FLAVOUR EXAMPLE...\n";
    return 2;
  }
  const std::string root = argv[1];
  const std::string marker = std::string("# UPSTREAM ") + argv[2] + ": ";
  const std::string model_marker = "# UPSTREAM-MODEL: ";
  int failed = 0, checked = 0;
  for (int i = 3; i < argc; ++i) {
    const std::string path = argv[i];
    std::string text;
    if (!ReadFile(path, text)) {
      std::cerr << path << ": cannot be read\n";
      return 2;
    }
    std::string expected;
    std::vector<std::string> models;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(marker, 0) == 0) expected = line.substr(marker.size());
      if (line.rfind(model_marker, 0) == 0) {
        const auto named = Glob(root + "/" + line.substr(model_marker.size()));
        if (named.empty()) {
          std::cerr << path << ": no model at " << line.substr(model_marker.size()) << '\n';
          return 2;
        }
        models.insert(models.end(), named.begin(), named.end());
      }
    }
    if (expected.empty()) continue;  // no verdict stated for this build
    if (models.empty()) models.push_back(path);

    for (const auto& model_path : models) {
      std::string bytes;
      if (model_path != path && !ReadFile(model_path, bytes)) {
        std::cerr << model_path << ": cannot be read\n";
        return 2;
      }
      onnx::ModelProto model;
      if (!LoadModel(model_path, model_path == path ? text : bytes, model)) return 2;
      std::string error;
      try {
        onnx::checker::check_model(model, /*full_check=*/true);
      } catch (const std::exception& e) {
        error = e.what();
      }
      const bool ok = expected == "pass" ? error.empty()
                      : expected.rfind("fail: ", 0) == 0 ? !error.empty() && error.find(expected.substr(6)) != std::string::npos
                                                        : false;
      std::cout << (ok ? "PASS " : "FAIL ") << model_path << " (stated: " << expected << ")";
      if (!ok) std::cout << "\n     the checker " << (error.empty() ? "passed it" : "said: " + error.substr(0, error.find("\n\n")));
      std::cout << '\n';
      failed += ok ? 0 : 1;
      ++checked;
    }
  }
  if (checked == 0) {
    std::cerr << "no example states a verdict for " << argv[2] << '\n';
    return 2;
  }
  return failed ? 1 : 0;
}
