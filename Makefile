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

.PHONY: install run test bench kulis2006 kulis2006-fig1 kulis2006-fig2 clean

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

bench: install                    ## projections per second, compiled vs NumPy loop
	$(PY) benchmarks/bench_burg.py

kulis2006-fig1: install           ## Digits, rank 16: NMI / 5-NN accuracy vs constraints (Burg)
	$(KL) run $(KULIS)/fig1_digits_initial.yaml
	$(KL) run $(KULIS)/fig1_digits_burg.yaml

kulis2006-fig2: install           ## GyrB protocol on the soybean_small and wine RBF targets
	for ds in soybean_small wine; do \
	  $(KL) run $(KULIS)/fig2_$${ds}_target.yaml && $(KL) run $(KULIS)/fig2_$${ds}_burg.yaml || exit 1; done

kulis2006: kulis2006-fig1 kulis2006-fig2

clean:
	rm -rf $(VENV) .pytest_cache
