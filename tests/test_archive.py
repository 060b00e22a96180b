"""Record archives (issue 32): a study's finished cells committed as one deterministic file per
experiment; tables from the archive alone; time budgets; kills; damaged lines; merges."""

import gzip
import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from kernlearn_cli.archive import Archive, ArchiveError, essence
from kernlearn_cli.errors import DataError
from kernlearn_cli.runner import parse_budget

from helpers import TINY_CONFIG, TINY_STUDY

#: A tiny study: 12 Burg cells on iris (a few seconds), two tables.
CONFIG = TINY_CONFIG
STUDY = {**TINY_STUDY, "tables": {**TINY_STUDY["tables"], "tiny_long": {"from": ["burg"]}}}


@pytest.fixture
def study(tmp_path):
    folder = tmp_path / "tinypaper"
    folder.mkdir()
    (folder / "tiny.yaml").write_text(yaml.safe_dump(CONFIG))
    (folder / "study.yaml").write_text(yaml.safe_dump(STUDY, sort_keys=False))
    return folder / "study.yaml"


def reproduce(study, root, *args, check=True):
    res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "reproduce", str(study), "--results", str(root),
                          "--docs", str(root / "docs"), "--no-readme", "--jobs", "1", *map(str, args)],
                         capture_output=True, text=True)
    if check:
        assert res.returncode == 0, res.stderr[-2000:]
    return res


def essences(root):
    return {c: essence(r) for c, r in Archive.read(root / "records" / "tinypaper" / "burg.jsonl.gz").records.items()}


@pytest.fixture
def whole(study, tmp_path):
    """One uninterrupted run."""
    root = tmp_path / "whole"
    reproduce(study, root)
    return root


@pytest.mark.slow
def test_archive_is_deterministic_and_sorted(whole):
    path = whole / "records" / "tinypaper" / "burg.jsonl.gz"
    data = path.read_bytes()
    assert data[4:8] == b"\0\0\0\0"                                  # gzip mtime 0
    lines = gzip.decompress(data).decode().splitlines()
    assert json.loads(lines[0])["kernlearn_archive"] == 2 and len(lines) == 13
    cells = [json.loads(ln)["cell"] for ln in lines[1:]]
    assert cells == sorted(cells)
    archive = Archive.read(path)
    assert archive.image() == data and archive.write() is False           # rewriting changes no byte
    rec = archive.records[cells[0]]
    assert rec["provenance"]["kernlearn_version"] and "wall_seconds" in rec["provenance"]


@pytest.mark.slow
def test_killed_budgeted_run_resumes_to_the_same_archive(study, whole, tmp_path):
    """A budgeted run, then a run SIGKILLed mid-way, then a resumed run: the same records (but for
    provenance and timings) as one uninterrupted run."""
    root = tmp_path / "pieces"
    first = reproduce(study, root, "--budget", "1s")
    assert "time budget spent" in first.stderr and "tinypaper: experiment | cells | archived" in first.stderr
    assert not (root / "tables").exists()                                     # a piece builds no partial tables
    archived = len(Archive.read(root / "records" / "tinypaper" / "burg.jsonl.gz").records)   # of 12 cells
    assert (f"incomplete ({archived} of 12 cells archived)" if archived else "no archived cells") in first.stderr
    cmd = [sys.executable, "-m", "kernlearn_cli", "reproduce", str(study), "--results", str(root), "--docs",
           str(root / "docs"), "--no-readme", "--jobs", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = len(list((root / "tinypaper" / "burg").glob("*/record.json")))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((root / "tinypaper" / "burg").glob("*/record.json"))) < start + 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(list((root / "tinypaper" / "burg").glob("*/record.json"))) < 12, "the kill came too late"
    res = reproduce(study, root, "--no-run")                                # killed: incomplete, not built
    assert "incomplete (" in res.stderr and not (root / "tables").exists()
    reproduce(study, root)
    assert essences(root) == essences(whole)
    for name in ("tiny_acc.csv", "tiny_long.csv"):
        assert (root / "tables" / name).read_bytes() == (whole / "tables" / name).read_bytes()


