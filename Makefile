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

.PHONY: install run test bench certified kulis2006 kulis2006-fig1 kulis2006-fig2 kulis2006-fig2-vn kulis2006-gyrb-protocol tsuda2005 tsuda2005-fig2 tsuda2005-fig3 hu2013 hu2013-table2 hu2013-sdp-check zhang2012-compare zhang2012-fig1 zhang2012 li2009 li2009-table3 li2009-table3-absolute li2009-stop-rules li2009-table5 li2009-uspst reproduce reproduce-quick slurm-test clean

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

bench: install                    ## Burg vs a NumPy loop; von Neumann vs Burg; --jobs 2 vs --jobs 1; KL_ADMM; Nystrom; TRIN; certificates
	$(PY) benchmarks/bench_burg.py
	$(PY) benchmarks/bench_von_neumann.py
	$(PY) benchmarks/bench_jobs.py
	$(PY) benchmarks/bench_admm.py
	$(PY) benchmarks/bench_nystrom.py
	$(PY) benchmarks/bench_trin.py --datasets sonar,heart,wine --alphas 16,0
	$(PY) benchmarks/bench_trin_spambase.py
	$(PY) benchmarks/bench_certificate.py

certified: install                ## converged means feasible and optimal: Digits sets across the feasibility boundary, nystrom_prior at small lambda
	$(PY) benchmarks/certified_digits.py
	$(PY) benchmarks/nystrom_prior_certified.py

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
T05      := $(RESULTS)/tsuda2005
TSUDA    := configs/papers/tsuda2005
H13      := $(RESULTS)/hu2013
Z12      := $(RESULTS)/zhang2012
LI       := configs/papers/li2009
L09      := $(RESULTS)/li2009
HU       := configs/papers/hu2013
TABLES   := $(RESULTS)/tables
FIGS     := $(RESULTS)/figures

kulis2006-fig1: install           ## Digits, rank 16: NMI and 5-NN accuracy vs constraints, Burg and von Neumann
	$(RUN) $(KULIS)/fig1_digits_initial.yaml --out $(K06)/fig1_digits_initial
	$(RUN) $(KULIS)/fig1_digits_burg.yaml --out $(K06)/fig1_digits_burg
	$(RUN) $(KULIS)/fig1_digits_von_neumann.yaml --out $(K06)/fig1_digits_von_neumann
	$(KL) collect $(K06)/fig1_digits_initial --prefix $(TABLES)/kulis2006_fig1_digits_initial \
	  $(call fill,kulis2006-fig1-initial)
	$(KL) collect $(K06)/fig1_digits_burg --prefix $(TABLES)/kulis2006_fig1_digits_burg $(call fill,kulis2006-fig1)
	$(KL) collect $(K06)/fig1_digits_von_neumann --prefix $(TABLES)/kulis2006_fig1_digits_von_neumann \
	  $(call fill,kulis2006-fig1-vn)
	$(KL) collect $(K06)/fig1_digits_burg $(K06)/fig1_digits_von_neumann -m nmi --rows constraints.count \
	  --cols solver --prefix $(TABLES)/kulis2006_fig1_nmi $(call fill,kulis2006-fig1-nmi)
	$(KL) plot $(K06)/fig1_digits_burg $(K06)/fig1_digits_von_neumann $(K06)/fig1_digits_initial -m nmi \
	  -o $(FIGS)/kulis2006_fig1_nmi.png --title "Digits, rank 16: kernel k-means NMI"

kulis2006-gyrb-protocol: install  ## Sec. 6: sweeps at 100 constraints, von Neumann vs DefiniteBoost
	for ds in soybean_small wine; do \
	  $(RUN) $(KULIS)/gyrb_protocol_von_neumann_$${ds}.yaml --out $(K06)/gyrb_protocol_von_neumann_$${ds} && \
	  $(RUN) $(KULIS)/gyrb_protocol_definiteboost_$${ds}.yaml --out $(K06)/gyrb_protocol_definiteboost_$${ds} \
	  || exit 1; done
	$(KL) collect $(K06)/gyrb_protocol_* -m iterations --rows solver --cols dataset \
	  --prefix $(TABLES)/kulis2006_gyrb_protocol_sweeps $(call fill,kulis2006-gyrb-protocol)

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

kulis2006: kulis2006-fig1 kulis2006-fig2 kulis2006-gyrb-protocol

