#!/usr/bin/env bash
# Installs what shapeprop needs to build and test, and nothing that is already there:
#   - Debian packages (compilers, protobuf, Boost.Graph, range-v3, GoogleTest, Benchmark,
#     ninja, llvm-14-tools for lit/FileCheck, clang 14 for the sanitizer preset, GNU time
#     for bench.sh and the golden tests' %within; for the
#     Python package: python3-dev, pybind11, patchelf, and python3-onnx, python3-pytest,
#     python3-jsonschema for its tests, all for Debian's /usr/bin/python3);
#   - ONNX >= 1.16 C++: an installed one if CMake can find it, otherwise ONNX 1.17.0 built
#     from Debian 13's source package into a machine-level cache that later clones reuse;
#   - that source tarball itself, kept in the cache (sha256-checked), for the upstream
#     ctest that patches ONNX with a proposal and builds it (tests/upstream/);
#   - ONNX's backend test models from it (node, simple, light, pytorch-converted,
#     pytorch-operator), beside the ONNX it built (tests/conformance, tests/backend);
#   - onnxruntime-node (npm) for the numerical-equivalence oracle.
# A second run installs nothing; `setup.sh --dry-run` says what a run would install and
# exits 1 if anything. Environment:
#   SHAPEPROP_CACHE   machine-level cache folder (default /var/cache/shapeprop)
#   SHAPEPROP_JOBS    parallel build jobs (default: number of cores)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
jobs=${SHAPEPROP_JOBS:-$(nproc)}
onnx_version=1.17.0
onnx_sha256=8d5e983c36037003615e5a02d36b18fc286541bf52de1a78f6cf9f32005a820e
onnx_prefix=$cache/onnx-$onnx_version
onnx_tarball=$cache/onnx_$onnx_version.orig.tar.gz

dry_run=
[ "${1:-}" = "--dry-run" ] && dry_run=1
would=()

say() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# ---------------------------------------------------------------- Debian packages
debian_packages=(
  build-essential cmake ninja-build pkg-config python3
  protobuf-compiler libprotobuf-dev
  libboost-graph-dev librange-v3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev
  llvm-14-tools clang-14 libclang-rt-14-dev
  dpkg-dev ca-certificates time
  python3-dev python3-pybind11 pybind11-dev patchelf
  python3-onnx python3-pytest python3-jsonschema
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ] && [ -n "$dry_run" ]; then
  would+=("Debian packages: ${missing[*]}")
