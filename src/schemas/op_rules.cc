// Loading rule folders, and finding the shipped one.
#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>

#include "schemas/rule_parser.h"
#include "shapeprop/function_id.h"
#include "shapeprop/schemas.h"

namespace shapeprop {

OpRules::OpRules() = default;
OpRules::~OpRules() = default;

const schemas::OpRule* OpRules::find(const std::string& domain, const std::string& op) const {
  auto it = rules_.find({FunctionId::canonical_domain(domain), op, 0});
  return it == rules_.end() ? nullptr : it->second.get();
}

const schemas::OpRule* OpRules::find_version(const std::string& op, int since) const {
  auto it = rules_.find({std::string(), op, since});
  return it == rules_.end() ? nullptr : it->second.get();
}

std::vector<std::pair<std::string, std::string>> OpRules::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, rule] : rules_) out.emplace_back(rule->versioned_name(), rule->where.file);
  return out;
}

std::optional<std::filesystem::path> builtin_schemas_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code ec;
  // An install: <prefix>/bin/onnx-infer-shapes and <prefix>/share/shapeprop/schemas.
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    candidates.push_back(exe.parent_path().parent_path() / "share" / "shapeprop" / "schemas");
  candidates.emplace_back(SHAPEPROP_SCHEMAS_INSTALL_DIR);
  candidates.emplace_back(SHAPEPROP_SCHEMAS_SOURCE_DIR);
  for (const auto& c : candidates)
    if (fs::is_directory(c, ec)) return c;
  return std::nullopt;
}

Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders) {
  namespace fs = std::filesystem;
  auto rules = std::make_shared<OpRules>();
  const auto builtin = builtin_schemas_dir();
  for (const auto& folder : folders) {
    // Diagnostics name a shipped rule as schemas/..., a user's as the folder given.
    std::error_code same_ec;
    const fs::path shown = builtin && fs::equivalent(folder, *builtin, same_ec) ? fs::path("schemas") : folder;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      return Diagnostic::error("schemas folder '" + folder.string() + "' does not exist or is not a folder");
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->path().extension() == ".rule" && it->is_regular_file(ec)) files.push_back(it->path());
    if (ec) return Diagnostic::error("cannot list schemas folder '" + folder.string() + "': " + ec.message());
    std::sort(files.begin(), files.end());
    std::map<std::tuple<std::string, std::string, int>, std::string> in_this_folder;  // op -> where
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      const std::string name = (shown / fs::relative(file, folder, ec)).generic_string();
      if (!in) return Diagnostic::error("cannot read rule file").in_file(name);
      auto parsed = schemas::parse_rules(text.str(), name);
      if (!parsed) return parsed.error();
      for (auto& rule : *parsed) {
        std::tuple<std::string, std::string, int> key{rule.domain, rule.op, rule.since};
        auto [seen, fresh] = in_this_folder.try_emplace(key, rule.where.str());
        if (!fresh)
          return Diagnostic::error("a second rule for " + rule.versioned_name() + " (the first is at " + seen->second + ")")
              .in_file(rule.where.file, rule.where.line, rule.where.column);
        rules->rules_[key] = std::make_shared<const schemas::OpRule>(std::move(rule));
      }
    }
  }
  return std::shared_ptr<const OpRules>(std::move(rules));
}

std::shared_ptr<const OpRules> builtin_op_rules() {
  static std::once_flag once;
  static std::shared_ptr<const OpRules> builtin;
  std::call_once(once, [] {
    builtin = std::make_shared<const OpRules>();
    if (auto dir = builtin_schemas_dir())
      if (auto loaded = load_op_rules({*dir})) builtin = *loaded;
  });
  return builtin;
}

}  // namespace shapeprop
