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

.PHONY: venv demo test regress bench clean tables reference-abrf reference-satrf reference-larf
venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/afr run configs/quickstart.yaml --out results/quickstart --fresh
	$(BIN)/afr table --results results/quickstart --std

test: $(STAMP)
	$(BIN)/python -m pytest -q

regress: $(STAMP)
	$(BIN)/afr regress

bench: $(STAMP)
	$(BIN)/afr bench qp

clean:
	rm -rf $(VENV) datasets/cache

# Reference runs (hours on 2 cores; resumable: rerun to continue) and the tables committed from them.
REPS ?= 20
reference-abrf: $(STAMP)
	$(BIN)/afr run configs/abrf_rf.yaml --reps $(REPS)
	$(BIN)/afr run configs/abrf_ert.yaml --reps $(REPS)
	$(MAKE) tables

reference-satrf: $(STAMP)
	$(BIN)/afr run configs/satrf_rf.yaml --reps $(REPS)
	$(BIN)/afr run configs/satrf_ert.yaml --reps $(REPS)
	$(MAKE) tables

reference-larf: $(STAMP)
	$(BIN)/afr run configs/larf_rf.yaml --reps $(REPS)
	$(BIN)/afr run configs/larf_ert.yaml --reps $(REPS)
	$(BIN)/afr run configs/larf_trees.yaml --reps $(REPS)
	$(MAKE) tables

# Summary tables of every store under results/, and ours beside the papers where both bases exist.
tables: $(STAMP)
	@for d in results/*/; do \
	  [ -f $$d/store.sqlite ] || continue; \
	  $(BIN)/afr table --results $$d --format csv > $$d/summary.csv; \
	  $(BIN)/afr table --results $$d --std > $$d/summary.md; \
	  $(BIN)/afr table --results $$d --metric mae --std >> $$d/summary.md; \
	  echo "wrote $$d/summary.csv and $$d/summary.md"; \
	done
	@if [ -f results/abrf_rf/store.sqlite ] && [ -f results/abrf_ert/store.sqlite ]; then \
	  for t in satrf:9 larf:10 larf:3 larf:5; do \
	    f=results/abrf/paper-$$(echo $$t | tr : -).md; mkdir -p results/abrf; \
	    $(BIN)/afr table --results results/abrf_rf --results results/abrf_ert --paper $$t > $$f; \
	    $(BIN)/afr table --results results/abrf_rf --results results/abrf_ert --paper $$t --format csv > $${f%.md}.csv; \
	    echo "wrote $$f"; \
	  done; \
	fi

