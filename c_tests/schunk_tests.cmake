# Super-chunk / frame tests, include()d from c_tests/CMakeLists.txt (after WARNINGS,
# B2ND_SANITIZE and the Blosc2:: targets are defined).
#
# The programs take a scratch directory as their argument (each test gets its own, so that
# `ctest -j` is safe), need pthreads, and are built with LIBB2ND_STRICT: the places where
# c-blosc2 3.3.5 is known to be wrong (crashes, corrupt state) are checked for the correct
# behaviour.  With REF_BLOSC2_PREFIX set, the same sources are also built without
# LIBB2ND_STRICT against the reference c-blosc2 3.3.5 (the tests are valid for it; the
# 8-thread run is not, since 3.3.5 is not thread-safe there, so only `-t 1` runs).
find_package(Threads REQUIRED)

set(SCHUNK_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/schunk_scratch)
set(SCHUNK_TESTS test_schunk_api test_schunk_threads test_frame_crafted)

function(b2nd_schunk_program name source strict lib)
  add_executable(${name} ${source})
  # GCC's -Warray-bounds misjudges the model buffers' sizes at -O2 (false positives).
  target_compile_options(${name} PRIVATE ${WARNINGS} -Wno-array-bounds -Wno-stringop-overflow)
  if(strict)
    target_compile_definitions(${name} PRIVATE LIBB2ND_STRICT)
  endif()
  target_link_libraries(${name} PRIVATE ${lib} Threads::Threads)
endfunction()

foreach(t ${SCHUNK_TESTS})
  b2nd_schunk_program(${t} ${t}.c ON Blosc2::blosc2_shared)
  if(B2ND_SANITIZE)
    target_compile_options(${t} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${t} PRIVATE -fsanitize=address,undefined)
  endif()
endforeach()

set(SCHUNK_DIRS api threads threads1 crafted)
if(REF_BLOSC2_PREFIX)
  list(APPEND SCHUNK_DIRS api_ref threads1_ref crafted_ref)
endif()
set(SCHUNK_DIR_PATHS)
foreach(d ${SCHUNK_DIRS})
  list(APPEND SCHUNK_DIR_PATHS ${SCHUNK_SCRATCH}/${d})
endforeach()
add_test(NAME schunk_scratch_prepare COMMAND ${CMAKE_COMMAND} -E make_directory ${SCHUNK_DIR_PATHS})
set_tests_properties(schunk_scratch_prepare PROPERTIES FIXTURES_SETUP schunk_scratch)

add_test(NAME test_schunk_api COMMAND test_schunk_api ${SCHUNK_SCRATCH}/api)
add_test(NAME test_schunk_threads COMMAND test_schunk_threads ${SCHUNK_SCRATCH}/threads)
add_test(NAME test_schunk_threads_1 COMMAND test_schunk_threads -t 1 ${SCHUNK_SCRATCH}/threads1)
add_test(NAME test_frame_crafted COMMAND test_frame_crafted ${SCHUNK_SCRATCH}/crafted)
set(SCHUNK_TEST_NAMES test_schunk_api test_schunk_threads test_schunk_threads_1 test_frame_crafted)

if(REF_BLOSC2_PREFIX)
  foreach(t ${SCHUNK_TESTS})
    b2nd_schunk_program(${t}_ref ${t}.c OFF ${REF_LIB})
    target_include_directories(${t}_ref PRIVATE ${REF_BLOSC2_PREFIX}/include)
  endforeach()
  add_test(NAME test_schunk_api_ref COMMAND test_schunk_api_ref ${SCHUNK_SCRATCH}/api_ref)
  add_test(NAME test_schunk_threads_1_ref COMMAND test_schunk_threads_ref -t 1 ${SCHUNK_SCRATCH}/threads1_ref)
  add_test(NAME test_frame_crafted_ref COMMAND test_frame_crafted_ref ${SCHUNK_SCRATCH}/crafted_ref)
  list(APPEND SCHUNK_TEST_NAMES test_schunk_api_ref test_schunk_threads_1_ref test_frame_crafted_ref)
endif()

# Under wine (Windows), each operation on a frame file opens it and asks its identity, whose
# volume serial wine takes 0.45 ms to give (Windows itself: microseconds); test_frame_crafted
# makes some 100,000 operations on files and needs more than 300 s there (docs/PORTING.md).
if(WIN32)
  set(SCHUNK_TEST_TIMEOUT 900)
else()
  set(SCHUNK_TEST_TIMEOUT 300)
endif()
set_tests_properties(${SCHUNK_TEST_NAMES} PROPERTIES FIXTURES_REQUIRED schunk_scratch TIMEOUT ${SCHUNK_TEST_TIMEOUT})
