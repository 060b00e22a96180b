"""Dataset loaders, the download catalogue and the data checks.

The catalogue tests read from the shared mirror (``../shared/datasets`` beside the
clone) into a temporary data home, never from the network; they are skipped when
the mirror is absent.
"""

import functools
import http.server
import inspect
import json
import os
import shutil
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kernlearn_cli.data import bundled, catalogue, uci, user
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.registry import datasets

from helpers import mirror_dir


@pytest.fixture(scope="module")
def manifest():
    mirror = mirror_dir()
    if mirror is None or not (mirror / "MANIFEST.json").is_file():
        pytest.skip(f"no MANIFEST.json in the dataset mirror ({mirror})")
    return {d["directory"]: d for d in json.loads((mirror / "MANIFEST.json").read_text())["datasets"]}


def counts(ds):
    return {str(ds.classes[c]): k for c, k in Counter(ds.y.tolist()).items()}


def check_types(ds, n, d):
    assert ds.X.shape == (n, d) and ds.X.dtype == np.float64
    assert ds.y.dtype == np.int64 and sorted(set(ds.y.tolist())) == list(range(len(ds.classes)))


# ---------------------------------------------------------------- catalogue

def test_catalogue_matches_manifest(manifest):
    listed = {(f["filename"], f["sha256"], d["canonical_url"][f["filename"]])
              for d in manifest.values() for f in d["files"]}
    ours = {(f.filename, f.sha256, f.url) for files in catalogue.CATALOGUE.values() for f in files}
    assert ours == listed
    for files in catalogue.CATALOGUE.values():
        assert all(f.dir in manifest for f in files)


@pytest.mark.parametrize("loader, directory, args, features", [
    (uci.sonar, "sonar", {}, 60), (uci.ionosphere, "ionosphere", {}, 34),
    (uci.heart, "statlog_heart", {}, 13), (uci.glass, "glass", {}, 9),
    (uci.soybean_small, "soybean_small", {}, 35), (uci.spambase, "spambase", {}, 57),
    (uci.uspst, "uspst", {}, 256),
    (uci.breast_cancer_wisconsin, "breast_cancer_wisconsin", {"missing": "impute"}, 9),
])
def test_catalogue_loader_matches_manifest(home, manifest, loader, directory, args, features):
    ds = loader(**args)
    verified = manifest[directory]["verified"]
    check_types(ds, verified["rows"], features)
    assert counts(ds) == verified["class_counts"]
    assert all(v["sha256"] for v in ds.meta["files"].values())


def test_breast_cancer_wisconsin_drop(home):
    ds = uci.breast_cancer_wisconsin()
    check_types(ds, 683, 9)
    assert counts(ds) == {"2": 444, "4": 239} and ds.meta["missing"] == "drop"


@pytest.mark.parametrize("k", [1, 2, 3])
def test_adult(home, manifest, k):
    verified = manifest["adult_libsvm"]["verified"]
    load = getattr(uci, f"adult_a{k}a")
    for split, files in (("train", [f"a{k}a"]), ("test", [f"a{k}a.t"]))[: 2 if k == 1 else 1]:
        ds = load(split=split)
        check_types(ds, sum(verified[f]["rows"] for f in files), 123)
        assert counts(ds) == {"1": sum(verified[f]["+1"] for f in files),
                              "-1": sum(verified[f]["-1"] for f in files)}
        assert set(np.unique(ds.X)) == {0.0, 1.0}
    if k == 1:
        assert uci.adult_a1a(split="all").n == 1605 + 30956


def test_bundled_and_uci_files_of_iris_wine(home, manifest):
    for name, directory in (("iris", "iris"), ("wine", "wine")):
        ds = getattr(bundled, name)()
        check_types(ds, manifest[directory]["verified"]["rows"], 4 if name == "iris" else 13)
        assert sorted(counts(ds).values()) == sorted(manifest[directory]["verified"]["class_counts"].values())
        catalogue.fetch(name)
    uci_iris = np.loadtxt(home / "iris" / "bezdekIris.data", delimiter=",", usecols=range(4))
    assert np.array_equal(bundled.iris().X, uci_iris)
    assert bundled.breast_cancer().X.shape == (569, 30) and bundled.digits().X.shape == (1797, 64)


