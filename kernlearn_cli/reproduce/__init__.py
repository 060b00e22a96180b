"""``kernlearn reproduce``: run a study's experiments (here, or as SLURM job arrays), then build its
tables, figures, verdicts and page.

Layout under the results root R (``--results``, default ``results``; ``--quick`` uses ``R/quick``):
experiments in ``R/<paper>/<out>`` (git-ignored: factors and records of this machine), their record
archives in ``R/records/<paper>/<experiment>.jsonl.gz`` (committed, :mod:`kernlearn_cli.archive`),
tables in ``R/tables``, figures in ``R/figures``, the verdicts in ``R/tables/<paper>_verdicts.{csv,md}``.
The paper's page goes to ``docs/papers/<paper>.md`` (quick runs: ``R/quick/docs``).

Tables, figures, verdicts and pages are built from the archives alone, so a fresh clone rebuilds them
(``--no-run``) and finished cells travel with the repository: a run skips every archived cell, adds each
cell it finishes to the archive (every few seconds, and at the end), and a time budget (``--budget``)
starts no cell once spent.  Before running or building, the finished cells of a results folder that
the archive lacks are added to it (so a run killed before it archived loses nothing on this machine,
and a SLURM collect job archives its arrays' cells).

One job per module, in one-way layers (each imports only those above it)::

    layout    where a reproduction writes, and the record archives (open, add a folder, merge)
    plan      checking a study, and the cells and compute left (``--check``, ``--plan``)
    launch    running the experiments here, or submitting them as SLURM job arrays
    build     a study's tables, figures and verdicts from its archives
    pages     the paper's page, docs/status.md's table and the README's status line
    command   ``kernlearn reproduce``: check, run or submit, build, write the pages
"""
