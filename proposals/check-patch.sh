#!/usr/bin/env bash
# check-patch.sh PATCH ONNX_SOURCE_DIR [WORK_DIR]: a proposal's patch to ONNX, checked on an
# ONNX source tree, as an ONNX maintainer would:
#   1. the tree is built as it is ("stock") and with PATCH applied (`patch -p1`); the log
#      says every hunk that needed an offset or fuzz (CHECK_PATCH_CLEAN=1: any offset or
#      fuzz is a failure);
#   2. each is built with ONNX's own C++ tests and installed into WORK_DIR: a tree with its
#      own CMakeLists.txt (an onnx/onnx checkout or `git archive` of a tag) by that file, a
#      tree without one (the C++ sources inside Debian's python3-onnx package, the folder
#      that holds onnx/) by shapeprop's cmake/onnx/CMakeLists.txt;
#   3. ONNX's C++ tests run, all of them, stock and patched (counts printed);
#   4. the proposals' examples (tests/golden/proposals/*/*.onnxtxt, *.test) go through each
#      build's full checker, check_model(model, full_check=true), which must give the
#      verdict each example states for that build: "# UPSTREAM stock: ..." and "# UPSTREAM
#      <patch file name>: pass|fail: TEXT" (tests/upstream/check_examples.cc).
# WORK_DIR (default: build/check-patch/<ONNX version> in this checkout) keeps one source
# copy and one build folder, refreshed file by file by content, so the patched build after
# the stock one, and a second patch on the same version, cost an incremental build; the
# stock install and test program are kept while the tree is unchanged. Compiles go through
# ccache when it is installed (scripts/ccache-env.sh: the machine-level cache, paths
# hashed relative to WORK_DIR, so that another work folder, or setup.sh's build of the same
# sources laid out as WORK/src and WORK/build, hits the same objects).
# Environment: CHECK_PATCH_JOBS (default 2), CHECK_PATCH_CLEAN;
#   CHECK_PATCH_CACHE  a folder that keeps each build (its install and test program) under a
#                      key: the hash of the staged tree (stock, or with the patch applied),
#                      the build files, the compiler, protoc and CMake and the build's
#                      arguments. A build whose key is there is not made again, only tested;
#                      any change to the patch, the sources or the tools makes a new key.
#                      The 8 entries used last are kept. tests/upstream sets it to the
#                      machine-level cache's upstream-builds.
#   CHECK_PATCH_PLAN=1 stage both trees, print each build's key and whether the cache has it
#                      ("cached" or "to build"), and stop.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 PATCH ONNX_SOURCE_DIR [WORK_DIR]" >&2
  exit 2
fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -f "$1" ] || { echo "check-patch: no patch at $1" >&2; exit 2; }
patch_file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
patch_name=$(basename "$patch_file")
[ -d "$2/onnx" ] || { echo "check-patch: $2 is not an ONNX source tree (no onnx/ folder in it)" >&2; exit 2; }
tree=$(cd "$2" && pwd)
jobs=${CHECK_PATCH_JOBS:-2}

say() { printf 'check-patch: %s\n' "$*"; }
die() { printf 'check-patch: %s\n' "$*" >&2; exit 1; }

if [ -f "$tree/VERSION_NUMBER" ]; then
  version=$(tr -d '[:space:]' <"$tree/VERSION_NUMBER")
elif [ -f "$tree/onnx/common/version.h" ]; then
  version=$(sed -n 's/.*LAST_RELEASE_VERSION = "\([0-9.]*\)".*/\1/p' "$tree/onnx/common/version.h")
else
  die "cannot tell the ONNX version of $tree (no VERSION_NUMBER, no onnx/common/version.h)"
fi
[ -n "$version" ] || die "cannot read the ONNX version of $tree"
work=${3:-$repo/build/check-patch/$version}
mkdir -p "$work"
work=$(cd "$work" && pwd)