def test_pendigits_subset(home):
    ds = uci.pendigits()
    check_types(ds, 317, 16)
    assert ds.classes == [3, 8, 9] and ds.meta["subset_seed"] == 0 and "subset_rule" in ds.meta
    assert np.array_equal(uci.pendigits().X, ds.X)
    assert not np.array_equal(uci.pendigits(subset_seed=1).X, ds.X)
    assert uci.pendigits(n=0).n == 3165 and uci.pendigits(n=10**6).n == 3165
    assert uci.pendigits(digits=[0, 1], n=0).n == 780 + 779 + 363 + 364


@pytest.mark.parametrize("call, key", [
    (lambda: uci.adult_a1a(split="foo"), "split"),
    (lambda: uci.breast_cancer_wisconsin(missing="x"), "missing"),
    (lambda: uci.pendigits(digits=[3, 10]), "digits"),
    (lambda: uci.pendigits(n=-1), "n"),
    (lambda: catalogue.fetch("sonr"), "sonar"),
])
def test_invalid_values(empty_home, call, key):
    with pytest.raises(ConfigError, match=key):
        call()


def test_home_fixture_reads_the_configured_mirror(tmp_path, monkeypatch, request):
    """The ``home`` fixture feeds from ``KERNLEARN_DATA_MIRROR`` when it names a folder (it used to
    take ../shared/datasets whatever the variable said, and skip where that folder is absent)."""
    if mirror_dir() is None:
        pytest.skip("no dataset mirror to copy sonar from")
    shutil.copytree(mirror_dir() / "sonar", tmp_path / "mirror" / "sonar")
    monkeypatch.setenv("KERNLEARN_DATA_MIRROR", str(tmp_path / "mirror"))
    home = request.getfixturevalue("home")
    assert catalogue.fetch("sonar")["sonar.all-data"] == home / "sonar" / "sonar.all-data"
    assert Path(os.environ["KERNLEARN_DATA_MIRROR"]) == tmp_path / "mirror"


def test_fetch_keeps_verified_file_and_verify(home, monkeypatch):
    paths = catalogue.fetch("sonar")
    assert paths["sonar.all-data"] == home / "sonar" / "sonar.all-data"
    monkeypatch.setenv("KERNLEARN_DATA_MIRROR", str(home.parent / "nowhere"))
    monkeypatch.setitem(catalogue.CATALOGUE, "sonar", tuple(
        f._replace(url="file:///nonexistent/" + f.filename) for f in catalogue.CATALOGUE["sonar"]))
    assert catalogue.fetch("sonar") == paths  # present and verified: no source needed
    assert {r.status for r in catalogue.verify("sonar")} == {"ok"}
    assert {r.status for r in catalogue.verify() if r.dataset == "glass"} == {
        "not fetched (kernlearn datasets fetch glass)"}
    assert len(catalogue.verify()) == sum(len(f) for f in catalogue.CATALOGUE.values())
    paths["sonar.all-data"].write_text("tampered")
    assert catalogue.verify("sonar")[0].status == "mismatch"
    with pytest.raises(DataError, match="KERNLEARN_DATA_MIRROR") as err:
        catalogue.fetch("sonar")
    assert "nowhere" in str(err.value) and "file:///nonexistent/sonar.all-data" in str(err.value)


def test_verify_unfetched_and_bundled_are_not_missing(empty_home, inproc):
    """Files not downloaded yet are 'not fetched', iris and wine (loaded from scikit-learn) 'bundled'."""
    assert {r.status for r in catalogue.verify("iris")} == {"bundled (scikit-learn)"}
    assert {r.status for r in catalogue.verify("glass")} == {"not fetched (kernlearn datasets fetch glass)"}
    code, out, err = inproc("datasets", "verify")
    assert code == 0 and err == "" and "missing" not in out
    lines = out.splitlines()
    assert len(lines) == sum(len(f) for f in catalogue.CATALOGUE.values())
    assert any(line.split()[:2] == ["wine", "wine/wine.data"] and line.endswith("  bundled (scikit-learn)")
               for line in lines)
    assert any(line.split()[:2] == ["sonar", "sonar/sonar.all-data"]
               and line.endswith("  not fetched (kernlearn datasets fetch sonar)") for line in lines)


def test_verify_fetched_bundled_files_checked(home, inproc):
    catalogue.fetch("iris")
    assert {r.status for r in catalogue.verify("iris")} == {"ok"}
    (home / "iris" / "iris.names").write_text("tampered")
    code, out, _ = inproc("datasets", "verify", "iris")
    assert code == 1 and out.splitlines()[-1].split() == ["iris", "iris/iris.names", "mismatch"]


