"""``reproduce PAPER --verify N``: rerun archived cells of a study and compare them with their records, bit for bit.

The archived cells of each experiment (``RESULTS/records/<paper>/<experiment>.jsonl.gz``) are ranked by
their archived cost (the record's ``provenance.cpu_seconds``, else its wall or solver seconds; ties by
cell id); cells are taken one per experiment at a time, cheapest first (:func:`within_budget`), and
rerun in this process with the experiment's ``set`` and ``env`` as ``kernlearn reproduce`` runs them,
into a scratch folder (the committed archives are never written).

Compared, bit for bit: every key of the record but its provenance (which holds the code digest,
:mod:`kernlearn_cli.codehash`), its timings (``seconds``, ``cpu_seconds``, ``peak_rss_bytes``, the ``info``
keys ending in ``seconds``, the certificate's ``seconds``) and ``index`` -- that is the metrics,
``objective``, ``iterations``, ``converged``, the certificate, ``info``, ``n``, ``rank0``,
``constraints``, the dataset and solver, the config through the cell id -- and the per-iteration ``history`` where the archive
keeps one (as archived: 6 significant digits).  Two records are bit-identical when their canonical JSON
texts are equal (floats printed with ``repr``, which round-trips every double).  A cell that differs is
listed with its differing keys and both values, marked ``rounding`` when every difference is within
the archives' merge tolerance (:data:`kernlearn_cli.archive.RTOL`), and with what may explain it beside
the code: the record made on another kind of machine (:func:`machine_change`) or by other code
(:func:`kernlearn_cli.codehash.changed_code`).  ``benchmarks/checks/verify_archives.py`` samples several
papers at once under a time budget with the same functions.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: Record keys left out of the comparison: what differs between two runs of one cell without the result differing.
#: ``config`` is compared through the cell id (``cell``), the hash of its validated settings: a config that pins
#: a setting's former default (:meth:`~kernlearn_cli.registry.Entry.digest_params`) is the same cell.
NOT_COMPARED = ("provenance", "seconds", "cpu_seconds", "peak_rss_bytes", "index", "config")
#: A cell's archived cost when its record names none (seconds).
FLOOR_SECONDS = 0.05


@dataclass
class Job:
    """One archived cell to rerun."""

    paper: str
    experiment: str
    cell: object                 # kernlearn_cli.config.Cell
    record: dict                 # the archived record
    cost: float                  # its archived cost, seconds
    history: bool                # the archive keeps its per-iteration history
    env: dict = field(default_factory=dict)


@dataclass
class Outcome:
    job: Job
    status: str                  # identical, rounding, differs, failed, not run
    differences: list = field(default_factory=list)     # (key, archived, rerun)
    seconds: float = 0.0
    error: str = ""
    machine: str | None = None   # machine_change(record): why the bits may differ here, or None
    record: dict | None = None   # the rerun's record, as archived
    code: list = field(default_factory=list)    # changed_code(record): the components other code computed


def archived_cost(record: dict) -> float:
    """The cell's archived cost in seconds: its process CPU time, else its wall time, else its solver's."""
    prov = record.get("provenance") or {}
    for value in (prov.get("cpu_seconds"), record.get("cpu_seconds"), prov.get("wall_seconds"), record.get("seconds")):
        if isinstance(value, (int, float)) and value > 0 and math.isfinite(value):
            return max(float(value), FLOOR_SECONDS)
    return FLOOR_SECONDS


def compared(record: dict) -> dict:
    """The record's compared part (:data:`NOT_COMPARED` and the timings of ``info`` and the certificate left out)."""
    rec = {k: v for k, v in record.items() if k not in NOT_COMPARED}
    if isinstance(rec.get("info"), dict):
        rec["info"] = {k: v for k, v in rec["info"].items() if not k.endswith("seconds")}
    if isinstance(rec.get("certificate"), dict):
        rec["certificate"] = {k: v for k, v in rec["certificate"].items() if k != "seconds"}
    return rec


def canonical(record: dict) -> str:
    """Canonical JSON text of :func:`compared`: equal texts mean equal bits."""
    from ..archive import line_of

    return line_of(compared(record), sort_keys=True)


def differences(archived: dict, rerun: dict) -> list[tuple[str, object, object]]:
    """The (dotted key, archived value, rerun value) where two records' compared parts differ in any bit."""
    from ..archive import leaves

    a, b = json.loads(canonical(archived)), json.loads(canonical(rerun))
    return [(key, x, y) for key, x, y in leaves(a, b) if json.dumps(x) != json.dumps(y)]


