# Kernel Lens — the two commands of the README:
#   make run    set up, profile the bundled examples, build dist/kernel-lens.vsix
#   make test   set up, run every check and test (what .ci/run does)
#   make check  the inner loop: lint, types, the unit tests not marked slow, the TypeScript checks
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
KL := $(VENV)/bin/kernel-lens
EXAMPLES := kernels/square.py::square_three_ways kernels/square.py::square_torch \
	kernels/square.py::square_mul kernels/square.py::square_pow kernels/square.py::square_all \
	kernels/fusion.py::square_twice kernels/fusion.py::matmul_relu \
	kernels/triton_square.py::square kernels/inline_square.py::square

# pytest-xdist workers of test-py (3 on the 2-core CI machine: a test spends part of its time
# waiting on the language server or the agent it started); the tests marked `serial` bound their
# own wall time and run after, alone. `--dist loadfile` keeps a module's tests, and its
# module-scoped servers and runs, on one worker. Each pass names its 20 slowest tests;
# KERNEL_LENS_TEST_CPU=20 make test-py also lists the 20 that cost the most CPU seconds
# (docs/testing.md).
PYTEST_WORKERS ?= 3
PYTEST := $(VENV)/bin/pytest -q --timeout=900
TIMED := scripts/timed.sh
# `make test` in four phases, each timed (scripts/timed.sh): the set-up (pip, npm ci and the
# editor tests' code-server side by side); pytest's parallel pass beside lint, types and
# `npm run check` (niced); the serial pass alone (its tests bound their own wall time); the
# editor end to end alone (its steps wait a bounded time for the editor, and it is CPU-bound:
# beside pytest it failed a hover and gained nothing). docs/testing.md has the times.
SUBMAKE := $(MAKE) --no-print-directory

.PHONY: run test check setup setup-py setup-node setup-e2e profile-examples vsix lint typecheck test-py test-py-parallel test-py-unit-idle test-py-serial test-checks test-unit test-ts test-e2e try clean mutation wire

run: setup profile-examples vsix

# nvcc's PTX of a CUDA source kept for the whole of one `make test` (tests only, never the
# product's: agent/stages/inline_ext.py): the pytest tests and the editor's load_inline scenario
# compile the same square; the first to come runs nvcc (docs/testing.md). A new folder each run.
test: export KERNEL_LENS_TEST_PTX_CACHE := $(or $(KERNEL_LENS_TEST_PTX_CACHE),/tmp/kernel-lens-ptx-$(shell date +%s%N))

test:
	@$(TIMED) "make test: set-up (pip, npm ci, code-server)" $(SUBMAKE) -j3 setup-py setup-node setup-e2e
	@$(TIMED) "make test: pytest's parallel pass (not tests/unit) beside lint, types, npm run check and the .vsix" \
		$(SUBMAKE) -j2 --keep-going --output-sync=target test-py-parallel test-checks \
		PYTEST_SCOPE=--ignore=tests/unit
	@$(TIMED) "make test: pytest's serial pass, alone" $(SUBMAKE) test-py-serial
	@$(TIMED) "make test: the editor end to end, tests/unit beside it at idle priority" \
		env KERNEL_LENS_E2E_NO_BUILD=1 KERNEL_LENS_E2E_RESTRICTED_BESIDE=1 $(SUBMAKE) -j2 \
		--keep-going --output-sync=target test-py-unit-idle test-e2e

# The inner loop (README): lint, types, the unit tests not marked slow, the TypeScript checks.
check: lint typecheck test-unit test-ts

# Beside pytest's parallel pass: lint, types, the TypeScript checks and the .vsix the editor
# tests install (niced below it).
test-checks: setup
	@nice -n 10 $(SUBMAKE) lint typecheck test-ts vsix

setup: setup-py setup-node

setup-py: $(VENV)/.installed

# The server's bytecode compiled once (pip compiles what it installs, not an editable install's
# sources): every Python process of the tests, hundreds, imports kernel_lens (0.23 → 0.16 s for
# the CLI) where PYTHONDONTWRITEBYTECODE keeps Python from writing it itself.
$(VENV)/.installed: requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m compileall -q -j 0 server >/dev/null
	touch $@

setup-node: node_modules/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

profile-examples: setup-py
	@set -e; for spec in $(EXAMPLES); do \
		echo; echo "═══ kernel-lens profile $$spec"; \
		$(KL) profile $$spec -q || echo "(exit $$? — reported above)"; \
	done

vsix: setup
	npm run package
	@ls -l dist/kernel-lens.vsix

lint: setup-py
	$(VENV)/bin/ruff check server tests kernels benchmarks
	$(VENV)/bin/ruff format --check server tests kernels benchmarks

typecheck: setup-py
	$(TIMED) mypy $(VENV)/bin/mypy

test-py: test-py-parallel
	@$(SUBMAKE) test-py-serial

test-py-parallel: setup-py
	$(TIMED) "pytest -m 'not serial' $(PYTEST_SCOPE)" \
		$(PYTEST) -n $(PYTEST_WORKERS) --dist loadfile -m "not serial" --durations=20 $(PYTEST_SCOPE)

# `make test`'s tests/unit (not serial): beside the editor tests, on the CPU they leave idle
# (SCHED_IDLE: the editor's processes always come first). No unit test bounds its wall time.
IDLE := $(if $(shell command -v chrt),chrt --idle 0,nice -n 19)
test-py-unit-idle: setup-py
	$(TIMED) "pytest tests/unit -m 'not serial' (idle priority)" \
		$(IDLE) $(PYTEST) -n 2 -m "not serial" --durations=5 tests/unit

# Only the modules that mark tests serial are collected (collecting all 1690 tests to deselect
# 1673 took 13 of the pass's 85 s); a test marked otherwise than by `mark.serial` in its own
# module would need its module named here.
SERIAL_MODULES = $(shell grep -rl --include='test_*.py' 'mark\.serial' tests | sort)
test-py-serial: setup-py
	$(TIMED) "pytest -m serial" $(PYTEST) -m serial --durations=5 $(SERIAL_MODULES)

test-unit: setup-py
	$(VENV)/bin/pytest -q --timeout=300 -n 2 -m "not slow and not serial and not gpu" tests/unit

test-ts: setup-node
	$(TIMED) "npm run check" npm run check

# extension/generated/wire.ts from server/kernel_lens/wire/ (test-py fails while it is stale).
wire: setup-py
	$(PY) scripts/gen_wire.py

# The editor end to end: the .vsix in a real VS Code (code-server) driven by Chromium.
test-e2e: setup
	$(TIMED) "scripts/e2e.sh test" scripts/e2e.sh test

# The editor tests' Debian packages and code-server (.e2e-cache/, kept while its stamp matches).
setup-e2e:
	$(TIMED) "scripts/e2e.sh setup" scripts/e2e.sh setup

# Mutation testing of the core modules against tests/unit (slow: not part of `make test`);
# the report lands in $KL_MUTATION_DIR (default /tmp/kernel-lens-mutation); docs/testing.md has a run.
# MODULES=analysis/names.py limits it to some modules; PLANTED=1 runs the hand-planted bugs.
mutation: setup-py
	nice -n 10 $(PY) scripts/mutation.py $(if $(PLANTED),--planted) $(MODULES)

# For people: the same code-server with the extension on kernels/, URL printed.
try:
	scripts/try.sh

clean:
	rm -rf $(VENV) node_modules dist bundled