if [ -f "$tree/CMakeLists.txt" ]; then
  cmake_source=own
else
  [ -f "$repo/cmake/onnx/CMakeLists.txt" ] ||
    die "$tree has no CMakeLists.txt, and this checkout has no cmake/onnx/CMakeLists.txt to build it with"
  cmake_source=shapeprop
fi
say "ONNX $version from $tree (built with $([ $cmake_source = own ] && echo "its own CMakeLists.txt" || echo "cmake/onnx/CMakeLists.txt")), patch $patch_name, work folder $work"

# sync FROM TO: make TO hold FROM's files; a file whose content is unchanged keeps its
# time stamp, so that the build after it recompiles only what changed.
sync_tree() {
  local from=$1 to=$2 rel
  mkdir -p "$to"
  (cd "$from" && find . -type f -print0) | while IFS= read -r -d '' rel; do
    if ! cmp -s "$from/$rel" "$to/$rel"; then
      mkdir -p "$(dirname "$to/$rel")"
      cp "$from/$rel" "$to/$rel"
    fi
  done
  (cd "$to" && find . -type f -print0) | while IFS= read -r -d '' rel; do
    [ -e "$from/$rel" ] || rm -f "$to/$rel"
  done
}

# stage NAME [PATCH]: WORK/staging/NAME is the tree, with PATCH applied when given.
stage() {
  local name=$1 patch=${2:-} staging="$work/staging/$1"
  rm -rf "$staging"
  mkdir -p "$staging"
  (cd "$tree" && tar --exclude=./onnx/backend/test/data --exclude=./.git -cf - .) | (cd "$staging" && tar -xf -)
  if [ -n "$patch" ]; then
    if ! (cd "$staging" && patch -p1 --no-backup-if-mismatch -r - <"$patch") >"$work/$name/patch.log" 2>&1; then
      cat "$work/$name/patch.log"
      die "$patch_name does not apply to ONNX $version"
    fi
    local moved
    moved=$(grep -E 'offset|fuzz' "$work/$name/patch.log" || true)
    if [ -n "$moved" ]; then
      say "$patch_name applies to ONNX $version with:"
      sed 's/^/  /' <<<"$moved"
      [ -z "${CHECK_PATCH_CLEAN:-}" ] || die "CHECK_PATCH_CLEAN is set: the patch must apply without offset or fuzz"
    else
      say "$patch_name applies to ONNX $version cleanly (no offset, no fuzz)"
    fi
  fi
  # ONNX 1.21 and 1.22 ask for CMake 3.26; Debian 12 has 3.25, which builds them.
  if [ -f "$staging/CMakeLists.txt" ]; then
    local have
    have=$(cmake --version | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
    if grep -q 'cmake_minimum_required(VERSION 3.26)' "$staging/CMakeLists.txt" && [ "$have" = 3.25 ]; then
      sed -i 's/cmake_minimum_required(VERSION 3.26)/cmake_minimum_required(VERSION 3.25)/' "$staging/CMakeLists.txt"
      say "(ONNX $version asks for CMake 3.26; building it with CMake $have, the copy's minimum lowered)"
    fi
  fi
}

# The content of a staged tree, as one hash.
tree_hash() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32)
}

# The arguments every build of ONNX is configured with (beside the source and build folders).
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON
        -DONNX_ML=1 -DONNX_BUILD_TESTS=ON)
if [ $cmake_source = own ]; then
  common+=(-DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_PYTHON=OFF -DONNX_WERROR=OFF)
fi
# What a build is made with besides its tree: the build files (ours, for a tree without its
# own), the compiler, protoc, CMake and those arguments.
tools_hash() {
  local cxx=${CXX:-c++}
  {
    printf '%s\n' "${common[@]}"
    if [ $cmake_source = shapeprop ]; then cat "$repo/cmake/onnx/CMakeLists.txt" "$repo/cmake/onnx/ONNXConfig.cmake.in"; fi
    echo "$cxx $(readlink -f "$(command -v "$cxx")")"
    "$cxx" --version | head -n1
    protoc --version
    cmake --version | head -n1
  } | sha256sum | cut -c1-16
}
# The cache entry of the staged tree NAME.
cache_key() { echo "$version-$1-$(tree_hash "$work/staging/$1" | cut -c1-16)-$tools"; }

