#!/usr/bin/env bash
# Installs what shapeprop needs to build and test, and nothing that is already there:
#   - Debian packages (compilers, protobuf, Boost.Graph, range-v3, GoogleTest, Benchmark,
#     ninja, llvm-14-tools for lit/FileCheck, clang 14 for the sanitizer preset; for the
#     Python package: python3-dev, pybind11, patchelf, and python3-onnx, python3-pytest,
#     python3-jsonschema for its tests, all for Debian's /usr/bin/python3);
#   - ONNX >= 1.16 C++: an installed one if CMake can find it, otherwise ONNX 1.21.0 built
#     from the C++ sources in Debian's python3-onnx 1.21.0-1 (experimental; 1.20.0-6 from
#     sid if that is gone) into a machine-level cache that later clones reuse, with those
#     sources kept beside it (onnx-src-1.21.0); SHAPEPROP_ONNX=1.17: ONNX 1.17.0 built
#     from Debian 13's source package instead (the second tested configuration);
#   - ONNX 1.17.0's source tarball, kept in the cache (sha256-checked), for the upstream
#     ctest that patches ONNX with a proposal and builds it (tests/upstream/);
#   - ONNX's backend test models from it (node, simple, light, pytorch-converted,
#     pytorch-operator), beside the ONNX it built (tests/conformance, tests/backend);
#   - onnxruntime-node (npm) for the numerical-equivalence oracle.
# A second run installs nothing; `setup.sh --dry-run` says what a run would install and
# exits 1 if anything. Environment:
#   SHAPEPROP_CACHE   machine-level cache folder (default /var/cache/shapeprop)
#   SHAPEPROP_ONNX    1.21 (default) or 1.17: the ONNX configuration to set up
#   SHAPEPROP_JOBS    parallel build jobs (default: number of cores)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
jobs=${SHAPEPROP_JOBS:-$(nproc)}

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
  dpkg-dev ca-certificates
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
# Two configurations (SHAPEPROP_ONNX): 1.21, the default, ONNX 1.21.0 built from the C++
# sources inside Debian's binary package python3-onnx (its source package, with ONNX's
# CMakeLists.txt, is not on the mirror; cmake/onnx builds the sources instead); and 1.17,
# ONNX 1.17.0 from Debian 13's source package, with its own CMake.
onnx_config=${SHAPEPROP_ONNX:-1.21}
case $onnx_config in
  1.21|1.17) ;;
  *) say "SHAPEPROP_ONNX=$onnx_config: the configurations are 1.21 (the default) and 1.17"; exit 2 ;;
esac
onnx117_version=1.17.0
onnx117_sha256=8d5e983c36037003615e5a02d36b18fc286541bf52de1a78f6cf9f32005a820e
onnx117_prefix=$cache/onnx-$onnx117_version
onnx_tarball=$cache/onnx_$onnx117_version.orig.tar.gz
# python3-onnx: the version wanted (experimental), then the one to fall back to (sid);
# each line: ONNX version, Debian version, suite, sha256 of the .deb.
onnx_debs=(
  "1.21.0 1.21.0-1 experimental 27697d62221a04e99fbb4c7e97045b5447e775adc5f61459e002994643cc4be1"
  "1.20.0 1.20.0-6 sid 18128fd535208b5a2d3a81d09e40690dbdb86026ad9144fcdcbabae58d309a68"
)

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

# private_apt WORK LINE...: fills the array apt_opts with a private apt configuration
# under WORK whose sources are LINEs (with MIRROR standing for the Debian mirror this
# machine is configured with), and fetches its lists; the system's sources stay untouched.
# Mirrors of sid and experimental serve Release files past their Valid-Until; apt still
# checks every package's hash against the signed index.
private_apt() {
  local work=$1 mirror line
  shift
  mirror=$(grep -hoE '^(URIs:|deb(-src)?)[[:space:]]+\S+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
           | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  [ -n "$mirror" ] || { say "no Debian mirror found in /etc/apt sources"; return 1; }
  mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/sources.d"
  : >"$work/apt/sources.list"
  for line in "$@"; do echo "${line//MIRROR/${mirror%/}}" >>"$work/apt/sources.list"; done
  apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=$work/apt/sources.d"
            -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
            -o "APT::Sandbox::User=root" -o "Acquire::Check-Valid-Until=false")
  apt-get "${apt_opts[@]}" update -qq
}

fetch_onnx117_source() {
  # Debian 13's source package.
  local work=$1
  private_apt "$work" "deb-src MIRROR trixie main"
  # The .dsc may answer 404 while the upstream tarball arrives: judge by the tarball.
  (cd "$work" && apt-get "${apt_opts[@]}" source --download-only onnx=$onnx117_version-\* >/dev/null 2>&1) \
    || (cd "$work" && apt-get "${apt_opts[@]}" source --download-only onnx >/dev/null 2>&1) || true
  local tarball=$work/onnx_$onnx117_version.orig.tar.gz
  [ -f "$tarball" ] || { say "onnx_$onnx117_version.orig.tar.gz was not downloaded"; return 1; }
  echo "$onnx117_sha256  $tarball" | sha256sum -c --quiet - || { say "sha256 mismatch for $tarball"; return 1; }
}

