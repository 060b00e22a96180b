"""docs/extending.md runs as written: its worked example registers five components and runs a config.

The page's code blocks whose first line is ``# file: NAME`` are written to those files in a
temporary folder (blocks for the same file appended in order), and the commands the page gives
are run there. Each runs in its own process: the registries have no way to remove an entry, so
registering the example components in this process would leak them into every later test
(``test_every_registered_solver_has_an_instance`` among them).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
BLOCK = re.compile(r"^```[^\n]*\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
NEW = {"datasets": "rings", "kernels": "polynomial", "constraints": "percentile_pairs",
       "solvers": "burg_numpy", "evaluators": "centroid_accuracy"}


def doc_files(folder: Path) -> dict[str, Path]:
    """Write the page's ``# file:`` blocks into ``folder``; returns file name -> path."""
    texts: dict[str, str] = {}
    for name, body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        texts[name] = texts.get(name, "") + ("\n\n" if name in texts else "") + body
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / name
        paths[name].write_text(text, encoding="utf-8")
    return paths


def python(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python ARGS`` in ``folder``, with this interpreter, in a process of its own."""
    return subprocess.run([sys.executable, *args], cwd=folder, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("extending")
    return folder, doc_files(folder)


def test_page_has_the_example_files(example):
    _, files = example
    assert set(files) == {"my_components.py", "rings.yaml", "test_my_components.py"}
    code = files["my_components.py"].read_text()
    for kind, name in NEW.items():
        assert f'@{kind}.register("{name}", checks=Checks(' in code


@pytest.mark.slow
def test_list_shows_the_new_components_with_their_summaries(example):
    folder, _ = example
    done = python(folder, "my_components.py", "list")
    assert done.returncode == 0, done.stderr
    assert "Two concentric rings in the plane" in done.stdout
    assert "Kulis et al. (2006) Algorithm 1 in plain NumPy" in done.stdout
    assert "      tol=0.001: a float in (0, inf) — Stop when the dual variables change by at most" in done.stdout
    assert "      max_sweeps=1000: an int in [1, inf) — Give up after this many sweeps (>= 1)" in done.stdout
    for name in NEW.values():
        assert re.search(rf"^\s+{name}\s", done.stdout, re.MULTILINE), name


@pytest.mark.slow
def test_config_runs_through_the_new_components(example):
    folder, _ = example
    done = python(folder, "my_components.py", "run", "rings.yaml")
    assert done.returncode == 0, done.stderr
    assert "4 cell(s) run, 0 already finished, 0 failed" in done.stderr
    records = [json.loads(p.read_text()) for p in (folder / "results" / "rings_demo").glob("*/record.json")]
    assert sorted(r["solver"] for r in records) == ["burg", "burg", "burg_numpy", "burg_numpy"]
    for r in records:
        assert (r["dataset"], r["kernel"], r["constraints_generator"]) == ("rings", "polynomial", "percentile_pairs")
        assert r["converged"] is True and r["certificate"]["checks"]["max_violation"]["met"]
        assert set(r["metrics"]) == {"centroid_accuracy", "nmi"}
    for seed in (0, 1):       # the two solvers of one problem reach the same optimum (to tol = 1e-3)
        objective = {r["solver"]: r["objective"] for r in records if r["seed"] == seed}
        assert objective["burg_numpy"] == pytest.approx(objective["burg"], rel=1e-2)
    assert "centroid_accuracy" in done.stdout and "burg_numpy" in done.stdout


@pytest.mark.slow
def test_the_pages_tests_pass(example):
    folder, _ = example
    done = python(folder, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_components.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "7 passed" in done.stdout


PLUGIN_BLOCK = re.compile(r"^```[^\n]*\n# plugin: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def install_plugin(site: Path) -> str:
    """Install the page's plugin package into ``site`` as an installed wheel lays it out (the module
    and a ``.dist-info`` with its entry points); returns its distribution name."""
    import tomllib

    files = dict(PLUGIN_BLOCK.findall(DOC.read_text(encoding="utf-8")))
    project = tomllib.loads(files.pop("pyproject.toml"))["project"]
    site.mkdir(parents=True)
    for name, text in files.items():
        (site / name).write_text(text, encoding="utf-8")
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text("".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
                                                   for g, eps in groups.items()))
    (info / "RECORD").write_text("")
    return project["name"]


@pytest.mark.slow
def test_a_plugin_package_adds_a_solver_a_config_runs(tmp_path):
    """The page's ten-line plugin, installed as a package: its solver runs from a config, is
    listed, has its settings validated; a plugin that fails to import is one clear paragraph."""
    import numpy as np
    import yaml

    from helpers import kernlearn
    from kernlearn_cli.factors import read_factors

    package = install_plugin(tmp_path / "site")
    env = {"PYTHONPATH": str(tmp_path / "site")}
    cfg = {"name": "plug", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
           "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "shrink", "factor": 0.25},
           "evaluate": [{"name": "knn_accuracy", "repeats": 1}]}
    path = tmp_path / "plug.yaml"
    path.write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", path, "--out", tmp_path / "out", env=env)
    assert run.returncode == 0, run.stderr
    (cell,) = [p for p in (tmp_path / "out").iterdir() if (p / "record.json").is_file()]
    f = read_factors(cell / "factors.h5")
    from sklearn.datasets import load_iris

    assert np.allclose(f["G"], 0.5 * load_iris().data) and f["attrs"]["solver"] == "shrink"
    listed = kernlearn("list", env=env)
    assert listed.returncode == 0 and "  shrink " in listed.stdout and f"({package})" in listed.stdout

    checks = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(tmp_path / "site" / "test_kernlearn_shrink.py")],
                            capture_output=True, text=True, cwd=tmp_path, env={**os.environ, **env})
    assert checks.returncode == 0 and "1 passed" in checks.stdout, checks.stdout + checks.stderr

    cfg["solver"]["factor"] = "much"
    path.write_text(yaml.safe_dump(cfg))
    bad = kernlearn("run", path, "--out", tmp_path / "bad", env=env)
    assert bad.returncode != 0 and "solver.factor" in bad.stderr and "Traceback" not in bad.stderr

    (tmp_path / "site" / "kernlearn_shrink.py").write_text("raise ImportError('numpy too old')\n")
    cfg["solver"]["factor"] = 0.25
    path.write_text(yaml.safe_dump(cfg))
    broken = kernlearn("run", path, "--out", tmp_path / "broken", env=env)
    assert broken.returncode != 0 and "Traceback" not in broken.stderr
    assert "plugin 'shrink = kernlearn_shrink'" in broken.stderr and package in broken.stderr
    assert "numpy too old" in broken.stderr and not (tmp_path / "broken").exists()
