// Editing protobuf's repeated message fields in place.
#pragma once

#include <google/protobuf/repeated_field.h>

namespace shapeprop {

// Keeps the elements for which `keep(element, index)` is true, in their order, and
// destroys the others. The kept ones move by pointer within the field: none is copied,
// moved from or allocated anew, so that pointers to them stay valid (std::remove_if would
// move their contents between elements).
template <class T, class Keep>
void keep_in_order(google::protobuf::RepeatedPtrField<T>& field, Keep&& keep) {
  int kept = 0;
  for (int i = 0; i < field.size(); ++i)
    if (keep(field.Get(i), i)) {
      if (kept != i) field.SwapElements(kept, i);
      ++kept;
    }
  if (kept < field.size()) field.DeleteSubrange(kept, field.size() - kept);
}

}  // namespace shapeprop
