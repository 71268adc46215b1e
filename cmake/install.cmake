# `cmake --install`: the library and its header, the daemon, the slicer where it was built, the
# `stagio` command with its Python package, and the pkg-config and CMake package files for
# programs that use the stagio.h API.
#
#   lib/libstagio.so*                 the library (LD_PRELOAD, or linked ahead of -lmpi)
#   include/stagio/stagio.h           the C API
#   bin/stagio-iond, bin/stagio-slice the daemon and the slicer
#   bin/stagio -> lib/stagio/stagio   the command; its package in lib/stagio/stagio_tools
#   lib/pkgconfig/stagio.pc, lib/cmake/stagio/  for programs that link stagio
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS stagio EXPORT stagioTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES include/stagio/stagio.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stagio)
install(TARGETS stagio-iond RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET stagio-slice)
  install(TARGETS stagio-slice RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(stagio_command_dir ${CMAKE_INSTALL_LIBDIR}/stagio)
# bin/stagio links to the command relative to bin/, so that DESTDIR staging keeps it right.
file(RELATIVE_PATH stagio_command_link /${CMAKE_INSTALL_BINDIR} /${stagio_command_dir}/stagio)
install(PROGRAMS tools/stagio DESTINATION ${stagio_command_dir})
install(DIRECTORY tools/stagio_tools DESTINATION ${stagio_command_dir}
        PATTERN __pycache__ EXCLUDE PATTERN installed.json EXCLUDE)
# Written at install time, so that `cmake --install --prefix` counts: the installed command's
# note of where the library and the daemon went (it has no build directory; see
# stagio_tools/layout.py), its link in bin/, and the pkg-config file.
string(CONFIGURE [[
  set(prefix "${CMAKE_INSTALL_PREFIX}")
  set(root "$ENV{DESTDIR}${prefix}")
  file(WRITE "${root}/@stagio_command_dir@/stagio_tools/installed.json"
       "{\"library\": \"${prefix}/@CMAKE_INSTALL_LIBDIR@/libstagio.so\", "
       "\"iond\": \"${prefix}/@CMAKE_INSTALL_BINDIR@/stagio-iond\"}\n")
  file(CREATE_LINK "@stagio_command_link@" "${root}/@CMAKE_INSTALL_BINDIR@/stagio" SYMBOLIC)
  message(STATUS "Installing: ${root}/@CMAKE_INSTALL_BINDIR@/stagio")
  file(WRITE "${root}/@CMAKE_INSTALL_LIBDIR@/pkgconfig/stagio.pc" "prefix=${prefix}
libdir=\${prefix}/@CMAKE_INSTALL_LIBDIR@
includedir=\${prefix}/@CMAKE_INSTALL_INCLUDEDIR@

Name: stagio
Description: MPI-IO caching and prefetching library (link it ahead of the MPI library)
Version: @PROJECT_VERSION@
Cflags: -I\${includedir}
Libs: -L\${libdir} -lstagio
")
  message(STATUS "Installing: ${root}/@CMAKE_INSTALL_LIBDIR@/pkgconfig/stagio.pc")
]] stagio_install_code @ONLY)
install(CODE "${stagio_install_code}")

set(stagio_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/stagio)
install(EXPORT stagioTargets NAMESPACE stagio:: DESTINATION ${stagio_cmake_dir})
configure_package_config_file(cmake/stagioConfig.cmake.in ${CMAKE_BINARY_DIR}/stagioConfig.cmake
                              INSTALL_DESTINATION ${stagio_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/stagioConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/stagioConfig.cmake ${CMAKE_BINARY_DIR}/stagioConfigVersion.cmake
        DESTINATION ${stagio_cmake_dir})
