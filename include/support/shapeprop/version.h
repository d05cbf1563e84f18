#pragma once

namespace shapeprop {

// The version of shapeprop itself (the project() version in CMakeLists.txt).
const char* version();

// The version of the ONNX library it was built against.
const char* onnx_version();

}  // namespace shapeprop
