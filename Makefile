# kernlearn: `make run` (quick end-to-end run, no download) and `make test` set everything up.
PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
KL      := $(VENV)/bin/kernlearn
# Offline data: use the shared mirror when it sits beside the clone (CI and this workplace).
MIRROR  := $(abspath $(CURDIR)/../shared/datasets)
ifneq ($(wildcard $(MIRROR)/MANIFEST.json),)
export KERNLEARN_DATA_MIRROR ?= $(MIRROR)
endif
KULIS   := configs/papers/kulis2006

.PHONY: install run test bench kulis2006 kulis2006-fig1 kulis2006-fig2 reproduce reproduce-quick slurm-test clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

run: install                      ## quick Burg run on iris (bundled with scikit-learn)
	$(KL) run configs/quick.yaml

test: install                     ## the test suite
	$(PY) -m pytest

bench: install                    ## Burg projections/s vs a NumPy loop; --jobs 2 vs --jobs 1
	$(PY) benchmarks/bench_burg.py
	$(PY) benchmarks/bench_jobs.py

# ---- reproduction: one target per paper table/figure ------------------------------------
# `make reproduce` runs everything with the configs' seeds, writes tables (CSV, Markdown,
# LaTeX) to results/tables/ and figures to results/figures/, and fills README.md's tables;
# `make reproduce-quick` runs 3 seeds into results/quick/ and leaves README.md alone.
SEEDS    ?=
RESULTS  ?= results
README   ?= README.md
JOBS     ?= 2
RUN       = $(KL) run --jobs $(JOBS) $(if $(SEEDS),--set "grid.seed=$(SEEDS)")
fill      = $(if $(README),--into $(README) --marker $(1))
K06      := $(RESULTS)/kulis2006
TABLES   := $(RESULTS)/tables
FIGS     := $(RESULTS)/figures

kulis2006-fig1: install           ## Digits, rank 16: NMI and 5-NN accuracy vs constraints (Burg half of Fig. 1)
	$(RUN) $(KULIS)/fig1_digits_initial.yaml --out $(K06)/fig1_digits_initial
	$(RUN) $(KULIS)/fig1_digits_burg.yaml --out $(K06)/fig1_digits_burg
	$(KL) collect $(K06)/fig1_digits_initial --prefix $(TABLES)/kulis2006_fig1_digits_initial \
	  $(call fill,kulis2006-fig1-initial)
	$(KL) collect $(K06)/fig1_digits_burg --prefix $(TABLES)/kulis2006_fig1_digits_burg $(call fill,kulis2006-fig1)
	$(KL) plot $(K06)/fig1_digits_burg $(K06)/fig1_digits_initial -m nmi -o $(FIGS)/kulis2006_fig1_nmi.png \
	  --title "Digits, rank 16: kernel k-means NMI (Burg)"

kulis2006-fig2: install           ## GyrB protocol (Fig. 2) on the soybean_small and wine RBF targets
	for ds in soybean_small wine; do \
	  $(RUN) $(KULIS)/fig2_$${ds}_target.yaml --out $(K06)/fig2_$${ds}_target && \
	  $(RUN) $(KULIS)/fig2_$${ds}_burg.yaml --out $(K06)/fig2_$${ds}_burg && \
	  $(KL) plot $(K06)/fig2_$${ds}_burg $(K06)/fig2_$${ds}_target -m knn_accuracy \
	    -o $(FIGS)/kulis2006_fig2_$${ds}.png --title "$$ds RBF target: 5-NN accuracy (Burg)" || exit 1; done
	$(KL) collect $(K06)/fig2_soybean_small_burg $(K06)/fig2_wine_burg -m knn_accuracy --rows constraints.count \
	  --cols dataset --prefix $(TABLES)/kulis2006_fig2_accuracy $(call fill,kulis2006-fig2-accuracy)
	$(KL) collect $(K06)/fig2_soybean_small_burg $(K06)/fig2_wine_burg -m iterations --agg max \
	  --rows constraints.count --cols dataset --prefix $(TABLES)/kulis2006_fig2_sweeps_max \
	  $(call fill,kulis2006-fig2-sweeps)
	$(KL) collect $(K06)/fig2_soybean_small_target $(K06)/fig2_wine_target -m knn_accuracy --rows kernel \
	  --cols dataset --prefix $(TABLES)/kulis2006_fig2_baselines $(call fill,kulis2006-fig2-baselines)

kulis2006: kulis2006-fig1 kulis2006-fig2

reproduce: kulis2006              ## every paper target

reproduce-quick:                  ## the same with 3 seeds, into results/quick (README untouched)
	$(MAKE) reproduce SEEDS='range(3)' RESULTS=results/quick README=

slurm-test: install               ## the real SLURM job-array test (starts a one-node cluster; root)
	$(PY) -m pytest tests/test_slurm.py -v

clean:
	rm -rf $(VENV) .pytest_cache
