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

.PHONY: install run test test-fast lint bench certified kulis2006 tsuda2005 hu2013 zhang2012 li2009 reproduce reproduce-quick slurm-test clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

run: install                      ## quick Burg run on iris (bundled with scikit-learn)
	$(KL) run configs/quick.yaml

test: install                     ## before committing: the whole suite, two test files at a time (pytest-xdist)
	$(PY) -m pytest -n 2 --dist loadfile

test-fast: install                ## while working: the tests not marked slow (about a minute once `kernlearn warmup` compiled), importing every module
	$(PY) -m pytest -n 2 --dist loadfile -m "not slow" --every-module

lint: install                     ## ruff (the rules are in pyproject.toml)
	$(PY) -m ruff check kernlearn_cli tests benchmarks configs

bench: install                    ## Burg vs a NumPy loop; von Neumann vs Burg; --jobs 2 vs --jobs 1; KL_ADMM; Nystrom; TRIN; certificates; every family vs n (quick)
	$(PY) benchmarks/speed/bench_burg.py
	$(PY) benchmarks/speed/bench_von_neumann.py
	$(PY) benchmarks/profiles/profile_von_neumann.py
	$(PY) benchmarks/speed/bench_jobs.py
	$(PY) benchmarks/scale/bench_admm.py
	$(PY) benchmarks/scale/bench_nystrom.py
	$(PY) benchmarks/speed/bench_trin.py --datasets sonar,heart,wine --alphas 16,0
	$(PY) benchmarks/speed/bench_trin_spambase.py
	$(PY) benchmarks/speed/bench_certificate.py
	$(PY) benchmarks/speed/bench_startup.py
	$(PY) benchmarks/scale/bench_scale.py --quick

certified: install                ## converged means feasible and optimal: Digits sets across the feasibility boundary, nystrom_prior at small lambda
	$(PY) benchmarks/checks/certified_digits.py
	$(PY) benchmarks/checks/nystrom_prior_certified.py

# ---- reproduction: one line per paper; the studies (configs/papers/<paper>/study.yaml) say what runs -----
# `make reproduce` runs every study, writes tables (CSV, Markdown, LaTeX) to results/tables/, figures to
# results/figures/, the verdict per paper number, docs/papers/<paper>.md and README.md's status table;
# `make reproduce-quick` runs the studies' quick settings into results/quick/. Both resume.
JOBS ?= 2

kulis2006 tsuda2005 hu2013 zhang2012 li2009: install   ## one paper: kernlearn reproduce PAPER
	$(KL) reproduce $@ --jobs $(JOBS)

reproduce: install                ## every paper
	$(KL) reproduce all --jobs $(JOBS)

reproduce-quick: install          ## every paper, quick settings (minutes), into results/quick/
	$(KL) reproduce all --quick --jobs $(JOBS)

slurm-test: install               ## the real SLURM job-array test (starts a one-node cluster; root)
	$(PY) -m pytest tests/test_slurm.py -v

clean:
	rm -rf $(VENV) .pytest_cache
