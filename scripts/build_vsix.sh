#!/usr/bin/env bash
# Builds dist/kernel-lens.vsix (`npm run package`) and checks what went into it.
#
#   1. esbuild bundles -> dist/extension.js, dist/webview/report.js + report.css
#   2. bundled/libs: the server's pure-Python dependencies from requirements-bundle.txt
#      (hash-checked py3-none-any wheels only) plus a copy of server/kernel_lens
#   3. bundled/kernel_lens-*.whl: the package with its dependencies declared, which the
#      extension offers to pip-install into an interpreter that lacks them (e.g. pandas)
#   4. vsce package --no-dependencies (dist/extension.js is self-contained)
#   5. checks: the VSIX's file list, and that a bare python3 imports the bundled libs
#
# Environment:
#   KERNEL_LENS_BUILD_PYTHON   interpreter with pip that builds the bundle (default .venv/bin/python)
#   KERNEL_LENS_VERIFY_PYTHON  interpreter for the import check (default python3, no pygls needed)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
BUILD_PYTHON="${KERNEL_LENS_BUILD_PYTHON:-$ROOT/.venv/bin/python}"
VERIFY_PYTHON="${KERNEL_LENS_VERIFY_PYTHON:-python3}"
VSIX="dist/kernel-lens.vsix"

step() { printf '\n== %s\n' "$*"; }
die() { printf 'build_vsix: %s\n' "$*" >&2; exit 1; }

[[ -x "$BUILD_PYTHON" ]] || die "no build interpreter at $BUILD_PYTHON (create .venv, or set KERNEL_LENS_BUILD_PYTHON)"
[[ -f server/kernel_lens/__init__.py ]] || die "server/kernel_lens/__init__.py is missing"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Copies a package tree without bytecode or build metadata.
copy_tree() {
  "$BUILD_PYTHON" - "$1" "$2" <<'PY'
import shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2],
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
PY
}

step "bundle dist/extension.js and dist/webview/"
node esbuild.mjs

step "bundled/libs from requirements-bundle.txt"
rm -rf bundled
mkdir -p bundled
# --python-version 3.10: the oldest Python the server supports; pip rejects a pin that needs newer.
# --no-compile: no __pycache__ in the VSIX (the user's interpreter writes its own, or not).
"$BUILD_PYTHON" -m pip install --quiet --disable-pip-version-check --no-compile \
  -t bundled/libs --no-deps --implementation py --python-version 3.10 \
  --only-binary=:all: --require-hashes -r requirements-bundle.txt
rm -rf bundled/libs/bin

step "bundled/libs/kernel_lens from server/kernel_lens"
copy_tree server/kernel_lens bundled/libs/kernel_lens

step "bundled/kernel_lens wheel"
# Built from a copy, so the build leaves no egg-info or build/ in the source tree.
mkdir -p "$TMP/src"
cp pyproject.toml README.md LICENSE "$TMP/src/"
copy_tree server "$TMP/src/server"
"$BUILD_PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps -w bundled "$TMP/src"
ls bundled/kernel_lens-*.whl >/dev/null || die "no kernel_lens wheel was built"

step "package $VSIX"
mkdir -p dist
rm -f "$VSIX"
# The extension page shows media/README.md (for users), not the developer README.md; its
# screenshots are media/walkthrough/*.png, linked from the repository for the marketplace.
npx --no-install vsce package --no-dependencies --out "$VSIX" \
  --readme-path media/README.md \
  --baseImagesUrl https://github.com/kernel-lens/kernel-lens/raw/HEAD/media

step "check $VSIX"
unzip -Z1 "$VSIX" >"$TMP/files.txt"
for required in \
  extension/package.json \
  extension/readme.md \
  extension/LICENSE.txt \
  extension/media/icon.png \
  extension/media/walkthrough/interpreter.md \
  extension/media/walkthrough/profile.png \
  extension/dist/extension.js \
  extension/dist/webview/report.js \
  extension/dist/webview/report.css \
  extension/bundled/libs/kernel_lens/__init__.py \
  extension/bundled/libs/pygls/__init__.py \
  extension/bundled/libs/lsprotocol/__init__.py \
  extension/bundled/libs/cattrs/__init__.py \
  extension/bundled/libs/attrs/__init__.py \
  extension/bundled/libs/typing_extensions.py; do
  grep -qxF "$required" "$TMP/files.txt" || die "$VSIX lacks $required"
done
grep -qE '^extension/bundled/kernel_lens-[^/]+\.whl$' "$TMP/files.txt" || die "$VSIX lacks the kernel_lens wheel"
if grep -E '^extension/(node_modules|server|tests|kernels|docs|benchmarks|scripts|extension|out|\.venv|\.ci)/|\.ts$|\.map$|__pycache__|\.pyc$|\.vsix$' "$TMP/files.txt"; then
  die "$VSIX contains the files above, which .vscodeignore should exclude"
fi

mkdir -p "$TMP/unzipped"
unzip -q "$VSIX" -d "$TMP/unzipped"
grep -q '^## Get started' "$TMP/unzipped/extension/readme.md" ||
  die "the VSIX's readme is not the user README (media/README.md)"
LIBS="$TMP/unzipped/extension/bundled/libs"
PYTHONPATH="$LIBS" "$VERIFY_PYTHON" - "$LIBS" <<'PY'
import os, sys
libs = os.path.realpath(sys.argv[1])
import attrs, cattrs, kernel_lens, lsprotocol, pygls
for module in (attrs, cattrs, kernel_lens, lsprotocol, pygls):
    where = os.path.realpath(module.__file__)
    assert where.startswith(libs + os.sep), f"{module.__name__} imported from {where}, not the VSIX"
print(f"bundled libs import on Python {sys.version.split()[0]} ({sys.executable})")
PY

# The server itself also needs the interpreter's own dependencies (pandas): check it with the
# build interpreter, which has them, once the server package exists.
if [[ -f "$LIBS/kernel_lens/lsp/__main__.py" ]]; then
  if PYTHONPATH="$LIBS" "$BUILD_PYTHON" -c "import kernel_lens.lsp"; then
    echo "kernel_lens.lsp imports with the bundled libs"
  else
    echo "build_vsix: WARNING: kernel_lens.lsp does not import with the bundled libs" >&2
  fi
fi

printf '\n%s: %s bytes, %s files\n' "$VSIX" "$(stat -c %s "$VSIX")" "$(wc -l <"$TMP/files.txt")"