# build NAME: WORK/src made the staged NAME tree, configured (once), built with ONNX's C++
# tests and installed into WORK/NAME/install; the test program kept as WORK/NAME/onnx_gtests.
build() {
  local name=$1 dir="$work/$1"
  sync_tree "$work/staging/$name" "$work/src"
  if [ ! -f "$work/build/CMakeCache.txt" ]; then
    # shellcheck source=../scripts/ccache-env.sh
    source "$repo/scripts/ccache-env.sh"
    ccache_for_cmake "$work"
    if [ $cmake_source = own ]; then
      cmake -S "$work/src" -B "$work/build" "${common[@]}" "${ccache_cmake_args[@]}" >"$dir/configure.log" 2>&1
    else
      cmake -S "$repo/cmake/onnx" -B "$work/build" "${common[@]}" "${ccache_cmake_args[@]}" -DONNX_SOURCE_DIR="$work/src" \
        >"$dir/configure.log" 2>&1
    fi || { cat "$dir/configure.log"; die "configuring ONNX failed"; }
  else
    # Re-run the configuration: a patch may add files that a glob collects.
    cmake "$work/build" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; die "configuring ONNX failed"; }
  fi
  say "building the $name ONNX $version with its C++ tests (nice, $jobs jobs)"
  local start=$SECONDS binary
  nice -n 10 cmake --build "$work/build" -j "$jobs" >"$dir/build.log" 2>&1 || { tail -60 "$dir/build.log"; die "building the $name ONNX failed"; }
  rm -rf "$dir/install"
  cmake --install "$work/build" --prefix "$dir/install" >"$dir/install.log" 2>&1 ||
    { tail -20 "$dir/install.log"; die "installing the $name ONNX failed"; }
  binary=$(find "$work/build" -maxdepth 2 -type f -name onnx_gtests -perm -u+x | head -n1)
  [ -n "$binary" ] || die "no onnx_gtests in $work/build"
  rm -f "$dir/onnx_gtests"  # a link into CHECK_PATCH_CACHE, when the last one came from there
  cp "$binary" "$dir/onnx_gtests"
  say "built in $((SECONDS - start)) s"
}

# from_cache NAME: WORK/NAME's install and test program taken from CHECK_PATCH_CACHE when it
# holds the key of the staged tree NAME (and the entry marked as used); fails otherwise.
from_cache() {
  local entry=$cache/$(cache_key "$1")
  [ -n "$cache" ] && [ -x "$entry/onnx_gtests" ] && [ -d "$entry/install" ] || return 1
  touch "$entry"
  rm -rf "$work/$1/install" "$work/$1/onnx_gtests"
  ln -s "$entry/install" "$work/$1/install"
  ln -s "$entry/onnx_gtests" "$work/$1/onnx_gtests"
  say "the $1 ONNX $version built before from the same tree and tools: taken from $entry"
}

# to_cache NAME: WORK/NAME's install and test program into CHECK_PATCH_CACHE under the key
# of the staged tree NAME (written beside it, then renamed); the entries beyond the 8 used
# last are removed.
to_cache() {
  [ -n "$cache" ] || return 0
  local entry
  entry=$cache/$(cache_key "$1")
  mkdir -p "$cache"
  rm -rf "$entry.tmp.$$"
  mkdir "$entry.tmp.$$"
  cp -a "$work/$1/install" "$work/$1/onnx_gtests" "$entry.tmp.$$/"
  rm -rf "$entry"
  mv "$entry.tmp.$$" "$entry"
  (cd "$cache" && ls -1dt -- */ 2>/dev/null | tail -n +9 | while read -r old; do rm -rf -- "$old"; done)
}

