# Installing magpie (`make install`, `cmake --install`) and its Debian
# package (`make deb`, `cpack -G DEB`). Included at the end of CMakeLists.txt.
#
# Layout under the prefix (/usr/local by default, /usr in the .deb; DESTDIR
# is honoured by `cmake --install`):
#   bin/magpie
#   share/magpie/runtime/                       the Python runner of pytorch/triton
#                                               kernels and magpie_timing.h
#   share/man/man1/magpie.1.gz                  when the build generated it
#   share/bash-completion/completions/magpie    when the build generated it
#   share/zsh/vendor-completions/_magpie        when the build generated it
#   share/doc/magpie/copyright                  LICENSE
#   share/doc/magpie/changelog.gz               a Debian changelog of this version
# The directories are fixed, not GNUInstallDirs variables: magpie finds its
# runtime/ at <dir of the executable>/../share/magpie/runtime
# (mp_kernel_runtime_find in src/kernel/runtime_dir.c), whatever the prefix.
#
# The wheel (pyproject.toml, scikit-build-core sets SKBUILD): the prefix is
# the package directory magpie_perf/ in site-packages, so bin/magpie and
# share/magpie/runtime keep the layout above; the man page and completions go
# to the wheel's data directory, i.e. the environment's prefix
# (<venv>/share/man/man1/magpie.1.gz, where `man` finds it from PATH, and
# <venv>/share/bash-completion/completions/magpie, where bash-completion
# looks beside the command). See docs/packaging.md.

# The runtime/ of the source tree, the last place magpie looks (a binary run
# from its build tree finds the runtime/ it was built with).
# A wheel is built in a temporary copy of the tree: it gets no such path.
if(NOT SKBUILD)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/kernel/runtime_dir.c APPEND PROPERTY
               COMPILE_DEFINITIONS "MP_SOURCE_RUNTIME_DIR=\"${CMAKE_SOURCE_DIR}/runtime\"")
endif()

if(MP_SANITIZE OR MP_FUZZ)
  install(CODE "message(WARNING \"installing a sanitizer build of magpie; `make install` \
installs the release build (build/release)\")")
endif()

install(TARGETS magpie RUNTIME DESTINATION bin)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/runtime/ DESTINATION share/magpie/runtime
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION share/doc/magpie RENAME copyright)
# Generated from the option tables at build time; OPTIONAL so that a tree
# that does not generate them (yet) still installs.
if(SKBUILD)
  set(mp_share ${SKBUILD_DATA_DIR}/share)
else()
  set(mp_share share)
endif()
# The man page goes in compressed (gzip -9n: no name, no time stamp, so the
# same page gives the same bytes), as Debian policy wants and every man
# reader accepts; uncompressed only where there is no gzip.
find_program(MP_GZIP gzip)
if(MP_GZIP)
  add_custom_command(OUTPUT ${MP_MAN}.gz COMMAND ${MP_GZIP} -9nkf ${MP_MAN}
    DEPENDS ${MP_MAN} COMMENT "Compressing magpie.1" VERBATIM)
  add_custom_target(magpie_man_gz ALL DEPENDS ${MP_MAN}.gz)
  install(FILES ${MP_MAN}.gz DESTINATION ${mp_share}/man/man1 OPTIONAL)
else()
  install(FILES ${MP_MAN} DESTINATION ${mp_share}/man/man1 OPTIONAL)
endif()
install(FILES ${CMAKE_BINARY_DIR}/completions/magpie
        DESTINATION ${mp_share}/bash-completion/completions OPTIONAL)
install(FILES ${CMAKE_BINARY_DIR}/completions/_magpie
        DESTINATION ${mp_share}/zsh/vendor-completions OPTIONAL)

# The .deb: `cpack -G DEB` in the release build directory (`make deb`).
# Depends: the runtime packages of the -dev packages `make deps` installs.
# dpkg-shlibdeps finds those the binary links (libjansson4, libyaml-0-2,
# zlib1g, libisal2, libc6); libcurl4, libmicrohttpd12 and libxlsxwriter4 are
# opened with dlopen at first use (src/lazy/), which no tool can see, so they
# are listed here explicitly (CPack adds them to what dpkg-shlibdeps finds),
# with the minimum versions dpkg-shlibdeps gave when magpie linked them.
# Without dpkg-shlibdeps the whole list is written out. OpenCL
# (ocl-icd-libopencl1) and CUDA are opened with dlopen when a kernel needs
# them, python3 runs the Python runner: recommended, not required.
# One version: the project's, which `magpie --version` prints (MP_VERSION).
file(STRINGS ${CMAKE_SOURCE_DIR}/include/magpie/base.h mp_version_line
     REGEX "^#define MP_VERSION ")
if(NOT mp_version_line MATCHES "\"${PROJECT_VERSION}\"")
  message(FATAL_ERROR "MP_VERSION in include/magpie/base.h (${mp_version_line}) is not "
                      "the project version ${PROJECT_VERSION}")
endif()
set(CPACK_PACKAGE_NAME magpie)
set(CPACK_PACKAGE_VENDOR "the magpie authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Debian: a synopsis under 80 characters, description lines under 80
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU performance loop for LLM inference: benchmarks, traces, kernels")
set(CPACK_PACKAGE_DESCRIPTION
    "magpie benchmarks OpenAI-compatible serving engines, explains where the
GPU time goes from PyTorch profiler traces (gap analysis, TraceLens-compatible
reports) and evaluates GPU kernels (correctness against a reference,
noise-bounded timing, FASTER/SLOWER verdicts). It is command-line compatible
with AMD's Magpie.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(MP_DEB_MAINTAINER "magpie maintainers <maintainers@users.noreply.a-seed-7eeda87f.example>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MP_DEB_MAINTAINER}")
# share/doc/magpie/changelog.gz: a Debian changelog of this version (the
# .deb is a native package, which must carry one), dated by
# SOURCE_DATE_EPOCH when set, else by the configure time. Not in wheels.
if(MP_GZIP AND NOT SKBUILD)
  string(TIMESTAMP mp_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(mp_changelog ${CMAKE_BINARY_DIR}/doc/changelog)
  file(WRITE ${mp_changelog}
       "magpie (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
       "  * Release ${PROJECT_VERSION}: see README.md and docs/ for what it does.\n\n"
       " -- ${MP_DEB_MAINTAINER}  ${mp_date}\n")
  execute_process(COMMAND ${MP_GZIP} -9nc ${mp_changelog} OUTPUT_FILE ${mp_changelog}.gz)
  install(FILES ${mp_changelog}.gz DESTINATION share/doc/magpie)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(MP_DPKG_SHLIBDEPS dpkg-shlibdeps)
set(MP_DEB_DLOPEN_DEPENDS
    "libcurl4 (>= 7.16.3), libmicrohttpd12 (>= 0.9.50), libxlsxwriter4 (>= 1.1.4)")
if(MP_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${MP_DEB_DLOPEN_DEPENDS}")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libjansson4, libyaml-0-2, zlib1g, ${MP_DEB_DLOPEN_DEPENDS}")
  if(ISAL_LIB AND ISAL_INC)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libisal2")
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, ocl-icd-libopencl1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd")
include(CPack)
