# Cross-compiling rudder for arm64 (aarch64) on a Debian host, with Debian's cross compiler
# (gcc-aarch64-linux-gnu) and the arm64 development packages installed through multiarch
# (dpkg --add-architecture arm64; libuv1-dev:arm64 and the rest: tests/cross/run installs them).
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# The test executables run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR: ctest prefixes every
# test command with it), so `ctest -L unit` in build-arm64 works on the x86-64 host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(RUDDER_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${RUDDER_CROSS_TRIPLET}-gcc)
set(CMAKE_AR ${RUDDER_CROSS_TRIPLET}-gcc-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${RUDDER_CROSS_TRIPLET}-gcc-ranlib CACHE FILEPATH "")
# Multiarch: the target's libraries are in /usr/lib/aarch64-linux-gnu (CMake finds them there
# through CMAKE_LIBRARY_ARCHITECTURE, which it takes from the compiler); headers in /usr/include
# (shared by every architecture) and /usr/include/aarch64-linux-gnu (the compiler searches it).
set(CMAKE_LIBRARY_ARCHITECTURE ${RUDDER_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH /usr/${RUDDER_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config reads only the arm64 .pc files (and the architecture-independent ones).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${RUDDER_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Running target programs on the build machine: Debian's qemu-user-static. The target's
# dynamic loader and libc are the multiarch libc6:arm64 (/lib/ld-linux-aarch64.so.1, brought by
# the :arm64 -dev packages), found at their own paths, so no -L/QEMU_LD_PREFIX is given: with
# -L /usr/aarch64-linux-gnu the loader comes from the cross sysroot (libc6-arm64-cross) but
# libc.so.6 still from /lib/aarch64-linux-gnu through the host's ld.so.cache, a loader and a
# libc of two builds, and threaded programs hang.
find_program(RUDDER_QEMU NAMES qemu-aarch64-static qemu-aarch64)
if(RUDDER_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${RUDDER_QEMU})
  # Emulated, a test costs about 10 times its native CPU: unit.template_cert_asn1 took 257 s and
  # template.corpus 156 s of their 300 s timeouts with -j2 on a loaded 2-core machine. Four times
  # every timeout (tests/CMakeLists.txt) leaves more than four times the worst seen, and a hang
  # still ends within 20 minutes.
  set(RUDDER_TEST_TIMEOUT_SCALE 4 CACHE STRING "Factor applied to every test's TIMEOUT (emulated builds)")
endif()
