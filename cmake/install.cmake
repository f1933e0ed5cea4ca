# `cmake --install`: the tinygpt library, its headers under include/tinygpt/, and
# a CMake package, so that another project writes
#   find_package(tinygpt REQUIRED)
#   target_link_libraries(app PRIVATE tinygpt::tinygpt)
# (examples/ is such a project; tests/install builds it against an installed copy).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tinygpt EXPORT tinygptTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/tinygpt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinygpt)
foreach(layer tensor autograd nn distributed datasets models training inspect tokenizer)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinygpt/${layer}
          FILES_MATCHING PATTERN "*.h" PATTERN "cpu" EXCLUDE)
endforeach()
# Of tensor/cpu/, only the headers a program can call: the rest are loops written with
# vector intrinsics for the library's own per-ISA copies (tensor/cpu/README.md).
install(FILES ${PROJECT_SOURCE_DIR}/tensor/cpu/bfloat16_convert.h ${PROJECT_SOURCE_DIR}/tensor/cpu/gelu_approximation.h
              ${PROJECT_SOURCE_DIR}/tensor/cpu/gemm.h ${PROJECT_SOURCE_DIR}/tensor/cpu/gemm_bf16.h
              ${PROJECT_SOURCE_DIR}/tensor/cpu/gemv.h ${PROJECT_SOURCE_DIR}/tensor/cpu/rounded_activations.h
              ${PROJECT_SOURCE_DIR}/tensor/cpu/rope_pairing.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinygpt/tensor/cpu)
install(EXPORT tinygptTargets NAMESPACE tinygpt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tinygpt)

# MPI's world, for programs that run data-parallel jobs: the component `mpi`
#   find_package(tinygpt REQUIRED COMPONENTS mpi)   ->   tinygpt::mpi
# in a file of its own, so that a project without it never needs MPI.
set(TINYGPT_PACKAGE_USES_MPI OFF)
if(MPI_CXX_FOUND)
  set(TINYGPT_PACKAGE_USES_MPI ON)
  set_target_properties(tinygpt_mpi PROPERTIES EXPORT_NAME mpi)
  install(TARGETS tinygpt_mpi EXPORT tinygptMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT tinygptMpiTargets NAMESPACE tinygpt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tinygpt)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tinygptConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tinygptConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tinygpt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tinygptConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tinygptConfig.cmake ${PROJECT_BINARY_DIR}/tinygptConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tinygpt)
