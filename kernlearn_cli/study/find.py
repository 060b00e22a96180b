"""Finding studies: the papers with a study file under a folder (:func:`study_names`), and the
study files a paper's name, ``all``, a folder or a file means (:func:`find_studies`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError

STUDY_FILE = "study.yaml"
#: Where ``kernlearn reproduce PAPER`` looks for ``PAPER/study.yaml`` (relative to the working directory).
STUDIES_DIR = Path("configs") / "papers"


def study_names(root: Path = STUDIES_DIR) -> list[str]:
    """The papers with a study file under ``root``."""
    return sorted(p.parent.name for p in Path(root).glob(f"*/{STUDY_FILE}"))


def find_studies(paper: str, root: Path = STUDIES_DIR) -> list[Path]:
    """Study files for ``paper`` (a paper name, ``all``, a study file or its folder)."""
    given = Path(paper)
    if given.is_file():
        return [given]
    if (given / STUDY_FILE).is_file():
        return [given / STUDY_FILE]
    names = study_names(root)
    if paper == "all":
        if not names:
            raise ConfigError(f"reproduce all: no study files under '{root}' (run from the project's folder, "
                              f"where configs/papers/<paper>/study.yaml live).")
        return [Path(root) / n / STUDY_FILE for n in names]
    if paper not in names:
        from ..params import did_you_mean

        raise ConfigError(f"reproduce: no study '{paper}' (looked for {Path(root) / paper / STUDY_FILE}).{did_you_mean(paper, names)} "
                          f"Valid: {', '.join(names + ['all']) or 'all'}, or the path of a study.yaml.")
    return [Path(root) / paper / STUDY_FILE]