def test_tampered_mirror_rejected(home, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    shutil.copytree(mirror_dir() / "sonar", mirror / "sonar")
    data = mirror / "sonar" / "sonar.all-data"
    data.write_bytes(data.read_bytes().replace(b"0.0200", b"0.0201", 1))
    monkeypatch.setenv("KERNLEARN_DATA_MIRROR", mirror.as_uri())  # file:// prefix form
    with pytest.raises(DataError, match="sonar/sonar.all-data") as err:
        uci.sonar()
    msg = str(err.value)
    assert "sonar/sonar.all-data" in msg and catalogue.CATALOGUE["sonar"][0].sha256 in msg
    assert catalogue.sha256_file(data) in msg and mirror.as_uri() in msg
    assert not list((home / "sonar").iterdir())  # neither the file nor a temporary


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_http_mirror(home, monkeypatch):
    handler = functools.partial(QuietHandler, directory=str(mirror_dir()))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        monkeypatch.setenv("KERNLEARN_DATA_MIRROR", f"http://127.0.0.1:{server.server_address[1]}/")
        try:
            assert uci.heart().n == 270
        finally:
            server.shutdown()


def test_data_home_default(monkeypatch):
    monkeypatch.delenv("KERNLEARN_DATA", raising=False)
    assert catalogue.data_home() == Path(catalogue.__file__).resolve().parents[2] / "datasets"


def test_loaders_registered_with_keyword_params():
    names = {"iris", "wine", "breast_cancer", "digits", "pendigits", "sonar", "ionosphere", "heart",
             "glass", "soybean_small", "breast_cancer_wisconsin", "spambase", "uspst", "adult_a1a",
             "adult_a2a", "adult_a3a", "gyrb", "files"}
    assert names <= set(datasets._entries)
    for name in names:
        entry = datasets._entries[name]
        assert entry.summary
        for p in inspect.signature(entry.func).parameters.values():
            assert p.kind is p.KEYWORD_ONLY and p.annotation is not p.empty and p.default is not p.empty


# ---------------------------------------------------------------- gyrb and files

def stand_in_kernel(n=52, seed=0):
    """A synthetic PSD stand-in with GyrB's size, not the real GyrB data."""
    G = np.random.default_rng(seed).normal(size=(n, 5))
    return G @ G.T, np.repeat(["Burkholderia", "Moraxella", "Pseudomonas"], [18, 17, 17])


def test_gyrb_absent(empty_home):
    with pytest.raises(DataError, match="Tsuda") as err:
        user.gyrb()
    assert str(empty_home / "gyrb") in str(err.value) and "kernel.npy" in str(err.value)
    assert "labels.txt" in str(err.value)


def test_gyrb_stand_in_loads(empty_home, tmp_path):
    K, labels = stand_in_kernel()
    (empty_home / "gyrb").mkdir(parents=True)
    np.savetxt(empty_home / "gyrb" / "kernel.txt", K)
    (empty_home / "gyrb" / "labels.txt").write_text("\n".join(labels) + "\n")
    ds = user.gyrb()
    assert ds.X is None and ds.K.shape == (52, 52) and np.array_equal(ds.K, ds.K.T)
    assert np.allclose(ds.K, K) and ds.classes == ["Burkholderia", "Moraxella", "Pseudomonas"]
    np.save(tmp_path / "kernel.npy", K)
    np.save(tmp_path / "labels.npy", np.repeat([0, 1, 2], [18, 17, 17]))
    assert user.gyrb(path=str(tmp_path)).classes == [0, 1, 2]


@pytest.mark.parametrize("bad, match", [
    (lambda K: K - 2 * np.eye(52) * np.abs(K).max(), "not positive semidefinite"),
    (lambda K: K + np.triu(np.ones_like(K), 1), "not symmetric"),
    (lambda K: np.where(np.eye(52, dtype=bool) & (np.arange(52) == 7), np.nan, K), "row 7, column 7"),
    (lambda K: K[:, :51], "square"),
])
def test_bad_kernels_rejected(tmp_path, bad, match):
    K, labels = stand_in_kernel()
    np.save(tmp_path / "kernel.npy", bad(K))
    np.savetxt(tmp_path / "labels.txt", labels, fmt="%s")
    with pytest.raises(DataError, match=match):
        user.gyrb(path=str(tmp_path))
    with pytest.raises(DataError, match=match):
        user.files(kernel=str(tmp_path / "kernel.npy"))


def test_files_loader(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = np.arange(12.0).reshape(4, 3)
    np.save("x.npy", X)
    Path("x.csv").write_text("a,b,c\n" + "\n".join(",".join(map(str, r)) for r in X) + "\n")
    Path("y.txt").write_text("cat\ndog\ncat\nemu\n")
    for features in ("x.npy", "x.csv"):
        ds = user.files(features=features, labels="y.txt")
        assert np.array_equal(ds.X, X) and ds.y.tolist() == [0, 1, 0, 2] and ds.classes == ["cat", "dog", "emu"]
    np.save("y.npy", np.array([2, 5, 2, 5]))
    assert user.files(features="x.npy", labels="y.npy").classes == [2, 5]
    assert user.files(features="x.npy").y is None
    K = X @ X.T
    np.save("k.npy", K)
    assert np.array_equal(user.files(kernel="k.npy").K, K)


@pytest.mark.parametrize("kwargs, match, error", [
    ({}, "exactly one", ConfigError),
    ({"features": "x.npy", "kernel": "k.npy"}, "exactly one", ConfigError),
    ({"features": "missing.npy"}, "missing.npy not found", DataError),
    ({"features": "x.dat"}, r"valid: \.npy, \.csv, \.txt", DataError),
    ({"features": "x.npy", "header": True}, "a .npy array has neither", ConfigError),
    ({"kernel": "x.csv"}, r"valid: \.npy", DataError),
    ({"features": "v.npy"}, "2-D", DataError),
    ({"features": "bad.csv"}, r"'oops' at row 1, column 2", DataError),
    ({"features": "nan.npy"}, "row 2, column 1", DataError),
    ({"features": "x.npy", "labels": "short.txt"}, "3 labels for 4 points", DataError),
])
def test_files_loader_errors(tmp_path, monkeypatch, kwargs, match, error):
    monkeypatch.chdir(tmp_path)
    X = np.arange(12.0).reshape(4, 3)
    np.save("x.npy", X)
    Path("x.dat").write_text("1 2\n")
    Path("x.csv").write_text("1,2\n")
    np.save("v.npy", np.ones(4))
    Path("bad.csv").write_text("1,2,3\n4,5,oops\n")
    X[2, 1] = np.nan
    np.save("nan.npy", X)
    Path("short.txt").write_text("a\nb\nc\n")
    with pytest.raises(error, match=match):
        user.files(**kwargs)


def test_files_reads_txt_features(tmp_path, monkeypatch):
    """README and ``embed --help`` name .txt features: whitespace- or comma-delimited, as read_matrix reads text."""
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).normal(size=(5, 3))
    np.savetxt("ws.txt", X)
    np.savetxt("comma.txt", X, delimiter=",", header="a,b,c", comments="")
    for name in ("ws.txt", "comma.txt"):
        assert np.array_equal(user.files(features=name).X, X)


def test_files_refuses_pandas_index_column_unless_told(tmp_path, monkeypatch):
    """``DataFrame.to_csv()`` writes its index as a first column under an empty header field: read as a
    feature it changes every distance (iris k-NN 0.970 -> 0.986). Refused, or dropped when told."""
    pd = pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(1).normal(size=(6, 3))
    pd.DataFrame(X, columns=["a", "b", "c"]).to_csv("named.csv")
    pd.DataFrame(X).to_csv("numbered.csv")                        # header ',0,1,2'
    pd.DataFrame(X).iloc[::-1].to_csv("shuffled.csv")            # index 5, 4, ..., 0
    for name in ("named.csv", "numbered.csv", "shuffled.csv"):
        with pytest.raises(DataError, match=r"empty field.*to_csv\(path, index=False\).*index_column: true"):
            user.files(features=name)
    assert np.array_equal(user.files(features="named.csv", index_column=True).X, X)
    assert np.array_equal(user.files(features="numbered.csv", index_column=True).X, X)
    as_feature = user.files(features="named.csv", index_column=False).X
    assert np.array_equal(as_feature, np.column_stack([np.arange(6.0), X]))


def test_files_numeric_header_is_refused_or_taken_as_told(tmp_path, monkeypatch):
    """A first line 0,1,...,d-1 (to_csv(index=False) of unnamed columns) was read as data, and the error then
    blamed the labels file ('4 labels for 5 points'). No row is dropped on a guess: refused, or as told."""
    pd = pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(2).normal(size=(4, 3))
    pd.DataFrame(X).to_csv("x.csv", index=False)
    Path("y.txt").write_text("a\nb\na\nb\n")
    with pytest.raises(DataError, match=r"x.csv: the first line '0,1,2' holds the column numbers.*header: true.*"
                                        r"header: false"):
        user.files(features="x.csv", labels="y.txt")
    assert np.array_equal(user.files(features="x.csv", labels="y.txt", header=True).X, X)
    assert np.array_equal(user.files(features="x.csv", header=False).X, np.vstack([[0.0, 1.0, 2.0], X]))
    Path("words.csv").write_text("a,b,c\n" + "\n".join(",".join(map(repr, r)) for r in X))
    with pytest.raises(DataError, match="non-numeric value 'a' at row 0"):
        user.files(features="words.csv", header=False)


def test_files_refuses_a_label_table(tmp_path, monkeypatch):
    """pandas' Series.to_csv() writes 'index,label' lines under a header: each line was one label, so every
    point got a class of its own. A file whose every line holds a comma is refused."""
    pd = pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.arange(12.0).reshape(4, 3))
    for header in (True, False):               # header=False: 4 lines '0,0', '1,1', ... were 4 classes
        pd.Series([0, 1, 0, 1]).to_csv("y.csv", header=header)
        with pytest.raises(DataError, match=r"y.csv: every line holds a comma.*index=False, header=False"):
            user.files(features="x.npy", labels="y.csv")
    pd.Series([0, 1, 0, 1]).to_csv("y.csv", index=False, header=False)
    assert user.files(features="x.npy", labels="y.csv").y.tolist() == [0, 1, 0, 1]