tsuda2005-fig2: install           ## MEG on-line: cumulative loss vs the Lemma 3.2 bound, 1-NN error vs trials
	for ds in soybean_small wine; do \
	  $(RUN) $(TSUDA)/fig2_$${ds}_target.yaml --out $(T05)/fig2_$${ds}_target && \
	  $(RUN) $(TSUDA)/fig2_$${ds}_meg.yaml --out $(T05)/fig2_$${ds}_meg && \
	  $(KL) plot $(T05)/fig2_$${ds}_meg $(T05)/fig2_$${ds}_target -m knn_error --x solver.iterations --logx \
	    -o $(FIGS)/tsuda2005_fig2_$${ds}_error.png --title "$$ds RBF target: MEG 1-NN error" && \
	  $(KL) plot $(T05)/fig2_$${ds}_meg -m bound_ratio --x solver.iterations --loglog \
	    -o $(FIGS)/tsuda2005_fig2_$${ds}_bound_ratio.png --title "$$ds: Lemma 3.2 bound / MEG loss" \
	  || exit 1; done
	$(KL) collect $(T05)/fig2_soybean_small_meg $(T05)/fig2_wine_meg -m knn_error --rows solver.iterations \
	  --cols dataset --prefix $(TABLES)/tsuda2005_fig2_knn_error $(call fill,tsuda2005-fig2-error)
	$(KL) collect $(T05)/fig2_soybean_small_meg $(T05)/fig2_wine_meg -m bound_ratio --rows solver.iterations \
	  --cols dataset --prefix $(TABLES)/tsuda2005_fig2_bound_ratio $(call fill,tsuda2005-fig2-ratio)

tsuda2005-fig3: install           ## DefiniteBoost on threshold constraints: dual objective, 1-NN error
	for ds in soybean_small wine; do \
	  $(RUN) $(TSUDA)/fig3_$${ds}.yaml --out $(T05)/fig3_$${ds} && \
	  $(RUN) $(TSUDA)/fig3_$${ds}_steps.yaml --out $(T05)/fig3_$${ds}_steps && \
	  $(KL) plot-history $(T05)/fig3_$${ds} --mean --logx -o $(FIGS)/tsuda2005_fig3_$${ds}_dual.png && \
	  $(KL) plot $(T05)/fig3_$${ds}_steps -m knn_error --x solver.max_steps --by solver.dual_correction --loglog \
	    -o $(FIGS)/tsuda2005_fig3_$${ds}_error.png --title "$$ds: DefiniteBoost 1-NN error" \
	  || exit 1; done
	$(KL) collect $(T05)/fig3_soybean_small $(T05)/fig3_wine -m knn_error --rows solver.dual_correction \
	  --cols dataset --prefix $(TABLES)/tsuda2005_fig3_knn_error $(call fill,tsuda2005-fig3-error)
	$(KL) collect $(T05)/fig3_soybean_small $(T05)/fig3_wine -m constraints --rows solver.dual_correction \
	  --cols dataset --agg max --prefix $(TABLES)/tsuda2005_fig3_constraints $(call fill,tsuda2005-fig3-count)

tsuda2005: tsuda2005-fig2 tsuda2005-fig3

kulis2006-fig2-vn: install        ## Fig. 2 protocol, von Neumann beside Burg (soybean_small, wine; ~12 min)
	for ds in soybean_small wine; do \
	  $(RUN) $(KULIS)/fig2_$${ds}_von_neumann.yaml --out $(K06)/fig2_$${ds}_von_neumann && \
	  $(KL) plot $(K06)/fig2_$${ds}_burg $(K06)/fig2_$${ds}_von_neumann $(K06)/fig2_$${ds}_target \
	    -m knn_accuracy -o $(FIGS)/kulis2006_fig2_$${ds}_vn.png --title "$$ds RBF target: Burg and von Neumann" \
	  || exit 1; done
	$(KL) collect $(K06)/fig2_soybean_small_burg $(K06)/fig2_soybean_small_von_neumann \
	  $(K06)/fig2_wine_burg $(K06)/fig2_wine_von_neumann -m knn_accuracy \
	  --rows constraints.count --cols experiment --prefix $(TABLES)/kulis2006_fig2_vn $(call fill,kulis2006-fig2-vn)

hu2013-table2: install           ## Hu & Kwok 2013, Table 2 (KL_ADMM column): pairwise accuracy, 14 datasets (~6 min)
	$(RUN) $(HU)/table2_small.yaml --out $(H13)/table2_small
	$(RUN) $(HU)/table2_adult.yaml --out $(H13)/table2_adult
	$(RUN) $(HU)/table2_adult_gamma.yaml --out $(H13)/table2_adult_gamma
	$(KL) collect $(H13)/table2_small $(H13)/table2_adult -m pairwise_accuracy --rows dataset --cols solver \
	  --prefix $(TABLES)/hu2013_table2 $(call fill,hu2013-table2)
	$(KL) collect $(H13)/table2_adult_gamma -m pairwise_accuracy --rows solver.gamma --cols dataset \
	  --prefix $(TABLES)/hu2013_table2_adult_gamma $(call fill,hu2013-table2-gamma)

