# Run one program built against each library with the same arguments; the outputs must match.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${EMULATOR} ${OURS} ${args} OUTPUT_VARIABLE ours RESULT_VARIABLE rc1)
execute_process(COMMAND ${EMULATOR} ${REF} ${args} OUTPUT_VARIABLE ref RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT ours STREQUAL ref)
  message(FATAL_ERROR "${ARGS}: libb2nd gives (${rc1})\n${ours}c-blosc2 gives (${rc2})\n${ref}")
endif()
message(STATUS "${ours}")
