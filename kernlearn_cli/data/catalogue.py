"""The dataset catalogue: data home, mirror, download and sha256 verification.

Every catalogue file lives at ``<data home>/<dir>/<filename>``, the layout of
``shared/datasets``. :func:`fetch` puts a file there the first time it is needed:
from ``KERNLEARN_DATA_MIRROR`` when set (a local folder or a ``file://``,
``http://`` or ``https://`` prefix with the same layout), else from the canonical
URL. The bytes go to a temporary file in the destination folder, are checked
against the sha256 recorded below, and only then renamed into place, so a file in
the data home is always complete and verified.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import urllib.request
from pathlib import Path
from typing import NamedTuple

from ..atomic import temp_beside
from ..errors import ConfigError, DataError
from ..inputs import sha256_file
from ..params import did_you_mean
from ..builtins import BUILTINS

#: Seconds to wait for a download source to answer.
TIMEOUT = 60


class File(NamedTuple):
    """One catalogue file: folder in the data home, file name, canonical URL, sha256."""

    dir: str
    filename: str
    url: str
    sha256: str

    @property
    def relpath(self) -> str:
        return f"{self.dir}/{self.filename}"


class Check(NamedTuple):
    """One row of :func:`verify`: status ``ok``, ``mismatch``, ``bundled (scikit-learn)`` or
    ``not fetched (kernlearn datasets fetch NAME)``."""

    dataset: str
    file: str
    status: str


def _files(folder: str, base: str, *name_sha: tuple[str, str]) -> tuple[File, ...]:
    return tuple(File(folder, name, base + name, sha) for name, sha in name_sha)


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

#: Catalogue name -> its files (data file first). Checksums of the canonical
#: downloads, as verified in shared/datasets/MANIFEST.json.
CATALOGUE: dict[str, tuple[File, ...]] = {
    "pendigits": _files(
        "pendigits", _UCI + "pendigits/",
        ("pendigits.tra", "e2b9eb9f0d0467e2b64a4816a3420edf2b8043447576f4b84337aba44a9f97d3"),
        ("pendigits.tes", "8bd03229c5c5291fefe43e45465dd948d2645bf23328b9d993e0b777666b2015")),
    "breast_cancer_wisconsin": _files(
        "breast_cancer_wisconsin", _UCI + "breast-cancer-wisconsin/",
        ("breast-cancer-wisconsin.data", "402c585309c399237740f635ef9919dc512cca12cbeb20de5e563a4593f22b64"),
        ("breast-cancer-wisconsin.names", "4bcd6e4e0e4f8ae54e313ebbf18013cc83b6827a207123707687f8f19d29dd2c")),
    "sonar": _files(
        "sonar", _UCI + "undocumented/connectionist-bench/sonar/",
        ("sonar.all-data", "e90434cdbf00fcf93ffa911fe447ae25606979658e60f1d32e155c3b5240234d"),
        ("sonar.names", "f3d650ae9772b1a5021d977fe9f8194259f3dddec1922128c8104cf1c4e7250f")),
    "ionosphere": _files(
        "ionosphere", _UCI + "ionosphere/",
        ("ionosphere.data", "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd"),
        ("ionosphere.names", "a368e4fd9b910a3ac97fa306add17446c13105367e17f5b691455db2ea8411cf")),
    "heart": _files(
        "statlog_heart", _UCI + "statlog/heart/",
        ("heart.dat", "f5f3b4204c285bafadd85cb735f38b47689f2be7047feb172dcbeab648110bf9")),
    "wine": _files(
        "wine", _UCI + "wine/",
        ("wine.data", "6be6b1203f3d51df0b553a70e57b8a723cd405683958204f96d23d7cd6aea659"),
        ("wine.names", "6b3c2c7cae37d0f149ed1380a3520f22c38bec658184a31df6d2917750bcb9d9")),
    "glass": _files(
        "glass", _UCI + "glass/",
        ("glass.data", "dd67373f4baf2807345df02cbfef2093d342e61ad0d82a4fb79af43ef8ce449d"),
        ("glass.names", "5921d4b93ed323aa092a2c17cc0bab3bafbf66b7085f5d98880d9c5ea0c51d42")),
    "iris": _files(
        "iris", _UCI + "iris/",
        ("iris.data", "6f608b71a7317216319b4d27b4d9bc84e6abd734eda7872b71a458569e2656c0"),
        ("bezdekIris.data", "0fed2a99db77ec533a62dc66894d3ec6df3b58b6a8f3cf4a6b47e4086b7f97dc"),
        ("iris.names", "71a09fb3ee237614cdb9c09d06e8ae1f610ce2a274c0d77272fea8a233e5eea3")),
    "soybean_small": _files(
        "soybean_small", _UCI + "soybean/",
        ("soybean-small.data", "f096d1675db0270071311c9f46813b204372370bd68252a5a417bdcff5879717"),
        ("soybean-small.names", "927d1206b42e51ceb05a5d5e79bae68764c4906e0569f8f19a08772f930d2435")),
    "spambase": _files(
        "spambase", _UCI + "spambase/",
        ("spambase.data", "ebec58cfca94ea61c77df632314acae15bad410f4769d38b1a66cb41050e3431"),
        ("spambase.names", "4aa59027313e8f25027b4a8946f080697378392d4858e5725a01c97b54d22255"),
        ("spambase.DOCUMENTATION", "725ea25e75208e07fc92cfdf56f6851578d35c1a928fef197eb4e9c4e6656411")),
    "uspst": _files(
        "uspst", "https://hastie.su.domains/ElemStatLearn/datasets/",
        ("zip.test.gz", "8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f"),
        ("zip.info.txt", "927ca750c4117b61a71def180d5e4f00f1323a4b2c9cd990f576aa8def3505f1")),
    "adult_a1a": _files(
        "adult_libsvm", _LIBSVM,
        ("a1a", "eb54c45f1bdb51286f803dd092eb8202b44637a858fc6c4e533a2d64a0d94b4e"),
        ("a1a.t", "0212d0c4a3996fe6fb6a0ab54033d9f4fa4b60369b6e3bb141821d9ffc40c04d")),
    "adult_a2a": _files(
        "adult_libsvm", _LIBSVM,
        ("a2a", "535782f1be62e60938d8accb1573043542b3ac11265522927574dcbb28360a2f"),
        ("a2a.t", "5b4cd01725b4c364acda943067b4b859a48f1b9c43207f828b8e15e1e0f09767")),
    "adult_a3a": _files(
        "adult_libsvm", _LIBSVM,
        ("a3a", "2d513572f103d25e84bebe4b9f2f52ee9445764b5a393caff7db9c482cfc1ee4"),
        ("a3a.t", "c46c9ea67e06f38e81d59c4883e3d670cbe55de6a5c32564b38fc89dcda3adac")),
}


def data_home() -> Path:
    """The folder downloaded datasets live in.

    ``KERNLEARN_DATA`` when set; else the repository's top-level ``datasets/``
    when kernlearn runs from a checkout (a ``pyproject.toml`` beside the
    package); else ``~/.cache/kernlearn``.
    """
    env = os.environ.get("KERNLEARN_DATA", "").strip()
    if env:
        return Path(env).expanduser().absolute()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file():
        return repo / "datasets"
    return Path.home() / ".cache" / "kernlearn"


def catalogue_names() -> list[str]:
    """Names of the datasets :func:`fetch` and :func:`verify` know, sorted."""
    return sorted(CATALOGUE)


def _entry(name: str) -> tuple[File, ...]:
    if name not in CATALOGUE:
        raise ConfigError(f"'{name}' is not a catalogue dataset.{did_you_mean(name, CATALOGUE)} "
                          f"Catalogue datasets: {', '.join(catalogue_names())}.")
    return CATALOGUE[name]


def _sources(f: File) -> list[str]:
    """URLs to try for ``f``: the mirror first (when set), then the canonical URL."""
    mirror = os.environ.get("KERNLEARN_DATA_MIRROR", "").strip()
    if not mirror:
        return [f.url]
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", mirror):
        mirror = Path(mirror).expanduser().resolve().as_uri()
    return [f"{mirror.rstrip('/')}/{f.relpath}", f.url]


def _download(src: str, dest: Path, f: File) -> None:
    """Copy ``src`` to ``dest`` through a temporary file, keeping it only if the sha256 matches."""
    tmp = str(temp_beside(dest))
    try:
        h = hashlib.sha256()
        with open(tmp, "wb") as out, urllib.request.urlopen(src, timeout=TIMEOUT) as resp:
            for chunk in iter(lambda: resp.read(1 << 20), b""):
                h.update(chunk)
                out.write(chunk)
        if h.hexdigest() != f.sha256:
            raise DataError(
                f"sha256 mismatch for {f.relpath} downloaded from {src}: expected {f.sha256}, "
                f"got {h.hexdigest()}. The download was discarded; the source holds a different "
                f"or corrupted file. Fix or unset KERNLEARN_DATA_MIRROR, or place the correct file "
                f"at {dest}.")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _ensure(name: str, f: File) -> Path:
    dest = data_home() / f.dir / f.filename
    if dest.is_file() and sha256_file(dest) == f.sha256:
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create the data folder {dest.parent} ({e}); "
                        f"set KERNLEARN_DATA to a writable folder.") from None
    tried = []
    for src in _sources(f):
        try:
            _download(src, dest, f)
            return dest
        except (OSError, ValueError, http.client.HTTPException) as e:
            tried.append(f"{src} ({e})")
    raise DataError(
        f"could not obtain {f.relpath} for dataset '{name}'; tried: {'; '.join(tried)}. "
        f"On a machine without internet access set KERNLEARN_DATA_MIRROR to a folder or URL laid "
        f"out as <dir>/<filename> (like shared/datasets) that holds it, or copy the file "
        f"(sha256 {f.sha256}) to {dest}.")


def fetch(name: str) -> dict[str, Path]:
    """Make sure every file of catalogue dataset ``name`` is in the data home.

    A file already present with the right sha256 is used as is. Otherwise it is
    taken from ``KERNLEARN_DATA_MIRROR`` (when set), else from its canonical URL.
    A download whose sha256 differs raises :class:`DataError` at once (the other
    source is not tried) and leaves nothing behind.

    Returns
    -------
    dict
        File name -> path in the data home.
    """
    return {f.filename: _ensure(name, f) for f in _entry(name)}


def verify(name: str | None = None) -> list[Check]:
    """Check the files of one catalogue dataset (or all) in the data home, without downloading.

    A file present in the data home is ``ok`` when its sha256 matches and ``mismatch``
    (corrupt) otherwise. An absent file is ``not fetched (kernlearn datasets fetch
    NAME)``: it is downloaded when a run first needs it, or by that command. For
    ``iris`` and ``wine``, whose datasets kernlearn loads from scikit-learn's bundled
    copies (the catalogue keeps the UCI originals only for comparison), an absent file
    is ``bundled (scikit-learn)``: nothing needs fetching.

    Returns
    -------
    list of Check
        ``(dataset, file, status)`` rows; file is ``<dir>/<filename>``.
    """
    bundled = set(BUILTINS["data.bundled"]["datasets"])
    rows = []
    for n in catalogue_names() if name is None else [name]:
        for f in _entry(n):
            path = data_home() / f.dir / f.filename
            if path.is_file():
                status = "ok" if sha256_file(path) == f.sha256 else "mismatch"
            else:
                status = "bundled (scikit-learn)" if n in bundled else f"not fetched (kernlearn datasets fetch {n})"
            rows.append(Check(n, f.relpath, status))
    return rows


def provenance(name: str, filenames: list[str] | None = None) -> dict:
    """``meta`` entries recording where a loader's files came from (URL and sha256)."""
    return {"catalogue": name,
            "files": {f.relpath: {"url": f.url, "sha256": f.sha256} for f in _entry(name)
                      if filenames is None or f.filename in filenames}}
