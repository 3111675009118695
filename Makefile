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

.PHONY: venv demo test regress bench clean tables figures-satrf reference-abrf reference-abrf-derived reference-satrf reference-satrf-softmax reference-larf reference-agboost agboost-gbm-baselines
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

reference-abrf-derived: $(STAMP)
	$(BIN)/afr run configs/abrf_rf_derived.yaml --reps $(REPS)
	$(BIN)/afr run configs/abrf_ert_derived.yaml --reps $(REPS)
	$(MAKE) tables

# The SAT-RF paper's Figures 1-4 (SAT-RF-yx on the ERT): run configs/satrf_surfaces.yaml first.
figures-satrf: $(STAMP)
	for d in Sparse Friedman1 Boston Wine; do \
	  $(BIN)/afr plot surface --results results/satrf_surfaces --dataset $$d \
	    --model sat-rf-yx-tau-eps --x tau --y eps --model sat-rf-yx-kappa-gamma --x kappa --y gamma \
	    --out results/satrf/figures/$$d.png || exit 1; \
	done

reference-satrf: $(STAMP)
	$(BIN)/afr run configs/satrf_rf.yaml --reps $(REPS)
	$(BIN)/afr run configs/satrf_ert.yaml --reps $(REPS)
	$(BIN)/afr run configs/satrf_surfaces.yaml
	$(MAKE) tables figures-satrf

# The SAT-RF Softmax columns under each feature scaling, and min-max with tau = kappa = 2
# (configs/satrf_softmax_scaling.yaml; no QP, a few minutes each).
SOFTMAX_TAU2 = $(foreach i,1 2 3,--set models.$(i).params.tau=2 --set models.$(i).params.kappa=2) --set models.4.params.tau=2
reference-satrf-softmax: $(STAMP)
	for s in standard minmax none; do \
	  $(BIN)/afr run configs/satrf_softmax_scaling.yaml --set preprocess.scale=$$s --out results/satrf_softmax/$$s || exit 1; \
	done
	$(BIN)/afr run configs/satrf_softmax_scaling.yaml --set preprocess.scale=minmax $(SOFTMAX_TAU2) \
	  --out results/satrf_softmax/minmax_tau2
	$(MAKE) tables

# The committed LARF stores hold the papers' 100 repetitions (about 12 h of compute, 6-7 h on 2 cores).
LARF_REPS ?= 100
reference-larf: $(STAMP)
	$(BIN)/afr run configs/larf_rf.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_ert.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_trees.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_leave_self_out.yaml --reps 20
	$(MAKE) tables

# The AGBoost paper's Tables II-III at its 100 repetitions (configs/agboost_{dt,ert}.yaml; about 6 h
# and 8 h of compute, measured on a 2-repetition smoke run).
AGBOOST_REPS ?= 100
reference-agboost: $(STAMP)
	$(BIN)/afr run configs/agboost_dt.yaml --reps $(AGBOOST_REPS)
	$(BIN)/afr run configs/agboost_ert.yaml --reps $(AGBOOST_REPS)
	$(MAKE) tables

# Which GBM the AGBoost paper ran, from its GBM columns alone (configs/agboost_gbm_baselines.yaml;
# 10 repetitions, raw and standardised features; ~15 min on 2 cores).
agboost-gbm-baselines: $(STAMP)
	for s in none standard; do \
	  $(BIN)/afr run configs/agboost_gbm_baselines.yaml --set preprocess.scale=$$s --out results/agboost_gbm_baselines/$$s || exit 1; \
	done

# Summaries of every store and ours beside the papers' tables (afr_cli/paper/*.yaml say which), the claims
# ledgers, the READMEs' generated sections and the site results/site/:
# every stored repetition, and the papers' own 10 (their splits) into results/<report>/reps10/.
tables: $(STAMP)
	$(BIN)/afr report --html
	$(BIN)/afr report abrf satrf larf larf_trees --reps 10

# dm-soft (an extension of ours: the Decision Machines paper has no table) beside RF/ERT and
# eps-ABRF, 11 datasets, both bases, the papers' identified protocol (configs/dm_soft.yaml).
.PHONY: reference-dm
DM_REPS ?= 100
reference-dm: $(STAMP)
	$(BIN)/afr run configs/dm_soft.yaml --reps $(DM_REPS)
	$(BIN)/afr table --results results/dm_soft --std --compare eps-abrf dm-soft
