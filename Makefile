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

.PHONY: venv demo test test-fast lock regress bench clean tables figures-satrf reference-abrf reference-abrf-derived reference-satrf reference-satrf-softmax reference-larf reference-agboost agboost-gbm-baselines fidelity-preprocessing
.PHONY: runs-abrf runs-abrf-derived runs-satrf runs-satrf-softmax runs-larf runs-agboost reproduce
.PHONY: runs-robust reference-robust figures-robust runs-robust-all
venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/afr run configs/quickstart.yaml --out results/quickstart --fresh --yes
	$(BIN)/afr table --results results/quickstart --std

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The tests without the end-to-end runs and subprocess corpora (@pytest.mark.slow): for development.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

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

# Reference runs (resumable: rerun to continue) and the tables committed from them.
# Each reference-X target is runs-X (the experiments, resumable) followed by the tables.
# eps-ABRF: the committed stores hold the papers' 100 repetitions, solved by auto (~6 min each on 2 cores).
ABRF_REPS ?= 100
reference-abrf: runs-abrf
	$(MAKE) tables
runs-abrf: $(STAMP)
	$(BIN)/afr run configs/abrf_rf.yaml --reps $(ABRF_REPS)
	$(BIN)/afr run configs/abrf_ert.yaml --reps $(ABRF_REPS)

reference-abrf-derived: runs-abrf-derived
	$(MAKE) tables
runs-abrf-derived: $(STAMP)
	$(BIN)/afr run configs/abrf_rf_derived.yaml --reps $(ABRF_REPS)
	$(BIN)/afr run configs/abrf_ert_derived.yaml --reps $(ABRF_REPS)

# The SAT-RF paper's Figures 1-4 (SAT-RF-yx on the ERT): run configs/satrf_surfaces.yaml first.
figures-satrf: $(STAMP)
	for d in Sparse Friedman1 Boston Wine; do \
	  $(BIN)/afr plot surface --results results/satrf_surfaces --dataset $$d \
	    --model sat-rf-yx-tau-eps --x tau --y eps --model sat-rf-yx-kappa-gamma --x kappa --y gamma \
	    --out results/satrf/figures/$$d.png || exit 1; \
	done

reference-satrf: runs-satrf
	$(MAKE) tables figures-satrf
# The committed SAT-RF stores hold the papers' 100 repetitions, solved by auto (`afr status`).
SATRF_REPS ?= 100
runs-satrf: $(STAMP)
	$(BIN)/afr run configs/satrf_rf.yaml --reps $(SATRF_REPS)
	$(BIN)/afr run configs/satrf_ert.yaml --reps $(SATRF_REPS)
	$(BIN)/afr run configs/satrf_surfaces.yaml --reps $(SATRF_REPS)

# The SAT-RF Softmax columns under each feature scaling, and min-max with tau = kappa = 2
# (configs/satrf_softmax_scaling.yaml; no QP, a few minutes each).
SOFTMAX_TAU2 = $(foreach i,1 2 3,--set models.$(i).params.tau=2 --set models.$(i).params.kappa=2) --set models.4.params.tau=2
reference-satrf-softmax: runs-satrf-softmax
	$(MAKE) tables
runs-satrf-softmax: $(STAMP)
	for s in standard minmax none; do \
	  $(BIN)/afr run configs/satrf_softmax_scaling.yaml --set preprocess.scale=$$s --out results/satrf_softmax/$$s || exit 1; \
	done
	$(BIN)/afr run configs/satrf_softmax_scaling.yaml --set preprocess.scale=minmax $(SOFTMAX_TAU2) \
	  --out results/satrf_softmax/minmax_tau2

# The committed LARF stores hold the papers' 100 repetitions, solved by auto (`afr status`).
LARF_REPS ?= 100
reference-larf: runs-larf
	$(MAKE) tables
runs-larf: $(STAMP)
	$(BIN)/afr run configs/larf_rf.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_ert.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_trees.yaml --reps $(LARF_REPS)
	$(BIN)/afr run configs/larf_leave_self_out.yaml --reps $(LARF_REPS)

