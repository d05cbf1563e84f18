// backend-all-modes DIR...: every model of ONNX's backend test data (model.onnx in each test
// folder, and the *.onnx files of a folder such as light/) through annotate, specialize and
// inline. Whenever ONNX's full checker accepts the input, it must accept the output of each
// mode. Prints a line per failure (model, mode, the checker's first complaint), then
// "N passed, M failed" (a model counts once per mode; inputs the checker rejects are
// skipped and counted apart). Exits 1 on a failure, 2 when no model was found.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "shapeprop/validate.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> models_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".onnx") out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_error(const shapeprop::Diagnostics& found) {
  for (const auto& d : found)
    if (d.severity == shapeprop::Severity::Error) return d.message;
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: backend-all-modes DIR...\n";
    return 2;
  }
  size_t passed = 0, failed = 0, skipped = 0, models = 0;
  for (int i = 1; i < argc; ++i) {
    if (!fs::is_directory(argv[i])) {
      std::cerr << "backend-all-modes: no such folder: " << argv[i]
                << " (ONNX's backend test data: bash scripts/setup.sh installs it)\n";
      return 2;
    }
    for (const auto& path : models_under(argv[i])) {
      ++models;
      auto model = shapeprop::load_model(path);
      if (!model || shapeprop::has_errors(shapeprop::validate_model(*model, path.string())) ||
          shapeprop::has_errors(shapeprop::run_onnx_checker(*model, /*full_check=*/true, path.string()))) {
        ++skipped;
        continue;
      }
      for (const char* mode : {"annotate", "specialize", "inline"}) {
        onnx::ModelProto out = *model;
        std::string why;
        if (std::string(mode) == "annotate") {
          auto r = shapeprop::infer_shapes(out);
          if (!r) why = r.error().message;
        } else {
          shapeprop::TransformOptions options;
          options.inline_policy = std::string(mode) == "inline" ? shapeprop::InlinePolicy::All : shapeprop::InlinePolicy::None;
          auto r = shapeprop::specialize(out, options);
          if (!r) why = r.error().message;
          else if (shapeprop::has_errors(r->diagnostics)) why = first_error(r->diagnostics);
        }
        if (why.empty()) why = first_error(shapeprop::run_onnx_checker(out, /*full_check=*/true, "<output>"));
        if (why.empty()) {
          ++passed;
        } else {
          ++failed;
          std::cout << "FAIL " << path.string() << " --mode " << mode << ": " << why << '\n';
        }
      }
    }
  }
  if (models == 0) {
    std::cerr << "backend-all-modes: no models found\n";
    return 2;
  }
  std::cout << models << " models, " << skipped << " rejected by ONNX's full checker as they are (skipped)\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