def _user_files(folder: Path) -> None:
    """A tiny fixture of every format the user loaders read, plus decoys they must not read."""
    K, labels = stand_in_kernel(n=9)
    labels = np.repeat(["a", "b", "c"], 3)
    folder.mkdir(parents=True, exist_ok=True)
    for sub, kernel, labs in (("npy", "kernel.npy", "labels.npy"), ("txt", "kernel.txt", "labels.txt"),
                              ("csv", "kernel.csv", "labels.csv"), ("mixed", "kernel.txt", "labels.npy")):
        (folder / sub).mkdir()
        if kernel.endswith(".npy"):
            np.save(folder / sub / kernel, K)
        else:
            np.savetxt(folder / sub / kernel, K, delimiter="," if kernel.endswith(".csv") else " ")
        if labs.endswith(".npy"):
            np.save(folder / sub / labs, labels)
        else:
            (folder / sub / labs).write_text("\n".join(labels) + "\n")
    np.savetxt(folder / "npy" / "kernel.txt", K + 1.0)          # decoys: gyrb takes kernel.npy before these
    (folder / "npy" / "labels.csv").write_text("\n".join(labels[::-1]) + "\n")
    X = np.arange(27.0).reshape(9, 3) % 7
    np.save(folder / "X.npy", X)
    (folder / "X.csv").write_text("a,b,c\n" + "\n".join(",".join(map(str, r)) for r in X) + "\n")
    (folder / "y.txt").write_text("\n".join(labels) + "\n")
    np.save(folder / "K.npy", K)