def machine_change(record: dict) -> str | None:
    """Why this machine may not give the record's bits, or None when it is the same kind of machine.

    Bits depend on the CPU kernels the libraries pick (OpenBLAS's ``architecture``, numpy's SIMD
    targets) and on the libraries' versions: the record's ``provenance`` names them (records made
    before 2026-11-26 do not: "unknown").  Compared: the dependencies' versions, each BLAS library's
    version and kernel, and numpy's SIMD targets when the record has them."""
    from ..provenance import environment_provenance

    prov, here = record.get("provenance") or {}, environment_provenance()
    if not prov.get("versions") or not prov.get("blas"):
        return "archived on an unknown machine (its record names no libraries)"
    if prov["versions"] != here["versions"]:
        changed = sorted(k for k in set(prov["versions"]) | set(here["versions"])
                         if prov["versions"].get(k) != here["versions"].get(k))
        return "other library versions: " + ", ".join(
            f"{k} {prov['versions'].get(k)} -> {here['versions'].get(k)}" for k in changed)
    kernels = lambda blas: sorted((b.get("version"), b.get("architecture")) for b in blas)  # noqa: E731
    if kernels(prov["blas"]) != kernels(here["blas"]):
        return (f"other BLAS kernels: {', '.join(f'{v} {a}' for v, a in kernels(prov['blas']))} -> "
                f"{', '.join(f'{v} {a}' for v, a in kernels(here['blas']))}")
    if prov.get("numpy_simd") is not None and prov["numpy_simd"] != here["numpy_simd"]:
        return f"other numpy SIMD targets: {prov['numpy_simd']} -> {here['numpy_simd']}"
    return None


def study_of(paper: str):
    from ..study.find import find_studies
    from ..study.reader import load_study

    return load_study(find_studies(paper)[0])


def candidates(paper: str, results: Path, experiments: list[str] | None = None) -> dict[str, list[Job]]:
    """Per experiment of the paper's study, its archived cells that its config still expands to, cheapest first."""
    from ..archive import Archive
    from ..config import expand
    from .layout import Layout, expected_config, history_sources

    study = study_of(paper)
    layout = Layout.of(results, quick=False)
    histories = history_sources(study)
    out = {}
    for name, e in study.experiments.items():
        if experiments and name not in experiments:
            continue
        archive = Archive.read(layout.archive(study, name), name)
        cells = {c.id: c for c in expand(expected_config(e, quick=False))}
        jobs = [Job(paper, name, cells[cid], rec, archived_cost(rec), name in histories, dict(e.env))
                for cid, rec in archive.records.items() if cid in cells]
        out[name] = sorted(jobs, key=lambda j: (j.cost, j.cell.id))
    return out


def sample(per_experiment: dict[str, list[Job]], n: int, how: str = "cheapest", seed: int = 0) -> dict[str, list[Job]]:
    """``n`` cells per experiment: the cheapest, or (``seeded``) drawn at random by a generator seeded
    with ``seed`` and a CRC of paper/experiment, then ordered cheapest first."""
    out = {}
    for name, jobs in per_experiment.items():
        if how == "seeded" and len(jobs) > n:
            key = zlib.crc32(f"{jobs[0].paper}/{name}".encode())
            pick = np.random.default_rng([seed, key]).choice(len(jobs), n, replace=False)
            jobs = sorted((jobs[i] for i in pick), key=lambda j: (j.cost, j.cell.id))
        out[name] = jobs[:n]
    return out


def cheapest_of_paper(paper: str, k: int = 2, results: Path = Path("results")) -> list[Job]:
    """The paper's ``k`` cheapest archived cells from ``k`` different experiments: the cheapest cell of
    each experiment, the ``k`` cheapest of those (ties by experiment name)."""
    firsts = [jobs[0] for jobs in candidates(paper, results).values() if jobs]
    return sorted(firsts, key=lambda j: (j.cost, j.experiment))[:k]


def within_budget(papers: dict[str, dict[str, list[Job]]], max_seconds: float = math.inf,
                  most: int | None = None) -> tuple[list[Job], list[Job]]:
    """(taken, left): one cell per experiment (of every paper) at a time, cheapest first, while the
    archived costs add up to at most ``max_seconds`` and at most ``most`` cells are taken."""
    queues = [list(jobs) for exps in papers.values() for jobs in exps.values()]
    taken, left, spent = [], [], 0.0
    rank = 0
    while any(len(q) > rank for q in queues):
        for job in sorted((q[rank] for q in queues if len(q) > rank), key=lambda j: (j.cost, j.paper, j.experiment)):
            if spent + job.cost <= max_seconds and (most is None or len(taken) < most):
                taken.append(job)
                spent += job.cost
            else:
                left.append(job)
        rank += 1
    return taken, left


