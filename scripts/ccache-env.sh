# Sourced by the scripts that build ONNX (setup.sh, proposals/check-patch.sh): fills the array
# ccache_cmake_args with the CMake arguments that compile through Debian's ccache, when it is
# installed, into the machine-level cache that the project's own builds use (CMakeLists.txt:
# $CCACHE_DIR, else $SHAPEPROP_CACHE/ccache, else /var/cache/shapeprop/ccache), with paths
# under BASE_DIR hashed relative to it. Call `ccache_for_cmake BASE_DIR`; nothing is added when
# ccache is missing, SHAPEPROP_CCACHE is OFF, or the cache folder is not writable.
ccache_for_cmake() {
  local base=$1 dir program launcher
  ccache_cmake_args=()
  program=$(command -v ccache 2>/dev/null) || return 0
  case ${SHAPEPROP_CCACHE:-ON} in OFF | off | 0 | NO | no | FALSE | false) return 0 ;; esac
  dir=${CCACHE_DIR:-${SHAPEPROP_CACHE:-/var/cache/shapeprop}/ccache}
  mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ] || return 0
  launcher="$(command -v cmake);-E;env;CCACHE_DIR=$dir;CCACHE_BASEDIR=$base;CCACHE_NOHASHDIR=1;CCACHE_MAXSIZE=8G;$program"
  ccache_cmake_args=("-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "-DCMAKE_C_COMPILER_LAUNCHER=$launcher")
}
