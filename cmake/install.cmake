# Installing hetcoll as a library: libhetcoll (the C API: hetcoll_allreduce
# …) and libhetcoll_mpi (the same and the MPI_* collectives: link it, or
# LD_PRELOAD it), hetcoll.h, and what finds them:
#   - pkg-config: hetcoll.pc (-lhetcoll) and hetcoll_mpi.pc (-lhetcoll_mpi),
#     relocatable (paths from ${pcfiledir}), with an rpath to the library;
#   - CMake: find_package(hetcoll) gives hetcoll::hetcoll and
#     hetcoll::hetcoll_mpi (they bring hetcoll.h and MPI::MPI_C);
#   - mpis.json: the MPIs the libraries are built for, where each is
#     (`hetcoll lib --mpi`).
# The same files in a Python wheel (site-packages/hetcoll/ is a prefix) and
# under `cmake --install --prefix P`.
include(CMakePackageConfigHelpers)

install(TARGETS hetcoll hetcoll_mpi EXPORT hetcollTargets
        LIBRARY DESTINATION ${HETCOLL_LIBDIR}
        INCLUDES DESTINATION ${HETCOLL_INCLUDEDIR})
install(FILES include/hetcoll.h include/hetcoll_collectives.def DESTINATION ${HETCOLL_INCLUDEDIR})

set(_cmakedir ${HETCOLL_LIBDIR}/cmake/hetcoll)
install(EXPORT hetcollTargets NAMESPACE hetcoll:: DESTINATION ${_cmakedir})
configure_package_config_file(cmake/hetcollConfig.cmake.in ${CMAKE_BINARY_DIR}/hetcollConfig.cmake
                              INSTALL_DESTINATION ${_cmakedir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/hetcollConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/hetcollConfig.cmake ${CMAKE_BINARY_DIR}/hetcollConfigVersion.cmake
        DESTINATION ${_cmakedir})

# pkg-config: the prefix relative to the .pc file, so that a moved tree
# (a wheel in any virtual environment) still resolves.
set(_pcdir ${HETCOLL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH HETCOLL_PC_TO_ROOT /root/${_pcdir} /root/${HETCOLL_INSTALL_ROOT})
file(RELATIVE_PATH HETCOLL_ROOT_TO_LIB /root/${HETCOLL_INSTALL_ROOT} /root/${HETCOLL_LIBDIR})
file(RELATIVE_PATH HETCOLL_ROOT_TO_INCLUDE /root/${HETCOLL_INSTALL_ROOT} /root/${HETCOLL_INCLUDEDIR})
foreach(v HETCOLL_PC_TO_ROOT HETCOLL_ROOT_TO_LIB HETCOLL_ROOT_TO_INCLUDE)
  string(REGEX REPLACE "/$" "" ${v} "${${v}}")
endforeach()
foreach(HETCOLL_PC_LIB hetcoll hetcoll_mpi)
  if(HETCOLL_PC_LIB STREQUAL "hetcoll")
    set(HETCOLL_PC_DESCRIPTION "hetcoll's C API (hetcoll_allreduce ...): model-driven MPI collectives")
  else()
    set(HETCOLL_PC_DESCRIPTION "hetcoll's C API and its MPI_* collectives over PMPI_* (link instead of LD_PRELOAD)")
  endif()
  configure_file(cmake/hetcoll.pc.in ${CMAKE_BINARY_DIR}/${HETCOLL_PC_LIB}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${HETCOLL_PC_LIB}.pc DESTINATION ${_pcdir})
endforeach()

# mpis.json: {"default": "openmpi", "mpis": {"openmpi": "", "mpich": "mpich"}}
# (the directory under lib/ of each MPI's libraries).
set(_entries "")
foreach(m IN LISTS HETCOLL_MPIS)
  if(m STREQUAL HETCOLL_MPI_FLAVOR)
    set(_dir "")
  else()
    set(_dir ${m})
  endif()
  if(_entries)
    string(APPEND _entries ", ")
  endif()
  string(APPEND _entries "\"${m}\": \"${_dir}\"")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/mpis.json "{\"default\": \"${HETCOLL_MPI_FLAVOR}\", \"mpis\": {${_entries}}}\n")
install(FILES ${CMAKE_BINARY_DIR}/mpis.json DESTINATION ${HETCOLL_LIBDIR}/hetcoll)
