# Two set-up commands: `make demo` runs the offline quickstart experiment, `make test` runs the tests.
# Each creates .venv from the project's own files when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Installs the exact versions of requirements.lock (pyproject.toml keeps loose lower bounds for
# users who install afr into their own environment); `make lock` regenerates the lock.
LOCK := requirements.lock
$(STAMP): pyproject.toml $(LOCK)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(LOCK) -e '.[test]'
	touch $(STAMP)

.PHONY: venv demo test test-fast lock regress bench clean reproduce
venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/afr run configs/quickstart.yaml --out results/quickstart --fresh --yes
	$(BIN)/afr table --results results/quickstart --std

# pytest-xdist: one worker per core (-n auto), each test file whole on one worker (--dist loadfile:
# a file's module-scoped fixtures, the corpora's fork-server batches and scratch roots, are built once).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

# The tests without the end-to-end runs and subprocess corpora (@pytest.mark.slow): for development.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not slow"

# Regenerate requirements.lock: install pyproject.toml's dependencies (newest allowed versions)
# into a fresh temporary venv and freeze it, without afr itself. Commit the result.
lock:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PY) -m venv "$$tmp" && \
	"$$tmp/bin/pip" install --quiet --upgrade pip && \
	"$$tmp/bin/pip" install --quiet -e '.[test]' && \
	{ echo "# Exact versions behind \`make\` (pip install -c $(LOCK)). Regenerate: make lock"; \
	  echo "# Python $$("$$tmp/bin/python" -c 'import platform; print(platform.python_version(), platform.system(), platform.machine())')"; \
	  "$$tmp/bin/pip" freeze --exclude-editable | grep -iv '^afr=='; } > $(LOCK).tmp && \
	mv $(LOCK).tmp $(LOCK) && echo "wrote $(LOCK) ($$(grep -vc '^#' $(LOCK)) packages)"

regress: $(STAMP)
	$(BIN)/afr regress

bench: $(STAMP)
	$(BIN)/afr bench qp

clean:
	rm -rf $(VENV) datasets/cache

# Every paper, from its folder (afr_cli/papers/<id>/paper.yaml: the experiments it needs at their
# repetition counts, its figures and extra tables): plans, runs what the stores lack (resumable:
# rerun after an interruption), draws the figures, rebuilds tables, claims, pages and the site, and
# writes the wall time per step into results/README.md. One paper: `afr reproduce PAPER`; what it
# would run, without running it: `afr reproduce --all --plan`. `make reproduce REPS=10`: 10 each.
reproduce: $(STAMP)
	$(BIN)/afr reproduce --all $(if $(REPS),--reps $(REPS))
