"""A finished cell is the same cell only while its input files are the same (issue 44, item 1):
records carry each user input file's sha256; ``run`` computes a cell again when a file it read has
changed since, and ``collect`` refuses to tabulate it, naming the file."""

import json
import os

import numpy as np
import pytest
import yaml
from sklearn.datasets import load_iris

from kernlearn_cli.errors import DataError
from kernlearn_cli.inputs import changed_inputs, input_files
from kernlearn_cli.memo import component_key, load_dataset
from kernlearn_cli.registry import datasets
from kernlearn_cli.report.records import load_records
from kernlearn_cli.runner import run_config


@pytest.fixture
def files_run(tmp_path, monkeypatch):
    """A `files` config over iris (features, labels, a constraints CSV), run once in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    X, y = load_iris(return_X_y=True)
    np.save("X.npy", X)
    np.save("y.npy", y)
    (tmp_path / "c.csv").write_text("i,j,kind,bound\n0,1,dist_ge,2.0\n0,60,dist_le,1.0\n")
    cfg = {"name": "edits", "seed": 0, "dataset": {"name": "files", "features": "X.npy", "labels": "y.npy"},
           "kernel": {"name": "linear"}, "constraints": {"name": "from_file", "path": "c.csv"},
           "solver": {"name": "burg"}, "evaluate": [{"name": "knn_accuracy"}]}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    out, failed = run_config(tmp_path / "cfg.yaml", tmp_path / "out", [], per_cell=False)
    assert not failed
    return tmp_path, out


def record(out):
    (path,) = out.glob("*/record.json")
    return json.loads(path.read_text())


def test_records_carry_the_sha256_of_every_input_file(files_run):
    where, out = files_run
    inputs = record(out)["inputs"]
    assert inputs == input_files(where / "X.npy", where / "y.npy", where / "c.csv")
    assert all(len(v) == 64 for v in inputs.values())


@pytest.mark.parametrize("edit", ["features", "constraints"])
def test_an_edited_input_is_computed_again_and_collect_refuses_the_old_result(files_run, edit, recwarn):
    """The issue's case: X.npy edited (columns reversed, x3), or a row added to the constraints CSV; the
    rerun used to print '0 cell(s) run, 1 already finished' and the old table."""
    where, out = files_run
    before = record(out)
    if edit == "features":
        np.save(where / "X.npy", 3 * np.load(where / "X.npy")[:, ::-1])
        changed = str(where / "X.npy")
    else:
        with open(where / "c.csv", "a") as fh:
            fh.write("0,2,dist_le,0.5\n")
        changed = str(where / "c.csv")
    assert [c[0] for c in changed_inputs(before)] == [changed]
    with pytest.raises(DataError, match="has changed") as exc:
        load_records([out])
    assert changed in str(exc.value) and before["cell"] in str(exc.value)
    run_config(where / "cfg.yaml", out, [], per_cell=False)
    assert any(changed in str(w.message) and "computed again" in str(w.message) for w in recwarn)
    after = record(out)
    assert after["cell"] == before["cell"]                       # the same cell id: archived ids stay valid
    assert after["inputs"][changed] != before["inputs"][changed] and not changed_inputs(after)
    assert after["objective"] != before["objective"]
    df, _ = load_records([out])
    assert len(df) == 1


@pytest.mark.parametrize("rows", ["i,j,kind,bound\n0,1,dist_ge,2.0\n0,60,dist_le,1.0\n", "i,j,k\n0,60,1\n5,70,6\n"])
def test_a_constraint_files_recorded_inputs_are_the_files_it_read(tmp_path, monkeypatch, files_read, rows):
    """The constraint generator reading a file (``from_file``: pairs or triplets) records in
    ``Constraints.files`` exactly the files it opened, as the user loaders do in ``meta["inputs"]``
    (tests/test_data.py); a decoy beside it is neither read nor recorded."""
    from kernlearn_cli.registry import constraints

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.csv").write_text(rows)
    (tmp_path / "c.csv.bak").write_text(rows)
    ds = datasets.get("iris").func()
    read, C = files_read(lambda: constraints.get("from_file").func(ds, None, rng=np.random.default_rng(0),
                                                                    path="c.csv"), tmp_path)
    assert read == {str(tmp_path / "c.csv")} and C.files == input_files(tmp_path / "c.csv")


def test_an_unchanged_input_is_not_computed_again(files_run):
    where, out = files_run
    before = record(out)
    os.utime(where / "X.npy")                           # touched, same bytes: the same cell
    run_config(where / "cfg.yaml", out, [], per_cell=False)
    assert record(out)["provenance"]["started"] == before["provenance"]["started"]


def test_a_record_without_inputs_reads_as_before(files_run):
    """Archived records (catalogue data, pinned by the MANIFEST) and older records have no hashes."""
    where, out = files_run
    (path,) = out.glob("*/record.json")
    rec = json.loads(path.read_text())
    del rec["inputs"]
    path.write_text(json.dumps(rec))
    assert changed_inputs(rec) == []
    np.save(where / "X.npy", np.load(where / "X.npy") + 1)
    df, _ = load_records([out])
    assert len(df) == 1


def test_the_dataset_memo_notices_an_edited_file(tmp_path):
    """Datasets are memoised per process (a notebook, a worker): an edited file is read again."""
    X = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "X.npy", X)
    key = component_key(datasets.get("files"), {"features": str(tmp_path / "X.npy"), "labels": "", "kernel": ""})
    assert np.array_equal(load_dataset(key).X, X)
    np.save(tmp_path / "X.npy", 2 * X)
    assert np.array_equal(load_dataset(key).X, 2 * X)


def test_catalogue_data_is_pinned_by_its_manifest_not_by_the_record(tmp_path):
    """A catalogue dataset's ``meta["files"]`` (URL and MANIFEST sha256) is not a user input: its cells'
    records carry no ``inputs`` and collect reads them (a collision of the two once broke reproduce)."""
    cfg = {"name": "sonar_pinned", "seed": 0, "dataset": {"name": "sonar"}, "kernel": {"name": "linear"},
           "constraints": {"name": "random_pairs", "count": 20}, "solver": {"name": "burg", "slack": 1.0},
           "evaluate": []}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    out, _ = run_config(tmp_path / "cfg.yaml", tmp_path / "out", [], per_cell=False)
    assert "inputs" not in record(out) and datasets.get("sonar").func().meta["files"]
    assert len(load_records([out])[0]) == 1