# Every reference experiment at the papers' 100 repetitions, then every table, figure and report;
# ends with the wall time per step in results/README.md (afr_cli/timed_steps.py). Resumable: rerun
# after an interruption and each step computes only what its store lacks. A new family's
# experiment (AGBoost, robust RF, ...) adds one "NAME=COMMAND" step here, before the tables.
# The steps say `make`, not $(MAKE): a line naming $(MAKE) runs even under `make -n`.
REPRODUCE_REPS ?= 100
reproduce: $(STAMP)
	$(BIN)/python -m afr_cli.timed_steps --write results/README.md \
	  "eps-ABRF (RF, ERT)=make runs-abrf ABRF_REPS=$(REPRODUCE_REPS)" \
	  "eps-ABRF, derived seeds (RF, ERT)=make runs-abrf-derived ABRF_REPS=$(REPRODUCE_REPS)" \
	  "SAT-RF (RF, ERT, surfaces)=make runs-satrf SATRF_REPS=$(REPRODUCE_REPS)" \
	  "SAT-RF Softmax scalings=make runs-satrf-softmax" \
	  "LARF (RF, ERT, trees, leave-self-out)=make runs-larf LARF_REPS=$(REPRODUCE_REPS)" \
	  "AGBoost (DT, ERT)=make runs-agboost AGBOOST_REPS=$(REPRODUCE_REPS)" \
	  "Decision Machines, dm-soft (RF, ERT)=$(BIN)/afr run configs/dm_soft.yaml --reps $(REPRODUCE_REPS)" \
	  "Robust RF (Boston, Diabetes)=make runs-robust ROBUST_REPS=$(REPRODUCE_REPS)" \
	  "Robust RF, 11 datasets ($(ROBUST_ALL_REPS) repetitions)=make runs-robust-all" \
	  "tables, figures, reports=make tables tables-dm figures-satrf figures-robust ROBUST_REPS=$(REPRODUCE_REPS)"

# The AGBoost paper's Tables II-III at its 100 repetitions (configs/agboost_{dt,ert}.yaml; 79 and
# 59 min of compute under solver auto, `afr status`).
AGBOOST_REPS ?= 100
runs-agboost: $(STAMP)
	$(BIN)/afr run configs/agboost_dt.yaml --reps $(AGBOOST_REPS)
	$(BIN)/afr run configs/agboost_ert.yaml --reps $(AGBOOST_REPS)
reference-agboost: runs-agboost
	$(MAKE) tables

# Which GBM the AGBoost paper ran, from its GBM columns alone (configs/agboost_gbm_baselines.yaml;
# 10 repetitions, raw and standardised features; ~15 min on 2 cores).
agboost-gbm-baselines: $(STAMP)
	for s in none standard; do \
	  $(BIN)/afr run configs/agboost_gbm_baselines.yaml --set preprocess.scale=$$s --out results/agboost_gbm_baselines/$$s || exit 1; \
	done

# The robust-RF paper: Table I (Boston) and Figures 1-2 (Diabetes) at the paper's 100 repetitions
# (7,200 units at about 0.9 s of CPU each unloaded: ~2 h of CPU). The committed stores hold 10:
# `make figures-robust ROBUST_REPS=10` redraws from them.
ROBUST_REPS ?= 100
runs-robust: $(STAMP)
	$(BIN)/afr run configs/robust_rf_boston.yaml --reps $(ROBUST_REPS)
	$(BIN)/afr run configs/robust_rf_diabetes.yaml --reps $(ROBUST_REPS)
reference-robust: runs-robust
	$(MAKE) figures-robust