@pytest.mark.slow
def test_no_run_rebuilds_from_the_archive_alone(study, whole, tmp_path):
    """A fresh clone has the archive and no results folders: --no-run rebuilds tables and page byte for byte."""
    clone = tmp_path / "clone"
    (clone / "records").mkdir(parents=True)
    (clone / "records" / "tinypaper").symlink_to(whole / "records" / "tinypaper")
    res = reproduce(study, clone, "--no-run")
    assert not (clone / "tinypaper").exists()
    for name in ("tiny_acc.csv", "tiny_acc.md", "tiny_long.md", "tinypaper_verdicts.csv"):
        assert (clone / "tables" / name).read_bytes() == (whole / "tables" / name).read_bytes(), name
    page = (clone / "docs" / "tinypaper.md").read_text()
    assert page == (whole / "docs" / "tinypaper.md").read_text() and "## Provenance" in page
    assert "## tinypaper: " in res.stdout                                  # the study was built and judged


@pytest.mark.slow
def test_a_run_skips_archived_cells_without_their_factors(study, whole):
    """Archived cells are finished, also when the factors are not on this machine."""
    import shutil

    shutil.rmtree(whole / "tinypaper")
    res = reproduce(study, whole)
    assert "0 cell(s) run, 0 already finished, 0 failed, 12 archived" in res.stderr


@pytest.mark.slow
def test_damaged_line_is_named_and_rerun_repairs_it(study, whole):
    path = whole / "records" / "tinypaper" / "burg.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    lines[3] = lines[3][: len(lines[3]) // 2]                          # a torn record
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    damaged = path.read_bytes()
    res = reproduce(study, whole, "--no-run", check=False)
    assert res.returncode == 2 and f"record archive '{path}', line 4" in res.stderr and "Traceback" not in res.stderr
    assert "--rerun burg" in res.stderr and path.read_bytes() == damaged       # the file is left as it was
    reproduce(study, whole, "--rerun", "burg")
    assert len(Archive.read(path).records) == 12


@pytest.mark.slow
def test_merge_two_halves_equals_the_whole_and_refuses_a_conflict(study, whole, tmp_path):
    full = Archive.read(whole / "records" / "tinypaper" / "burg.jsonl.gz")
    cells = sorted(full.records)
    halves = []
    for k, part in enumerate((cells[:5], cells[5:])):
        half = Archive(tmp_path / f"m{k}" / "burg.jsonl.gz", "burg", full.config, {c: full.records[c] for c in part})
        half.write()
        halves.append(half.path)
    merged = tmp_path / "merged"
    reproduce(study, merged, "--no-run", "--merge", halves[0], "--merge", halves[1])
    path = merged / "records" / "tinypaper" / "burg.jsonl.gz"
    assert path.read_bytes() == full.path.read_bytes()
    assert (merged / "tables" / "tiny_acc.csv").read_bytes() == (whole / "tables" / "tiny_acc.csv").read_bytes()
    # a machine whose cell differs (e.g. other code): refused, naming the cell
    other = json.loads(json.dumps(full.records[cells[0]]))
    other["metrics"]["knn_accuracy"] += 0.01
    other["provenance"]["git_commit"] = "0" * 40
    Archive(tmp_path / "bad" / "burg.jsonl.gz", "burg", full.config, {cells[0]: other}).write()
    res = reproduce(study, merged, "--no-run", "--merge", tmp_path / "bad" / "burg.jsonl.gz", check=False)
    assert res.returncode == 2 and f"cell {cells[0]}" in res.stderr and "metrics.knn_accuracy" in res.stderr
    assert path.read_bytes() == full.path.read_bytes()
    # a machine of another CPU type: the same result to rounding (sums in another order) merges, the
    # archived record kept
    other = json.loads(json.dumps(full.records[cells[0]]))
    other["objective"] *= 1 + 3e-15
    other["provenance"]["git_commit"] = "0" * 40
    Archive(tmp_path / "cpu" / "burg.jsonl.gz", "burg", full.config, {cells[0]: other}).write()
    reproduce(study, merged, "--no-run", "--merge", tmp_path / "cpu" / "burg.jsonl.gz")
    assert path.read_bytes() == full.path.read_bytes()
    # a results root of another machine (its folders, no archive) merges the same
    import shutil

    shutil.rmtree(whole / "records")
    again = tmp_path / "again"
    reproduce(study, again, "--no-run", "--merge", whole)
    assert essences(again) == {c: essence(r) for c, r in full.records.items()}


