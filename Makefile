# Two set-up commands: `make demo` runs the offline quickstart experiment, `make test` runs the tests.
# Each creates .venv from the project's own files when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

.PHONY: venv demo test regress bench clean
venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/afr run configs/quickstart.yaml --out results/quickstart
	$(BIN)/afr table --results results/quickstart --std

test: $(STAMP)
	$(BIN)/python -m pytest -q

regress: $(STAMP)
	$(BIN)/afr regress

bench: $(STAMP)
	$(BIN)/afr bench qp

clean:
	rm -rf $(VENV) datasets/cache
