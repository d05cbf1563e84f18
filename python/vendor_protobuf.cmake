# cmake -DMODULE=... -DPROTOBUF=... -DVENDORED=... -DPATCHELF=... -P vendor_protobuf.cmake
# Copies PROTOBUF beside MODULE as VENDORED (its soname too), and makes MODULE need the
# copy instead of PROTOBUF (see python/CMakeLists.txt for why).
execute_process(COMMAND ${PATCHELF} --print-soname ${PROTOBUF}
  OUTPUT_VARIABLE soname OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
get_filename_component(folder ${MODULE} DIRECTORY)
file(COPY_FILE ${PROTOBUF} ${folder}/${VENDORED}.tmp)
execute_process(COMMAND ${PATCHELF} --set-soname ${VENDORED} ${folder}/${VENDORED}.tmp COMMAND_ERROR_IS_FATAL ANY)
file(RENAME ${folder}/${VENDORED}.tmp ${folder}/${VENDORED})
execute_process(COMMAND ${PATCHELF} --replace-needed ${soname} ${VENDORED} ${MODULE} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${PATCHELF} --print-needed ${MODULE}
  OUTPUT_VARIABLE needed COMMAND_ERROR_IS_FATAL ANY)
if(needed MATCHES "libprotobuf\\.so")
  message(FATAL_ERROR "${MODULE} still needs the system's libprotobuf:\n${needed}")
endif()
