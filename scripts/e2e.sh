#!/usr/bin/env bash
# Editor end-to-end tests: the packaged .vsix in a real VS Code (code-server from npm), driven by
# Playwright in Debian's Chromium. See tests/e2e/README.md and shared notes/vscode-e2e.md.
#
#   scripts/e2e.sh setup   Debian packages (skipped when present), then code-server and
#                          playwright-core into .e2e-cache/ (git-ignored, own package.json;
#                          reused while its stamp matches)
#   scripts/e2e.sh test    setup, build dist/kernel-lens.vsix (npm run package), run the scenarios
#                          in tests/e2e/ against a private code-server on 127.0.0.1
#
# Environment:
#   KERNEL_LENS_E2E_OUT       folder for screenshots and logs (default: a new folder under $TMPDIR)
#   KERNEL_LENS_E2E_PYTHON    interpreter for kernelLens.python (default .venv/bin/python)
#   KERNEL_LENS_E2E_NO_BUILD  1: test the existing dist/kernel-lens.vsix without rebuilding it
#   KERNEL_LENS_E2E_HEADED    1: show the browser (needs a display)
#   KERNEL_LENS_E2E_RESTRICTED_BESIDE  1: the Restricted Mode run beside the main run (default: after)
#                          it (it runs after it anyway when KERNEL_LENS_E2E_SCENARIOS is set)
#   KERNEL_LENS_TEST_PTX_CACHE  where nvcc's PTX of a CUDA source is kept (tests only; default: a
#                          folder of this run, so that the two scenarios that compile the
#                          load_inline square run nvcc once; `make test` shares pytest's; 0: off)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
CACHE="$ROOT/.e2e-cache"
MANIFEST="$ROOT/tests/e2e/cache-package.json"
LOCK="$ROOT/tests/e2e/cache-package-lock.json"
APT_PACKAGES=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config)
# @vscode/ripgrep (a code-server dependency) downloads rg from GitHub unless this archive is cached.
RG_VERSION="v13.0.0-10"
RG_CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
# The whole test run, code-server start-up included (the scenarios bound each step themselves).
RUN_LIMIT_S=900
# The Restricted Mode run (tests/e2e/restricted.mjs), its own code-server.
RESTRICTED_LIMIT_S=600

log() { printf '[e2e] %s\n' "$*"; }
die() { printf '[e2e] error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    die "need root (or sudo) for: $*"
  fi
}

apt_setup() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  # code-server's native modules are compiled at install time.
  for tool in g++ make python3; do
    command -v "$tool" >/dev/null || { missing+=(build-essential python3); break; }
  done
  if ((${#missing[@]} == 0)); then
    log "Debian packages present"
    return
  fi
  log "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

rg_target() {
  case "$(uname -m)" in
    x86_64) echo x86_64-unknown-linux-musl ;;
    aarch64) echo aarch64-unknown-linux-musl ;;
    *) die "no ripgrep target for $(uname -m)" ;;
  esac
}

ripgrep_cache() {
  local archive
  archive="$RG_CACHE/ripgrep-$RG_VERSION-$(rg_target).tar.gz"
  [[ -s "$archive" ]] && return
  local rg
  rg="$(command -v rg)" || die "rg not found (Debian package ripgrep)"
  mkdir -p "$RG_CACHE"
  local tmp
  tmp="$(mktemp -d)"
  cp "$rg" "$tmp/rg"
  tar -C "$tmp" -czf "$archive.partial" rg
  mv "$archive.partial" "$archive"
  rm -rf "$tmp"
  log "ripgrep cache: $archive (from $rg)"
}

stamp_value() {
  {
    cat "$MANIFEST"
    [[ -f "$LOCK" ]] && cat "$LOCK"
    node --version
    uname -m
  } | sha256sum | cut -d' ' -f1
}