hu2013-sdp-check: install        ## KL_ADMM's objective vs the exact SDP (cvxpy + Clarabel), n <= 100 (~5 min)
	$(RUN) $(HU)/sdp_check_admm.yaml --out $(H13)/sdp_check_admm
	$(RUN) $(HU)/sdp_check_sdp.yaml --out $(H13)/sdp_check_sdp
	$(KL) collect $(H13)/sdp_check_admm $(H13)/sdp_check_sdp -m objective --rows dataset --cols solver \
	  --prefix $(TABLES)/hu2013_sdp_check $(call fill,hu2013-sdp-check)
	$(PY) benchmarks/admm_vs_sdp.py $(H13)/sdp_check_admm $(H13)/sdp_check_sdp
	$(KL) plot-history $(H13)/sdp_check_admm -k objective --logx --logy --xlabel iteration \
	  -o $(FIGS)/hu2013_fig1_objective.png --title "KL_ADMM objective (Hu & Kwok Fig. 1)"
	$(KL) plot-history $(H13)/sdp_check_admm -k primal --logx --logy --xlabel iteration \
	  -o $(FIGS)/hu2013_fig2_primal.png --title "KL_ADMM primal residual ||V - U|| (Fig. 2)"

hu2013: hu2013-table2 hu2013-sdp-check

zhang2012-fig1: install           ## Zhang et al. 2012, Fig. 1: NKA score and SVM accuracy against lambda (~3 min)
	$(RUN) configs/papers/zhang2012/fig1_lambda.yaml --out $(Z12)/fig1_lambda
	$(KL) plot $(Z12)/fig1_lambda -m nka_score --x solver.lam --by dataset --logx \
	  -o $(FIGS)/zhang2012_fig1_nka.png --title "NKA selection score vs lambda"
	$(KL) plot $(Z12)/fig1_lambda -m svm_accuracy --x solver.lam --by dataset --logx \
	  -o $(FIGS)/zhang2012_fig1_accuracy.png --title "SVM accuracy vs lambda"
	$(KL) collect $(Z12)/fig1_lambda -m nka_score --rows solver.lam --cols dataset \
	  --prefix $(TABLES)/zhang2012_fig1_nka $(call fill,zhang2012-fig1-nka)
	$(KL) collect $(Z12)/fig1_lambda -m svm_accuracy --rows solver.lam --cols dataset \
	  --prefix $(TABLES)/zhang2012_fig1_accuracy $(call fill,zhang2012-fig1-accuracy)

zhang2012: zhang2012-compare zhang2012-fig1

zhang2012-compare: install        ## Zhang et al. 2012: SVM accuracy, Nystrom / burg / nystrom_prior, 8 datasets x 10 labelings, 100 and 20 labels, rcond 0.01
	for s in nystrom nystrom_prior burg; do \
	  $(RUN) configs/papers/zhang2012/compare_$$s.yaml --out $(Z12)/compare_$$s || exit 1; done
	$(KL) collect $(Z12)/compare_nystrom $(Z12)/compare_burg $(Z12)/compare_nystrom_prior -m svm_accuracy \
	  --rows dataset --cols solver --prefix $(TABLES)/zhang2012_compare_svm $(call fill,zhang2012-compare-svm)
	$(KL) collect $(Z12)/compare_nystrom $(Z12)/compare_burg $(Z12)/compare_nystrom_prior -m alignment \
	  --rows dataset --cols solver --prefix $(TABLES)/zhang2012_compare_alignment $(call fill,zhang2012-compare-alignment)
	for s in nystrom nystrom_prior burg; do \
	  $(RUN) configs/papers/zhang2012/compare_$$s.yaml --set constraints.count=20 --set constraints.every_class=true \
	    --out $(Z12)/l20/compare_$$s || exit 1; done
	$(KL) collect $(Z12)/l20/compare_nystrom $(Z12)/l20/compare_burg $(Z12)/l20/compare_nystrom_prior -m svm_accuracy \
	  --rows dataset --cols solver --prefix $(TABLES)/zhang2012_compare_svm_l20 $(call fill,zhang2012-compare-svm-l20)
	for s in nystrom nystrom_prior; do \
	  $(RUN) configs/papers/zhang2012/compare_$$s.yaml --set solver.rcond=0.01 --out $(Z12)/rcond/compare_$$s || exit 1; done
	$(KL) collect $(Z12)/rcond/compare_nystrom $(Z12)/rcond/compare_nystrom_prior -m svm_accuracy \
	  --rows dataset --cols solver --prefix $(TABLES)/zhang2012_compare_svm_rcond $(call fill,zhang2012-compare-svm-rcond)

