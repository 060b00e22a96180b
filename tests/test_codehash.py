"""Issue 55, item 1: a finished cell computed by other code is computed again, never reused silently.

A record keeps one digest per component over the sources it runs (``provenance.code``,
:mod:`kernlearn_cli.codehash`); a digest that differs from the code's now, or a record without
one, makes ``kernlearn run`` compute the cell again, with a warning naming the component and file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from kernlearn_cli import codehash
from kernlearn_cli.archive import essence
from kernlearn_cli.codehash import NOT_NUMERIC, closure
from kernlearn_cli.records import RECORD
from kernlearn_cli.runner import run_config

CONFIG = {"name": "codehash", "seed": 0, "dataset": {"name": "two_gaussians", "n": 30, "dim": 3},
          "kernel": {"name": "linear"},
          "constraints": {"name": "random_pairs", "count": 15, "reference": {"name": "rbf"}},
          "solver": {"name": "burg"}, "evaluate": [{"name": "alignment"}]}


def _run(tmp_path: Path) -> tuple[dict, list[str]]:
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, failed = run_config(config, tmp_path / "out", [], per_cell=False)
    assert not failed
    (record,) = [json.loads(p.read_text()) for p in out.glob(f"*/{RECORD}")]
    return record, [str(w.message) for w in caught if "other code" in str(w.message)]


def _edit(monkeypatch, module: str):
    """The source of ``module`` as if edited: its digest differs (the file itself is not touched)."""
    real = codehash.file_digest.__wrapped__
    monkeypatch.setattr(codehash, "file_digest", lambda m: "0" * 64 if m == module else real(m))


def test_a_solver_digest_covers_its_compiled_kernels_and_leaves_out_what_computes_nothing():
    mods = closure("kernlearn_cli.solvers.burg")
    assert "kernlearn_cli.solvers._burg_kernels" in mods and "kernlearn_cli.linalg" in mods
    assert not set(mods) & NOT_NUMERIC
    assert "kernlearn_cli.solvers.burg" not in closure("kernlearn_cli.solvers.nystrom")


def test_a_kernel_digest_covers_the_factorizations_it_calls():
    """The kernels' factorizations live in their own module (issue 55, item 7); their digest still reads it."""
    mods = closure("kernlearn_cli.kernels")
    assert {"kernlearn_cli.lowrank", "kernlearn_cli.linalg", "kernlearn_cli.graph"} <= set(mods)
    assert "kernlearn_cli.lowrank" in closure("kernlearn_cli.solvers.burg")
    assert "kernlearn_cli.kernels" not in closure("kernlearn_cli.solvers.burg")     # a solver reads no kernel


def test_a_cell_is_reused_only_while_its_code_is_the_same(tmp_path, monkeypatch):
    first, said = _run(tmp_path)
    assert said == [] and set(first["provenance"]["code"]["components"]) == {
        "dataset two_gaussians", "kernel linear", "reference rbf", "constraints random_pairs", "solver burg",
        "evaluate alignment"}
    again, said = _run(tmp_path)
    assert said == [] and again["provenance"]["started"] == first["provenance"]["started"]      # reused

    _edit(monkeypatch, "kernlearn_cli.solvers._burg_kernels")
    changed, said = _run(tmp_path)
    assert len(said) == 1 and "solver 'burg' (kernlearn_cli/solvers/_burg_kernels.py changed)" in said[0]
    assert "1 finished cell(s) were computed by other code" in said[0]
    assert changed["provenance"]["code"] != first["provenance"]["code"]
    assert essence(changed) == essence(first)            # the same numbers: only provenance tells them apart


def test_a_record_that_names_no_code_is_computed_again(tmp_path):
    first, _ = _run(tmp_path)
    (path,) = (tmp_path / "out").glob(f"*/{RECORD}")
    old = json.loads(path.read_text())
    del old["provenance"]["code"]
    path.write_text(json.dumps(old))
    _, said = _run(tmp_path)
    assert len(said) == 1 and "its record names none" in said[0]


@pytest.mark.parametrize("module, component", [("kernlearn_cli.kernels", "kernel 'linear'"),
                                               ("kernlearn_cli.evaluate.supervised", "evaluate 'alignment'")])
def test_the_warning_names_each_component_whose_code_changed(tmp_path, monkeypatch, module, component):
    _run(tmp_path)
    _edit(monkeypatch, module)
    _, said = _run(tmp_path)
    assert component in said[0], said


def test_a_holdout_cell_is_keyed_to_the_inductive_maps_that_score_it(tmp_path, monkeypatch):
    """The held-out points' rows come from kernlearn_cli.inductive (no solver's module): an edit there
    computes a holdout cell again, and leaves a cell without a holdout alone."""
    from kernlearn_cli.config import Cell, bind_cell

    plain = codehash.code_of(bind_cell(Cell(0, CONFIG), "c.yaml"))
    held = codehash.code_of(bind_cell(Cell(0, {**CONFIG, "dataset": {**CONFIG["dataset"],
                                                                     "holdout": {"size": 6}}}), "c.yaml"))
    assert "inductive" in held["components"] and "inductive" not in plain["components"]
    assert "kernlearn_cli/inductive.py" in held["files"]
    bound = bind_cell(Cell(0, {**CONFIG, "dataset": {**CONFIG["dataset"], "holdout": {"size": 6}}}), "c.yaml")
    record = {"provenance": {"code": held}}
    assert codehash.changed_code(record, bound) == []
    _edit(monkeypatch, "kernlearn_cli.inductive")
    assert codehash.changed_code(record, bound) == ["inductive (kernlearn_cli/inductive.py changed)"]
    assert codehash.changed_code({"provenance": {"code": plain}}, bind_cell(Cell(0, CONFIG), "c.yaml")) == []