# The verified tarball, kept in the cache (written there atomically).
keep_onnx117_source() {
  cp "$1" "$onnx_tarball.tmp"
  mv "$onnx_tarball.tmp" "$onnx_tarball"
}

build_onnx117() {
  local work
  work=$(mktemp -d /tmp/shapeprop-onnx.XXXXXX)
  say "building ONNX $onnx117_version into $onnx117_prefix (a few minutes)"
  fetch_onnx117_source "$work"
  keep_onnx117_source "$work/onnx_$onnx117_version.orig.tar.gz"
  tar -xzf "$work/onnx_$onnx117_version.orig.tar.gz" -C "$work"
  local src
  src=$(find "$work" -maxdepth 1 -type d -name 'onnx-*' | head -n1)
  cmake -S "$src" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$onnx117_prefix.tmp" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DONNX_ML=1 -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF \
    -DONNX_BUILD_BENCHMARKS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_WERROR=OFF >/dev/null
  cmake --build "$work/build" -j "$jobs"
  rm -rf "$onnx117_prefix.tmp"
  cmake --install "$work/build" >/dev/null
  # The backend node tests (models with declared output types) feed the conformance driver.
  mkdir -p "$onnx117_prefix.tmp/share/onnx/backend/test/data"
  cp -r "$src/onnx/backend/test/data/node" "$onnx117_prefix.tmp/share/onnx/backend/test/data/"
  rm -rf "$onnx117_prefix"
  mv "$onnx117_prefix.tmp" "$onnx117_prefix"
  rm -rf "$work"
}

# fetch_python3_onnx WORK: downloads the first python3-onnx of onnx_debs that the mirror
# has into WORK, sha256-checked, and sets deb_onnx_version and deb_file; says so when it
# had to fall back.
fetch_python3_onnx() {
  local work=$1 entry version debver suite sha file
  private_apt "$work" "deb MIRROR sid main" "deb MIRROR experimental main"
  for entry in "${onnx_debs[@]}"; do
    read -r version debver suite sha <<<"$entry"
    file=$work/python3-onnx_${debver}_amd64.deb
    if (cd "$work" && apt-get "${apt_opts[@]}" download "python3-onnx=$debver" >/dev/null 2>&1) && [ -f "$file" ]; then
      echo "$sha  $file" | sha256sum -c --quiet - || { say "sha256 mismatch for $(basename "$file")"; return 1; }
      if [ "$entry" != "${onnx_debs[0]}" ]; then
        read -r _ want_debver want_suite _ <<<"${onnx_debs[0]}"
        say "python3-onnx $want_debver ($want_suite) is not on the mirror: falling back to $debver ($suite), ONNX $version"
      fi
      deb_onnx_version=$version
      deb_file=$file
      return 0
    fi
  done
  say "none of python3-onnx ${onnx_debs[*]} could be downloaded"
  return 1
}

# build_onnx_from_deb: ONNX's C++ sources from python3-onnx, kept in the cache as
# onnx-src-VERSION (shaped like an ONNX checkout: onnx/ holds the sources, the .proto
# files and test/cpp), built by cmake/onnx (static, PIC, ONNX_ML=1, the system's protobuf
# and protoc) with ONNX's C++ tests, which must pass, and installed into onnx-VERSION with
# the test program (libexec/onnx/onnx_gtests, which the ctest onnx.cpp_tests runs).
build_onnx_from_deb() {
  local work src prefix
  work=$(mktemp -d /tmp/shapeprop-onnx.XXXXXX)
  fetch_python3_onnx "$work"
  src=$cache/onnx-src-$deb_onnx_version
  prefix=$cache/onnx-$deb_onnx_version
  say "building ONNX $deb_onnx_version from $(basename "$deb_file") into $prefix (several minutes)"
  dpkg-deb -x "$deb_file" "$work/deb"
  if [ ! -f "$src/onnx/common/version.h" ]; then
    rm -rf "$src.tmp"
    mkdir -p "$src.tmp"
    mv "$work/deb/usr/lib/python3/dist-packages/onnx" "$src.tmp/onnx"
    rm -rf "$src"
    mv "$src.tmp" "$src"
  fi
  cmake -S "$here/cmake/onnx" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DONNX_SOURCE_DIR="$src" -DONNX_BUILD_TESTS=ON -DCMAKE_INSTALL_PREFIX="$prefix.tmp" >/dev/null
  cmake --build "$work/build" -j "$jobs"
  (cd "$work/build" && ctest --output-on-failure >/dev/null) \
    || { say "ONNX $deb_onnx_version's C++ tests fail (build kept in $work/build)"; return 1; }
  rm -rf "$prefix.tmp"
  cmake --install "$work/build" >/dev/null
  rm -rf "$prefix"
  mv "$prefix.tmp" "$prefix"
  rm -rf "$work"
}

