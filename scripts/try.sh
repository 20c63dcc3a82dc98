#!/usr/bin/env bash
# Try Kernel Lens in a real VS Code without installing anything into yours: sets up .e2e-cache/
# (as scripts/e2e.sh setup does), builds dist/kernel-lens.vsix, and starts code-server with the
# extension on a trusted copy of kernels/ at http://127.0.0.1:PORT. Stays in the foreground;
# Ctrl-C stops it.
#
#   scripts/try.sh                     a free port
#   KERNEL_LENS_TRY_PORT=8080 scripts/try.sh
#   KERNEL_LENS_E2E_NO_BUILD=1 scripts/try.sh   use the existing dist/kernel-lens.vsix
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
make -s setup
scripts/e2e.sh setup
if [[ "${KERNEL_LENS_E2E_NO_BUILD:-0}" != 1 ]]; then
  npm run --silent package
fi
[[ -f dist/kernel-lens.vsix ]] || { echo "try: dist/kernel-lens.vsix is missing" >&2; exit 1; }
exec env E2E_CACHE="$PWD/.e2e-cache" node tests/e2e/try.mjs
