# Sourced (after scripts/setup.sh) by the scripts that configure build trees:
# new build trees use Ninja when it is installed (setup.sh installs it) and
# compile through ccache when it is installed. Ninja starts a target's
# objects as soon as the headers they need exist, where Unix Makefiles waits
# for every library the target links: on 2 cores the cold test build went
# from about one core busy to two. Both only set CMake's environment
# defaults: an existing build tree keeps its generator, and CMAKE_GENERATOR
# or CCACHE_DISABLE=1 in the caller's environment win.
if command -v ninja >/dev/null; then
  export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}
fi
if command -v ccache >/dev/null && [[ ${CCACHE_DISABLE:-0} != 1 ]]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
fi