def test_records_differ_beyond_rounding_only():
    from kernlearn_cli.archive import differing

    rec = {"cell": "c", "iterations": 12, "objective": 11.484165463901931, "metrics": {"a": 0.2318, "z": 0.0},
           "info": {"path": [1.0, 2.0], "solve_seconds": 3.0}, "provenance": {"git_commit": "a"}, "seconds": 1.0,
           "certificate": {"gap": [float("inf"), float("nan"), 1.0]}}
    same = {**rec, "objective": 11.484165463901704, "metrics": {"a": 0.23180000000000012, "z": 1e-16},
            "info": {"path": [1.0, 2.0 + 1e-15], "solve_seconds": 9.0}, "provenance": {"git_commit": "b"},
            "seconds": 7.0}
    assert differing(rec, same) == []
    assert differing({**rec, "index": 0}, {**rec, "index": 32}) == []      # the same cell in a reordered grid
    assert differing(rec, {**rec, "iterations": 13}) == ["iterations"]
    assert differing(rec, {**rec, "metrics": {"a": 0.2318 * (1 + 1e-7), "z": 0.0}}) == ["metrics.a"]
    assert differing(rec, {**rec, "info": {"path": [1.0], "solve_seconds": 3.0}}) == ["info.path"]
    assert differing(rec, {**rec, "certificate": {"gap": [1e300, float("nan"), 1.0]}}) == ["certificate.gap[0]"]


@pytest.mark.slow
def test_plan_estimates_from_the_study_then_the_archive(study, whole, tmp_path):
    res = reproduce(study, tmp_path / "empty", "--plan")
    assert "burg | 12 | 0 | 12 | 6s (0.5 s per cell, from the study)" in res.stdout
    res = reproduce(study, whole, "--plan")
    assert "burg | 12 | 12 | 0 | -" in res.stdout


@pytest.mark.slow
def test_plan_prices_a_left_cell_by_its_own_grid_point(study, whole):
    """A cell left costs what its other seeds cost (the big sets are the slow ones), else the
    experiment's mean: two 100-constraint cells archived at 10 s, four 300-constraint ones at 1 s;
    the two 100-constraint cells left cost 10 s each, the four 30-constraint ones (no seed of them
    archived) the mean 4 s: 36 s."""
    path = whole / "records" / "tinypaper" / "burg.jsonl.gz"
    archive = Archive.read(path)
    for cell, rec in list(archive.records.items()):
        count, seed = rec["grid"]["constraints.count"], rec["grid"]["seed"]
        if count == 30 or (count == 100 and seed >= 2):
            del archive.records[cell]
        else:
            rec["provenance"]["cpu_seconds"] = 10.0 if count == 100 else 1.0
    archive.write()
    res = reproduce(study, whole, "--plan")
    assert "burg | 12 | 6 | 6 | 36s (6.0 s per cell, from the archive, 2 of 6 left at an archived grid point)" \
        in res.stdout, res.stdout


@pytest.mark.slow
def test_plan_prices_by_cells_run_as_many_at_a_time(study, whole):
    """Cells that shared the cores cost more CPU time each: where the archive has cells run as many
    at a time as the planned --jobs would, only those price the cells left."""
    path = whole / "records" / "tinypaper" / "burg.jsonl.gz"
    archive = Archive.read(path)
    for k, (cell, rec) in enumerate(list(archive.records.items())):
        if rec["grid"]["seed"] == 2:
            del archive.records[cell]
        else:
            rec["provenance"].update(cpu_seconds=1.0 if k % 2 else 3.0, workers=1 if k % 2 else 2)
    archive.write()
    alone = reproduce(study, whole, "--plan").stdout                           # --jobs 1
    assert "burg | 12 | 9 | 3 | 3s (1.0 s per cell, from the archive cells run 1 at a time" in alone, alone
    two = reproduce(study, whole, "--plan", "--jobs", "2").stdout
    assert "burg | 12 | 9 | 3 | 9s (3.0 s per cell, from the archive cells run 2 at a time" in two, two