elif [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---------------------------------------------------------------- ONNX
# An ONNX that CMake already finds (>= 1.16, e.g. a user's newer install) wins.
onnx_found_elsewhere() {
  local probe
  probe=$(mktemp -d)
  cat >"$probe/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(probe LANGUAGES CXX)
find_package(ONNX 1.16 CONFIG REQUIRED)
CM
  cmake -S "$probe" -B "$probe/b" >/dev/null 2>&1
  local rc=$?
  rm -rf "$probe"
  return $rc
}

fetch_onnx_source() {
  # Debian 13's source package, through a private apt configuration that reuses the
  # Debian mirror this machine is configured with; the system's sources stay untouched.
  local work=$1 mirror
  mirror=$(grep -hoE '^(URIs:|deb(-src)?)[[:space:]]+\S+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
           | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  [ -n "$mirror" ] || { say "no Debian mirror found in /etc/apt sources"; return 1; }
  mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/sources.d"
  echo "deb-src ${mirror%/} trixie main" >"$work/apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=$work/apt/sources.d"
              -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
              -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" update -qq
  # The .dsc may answer 404 while the upstream tarball arrives: judge by the tarball.
  (cd "$work" && apt-get "${opts[@]}" source --download-only onnx=$onnx_version-\* >/dev/null 2>&1) \
    || (cd "$work" && apt-get "${opts[@]}" source --download-only onnx >/dev/null 2>&1) || true
  local tarball=$work/onnx_$onnx_version.orig.tar.gz
  [ -f "$tarball" ] || { say "onnx_$onnx_version.orig.tar.gz was not downloaded"; return 1; }
  echo "$onnx_sha256  $tarball" | sha256sum -c --quiet - || { say "sha256 mismatch for $tarball"; return 1; }
}

# The verified tarball, kept in the cache (written there atomically).
keep_onnx_source() {
  cp "$1" "$onnx_tarball.tmp"
  mv "$onnx_tarball.tmp" "$onnx_tarball"
}

build_onnx() {
  local work
  work=$(mktemp -d /tmp/shapeprop-onnx.XXXXXX)
  say "building ONNX $onnx_version into $onnx_prefix (a few minutes)"
  fetch_onnx_source "$work"
  keep_onnx_source "$work/onnx_$onnx_version.orig.tar.gz"
  tar -xzf "$work/onnx_$onnx_version.orig.tar.gz" -C "$work"
  local src
  src=$(find "$work" -maxdepth 1 -type d -name 'onnx-*' | head -n1)
  cmake -S "$src" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$onnx_prefix.tmp" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DONNX_ML=1 -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF \
    -DONNX_BUILD_BENCHMARKS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_WERROR=OFF >/dev/null
  cmake --build "$work/build" -j "$jobs"
  rm -rf "$onnx_prefix.tmp"
  cmake --install "$work/build" >/dev/null
  # The backend node tests (models with declared output types) feed the conformance driver.
  mkdir -p "$onnx_prefix.tmp/share/onnx/backend/test/data"
  cp -r "$src/onnx/backend/test/data/node" "$onnx_prefix.tmp/share/onnx/backend/test/data/"
  rm -rf "$onnx_prefix"
  mv "$onnx_prefix.tmp" "$onnx_prefix"
  rm -rf "$work"
}

[ -n "$dry_run" ] || mkdir -p "$cache"
if [ -f "$onnx_prefix/lib/cmake/ONNX/ONNXConfig.cmake" ] || [ -f "$onnx_prefix/lib64/cmake/ONNX/ONNXConfig.cmake" ]; then
  :
elif [ -z "${SHAPEPROP_BUILD_ONNX:-}" ] && onnx_found_elsewhere; then
  [ -n "$dry_run" ] || say "using the ONNX that CMake finds"
elif [ -n "$dry_run" ]; then
  would+=("ONNX $onnx_version into $onnx_prefix")
else
  build_onnx
fi

# The source tarball for tests/upstream (a cache filled before it was kept lacks it).
if [ -f "$onnx_tarball" ] && echo "$onnx_sha256  $onnx_tarball" | sha256sum -c --quiet - 2>/dev/null; then
  :
elif [ -n "$dry_run" ]; then
  would+=("the ONNX $onnx_version source tarball into $cache")
else
  say "fetching the ONNX $onnx_version source tarball into $cache"
  work=$(mktemp -d /tmp/shapeprop-onnx-src.XXXXXX)
  fetch_onnx_source "$work"
  keep_onnx_source "$work/onnx_$onnx_version.orig.tar.gz"
  rm -rf "$work"
fi

# ONNX's backend test models, beside the ONNX built into the cache: the node tests feed the
# conformance driver, and every set goes through each mode (tests/backend). A cache made
# before the other sets were kept gets them from the tarball.
backend_data=$onnx_prefix/share/onnx/backend/test/data
backend_sets=(node simple light pytorch-converted pytorch-operator)
if [ -d "$onnx_prefix" ]; then
  missing_sets=()
  for set in "${backend_sets[@]}"; do [ -d "$backend_data/$set" ] || missing_sets+=("$set"); done
  if [ ${#missing_sets[@]} -gt 0 ] && [ -n "$dry_run" ]; then
    would+=("ONNX's backend test models: ${missing_sets[*]}")
  elif [ ${#missing_sets[@]} -gt 0 ]; then
    say "installing ONNX's backend test models: ${missing_sets[*]}"
    work=$(mktemp -d /tmp/shapeprop-onnx-data.XXXXXX)
    members=()
    for set in "${missing_sets[@]}"; do members+=("onnx-$onnx_version/onnx/backend/test/data/$set"); done
    tar -xzf "$onnx_tarball" -C "$work" "${members[@]}"
    mkdir -p "$backend_data"
    for set in "${missing_sets[@]}"; do mv "$work/onnx-$onnx_version/onnx/backend/test/data/$set" "$backend_data/"; done
    rm -rf "$work"
  fi
fi

# ---------------------------------------------------------------- onnxruntime-node
# Its install script downloads extras and fails here; the CPU library is in the package.
if [ ! -d "$here/tools/equiv/node_modules/onnxruntime-node" ] && [ -n "$dry_run" ]; then
  would+=("onnxruntime-node (npm)")
elif [ ! -d "$here/tools/equiv/node_modules/onnxruntime-node" ]; then
  say "installing onnxruntime-node"
  (cd "$here/tools/equiv" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

if [ -n "$dry_run" ]; then
  if [ ${#would[@]} -eq 0 ]; then echo "setup: nothing to install"; exit 0; fi
  printf 'setup: would install %s\n' "${would[@]}"
  exit 1
fi