# gtests NAME: all of ONNX's C++ tests of that build; prints gtest's counts.
gtests() {
  local name=$1
  say "ONNX's C++ tests, $name ONNX $version"
  if ! (cd "$work/$name" && "$work/$name/onnx_gtests" --gtest_brief=1) >"$work/$name/gtests.log" 2>&1; then
    grep -E '^\[  FAILED  \]|Failure|^\[==========\]|PASSED' "$work/$name/gtests.log" | head -80
    die "ONNX's C++ tests fail on the $name ONNX $version"
  fi
  grep -E '^\[==========\]|^\[  PASSED  \]' "$work/$name/gtests.log" | sed 's/^/  /'
}

# examples NAME FLAVOUR KEY: the examples through that build's full checker. The program is
# built in a folder of the build's cache key: WORK/NAME/install may be a link into the cache
# that another patch's run pointed elsewhere, and the files it now names can be older than a
# program built before, which would then not be relinked (CI ran function-value-info's
# examples through if-taken-branch's checker that way).
examples() {
  local name=$1 flavour=$2 dir="$work/examples-$1-$3"
  find "$work" -maxdepth 1 -name "examples-$name-*" ! -path "$dir" -exec rm -rf {} +
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    source "$repo/scripts/ccache-env.sh"
    ccache_for_cmake "$repo"  # its source is in the checkout
    cmake -S "$repo/tests/upstream/examples" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${ccache_cmake_args[@]}" \
      -DCMAKE_PREFIX_PATH="$work/$name/install" >"$work/examples-$name.log" 2>&1 ||
      { cat "$work/examples-$name.log"; die "configuring check-examples failed"; }
  fi
  cmake --build "$dir" >>"$work/examples-$name.log" 2>&1 || { cat "$work/examples-$name.log"; die "building check-examples failed"; }
  shopt -s nullglob
  local files=("$repo"/tests/golden/proposals/*/*.onnxtxt "$repo"/tests/golden/proposals/*/*.test)
  [ ${#files[@]} -gt 0 ] || die "no examples under tests/golden/proposals"
  say "the proposals' examples through the $name ONNX $version's full checker (verdicts stated for '$flavour')"
  "$dir/check-examples" "$repo" "$flavour" "${files[@]}" | sed "s|$repo/||"
}

cache=${CHECK_PATCH_CACHE:-}
tools=$(tools_hash)
mkdir -p "$work/stock" "$work/patched"
stage stock
stage patched "$patch_file"
if [ -n "${CHECK_PATCH_PLAN:-}" ]; then
  for name in stock patched; do
    key=$(cache_key $name)
    if [ -n "$cache" ] && [ -x "$cache/$key/onnx_gtests" ]; then state=cached; else state="to build"; fi
    echo "plan: $name $key $state"
  done
  rm -rf "$work/staging"
  exit 0
fi
stock_hash=$(tree_hash "$work/staging/stock")-$tools
if [ "$(cat "$work/stock/stamp" 2>/dev/null)" = "$stock_hash" ] && [ -x "$work/stock/onnx_gtests" ]; then
  say "the stock ONNX $version built before from the same tree: kept"
elif ! from_cache stock; then
  rm -f "$work/stock/stamp"
  build stock
  to_cache stock
  echo "$stock_hash" >"$work/stock/stamp"
fi
if ! from_cache patched; then
  build patched
  to_cache patched
fi
stock_key=$(cache_key stock) patched_key=$(cache_key patched)
rm -rf "$work/staging"
gtests stock
gtests patched
examples stock stock "$stock_key"
examples patched "$patch_name" "$patched_key"
say "$patch_name on ONNX $version: all of ONNX's C++ tests pass, and every example has its stated verdict, stock and patched"
