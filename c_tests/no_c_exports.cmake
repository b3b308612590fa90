# Fails when one of FILES (a ;-list of shared libraries and programs) has a
# dynamic symbol of c-blosc2's API (blosc_*, blosc1_*, blosc2_*, b2nd_*) defined.
# usage: cmake -DFILES="a.so;b" -P no_c_exports.cmake
foreach(f ${FILES})
  execute_process(COMMAND nm -D --defined-only ${f} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 AND NOT err MATCHES "no symbols")
    message(FATAL_ERROR "nm -D ${f}: ${err}")
  endif()
  string(REGEX MATCHALL "[ \t](blosc[12]?_[A-Za-z0-9_]+|b2nd_[A-Za-z0-9_]+)\n" found "${out}")
  if(found)
    message(FATAL_ERROR "${f} exports c-blosc2 symbols:${found}")
  endif()
  message(STATUS "${f}: no c-blosc2 symbol exported")
endforeach()
