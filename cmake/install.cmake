# `cmake --install BUILD --prefix P` and the Debian package (CPack), see
# docs/install.md. Layout, relative to the prefix so it can be moved:
#   bin/                     every program, and the Python CLIs' wrappers
#                            (plrank-client-py, plrank-plot), which find
#                            lib/plrank/python relative to themselves
#   lib/plrank/python/       the Python packages plrank (with its extension
#                            and the generated plrank.v1 stubs),
#                            plrank_client and plrank_plot
#   share/doc/plrank/        the manual (README.md, docs/)
#   share/plrank/proto/      the API's .proto files, for clients
include(GNUInstallDirs)
# `make install` and cpack install what is built (the programs, the Python
# extension and stubs) instead of building every target first (tests,
# benchmarks): build, then install or package.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(PLRANK_INSTALL_PYTHON_DIR lib/plrank/python)

foreach(program plrank-train plrank-eval plrank-datagen plrank-convert
                plrank-server plrank-client plrank-loadgen plrank-echo-server)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/docker/plrank-publish
        DESTINATION ${CMAKE_INSTALL_BINDIR})

# Python: the packages, then a wrapper per CLI.
set(PLRANK_INSTALL_WRAPPERS)
if(TARGET plrank_python_module)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/plrank
          DESTINATION ${PLRANK_INSTALL_PYTHON_DIR}
          FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed"
          PATTERN "__pycache__" EXCLUDE)
  install(TARGETS plrank_python_module
          LIBRARY DESTINATION ${PLRANK_INSTALL_PYTHON_DIR}/plrank)
endif()
if(TARGET plrank_python_stubs)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/clients/python/gen/plrank/v1
          DESTINATION ${PLRANK_INSTALL_PYTHON_DIR}/plrank
          FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/clients/python/plrank_client
          DESTINATION ${PLRANK_INSTALL_PYTHON_DIR}
          FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  list(APPEND PLRANK_INSTALL_WRAPPERS "plrank-client-py:plrank_client")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/trainer/plot/plrank_plot
        DESTINATION ${PLRANK_INSTALL_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/plrank_plot_build.py.in
               ${PROJECT_BINARY_DIR}/install/plrank_plot_build.py @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/plrank_plot_build.py
        DESTINATION ${PLRANK_INSTALL_PYTHON_DIR})
list(APPEND PLRANK_INSTALL_WRAPPERS "plrank-plot:plrank_plot")
foreach(wrapper ${PLRANK_INSTALL_WRAPPERS})
  string(REPLACE ":" ";" parts ${wrapper})
  list(GET parts 0 PLRANK_WRAPPER_NAME)
  list(GET parts 1 PLRANK_WRAPPER_MODULE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/install/plrank-python-wrapper.in
                 ${PROJECT_BINARY_DIR}/install/${PLRANK_WRAPPER_NAME} @ONLY)
  install(PROGRAMS ${PROJECT_BINARY_DIR}/install/${PLRANK_WRAPPER_NAME}
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# The manual and the API.
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/plrank/proto
        FILES_MATCHING PATTERN "*.proto")

# `cpack -G DEB` (in the build tree): plrank_<version>_<arch>.deb, installed
# under /usr. Library dependencies come from dpkg-shlibdeps; the Python CLIs
# need Debian's python3 packages.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME plrank)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "PLRank learning to rank: trainer, gRPC/HTTP ranking server, clients")
set(CPACK_PACKAGE_CONTACT "PLRank maintainers <plrank@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "python3, python3-grpcio, python3-protobuf, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-matplotlib, openmpi-bin")
include(CPack)

if(PLRANK_BUILD_TESTS AND PLRANK_BUILD_SERVER)
  # Install to a temporary prefix, move it, and run every program from
  # there; then the same from the unpacked .deb (tests/install/).
  foreach(mode prefix deb)
    add_test(NAME install_${mode}
      COMMAND ${PROJECT_SOURCE_DIR}/tests/install/install_test.sh ${mode}
              ${PROJECT_BINARY_DIR})
    set_tests_properties(install_${mode} PROPERTIES
      TIMEOUT 900 LABELS "install" RUN_SERIAL ON)
  endforeach()
endif()
