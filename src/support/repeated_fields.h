// Editing protobuf's repeated message fields in place.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <vector>

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

// The same, but the others go to `removed(T*)` (which then owns them) rather than being
// destroyed. For a field on no arena: one on an arena would hand out heap copies.
template <class T, class Keep, class Removed>
void keep_in_order(google::protobuf::RepeatedPtrField<T>& field, Keep&& keep, Removed&& removed) {
  const int n = field.size();
  std::vector<T*> all(static_cast<size_t>(n));
  field.ExtractSubrange(0, n, all.data());
  for (int i = 0; i < n; ++i) {
    T* element = all[static_cast<size_t>(i)];
    if (keep(*element, i))
      field.AddAllocated(element);
    else
      removed(element);
  }
}

}  // namespace shapeprop