def test_every_user_file_loaders_recorded_inputs_are_the_files_it_read(tmp_path, monkeypatch, empty_home,
                                                                       files_read):
    """For each loader of user files (``data.user``: gyrb, files) in each of its layouts: the files
    recorded in ``meta["inputs"]`` (whose sha256 every record carries, so that an edited file makes its
    cells run again) are exactly the files the loader opened, each with the sha256 of its content.  A
    loader recording fewer (the audit's gyrb hashing only its kernel file: an edited labels file went
    unnoticed) or more fails."""
    import hashlib

    from kernlearn_cli.builtins import BUILTINS

    monkeypatch.chdir(tmp_path)
    _user_files(tmp_path / "data")
    (empty_home / "gyrb").mkdir(parents=True)
    for f in (tmp_path / "data" / "txt").iterdir():
        shutil.copy(f, empty_home / "gyrb" / f.name)
    calls = {("gyrb", "home"): lambda: user.gyrb()}
    calls.update({("gyrb", sub): functools.partial(user.gyrb, path=f"data/{sub}") for sub in ("npy", "txt", "csv",
                                                                                                "mixed")})
    calls.update({("files", "features+labels"): lambda: user.files(features="data/X.npy", labels="data/y.txt"),
                  ("files", "csv features"): lambda: user.files(features="data/X.csv"),
                  ("files", "kernel+labels"): lambda: user.files(kernel="data/K.npy", labels="data/npy/labels.npy")})
    assert {name for name, _ in calls} == set(BUILTINS["data.user"]["datasets"])      # every user loader
    for (name, layout), call in calls.items():
        read, ds = files_read(call, tmp_path)
        recorded = ds.meta["inputs"]
        assert read and set(recorded) == read, (name, layout, sorted(read), sorted(recorded))
        for path, digest in recorded.items():
            assert digest == hashlib.sha256(Path(path).read_bytes()).hexdigest(), (name, layout, path)


