// Parses a model from text, validates it and prints it back: the smallest use of the installed library (docs/library.md).
#include <iostream>

#include "shapeprop/io.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"

int main() {
  auto model = shapeprop::parse_model_text(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2] 'x.1') => (float[2] y) {
   y = Abs ('x.1')
})");
  if (!model) {
    std::cerr << model.error().str() << '\n';
    return 1;
  }
  if (shapeprop::has_errors(shapeprop::validate_model(*model, "<text>"))) return 1;
  std::cout << shapeprop::print_model(*model);
  return 0;
}
