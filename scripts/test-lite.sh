#!/usr/bin/env bash
# test-lite.sh: shapeprop against Debian's own ONNX, which is built with protobuf-lite, in
# each of two Debian sid roots (scripts/lite-root.sh, made once into the machine-level cache):
#   experimental  libonnx-dev and python3-onnx 1.21.0-1 from experimental (the sid root's
#                 when those are gone, and it says so; then that one is tested once);
#   sid           sid's libonnx-dev and python3-onnx (1.20.0-6), what a Debian testing or sid
#                 user installs: its CMake package does not say it is lite (issue 45).
# with shapeprop's build dependencies. In the first (scripts/test-lite-inside.sh NAME) it
#   1. builds shapeprop against that ONNX with sid's compiler and CMake (build/lite-NAME),
#      checks that --version names that ONNX as protobuf-lite, and runs its unit, golden,
#      corpus and Python suites (the Python package is built for the root's python3 and
#      tested with its python3-onnx), and ONNX 1.21's own Python tests of shape inference
#      through shapeprop.onnx_compat (onnxsuite);
#   2. installs the package from this clone as Python users do, `pip install
#      --no-build-isolation .` (pyproject.toml: scikit-build-core driving the project's
#      CMake) into a virtual environment that sees the root's packages, and runs the
#      Python tests against that install (tests/python: SHAPEPROP_PACKAGE_DIR makes them
#      check that the installed package is the one imported; none may skip).
# In the second, the build, --version and the unit, golden and Python suites, and the drop-in
# comparison (tests/dropin: ORT's tool and onnx-shape-inference beside shapeprop's drop-ins).
# scripts/in-sid-root.sh runs it with the clone bound in; the builds and environments are
# under build/ in the clone, so the cached roots are never changed, and sid's compilers share
# the machine-level ccache-sid. Needs root. Environment: SHAPEPROP_JOBS (default: the number
# of cores); SHAPEPROP_LITE_ROOTS, the roots to test (default: "experimental sid");
# SHAPEPROP_LITE_LABELS and SHAPEPROP_LITE_PIP=0 narrow what runs in each (test-lite-inside.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${SHAPEPROP_JOBS:-$(nproc)}
say() { printf 'test-lite: %s\n' "$*" >&2; }

