include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(relock PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS relock EXPORT relock-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/relock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT relock-targets NAMESPACE relock:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relock)

configure_package_config_file(cmake/relock-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/relock-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relock)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/relock-config-version.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/relock-config.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/relock-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relock)

file(RELATIVE_PATH RELOCK_PC_INCLUDE_FROM_PC "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
configure_file(cmake/relock.pc.in ${CMAKE_CURRENT_BINARY_DIR}/relock.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/relock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
