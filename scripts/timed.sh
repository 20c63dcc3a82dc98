#!/usr/bin/env bash
# scripts/timed.sh NAME COMMAND...: run COMMAND, then say how long it took on stderr
# ("[time] NAME: 612.3 s wall, 1012.5 s user, 140.2 s sys": user and system CPU seconds of
# COMMAND and every process it waited for). The exit status is COMMAND's. `make test` times
# its phases with it (docs/testing.md).
set -uo pipefail
name="$1"
shift
TIMEFORMAT="[time] $name: %R s wall, %U s user, %S s sys"
time "$@"
