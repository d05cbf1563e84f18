#include "shapeprop/version.h"

namespace shapeprop {

const char* version() { return SHAPEPROP_VERSION; }
const char* onnx_version() { return SHAPEPROP_ONNX_VERSION; }

}  // namespace shapeprop
