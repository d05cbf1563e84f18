// Helpers shared by the unit tests.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shapeprop/io.h"

namespace shapeprop::testing {

// The test corpus (tests/data/corpus) and the source tree, as CMake found them
// (test_paths.cc).
extern const char* const kCorpusDirDefault;
extern const char* const kSourceDir;

// The test corpus, tests/data/corpus (overridable by SHAPEPROP_CORPUS_DIR).
// It comes with the repository: when it is missing, the tests stop with a message saying
// so instead of finding no files.
inline std::filesystem::path corpus_dir() {
  const char* env = std::getenv("SHAPEPROP_CORPUS_DIR");
  std::filesystem::path dir = env ? env : kCorpusDirDefault;
  if (!std::filesystem::is_directory(dir / "torchlib-2024-03")) {
    std::cerr << "the test corpus is missing at " << dir
              << ": it comes with the repository (tests/data/corpus); restore it with git checkout, or point "
                 "SHAPEPROP_CORPUS_DIR at a copy\n";
    std::exit(1);
  }
  return dir;
}

// One of the corpus's torchlib function bodies (tests/data/corpus/torchlib-2024-03/functions), as text.
inline std::string torchlib(const std::string& name) {
  std::ifstream in(corpus_dir() / "torchlib-2024-03" / "functions" / (name + ".onnxtxt"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file below `dir` with extension `ext`, sorted.
inline std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir, const std::string& ext) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ext) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// Parses ONNX text that the test itself wrote; fails the test on a syntax error.
inline onnx::ModelProto parse_or_fail(std::string_view text) {
  auto model = parse_model_text(text, "<test>");
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().str());
  return model.ok() ? *model : onnx::ModelProto();
}

// A model of `depth` nested Ifs, each the then_branch of the one before, with nothing
// else: for the depth limits (bytes that no checker need accept).
inline onnx::ModelProto nested_if_model(int depth) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  for (int k = 0; k < depth; ++k) {
    auto* node = graph->add_node();
    node->set_op_type("If");
    auto* attribute = node->add_attribute();
    attribute->set_name("then_branch");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    graph = attribute->mutable_g();
  }
  return model;
}

// A fresh, empty folder for one test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shapeprop-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// An INT attribute `name` = `value`.
inline onnx::AttributeProto int_attribute(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

}  // namespace shapeprop::testing
