# Included by the top-level CMakeLists.txt once ONNX::onnx is found: whether that ONNX is built
# with protobuf-lite, as Debian's libonnx-dev is. Its generated classes then derive from
# google::protobuf::MessageLite instead of Message, and shapeprop uses no descriptors,
# reflection or text format (src/io/onnx_wire.h, src/io/text_projection.cc) and links the
# lite runtime as well.
#
# Decided from what the compiler sees: a try-compile of ONNX::onnx's own headers asking
# whether onnx::ModelProto is a google::protobuf::Message. The package's interface definition
# ONNX_USE_LITE_PROTO is a second signal: Debian's 1.21.0-1 has it, 1.20.0-6 does not (its
# headers are lite all the same). When the headers are lite and the definition is missing,
# it is added to ONNX::onnx, since ONNX's onnx/proto_utils.h and shapeprop's sources read it.
#
# Sets SHAPEPROP_PROTOBUF_LITE (ON/OFF) and SHAPEPROP_PROTOBUF (the protobuf target to link).
# The try-compiles' verdict is cached per ONNX (its folder and version).
get_target_property(_shapeprop_onnx_definitions ONNX::onnx INTERFACE_COMPILE_DEFINITIONS)
if(_shapeprop_onnx_definitions MATCHES "ONNX_USE_LITE_PROTO")
  set(_shapeprop_onnx_says_lite ON)
else()
  set(_shapeprop_onnx_says_lite OFF)
endif()

set(_shapeprop_onnx_key "${ONNX_DIR};${ONNX_VERSION}")
if(NOT SHAPEPROP_ONNX_HEADERS_CHECKED STREQUAL _shapeprop_onnx_key)
  set(_dir "${CMAKE_BINARY_DIR}/CMakeFiles/shapeprop-onnx-protobuf")
  # Message's header is included whatever the runtime: libprotobuf-dev ships both.
  set(_head "#include <type_traits>\n#include <google/protobuf/message.h>\n#include \"onnx/onnx_pb.h\"\n")
  file(WRITE "${_dir}/lite.cc"
       "${_head}static_assert(std::is_base_of_v<google::protobuf::MessageLite, onnx::ModelProto>);\n")
  file(WRITE "${_dir}/full.cc"
       "${_head}static_assert(std::is_base_of_v<google::protobuf::Message, onnx::ModelProto>);\n")
  set(_type_before "${CMAKE_TRY_COMPILE_TARGET_TYPE}")
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # compiled, not linked: headers only
  foreach(_kind lite full)
    try_compile(_shapeprop_onnx_is_${_kind} "${_dir}/${_kind}" "${_dir}/${_kind}.cc"
      LINK_LIBRARIES ONNX::onnx CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
      OUTPUT_VARIABLE _shapeprop_onnx_output_${_kind})
  endforeach()
  set(CMAKE_TRY_COMPILE_TARGET_TYPE "${_type_before}")
  if(NOT _shapeprop_onnx_is_lite)
    message(FATAL_ERROR "shapeprop: cannot compile against ONNX ${ONNX_VERSION} from ${ONNX_DIR}: "
                        "onnx/onnx_pb.h with its onnx::ModelProto does not compile:\n${_shapeprop_onnx_output_lite}")
  endif()
  if(_shapeprop_onnx_is_full)
    set(_headers_lite OFF)
  else()
    set(_headers_lite ON)
  endif()
  set(SHAPEPROP_ONNX_HEADERS_LITE ${_headers_lite} CACHE INTERNAL "onnx::ModelProto is no google::protobuf::Message")
  set(SHAPEPROP_ONNX_HEADERS_CHECKED "${_shapeprop_onnx_key}" CACHE INTERNAL "The ONNX that was checked")
endif()

if(SHAPEPROP_ONNX_HEADERS_LITE AND NOT _shapeprop_onnx_says_lite)
  set_property(TARGET ONNX::onnx APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS ONNX_USE_LITE_PROTO=1)
  message(STATUS "shapeprop: that ONNX uses protobuf-lite (its onnx::ModelProto is no google::protobuf::Message); "
                 "its CMake package does not define ONNX_USE_LITE_PROTO, which is added")
elseif(SHAPEPROP_ONNX_HEADERS_LITE)
  message(STATUS "shapeprop: that ONNX uses protobuf-lite")
elseif(_shapeprop_onnx_says_lite)
  message(STATUS "shapeprop: that ONNX's CMake package defines ONNX_USE_LITE_PROTO (its onnx::ModelProto is a "
                 "google::protobuf::Message all the same): built as for protobuf-lite")
endif()
if(SHAPEPROP_ONNX_HEADERS_LITE OR _shapeprop_onnx_says_lite)
  set(SHAPEPROP_PROTOBUF_LITE ON)
  set(SHAPEPROP_PROTOBUF protobuf::libprotobuf-lite)
else()
  set(SHAPEPROP_PROTOBUF_LITE OFF)
  set(SHAPEPROP_PROTOBUF protobuf::libprotobuf)
endif()