# Beyond the paper: Table I's experiment on all 11 datasets (configs/robust_rf_all.yaml; 39,600 units
# at 100 repetitions, about 11 times Table I). The committed store holds ROBUST_ALL_REPS = 10.
ROBUST_ALL_REPS ?= 10
runs-robust-all: $(STAMP)
	$(BIN)/afr run configs/robust_rf_all.yaml --reps $(ROBUST_ALL_REPS)
	$(BIN)/afr table --results results/robust_rf_all --metric rmse --reps $(ROBUST_ALL_REPS) \
	  > results/robust_rf/all-datasets-stored.md
	$(BIN)/afr table --results results/robust_rf_all --metric rmse --reps $(ROBUST_ALL_REPS) --selection best-test \
	  > results/robust_rf/all-datasets-best-test.md

ROBUST_FIG := results/robust_rf/figures
figures-robust: $(STAMP)
	for eta in 0 0.5; do \
	  for base in RF RF-msl1; do \
	    $(BIN)/afr plot curve --results results/robust_rf_diabetes --dataset Diabetes --base $$base --noise-eta $$eta \
	      --reps $(ROBUST_REPS) --model rf --model robust-rf-a0.002 --out $(ROBUST_FIG)/diabetes_$${base}_eta$$eta.png || exit 1; \
	    $(BIN)/afr plot curve --results results/robust_rf_boston --dataset Boston --base $$base --noise-eta $$eta \
	      --reps $(ROBUST_REPS) --model rf --model robust-rf-a0.2 --model robust-rf-a0.05 \
	      --out $(ROBUST_FIG)/boston_$${base}_eta$$eta.png || exit 1; \
	  done; \
	done
	for sel in stored best-test; do \
	  $(BIN)/afr table --results results/robust_rf_boston --paper robust_rf:I --reps $(ROBUST_REPS) --selection $$sel \
	    > results/robust_rf/table-I-$$sel.md || exit 1; \
	  $(BIN)/afr table --results results/robust_rf_boston --results results/robust_rf_diabetes --metric rmse \
	    --reps $(ROBUST_REPS) --selection $$sel > results/robust_rf/summary-$$sel.md || exit 1; \
	done

# Summaries of every store and ours beside the papers' tables (afr_cli/paper/*.yaml say which), the claims
# ledgers, the READMEs' generated sections and the site results/site/:
# every stored repetition, and the papers' own 10 (their splits) into results/<report>/reps10/.
tables: $(STAMP)
	$(BIN)/afr report --html
	$(BIN)/afr report abrf satrf larf larf_trees agboost robust_rf --reps 10

# dm-soft (an extension of ours: the Decision Machines paper has no table) beside RF/ERT and
# eps-ABRF, 11 datasets, both bases, the papers' identified protocol (configs/dm_soft.yaml).
.PHONY: reference-dm
DM_REPS ?= 100
reference-dm: $(STAMP)
	$(BIN)/afr run configs/dm_soft.yaml --reps $(DM_REPS)
	$(MAKE) tables-dm
# dm-soft's summary and its comparisons with the forest and eps-ABRF, from the store or its export.
.PHONY: tables-dm
tables-dm: $(STAMP)
	$(BIN)/afr table --results results/dm_soft --std > results/dm_soft/summary.md
	( $(BIN)/afr table --results results/dm_soft --compare forest dm-soft && echo && \
	  $(BIN)/afr table --results results/dm_soft --compare eps-abrf dm-soft ) > results/dm_soft/compare.md

# Which feature preprocessing do the papers' plain RF/ERT columns imply (issue 15)? Forests only,
# every candidate (results/fidelity/preprocessing.md, about 2 min of CPU; the 400-1000-tree
# supplement about 20 min), then the LARF paper's RF models on raw features for four datasets
# beside the committed standardised store (results/fidelity/README.md; 44 min on two loaded cores).
fidelity-preprocessing: $(STAMP)
	$(BIN)/afr fidelity preprocessing
	$(BIN)/afr fidelity preprocessing --study configs/fidelity/preprocessing_trees.yaml --name preprocessing_trees
	$(BIN)/afr run configs/larf_rf.yaml --set preprocess.scale=none --reps 10 \
	  --datasets Friedman3,Sparse,Friedman1,Airfoil --out results/fidelity/larf_rf_none