def rerun(job: Job, out: Path) -> Outcome:
    """Rerun the cell into ``out/<paper>/<experiment>`` and compare it with its archived record."""
    from ..archive import differing
    from ..codehash import changed_code
    from ..config import bind_cell
    from ..errors import KernlearnError
    from ..experiment import run_cell
    from ..threads import environment
    from .layout import archived_record

    folder = out / job.paper / job.experiment
    start = time.perf_counter()
    try:
        with environment(job.env):
            record = run_cell(job.cell, folder, where=f"{job.paper}/{job.experiment}", force=True)
    except KernlearnError as exc:
        return Outcome(job, "failed", seconds=time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    new = archived_record(record, folder / job.cell.id, job.history)
    machine = machine_change(job.record)
    code = changed_code(job.record, bind_cell(job.cell, f"{job.paper}/{job.experiment}"))
    if canonical(new) == canonical(job.record):
        return Outcome(job, "identical", seconds=seconds, machine=machine, record=new, code=code)
    diff = differences(job.record, new)
    return Outcome(job, "rounding" if not differing(job.record, new) else "differs", diff, seconds, machine=machine,
                   record=new, code=code)


def shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def report(outcomes: list[Outcome], left: list[Job], echo=print) -> dict[str, dict[str, int]]:
    """Print the per-paper counts and the differing cells; returns paper -> counts."""
    counts: dict[str, dict[str, int]] = {}
    blank = {"rerun": 0, "identical": 0, "rounding": 0, "differs": 0, "failed": 0, "same machine, other bits": 0}
    for o in outcomes:
        c = counts.setdefault(o.job.paper, dict(blank))
        c["rerun"] += o.status != "failed"
        c[o.status] += 1
        c["same machine, other bits"] += o.status in ("rounding", "differs") and o.machine is None
    for job in left:
        counts.setdefault(job.paper, dict(blank))
    echo("| paper | cells rerun | bit-identical | differ within 1e-9 | differ beyond | failed | "
         "not bit-identical, archived on this kind of machine | not run (budget) |")
    echo("|:--|--:|--:|--:|--:|--:|--:|--:|")
    for paper, c in sorted(counts.items()):
        echo(f"| {paper} | {c['rerun']} | {c['identical']} | {c['rounding']} | {c['differs']} | {c['failed']} | "
             f"{c['same machine, other bits']} | {sum(j.paper == paper for j in left)} |")
    bad = [o for o in outcomes if o.status != "identical"]
    if bad:
        echo("")
        echo("Cells not bit-identical (key: archived -> rerun):")
    for o in bad:
        made = (o.job.record.get("provenance") or {}).get("git_commit", "?")[:10]
        echo(f"- {o.job.paper}/{o.job.experiment} {o.job.cell.id} (archived by {made}): {o.status}"
             + (f": {o.error}" if o.error else "") + (f"; {o.machine}" if o.machine else "; the same kind of machine")
             + (f"; computed by other code: {', '.join(o.code)}" if o.code else "; the same code"))
        for key, a, b in o.differences[:8]:
            echo(f"    {key}: {shown(a)} -> {shown(b)}")
        if len(o.differences) > 8:
            echo(f"    ... and {len(o.differences) - 8} more key(s)")
    return counts


def verify(papers: list[str], *, per_experiment: int = 2, max_seconds: float = 300.0, how: str = "cheapest",
           seed: int = 0, experiments: list[str] | None = None, out: Path | None = None,
           results: Path = Path("results"), echo=print) -> tuple[list[Outcome], list[Job]]:
    """Select and rerun; returns the outcomes and the cells left out by the budget."""
    chosen = {p: sample(candidates(p, results, experiments), per_experiment, how, seed) for p in papers}
    taken, left = within_budget(chosen, max_seconds)
    scratch = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="verify_archives_"))
    echo(f"{len(taken)} cell(s) to rerun (archived cost {sum(j.cost for j in taken):.1f} s), {len(left)} left "
         f"out by --max-seconds {max_seconds:g}; outputs in {scratch}", )
    outcomes, start = [], time.monotonic()
    for k, job in enumerate(taken, 1):
        if time.monotonic() - start >= max_seconds:
            left.extend(taken[k - 1:])
            echo(f"--max-seconds {max_seconds:g} spent: {len(taken) - k + 1} cell(s) not started")
            break
        o = rerun(job, scratch)
        outcomes.append(o)
        echo(f"[{k}/{len(taken)}] {job.paper}/{job.experiment} {job.cell.id}: {o.status} ({o.seconds:.1f} s, "
             f"archived {job.cost:.1f} s)", )
    return outcomes, left


def verify_study(paper: str, n: int, *, results: Path, out: Path | None = None, echo=print) -> list[Outcome]:
    """``reproduce PAPER --verify N``: rerun ``n`` archived cells of the paper's study (one per experiment
    at a time, cheapest first), print how many are bit-identical (:func:`report`) and return the outcomes."""
    taken, _ = within_budget({paper: candidates(paper, results)}, most=n)
    scratch = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix=f"verify_{paper}_"))
    echo(f"[{paper}] --verify {n}: {len(taken)} archived cell(s) rerun (archived cost "
         f"{sum(j.cost for j in taken):.1f} s) into {scratch}")
    outcomes = []
    for k, job in enumerate(taken, 1):
        outcomes.append(rerun(job, scratch))
        echo(f"[{paper}] [{k}/{len(taken)}] {job.experiment} {job.cell.id}: {outcomes[-1].status} "
             f"({outcomes[-1].seconds:.1f} s, archived {job.cost:.1f} s)")
    report(outcomes, [], echo)
    return outcomes