def test_gyrb_like_has_gyrb_shape_and_near_identical_pairs():
    """52 points of 3 species; each near-duplicate pair is a same-species pair ~offset^2 apart
    (squared), far below the other within-species distances; same parameters, same bits."""
    from kernlearn_cli.data.synthetic import gyrb_like

    ds = gyrb_like()
    assert ds.X.shape == (52, 10) and np.bincount(ds.y).tolist() == [18, 17, 17]
    d2 = ((ds.X[:, None] - ds.X[None]) ** 2).sum(-1)
    close = np.argwhere(np.triu(d2 < 1e-3, 1))
    assert len(close) == 12 and np.all(ds.y[close[:, 0]] == ds.y[close[:, 1]])
    assert np.all(d2[tuple(close.T)] <= 1e-4) and np.median(d2[np.triu(np.ones_like(d2), 1) > 0]) > 1.0
    assert np.array_equal(gyrb_like().X, ds.X) and not np.array_equal(gyrb_like(seed=1).X, ds.X)
    assert len(np.argwhere(np.triu(((gyrb_like(near_duplicates=0).X[:, None]
                                      - gyrb_like(near_duplicates=0).X[None]) ** 2).sum(-1) < 1e-3, 1))) == 0


@pytest.mark.parametrize("params, key", [({"near_duplicates": 40}, "near_duplicates"), ({"offset": 0.0}, "offset"),
                                         ({"n": 5}, "n = 5"), ({"classes": 1}, "classes")])
def test_gyrb_like_bad_parameters_name_the_key(params, key):
    from kernlearn_cli.data.synthetic import gyrb_like

    with pytest.raises(ConfigError, match=key):
        gyrb_like(**params)


@pytest.mark.parametrize("content", [b"", b"\x93NUMPY\x01\x00"])
def test_an_empty_or_truncated_npy_is_one_paragraph(tmp_path, content):
    """Issue 56, item 6: a 0-byte (or cut) .npy file is named with what to do, not numpy's EOFError."""
    from kernlearn_cli.data.user import files
    from kernlearn_cli.errors import DataError

    (tmp_path / "X.npy").write_bytes(content)
    with pytest.raises(DataError, match=r"X\.npy: (the file is empty \(0 bytes\)|not a readable \.npy)"):
        files(features=str(tmp_path / "X.npy"))


def test_an_empty_features_file_in_a_run_is_one_paragraph_and_exit_2(tmp_path):
    import yaml

    from helpers import kernlearn

    (tmp_path / "X.npy").write_bytes(b"")
    cfg = {"name": "e", "seed": 0, "dataset": {"name": "files", "features": "X.npy"}, "kernel": {"name": "linear"},
           "constraints": {"name": "random_pairs", "count": 5}, "solver": {"name": "burg"}}
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(cfg))
    res = kernlearn("run", "e.yaml", "--out", "out", cwd=tmp_path)
    assert res.returncode == 2 and "the file is empty (0 bytes)" in res.stderr and "Traceback" not in res.stderr
    assert "Aborted" not in res.stderr + res.stdout
    listed = kernlearn("list", "kernel")                  # a config's key names the kind too
    assert listed.returncode == 0 and listed.stdout.startswith("kernels:")


def test_a_features_file_without_rows_is_named_not_the_labels(tmp_path):
    """Issue 56, item 6: a 0-row features file is named (it used to pass, or to blame the labels file)."""
    from kernlearn_cli.data.user import files
    from kernlearn_cli.errors import DataError

    np.save(tmp_path / "X.npy", np.zeros((0, 3)))
    (tmp_path / "y.txt").write_text("")
    for extra in ({}, {"labels": str(tmp_path / "y.txt")}):
        with pytest.raises(DataError, match=r"X\.npy: the array holds no rows \(points\)"):
            files(features=str(tmp_path / "X.npy"), **extra)