tested=()
for which in ${SHAPEPROP_LITE_ROOTS:-experimental sid}; do
  root=$(bash "$here/scripts/lite-root.sh" "$which")
  if [[ " ${tested[*]} " == *" $root "* ]]; then
    say "$which: the root $root is tested above"
    continue
  fi
  tested+=("$root")
  say "$which: root $root: $(chroot "$root" dpkg-query -W -f='libonnx-dev ${Version}, ' libonnx-dev)$(chroot "$root" python3 --version)"
  start=$SECONDS
  # The second root differs from the first in its ONNX package only (the lite detection, the
  # link): its build, the unit, golden and Python suites cover that; the corpus and `pip
  # install .` (the same code, 15 minutes of CI) run in the first.
  labels=${SHAPEPROP_LITE_LABELS:-} pip=${SHAPEPROP_LITE_PIP:-}
  if [ ${#tested[@]} -gt 1 ]; then
    labels=${labels:-unit|golden|python} pip=${pip:-0}
  fi
  # The first root also runs the tests of onnx_ir in and out, with onnx_ir's sources from
  # the machine-level cache (scripts/python-sources.sh onnx_ir) bound at /tmp/out, and the sympy
  # onnx_ir imports installed into the root once. The sid root (sid's python3-onnx 1.20, as
  # Debian's python3-onnxruntime 1.23 goes with) runs the drop-in comparison, tests/dropin
  # (label dropin): python3-onnxruntime installed into it once, onnx_ir's and
  # onnx-shape-inference's sources bound read-only (then also onnx_ir's tests run there).
  ir=() envs=()
  if [ "$which" = sid ]; then
    if ir_dir=$(bash "$here/scripts/python-sources.sh" onnx_ir) &&
       osi_dir=$(bash "$here/scripts/python-sources.sh" onnx_shape_inference); then
      for package in python3-sympy python3-onnxruntime; do
        if ! chroot "$root" dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed'; then
          say "$which: installing $package (the drop-in comparison needs it)"
          bash "$here/scripts/debian-install.sh" --chroot "$root" "$package"
        fi
      done
      ir=(-r "$ir_dir" -r "$osi_dir")
      envs=(SHAPEPROP_ONNX_IR_PATH=/tmp/ro/1 SHAPEPROP_OSI_PATH=/tmp/ro/2)
      [ -n "${SHAPEPROP_LITE_LABELS:-}" ] || labels="${labels:-unit|golden|corpus|python|onnxsuite}|dropin"
      say "$which: onnx_ir from $ir_dir, onnx_shape_inference from $osi_dir"
    else
      say "$which: the drop-in comparison does not run: no sources (above)"
    fi
  elif [ ${#tested[@]} -eq 1 ]; then
    if ir_dir=$(bash "$here/scripts/python-sources.sh" onnx_ir); then
      if ! chroot "$root" dpkg-query -W -f='${Status}' python3-sympy 2>/dev/null | grep -q 'ok installed'; then
        say "$which: installing python3-sympy (onnx_ir needs it)"
        bash "$here/scripts/debian-install.sh" --chroot "$root" python3-sympy
      fi
      ir=(-o "$ir_dir")
      envs=(SHAPEPROP_ONNX_IR_PATH=/tmp/out)
      say "$which: onnx_ir from $ir_dir"
    else
      say "$which: the tests of onnx_ir in and out do not run: no onnx_ir sources (above)"
    fi
  fi
  # The first root also runs ONNX 1.21's own Python tests of shape inference through
  # shapeprop.onnx_compat (tests/onnxsuite), from the sources scripts/setup.sh keeps, bound
  # read-only (at /tmp/ro/N, after the folders bound above), with the python3-parameterized
  # they import installed once.
  suite=() suite_dir=
  onnx_tests=${SHAPEPROP_CACHE:-/var/cache/shapeprop}/onnx-src-1.21.0/onnx/test
  if [ ${#tested[@]} -eq 1 ]; then
    if [ -f "$onnx_tests/shape_inference_test.py" ] &&
       [ "$(chroot "$root" python3 -c 'import onnx; print(onnx.__version__)')" = 1.21.0 ]; then
      if ! chroot "$root" dpkg-query -W -f='${Status}' python3-parameterized 2>/dev/null | grep -q 'ok installed'; then
        say "$which: installing python3-parameterized (ONNX's tests import it)"
        bash "$here/scripts/debian-install.sh" --chroot "$root" python3-parameterized
      fi
      n=$(printf '%s\n' "${ir[@]}" | grep -c '^-r$' || true)
      suite=(-r "$(dirname "$(dirname "$onnx_tests")")") suite_dir=/tmp/ro/$((n + 1))/onnx/test
    else
      say "$which: ONNX's Python tests (onnxsuite) do not run: no $onnx_tests, or the root's onnx is not 1.21.0"
    fi
  fi
  SHAPEPROP_JOBS=$jobs bash "$here/scripts/in-sid-root.sh" "$root" "${ir[@]}" "${suite[@]}" \
    env ${labels:+SHAPEPROP_LITE_LABELS="$labels"} ${pip:+SHAPEPROP_LITE_PIP="$pip"} "${envs[@]}" \
    ${suite_dir:+SHAPEPROP_ONNX_PY_TESTS_DIR=$suite_dir} \
    bash scripts/test-lite-inside.sh "$which"
  say "$which: passed in $((SECONDS - start)) s"
done

# The torch export recipe of docs/python.md, in the sid root with torch (when the machine
# has it: tests/data/real-exports/export.sh makes it), with the package built against sid's
# libonnx-dev above, the ONNX that root's python3-onnx uses.
if [ -f "$here/build/lite-sid/python/shapeprop/__init__.py" ]; then
  start=$SECONDS
  status=0
  bash "$here/tests/python/torch_recipe.sh" build/lite-sid || status=$?
  case $status in
    0) say "torch recipe: passed in $((SECONDS - start)) s" ;;
    3) say "torch recipe: not run (above)" ;;
    *) say "torch recipe: failed"; exit 1 ;;
  esac
else
  say "torch recipe: not run: no build/lite-sid (sid's libonnx-dev root was not tested)"
fi
