# find_package(B2nd): the same library under its own name, with targets
# B2nd::b2nd_shared and B2nd::b2nd_static (aliases of the Blosc2:: ones).
include("${CMAKE_CURRENT_LIST_DIR}/../Blosc2/Blosc2Config.cmake")
if(NOT TARGET B2nd::b2nd_shared)
  add_library(B2nd::b2nd_shared INTERFACE IMPORTED)
  set_target_properties(B2nd::b2nd_shared PROPERTIES INTERFACE_LINK_LIBRARIES Blosc2::blosc2_shared)
  add_library(B2nd::b2nd_static INTERFACE IMPORTED)
  set_target_properties(B2nd::b2nd_static PROPERTIES INTERFACE_LINK_LIBRARIES Blosc2::blosc2_static)
endif()
set(B2nd_FOUND TRUE)