def test_archive_add_and_budget_parsing(tmp_path):
    a = Archive(tmp_path / "x.jsonl.gz", "x")
    rec = {"cell": "c", "experiment": "e", "grid": {}, "seed": 0, "solver": "s", "dataset": "d", "constraints": 1,
           "n": 2, "rank0": 1, "converged": True, "iterations": 3, "objective": 0.5, "seconds": 1.0, "metrics": {},
           "provenance": {"git_commit": "a" * 40}}
    assert a.add(rec, "here") is True
    assert a.add({**rec, "seconds": 9.0, "provenance": {"git_commit": "b" * 40}}, "there") is False   # the same result
    with pytest.raises(ArchiveError, match="cell c of experiment 'x'.*iterations"):
        a.add({**rec, "iterations": 4}, "there")
    assert a.commits() == {"aaaaaaaaaa": 1}
    assert parse_budget("40m") == 2400 and parse_budget("1h30m") == 5400 and parse_budget("02:00:00") == 7200


def test_histories_are_archived_to_six_significant_digits():
    """A figure's history keeps six digits (relative error <= 5e-6), not every bit of its doubles."""
    import numpy as np

    from kernlearn_cli.reproduce.layout import archived_history

    x = -np.cumsum(np.random.default_rng(0).random(1000)) / 7.0
    kept = np.asarray(archived_history({"dual_objective": x})["dual_objective"])
    assert kept.shape == x.shape and np.all(np.abs(kept - x) <= 5e-6 * np.abs(x))
    assert not np.array_equal(kept, x) and all(len(repr(v)) <= 13 for v in kept.tolist())


def _old_records():
    """Records as written before ids hashed the validated settings, when ``slack: 1`` and ``slack: 1.0``
    were two cells: {old id: record} for slack 1, 10 and 1.0 (the last one cell with slack 1 today,
    under the id it had then and has now), and today's cells."""
    import hashlib

    from kernlearn_cli.config import expand

    # burg's sweeps and order pinned to their defaults then: the id the config had then, without the keys
    cfg = {**CONFIG, "solver": {**CONFIG["solver"], "sweeps": "cyclic", "order": "fixed"},
           "grid": {"solver.slack": [1, 10], "seed": [0]}}
    cells = expand(cfg)
    float_cell = expand({**cfg, "grid": {"solver.slack": [1.0], "seed": [0]}})[0]   # the same cell, written 1.0
    assert float_cell.id == cells[0].id

    def old_id(cell):                       # the former Cell.id: raw grid values, hash of the raw config
        then = {**cell.config, "solver": {k: v for k, v in cell.config["solver"].items() if k not in ("sweeps", "order")}}
        digest = hashlib.sha256(json.dumps(then, sort_keys=True, separators=(",", ":"),
                                           default=str).encode()).hexdigest()[:10]
        return f"slack-{cell.grid_values['solver.slack']}_seed-0_{digest}"

    records = {old_id(cell): {"experiment": "tiny", "cell": old_id(cell), "grid": cell.grid_values, "seed": 0,
                              "solver": "burg", "dataset": "iris", "constraints": 10, "n": 150, "rank0": 4,
                              "converged": True, "iterations": 3, "objective": 0.5, "seconds": 1.0,
                              "metrics": {"knn_accuracy": 0.9}, "config": cell.config}
               for cell in [*cells, float_cell]}
    assert len(records) == 3 and {c.id for c in cells} & set(records) == {float_cell.id}   # 1.0: written as now
    return cfg, cells, records


