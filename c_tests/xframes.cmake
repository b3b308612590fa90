# Cross-compatibility of super-chunks and frames (contiguous files, sparse directories,
# in-memory frames, frames at an offset) with c-blosc2 3.3.5 and python-blosc2.
#
# Included by CMakeLists.txt inside its `if(REF_BLOSC2_PREFIX)` block:
#     include(${CMAKE_CURRENT_SOURCE_DIR}/xframes.cmake)
# Uses REF_INCLUDE, REF_LIB, WARNINGS and Python3_EXECUTABLE from there.
#
# xframes.c is built twice (libb2nd and the reference). Each `write`s the same scenarios;
# `check` compares what one library reads from the other's (and its own) files with the
# values the scenario definitions imply; `compare` requires byte-identical files.
# py/pywrite.py writes frames with python-blosc2 (checked through the C API by `pyverify`),
# and py/pycheck.py reads libb2nd's frames with python-blosc2.

set(REF_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH
    "Python interpreter with python-blosc2 4.14.1 installed (the reference python client)")
message(STATUS "xframes: reference python client ${REF_PYTHON}")

add_executable(xframes_ours xframes.c)
target_compile_options(xframes_ours PRIVATE ${WARNINGS})
target_link_libraries(xframes_ours PRIVATE Blosc2::blosc2_shared)
if(B2ND_SANITIZE)
  target_compile_options(xframes_ours PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(xframes_ours PRIVATE -fsanitize=address,undefined)
endif()

add_executable(xframes_ref xframes.c)
target_compile_options(xframes_ref PRIVATE ${WARNINGS})
target_include_directories(xframes_ref PRIVATE ${REF_INCLUDE})
target_link_libraries(xframes_ref PRIVATE ${REF_LIB})

set(XFDIR ${CMAKE_CURRENT_BINARY_DIR}/xframes)
set(XFPY ${CMAKE_CURRENT_SOURCE_DIR}/py)

# Writers (each removes and rewrites its own outputs; the directories are created as needed).
add_test(NAME xframes_write_ours COMMAND xframes_ours write ${XFDIR}/ours --b2nd-writer)
add_test(NAME xframes_write_ref COMMAND xframes_ref write ${XFDIR}/ref)
add_test(NAME xframes_write_py COMMAND ${REF_PYTHON} ${XFPY}/pywrite.py ${XFDIR}/py)
set_tests_properties(xframes_write_ours PROPERTIES FIXTURES_SETUP xframes_ours)
set_tests_properties(xframes_write_ref PROPERTIES FIXTURES_SETUP xframes_ref)
set_tests_properties(xframes_write_py PROPERTIES FIXTURES_SETUP xframes_py)

# Readers, against the scenario definitions.
add_test(NAME xframes_ours_checks_ref COMMAND xframes_ours check ${XFDIR}/ref)
add_test(NAME xframes_ref_checks_ours COMMAND xframes_ref check ${XFDIR}/ours --b2nd-writer)
add_test(NAME xframes_ours_checks_ours COMMAND xframes_ours check ${XFDIR}/ours --b2nd-writer)
add_test(NAME xframes_ref_checks_ref COMMAND xframes_ref check ${XFDIR}/ref)
set_tests_properties(xframes_ours_checks_ref xframes_ref_checks_ref PROPERTIES FIXTURES_REQUIRED xframes_ref)
set_tests_properties(xframes_ref_checks_ours xframes_ours_checks_ours PROPERTIES FIXTURES_REQUIRED xframes_ours)

# Byte identity of every file (table of documented exceptions in xframes.c).
add_test(NAME xframes_identical_bytes COMMAND xframes_ours compare ${XFDIR}/ours ${XFDIR}/ref)
set_tests_properties(xframes_identical_bytes PROPERTIES FIXTURES_REQUIRED "xframes_ours;xframes_ref")

# python-blosc2 as a client: its frames read through the C API, and our frames read by it.
add_test(NAME xframes_ours_pyverify COMMAND xframes_ours pyverify ${XFDIR}/py)
add_test(NAME xframes_ref_pyverify COMMAND xframes_ref pyverify ${XFDIR}/py)
set_tests_properties(xframes_ours_pyverify xframes_ref_pyverify PROPERTIES FIXTURES_REQUIRED xframes_py)
add_test(NAME xframes_py_checks_ours
         COMMAND ${REF_PYTHON} ${XFPY}/pycheck.py ${XFDIR}/ours ${XFDIR}/ours/manifest.json)
add_test(NAME xframes_py_checks_ref
         COMMAND ${REF_PYTHON} ${XFPY}/pycheck.py ${XFDIR}/ref ${XFDIR}/ref/manifest.json)
set_tests_properties(xframes_py_checks_ours PROPERTIES FIXTURES_REQUIRED xframes_ours)
set_tests_properties(xframes_py_checks_ref PROPERTIES FIXTURES_REQUIRED xframes_ref)

# The frames are small: the whole set runs in a few seconds.
set_tests_properties(
  xframes_write_ours xframes_write_ref xframes_write_py xframes_ours_checks_ref xframes_ref_checks_ours
  xframes_ours_checks_ours xframes_ref_checks_ref xframes_identical_bytes xframes_ours_pyverify
  xframes_ref_pyverify xframes_py_checks_ours xframes_py_checks_ref
  PROPERTIES TIMEOUT 60)

# One library changes a frame the other wrote: c-blosc2 updates, inserts, deletes and
# appends chunks of a libb2nd frame with holes (mutate_lz4), libb2nd changes the result
# again; each frame is then read by both libraries and python-blosc2. And the other way.
set(XFOREIGN ${XFDIR}/foreign)
file(MAKE_DIRECTORY ${XFOREIGN})
add_executable(xforeign_ours xforeign.c)
target_compile_options(xforeign_ours PRIVATE ${WARNINGS})
target_link_libraries(xforeign_ours PRIVATE Blosc2::blosc2_shared)
add_executable(xforeign_ref xforeign.c)
target_compile_options(xforeign_ref PRIVATE ${WARNINGS})
target_include_directories(xforeign_ref PRIVATE ${REF_INCLUDE})
target_link_libraries(xforeign_ref PRIVATE ${REF_LIB})
add_test(NAME xforeign_ref_changes_ours
         COMMAND xforeign_ref change ${XFDIR}/ours/mutate_lz4.b2frame ${XFOREIGN}/ref_changed.b2frame --holes)
add_test(NAME xforeign_ours_changes_that
         COMMAND xforeign_ours change ${XFOREIGN}/ref_changed.b2frame ${XFOREIGN}/ours_changed.b2frame)
add_test(NAME xforeign_ours_changes_ref
         COMMAND xforeign_ours change ${XFDIR}/ref/mutate_lz4.b2frame ${XFOREIGN}/ours_changed_ref.b2frame)
set_tests_properties(xforeign_ref_changes_ours PROPERTIES FIXTURES_REQUIRED xframes_ours FIXTURES_SETUP xforeign_1)
set_tests_properties(xforeign_ours_changes_that PROPERTIES FIXTURES_REQUIRED xforeign_1 FIXTURES_SETUP xforeign_2)
set_tests_properties(xforeign_ours_changes_ref PROPERTIES FIXTURES_REQUIRED xframes_ref FIXTURES_SETUP xforeign_3)
foreach(f ref_changed:xforeign_1 ours_changed:xforeign_2 ours_changed_ref:xforeign_3)
  string(REPLACE ":" ";" pair ${f})
  list(GET pair 0 name)
  list(GET pair 1 fixture)
  foreach(who ours ref)
    add_test(NAME xforeign_${who}_reads_${name} COMMAND xforeign_${who} check ${XFOREIGN}/${name}.b2frame)
    set_tests_properties(xforeign_${who}_reads_${name} PROPERTIES FIXTURES_REQUIRED ${fixture})
  endforeach()
  add_test(NAME xforeign_python_reads_${name}
           COMMAND ${REF_PYTHON} ${XFPY}/foreign_check.py ${XFOREIGN}/${name}.b2frame)
  set_tests_properties(xforeign_python_reads_${name} PROPERTIES FIXTURES_REQUIRED ${fixture})
endforeach()