npm_setup() {
  command -v node >/dev/null || die "node not found (Node 20 is needed)"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [[ "$major" == 20 ]] || log "warning: Node $major; code-server 4.100.3 wants Node 20"
  local want
  want="$(stamp_value)"
  if [[ -f "$CACHE/.stamp" && "$(cat "$CACHE/.stamp")" == "$want" && -x "$CACHE/node_modules/.bin/code-server" ]]; then
    log "cache up to date: $CACHE"
    return
  fi
  ripgrep_cache
  log "installing code-server and playwright-core into $CACHE (1-3 minutes)"
  rm -rf "$CACHE/node_modules" "$CACHE/.stamp"
  mkdir -p "$CACHE"
  cp "$MANIFEST" "$CACHE/package.json"
  local npm_cmd=(install)
  if [[ -f "$LOCK" ]]; then
    cp "$LOCK" "$CACHE/package-lock.json"
    npm_cmd=(ci)
  fi
  # code-server's postinstall refuses root without unsafe_perm and runs `npx node-gyp`, which
  # prompts unless npm_config_yes is set.
  (cd "$CACHE" && npm_config_unsafe_perm=true npm_config_yes=true \
    npm "${npm_cmd[@]}" --no-audit --no-fund --loglevel=error)
  # Keep the resolved tree for the next machine (the lock is committed next to the manifest).
  [[ -f "$LOCK" ]] || cp "$CACHE/package-lock.json" "$LOCK"
  "$CACHE/node_modules/.bin/code-server" --version >/dev/null || die "code-server does not start"
  (cd "$CACHE" && node -e 'require("playwright-core")') || die "playwright-core does not load"
  stamp_value >"$CACHE/.stamp"
  log "cache ready: $CACHE"
}

setup() {
  apt_setup
  npm_setup
}

run_tests() {
  local out="${KERNEL_LENS_E2E_OUT:-}"
  [[ -n "$out" ]] || out="$(mktemp -d "${TMPDIR:-/tmp}/kernel-lens-e2e-XXXXXX")"
  mkdir -p "$out"
  log "screenshots and logs: $out"
  setup
  if [[ "${KERNEL_LENS_E2E_NO_BUILD:-0}" != 1 ]]; then
    log "building dist/kernel-lens.vsix (npm run package > $out/build.log)"
    if ! npm run --silent package >"$out/build.log" 2>&1; then
      tail -n 40 "$out/build.log" >&2
      die "npm run package failed (full log: $out/build.log)"
    fi
  fi
  [[ -f dist/kernel-lens.vsix ]] || die "dist/kernel-lens.vsix is missing"
  local code=0 restricted=0 beside=""
  if [[ "${KERNEL_LENS_TEST_PTX_CACHE:-}" == 0 ]]; then
    unset KERNEL_LENS_TEST_PTX_CACHE # off: every scenario runs nvcc itself
  else
    export KERNEL_LENS_TEST_PTX_CACHE="${KERNEL_LENS_TEST_PTX_CACHE:-$out/ptx-cache}"
  fi
  # A second code-server on a hostile workspace that is never trusted (issue 45), after the main
  # run (its own port, workspace and profile). Beside it (KERNEL_LENS_E2E_RESTRICTED_BESIDE=1)
  # saves a minute, but scenario 93's after-reload check failed once there on a fresh clone.
  run_restricted() {
    E2E_CACHE="$CACHE" KERNEL_LENS_E2E_OUT="$out" \
      timeout --kill-after=30 "$RESTRICTED_LIMIT_S" node tests/e2e/restricted.mjs
  }
  if [[ "${KERNEL_LENS_E2E_RESTRICTED_BESIDE:-0}" == 1 && -z "${KERNEL_LENS_E2E_SCENARIOS:-}" ]]; then
    run_restricted >"$out/restricted-run.log" 2>&1 &
    beside=$!
  fi
  E2E_CACHE="$CACHE" KERNEL_LENS_E2E_OUT="$out" \
    timeout --kill-after=30 "$RUN_LIMIT_S" node tests/e2e/run.mjs || code=$?
  ((code == 124)) && log "the run passed its limit of $RUN_LIMIT_S s (output: $out)"
  if [[ -n "$beside" ]]; then
    wait "$beside" || restricted=$?
    cat "$out/restricted-run.log"
  else
    run_restricted || restricted=$?
  fi
  ((restricted == 124)) && log "the Restricted Mode run passed its limit of $RESTRICTED_LIMIT_S s"
  if ((code != 0)); then
    # Again at the end (the Restricted Mode run's output came after it): a log's tail names them.
    [[ -s "$out/main-failures.txt" ]] && cat "$out/main-failures.txt"
    log "the main run failed (exit $code); its log and screenshots: $out"
    return "$code"
  fi
  return "$restricted"
}

case "${1:-}" in
  setup) setup ;;
  test) run_tests ;;
  *)
    echo "usage: scripts/e2e.sh setup|test" >&2
    exit 2
    ;;
esac
