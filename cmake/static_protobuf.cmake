# Included by the top-level CMakeLists.txt after cmake/onnx_protobuf_lite.cmake: an executable
# that sets the target property SHAPEPROP_STATIC_PROTOBUF (the CLI, ONNX's baseline beside it)
# links protobuf's static archive instead of its shared library, where the system has one and
# the linked ONNX is static too (one copy of protobuf in the process either way).
#
# Why: libprotobuf.so costs every run its dynamic relocations at start-up and each call into
# it a PLT stub. On a 2-layer transformer `--mode inline` took 34.1 M instructions with the
# shared library and 31.0 M with the archive (13.4 -> 12.8 ms by the clock, annotate 11.0 ->
# 9.8 ms); at 128 layers 665.5 -> 658.4 M; on the 86 real exports 2,119.2 -> 1,859.6 M in
# all (docs/performance.md). The archive is built for executables (-fPIE, as Debian builds
# its static libraries), which a shared object cannot hold: the Python extension and the
# tests keep the shared library.
#
# Sets SHAPEPROP_PROTOBUF to a generator expression that picks the archive for a head target
# with the property, and rewrites ONNX's own targets' link of protobuf the same way;
# SHAPEPROP_PROTOBUF_STATIC_ARCHIVE is the archive, empty where the shared library stays.
option(SHAPEPROP_STATIC_PROTOBUF "Link the CLI and ONNX's baseline with protobuf's static archive, where there is one" ON)
set(SHAPEPROP_PROTOBUF_STATIC_ARCHIVE "")
if(SHAPEPROP_STATIC_PROTOBUF AND TARGET ${SHAPEPROP_PROTOBUF})
  get_target_property(_shapeprop_pb_shared ${SHAPEPROP_PROTOBUF} IMPORTED_LOCATION_RELEASE)
  if(NOT _shapeprop_pb_shared)
    get_target_property(_shapeprop_pb_shared ${SHAPEPROP_PROTOBUF} IMPORTED_LOCATION)
  endif()
  string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" _shapeprop_pb_archive "${_shapeprop_pb_shared}")
  # ONNX's targets must be static and name protobuf by its imported target only (rewritten
  # below): a path or a name of its own would bring the shared library in beside the archive.
  set(_shapeprop_onnx_static ON)
  foreach(_t ONNX::onnx ONNX::onnx_proto)
    if(TARGET ${_t})
      get_target_property(_type ${_t} TYPE)
      if(NOT _type STREQUAL "STATIC_LIBRARY")
        set(_shapeprop_onnx_static OFF)
      endif()
      get_target_property(_links ${_t} INTERFACE_LINK_LIBRARIES)
      foreach(_l IN LISTS _links)
        if(_l MATCHES "protobuf" AND NOT _l MATCHES "^protobuf::libprotobuf(-lite)?$")
          set(_shapeprop_onnx_static OFF)
        endif()
      endforeach()
    endif()
  endforeach()
  if(NOT _shapeprop_onnx_static)
    message(STATUS "shapeprop: protobuf stays shared everywhere: the linked ONNX is a shared library, "
                   "or links protobuf otherwise than by its imported target")
  elseif(_shapeprop_pb_archive STREQUAL _shapeprop_pb_shared OR NOT EXISTS "${_shapeprop_pb_archive}")
    message(STATUS "shapeprop: protobuf stays shared everywhere: no static archive beside ${_shapeprop_pb_shared}")
  else()
    add_library(shapeprop_protobuf_static STATIC IMPORTED)
    get_target_property(_includes ${SHAPEPROP_PROTOBUF} INTERFACE_INCLUDE_DIRECTORIES)
    set_target_properties(shapeprop_protobuf_static PROPERTIES
      IMPORTED_LOCATION "${_shapeprop_pb_archive}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
    if(_includes)
      set_target_properties(shapeprop_protobuf_static PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_includes}")
    endif()
    # Evaluated for the target being linked (the head target), not for the library that
    # names it: only executables with the property take the archive.
    set(_pick "$<IF:$<BOOL:$<TARGET_PROPERTY:SHAPEPROP_STATIC_PROTOBUF>>,shapeprop_protobuf_static,${SHAPEPROP_PROTOBUF}>")
    foreach(_t ONNX::onnx ONNX::onnx_proto)
      if(TARGET ${_t})
        get_target_property(_links ${_t} INTERFACE_LINK_LIBRARIES)
        if(_links)
          list(TRANSFORM _links REPLACE "^protobuf::libprotobuf(-lite)?$" "${_pick}")
          set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_links}")
        endif()
      endif()
    endforeach()
    set(SHAPEPROP_PROTOBUF "${_pick}")
    set(SHAPEPROP_PROTOBUF_STATIC_ARCHIVE "${_shapeprop_pb_archive}")
    message(STATUS "shapeprop: the CLI and onnx-infer-baseline link ${_shapeprop_pb_archive}")
  endif()
endif()
