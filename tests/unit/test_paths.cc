// The folders the unit tests read, defined by CMake for this file alone: no other test
// file's compile command names the checkout, so that ccache serves their objects to every
// clone (its base_dir rewrites paths in arguments, not inside string literals).
#include "test_util.h"

namespace shapeprop::testing {

const char* const kCorpusDirDefault = SHAPEPROP_CORPUS_DIR;
const char* const kSourceDir = SHAPEPROP_SOURCE_DIR;

}  // namespace shapeprop::testing