onnx_installed_at() { [ -f "$1/lib/cmake/ONNX/ONNXConfig.cmake" ] || [ -f "$1/lib64/cmake/ONNX/ONNXConfig.cmake" ]; }

[ -n "$dry_run" ] || mkdir -p "$cache"
# The prefix of the configuration's ONNX in the cache (empty: an ONNX CMake finds).
onnx_prefix=
if [ "$onnx_config" = 1.17 ]; then
  if onnx_installed_at "$onnx117_prefix"; then
    onnx_prefix=$onnx117_prefix
  elif [ -n "$dry_run" ]; then
    would+=("ONNX $onnx117_version into $onnx117_prefix")
  else
    build_onnx117
    onnx_prefix=$onnx117_prefix
  fi
else
  for entry in "${onnx_debs[@]}"; do
    read -r version _ <<<"$entry"
    if onnx_installed_at "$cache/onnx-$version"; then onnx_prefix=$cache/onnx-$version; break; fi
  done
  if [ -n "$onnx_prefix" ]; then
    :
  elif [ -z "${SHAPEPROP_BUILD_ONNX:-}" ] && onnx_found_elsewhere; then
    [ -n "$dry_run" ] || say "using the ONNX that CMake finds"
  elif [ -n "$dry_run" ]; then
    read -r version _ <<<"${onnx_debs[0]}"
    would+=("ONNX $version into $cache/onnx-$version")
  else
    build_onnx_from_deb
    onnx_prefix=$cache/onnx-$deb_onnx_version
  fi
fi

# ONNX 1.17.0's source tarball, for tests/upstream and for the backend test models below
# (a cache filled before it was kept lacks it).
if [ -f "$onnx_tarball" ] && echo "$onnx117_sha256  $onnx_tarball" | sha256sum -c --quiet - 2>/dev/null; then
  :
elif [ -n "$dry_run" ]; then
  would+=("the ONNX $onnx117_version source tarball into $cache")
else
  say "fetching the ONNX $onnx117_version source tarball into $cache"
  work=$(mktemp -d /tmp/shapeprop-onnx-src.XXXXXX)
  fetch_onnx117_source "$work"
  keep_onnx117_source "$work/onnx_$onnx117_version.orig.tar.gz"
  rm -rf "$work"
fi

# ONNX's backend test models, beside the ONNX built into the cache: the node tests feed the
# conformance driver, and every set goes through each mode (tests/backend). They come from
# ONNX 1.17.0's source tarball (python3-onnx carries none).
backend_data=$onnx_prefix/share/onnx/backend/test/data
backend_sets=(node simple light pytorch-converted pytorch-operator)
if [ -n "$onnx_prefix" ] && { [ -d "$onnx_prefix" ] || [ -z "$dry_run" ]; }; then
  missing_sets=()
  for set in "${backend_sets[@]}"; do [ -d "$backend_data/$set" ] || missing_sets+=("$set"); done
  if [ ${#missing_sets[@]} -gt 0 ] && [ -n "$dry_run" ]; then
    would+=("ONNX's backend test models: ${missing_sets[*]}")
  elif [ ${#missing_sets[@]} -gt 0 ]; then
    say "installing ONNX's backend test models: ${missing_sets[*]}"
    work=$(mktemp -d /tmp/shapeprop-onnx-data.XXXXXX)
    members=()
    for set in "${missing_sets[@]}"; do members+=("onnx-$onnx117_version/onnx/backend/test/data/$set"); done
    tar -xzf "$onnx_tarball" -C "$work" "${members[@]}"
    mkdir -p "$backend_data"
    for set in "${missing_sets[@]}"; do mv "$work/onnx-$onnx117_version/onnx/backend/test/data/$set" "$backend_data/"; done
    rm -rf "$work"
  fi
fi

# ---------------------------------------------------------------- onnxruntime-node
# Its install script downloads extras and fails here; the CPU library is in the package.
# The version package.json pins, also over an older one installed before.
version_in() { sed -n 's/.*"'"$1"'": *"\([^"]*\)".*/\1/p' "$2" 2>/dev/null | head -n1; }
ort_wanted=$(version_in onnxruntime-node "$here/tools/equiv/package.json")
ort_have=$(version_in version "$here/tools/equiv/node_modules/onnxruntime-node/package.json")
if [ "$ort_have" != "$ort_wanted" ] && [ -n "$dry_run" ]; then
  would+=("onnxruntime-node $ort_wanted (npm)")
elif [ "$ort_have" != "$ort_wanted" ]; then
  say "installing onnxruntime-node $ort_wanted"
  (cd "$here/tools/equiv" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

if [ -n "$dry_run" ]; then
  if [ ${#would[@]} -eq 0 ]; then echo "setup: nothing to install"; exit 0; fi
  printf 'setup: would install %s\n' "${would[@]}"
  exit 1
fi