def test_format_1_archive_is_migrated_once_on_first_read(tmp_path, capsys):
    """An archive written before ids hashed the validated settings (format 1) is read under today's
    ids, its two records of one cell (slack 1 and 1.0) merged, and rewritten once as format 2 with one
    line on stderr; the next read reads it as stored, silently."""
    from kernlearn_cli.archive import FORMAT
    from kernlearn_cli.report.records import load_records

    cfg, cells, records = _old_records()
    path = tmp_path / "tiny.jsonl.gz"
    text = gzip.decompress(Archive(path, "tiny", cfg, records).image()).decode()
    path.write_bytes(gzip.compress(text.replace(f'"kernlearn_archive":{FORMAT}', '"kernlearn_archive":1', 1).encode()))
    archive = Archive.read(path)
    assert set(archive.records) == {c.id for c in cells} and all(r["cell"] == c for c, r in archive.records.items())
    assert capsys.readouterr().err == (f"record archive '{path}': format 1 migrated to 2 (cell ids hash the validated "
                                       f"settings): 2 of 3 record(s) re-keyed, 1 duplicate(s) merged; rewritten in "
                                       f"place (once).\n")
    assert FORMAT == 2 and path.read_bytes() == archive.image()
    assert json.loads(gzip.decompress(path.read_bytes()).decode().splitlines()[0])["kernlearn_archive"] == 2
    df, done = load_records([path])
    assert done.complete and len(df) == 2 and capsys.readouterr().err == ""


def test_results_folder_of_old_ids_is_migrated_once_on_first_read(tmp_path, capsys):
    """A results folder of those days: its cell folders renamed to today's ids and their records
    rewritten, the second folder of one cell (same result) removed, a mark written, one line on
    stderr; read again, nothing changes.  Two folders of one cell with different results are refused
    with both named, and no cell counts twice."""
    from kernlearn_cli.report.records import load_records, records_of
    from kernlearn_cli.results import FORMAT_FILE

    _, cells, records = _old_records()
    out = tmp_path / "out"
    for old, rec in records.items():
        (out / old).mkdir(parents=True)
        (out / old / "record.json").write_text(json.dumps(rec))
    found = sorted((cell, where.parent.name, rec["cell"]) for cell, where, rec in records_of(out))
    assert found == sorted((c.id, c.id, c.id) for c in cells)
    assert sorted(p.name for p in out.iterdir()) == sorted([FORMAT_FILE, *(c.id for c in cells)])
    assert capsys.readouterr().err == (f"results folder '{out}': 1 cell folder(s) renamed to their current ids and 1 "
                                       f"duplicate(s) of a current cell removed (once: cell ids hash the validated "
                                       f"settings, so 1 and 1.0 are one cell).\n")
    assert len(load_records([out])[0]) == 2 and capsys.readouterr().err == ""

    other = tmp_path / "other"
    for old, rec in records.items():
        (other / old).mkdir(parents=True)
        (other / old / "record.json").write_text(json.dumps({**rec, "objective": 0.5 + ("1.0" in old)}))
    with pytest.raises(DataError, match=r"cell folders 'slack-1_seed-0_\w+' and 'slack-1\.0_seed-0_\w+' are one cell "
                                        r".* different results \(in: objective\)"):
        load_records([other])
    assert not (other / FORMAT_FILE).exists()


def test_one_cell_in_two_folders_of_one_root_is_refused(tmp_path):
    """Two copies of one experiment's folder under one root would count each cell twice: refused."""
    from kernlearn_cli.report.records import load_records

    _, cells, records = _old_records()
    rec = {**next(iter(records.values())), "cell": cells[0].id}
    for copy in ("a", "b"):
        (tmp_path / copy / cells[0].id).mkdir(parents=True)
        (tmp_path / copy / cells[0].id / "record.json").write_text(json.dumps(rec))
    with pytest.raises(DataError, match=rf"cell {cells[0].id} is under '{tmp_path}' twice .*no cell counts twice"):
        load_records([tmp_path])


@pytest.mark.slow
def test_quick_plan_prices_by_the_full_runs_archive(study, whole):
    """A quick run not made yet is priced by the full run's archived cells at its grid points (the
    quick run's cells are the full run's at fewer seeds), not "compute unknown": 100-constraint
    cells archived at 10 s of CPU, the others at 1 s; the quick run's 3 seeds cost 3 × 12 s."""
    path = whole / "records" / "tinypaper" / "burg.jsonl.gz"
    archive = Archive.read(path)
    for rec in archive.records.values():
        rec["provenance"]["cpu_seconds"] = 10.0 if rec["grid"]["constraints.count"] == 100 else 1.0
    archive.write()
    res = reproduce(study, whole, "--quick", "--plan")
    assert "burg | 9 | 0 | 9 | 36s (4.0 s per cell, from the full run's archive, 9 of 9 left at an archived " \
           "grid point)" in res.stdout, res.stdout