li2009: li2009-table3 li2009-table3-absolute li2009-stop-rules li2009-table5 li2009-uspst

li2009-uspst: install             ## Li et al. 2009, Sec. 6.4 / Fig. 2: uspst, alpha = 32, 7 gammas, 40,100 triplets
	KERNLEARN_BLAS_THREADS=2 $(KL) run --jobs 1 $(if $(SEEDS),--set "grid.seed=$(SEEDS)") $(LI)/uspst.yaml \
	  --out $(L09)/uspst
	$(PY) benchmarks/li2009_fig2.py $(L09)/uspst --figure $(FIGS)/li2009_fig2_uspst.png

li2009-table3: install            ## Li et al. 2009, Tables 3-4 (the paper's relative stopping rule): trin / pr_cg along the path
	$(RUN) $(LI)/table3_trin_relative.yaml --out $(L09)/table3_trin_relative
	$(RUN) $(LI)/table3_pr_cg_relative.yaml --out $(L09)/table3_pr_cg_relative
	$(RUN) $(LI)/table3_pr_cg_relative.yaml --out $(L09)/table3_pr_cg_relative --set "grid.solver.path=[0]" \
	  --set "grid.dataset=[{name: breast_cancer_wisconsin, missing: impute}, {name: ionosphere}]" --set "grid.seed=range(2)"
	$(KL) collect $(L09)/table3_trin_relative -m iterations --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table3_iterations $(call fill,li2009-table3)
	$(KL) collect $(L09)/table3_trin_relative -m seconds --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table3_seconds $(call fill,li2009-table3-seconds)
	$(KL) collect $(L09)/table3_pr_cg_relative -m iterations --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table4_iterations $(call fill,li2009-table4)
	$(KL) collect $(L09)/table3_pr_cg_relative -m seconds --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table4_seconds $(call fill,li2009-table4-seconds)

li2009-table3-absolute: install   ## Li et al. 2009, Tables 3-4 under the absolute rule ||K^1/2 grad K^1/2|| <= 1e-3
	$(RUN) $(LI)/table3_trin.yaml --out $(L09)/table3_trin
	$(RUN) $(LI)/table3_pr_cg.yaml --out $(L09)/table3_pr_cg
	$(KL) collect $(L09)/table3_trin -m iterations --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table3_absolute_iterations $(call fill,li2009-table3-absolute)
	$(KL) collect $(L09)/table3_trin -m seconds --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table3_absolute_seconds $(call fill,li2009-table3-absolute-seconds)
	$(KL) collect $(L09)/table3_pr_cg -m iterations --rows dataset --cols solver.path \
	  --prefix $(TABLES)/li2009_table4_absolute_iterations $(call fill,li2009-table4-absolute)

li2009-stop-rules: li2009-table3 li2009-table3-absolute   ## Li et al. 2009: what the relative stopping rule gives up
	$(PY) benchmarks/li2009_stop_rules.py $(L09)/table3_trin_relative $(L09)/table3_trin

li2009-table5: install            ## Li et al. 2009, Table 5: KPCA + 1-NN test error, four losses and the Laplacian
	$(RUN) $(LI)/table5.yaml --out $(L09)/table5
	$(RUN) $(LI)/table5_laplacian.yaml --out $(L09)/table5_laplacian
	$(KL) collect $(L09)/table5 -m error_loo --rows dataset --cols solver.loss \
	  --prefix $(TABLES)/li2009_table5 $(call fill,li2009-table5)
	$(KL) collect $(L09)/table5_laplacian -m error --rows dataset --cols solver \
	  --prefix $(TABLES)/li2009_table5_laplacian $(call fill,li2009-table5-laplacian)
	$(KL) collect $(L09)/table5 -m error_best --rows dataset --cols solver.loss \
	  --prefix $(TABLES)/li2009_table5_best $(call fill,li2009-table5-best)
	$(PY) benchmarks/li2009_table5_vs_paper.py $(L09)/table5 $(L09)/table5_laplacian

reproduce: kulis2006 kulis2006-fig2-vn tsuda2005 hu2013 zhang2012 li2009   ## every paper target

reproduce-quick:                  ## the same with 3 seeds, into results/quick (README untouched)
	$(MAKE) kulis2006 tsuda2005 hu2013 zhang2012 SEEDS='range(3)' RESULTS=results/quick README=

slurm-test: install               ## the real SLURM job-array test (starts a one-node cluster; root)
	$(PY) -m pytest tests/test_slurm.py -v

clean:
	rm -rf $(VENV) .pytest_cache
