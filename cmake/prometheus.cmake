# SPDX-License-Identifier: Apache-2.0
# relock_prometheus (relock::prometheus): relock's metrics in a prometheus-cpp registry
# (include/relock/prometheus.hpp, docs/metrics.md). A library of its own beside librelock.so, so
# that the main library never depends on prometheus-cpp. RELOCK_WITH_PROMETHEUS: AUTO builds it
# when prometheus-cpp is found (Debian 12: prometheus-cpp-dev), ON requires it, OFF skips it.
include(GNUInstallDirs)

set(RELOCK_WITH_PROMETHEUS AUTO CACHE STRING
  "Build relock_prometheus: AUTO (when prometheus-cpp is found), ON (required) or OFF")
set_property(CACHE RELOCK_WITH_PROMETHEUS PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${RELOCK_WITH_PROMETHEUS}" _relock_with_prometheus)
if(_relock_with_prometheus STREQUAL "AUTO")
  find_package(prometheus-cpp CONFIG QUIET)
elseif(RELOCK_WITH_PROMETHEUS)
  find_package(prometheus-cpp CONFIG REQUIRED)
else()
  message(STATUS "relock_prometheus: not built (RELOCK_WITH_PROMETHEUS=${RELOCK_WITH_PROMETHEUS})")
  return()
endif()
unset(_relock_with_prometheus)
if(NOT prometheus-cpp_FOUND OR NOT TARGET prometheus-cpp::core)
  message(STATUS "relock_prometheus: not built (prometheus-cpp not found; Debian: prometheus-cpp-dev)")
  return()
endif()
message(STATUS "relock_prometheus: built (prometheus-cpp found in ${prometheus-cpp_DIR})")

# Hidden visibility as librelock.so: only make_prometheus_observer (RELOCK_API) is exported.
file(GLOB RELOCK_PROMETHEUS_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/prometheus/*.cpp)
add_library(relock_prometheus SHARED ${RELOCK_PROMETHEUS_SOURCES})
add_library(relock::prometheus ALIAS relock_prometheus)
target_include_directories(relock_prometheus PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(relock_prometheus PUBLIC relock::relock prometheus-cpp::core)
set_target_properties(relock_prometheus PROPERTIES EXPORT_NAME prometheus
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})

# Installed beside relock, in an export set of its own that relock-config.cmake loads for
# find_package(relock COMPONENTS prometheus); cmake/install.cmake leaves its header to it.
install(TARGETS relock_prometheus EXPORT relock-prometheus-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/relock/prometheus.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/relock)
install(EXPORT relock-prometheus-targets NAMESPACE relock::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relock)
