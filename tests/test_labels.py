"""Strict parsing of user label files (``files`` and ``gyrb`` datasets): every problem is a
:class:`DataError` naming the file and the 1-based line."""

from pathlib import Path

import numpy as np
import pytest

from kernlearn_cli.data import user
from kernlearn_cli.data._validate import encode_labels
from kernlearn_cli.errors import DataError

N = 80


@pytest.fixture
def data(tmp_path, monkeypatch):
    """80 points of three numeric classes in the current directory: x.npy and their labels."""
    monkeypatch.chdir(tmp_path)
    y = np.random.default_rng(0).permutation(np.repeat([1, 2, 3], [27, 27, 26]))
    np.save("x.npy", np.random.default_rng(1).normal(size=(N, 3)) + y[:, None])
    return tmp_path, [str(v) for v in y]


def write(name: str, lines: list[str], end: str = "\n") -> str:
    Path(name).write_text("\n".join(lines) + end)
    return name


def load_error(labels: str) -> str:
    with pytest.raises(DataError) as err:
        user.files(features="x.npy", labels=labels)
    return str(err.value)


def test_stray_string_label_is_named(data):
    folder, y = data
    y[16] = "cat"
    msg = load_error(write("y.txt", y))
    assert msg.startswith(f"{folder / 'y.txt'}: line 17: 'cat' is not a number, while the other 79 labels "
                          f"are numbers.")


def test_several_odd_labels_listed(data):
    _, y = data
    y[16], y[40] = "cat", "dog"
    assert "line 17: 'cat' is not a number, while 78 of the 80 labels are numbers (the 2 odd ones: " \
           "line 17, line 41)" in load_error(write("y.txt", y))


def test_stray_number_among_names(data):
    _, y = data
    names = ["cat", "dog", "emu"] * 26 + ["emu", "3"]
    assert "line 80: '3' is a number, while the other 79 labels are not" in load_error(write("y.txt", names))


@pytest.mark.parametrize("replace", [False, True], ids=["inserted", "replacing_a_label"])
def test_blank_line_inside_is_named(data, replace):
    folder, y = data
    if replace:
        y[40] = ""
    else:
        y.insert(40, "")
    msg = load_error(write("y.csv", y))
    assert msg.startswith(f"{folder / 'y.csv'}: line 41 is blank;")


def test_header_line_is_refused(data):
    folder, y = data
    msg = load_error(write("y.txt", ["label", *y]))
    assert msg.startswith(f"{folder / 'y.txt'}: line 1: 'label' is not a number, while the other 80 labels "
                          f"are numbers: it looks like a header; remove it")


@pytest.mark.parametrize("count, wording", [
    (N - 1, "79 labels for 80 points; the labels stop at line 79,"),
    (N + 2, "82 labels for 80 points; line 81 holds the first extra label."),
])
def test_count_mismatch_names_file_and_line(data, count, wording):
    folder, y = data
    msg = load_error(write("y.txt", (y * 2)[:count]))
    assert msg.startswith(f"{folder / 'y.txt'}: {wording}")


@pytest.mark.parametrize("end", ["", "\n", "\r\n", "\n\n   \n"], ids=["none", "newline", "crlf", "blank_lines"])
def test_trailing_newline_and_blank_lines_fine(data, end):
    _, y = data
    ds = user.files(features="x.npy", labels=write("y.txt", y, end))
    assert ds.classes == [1, 2, 3] and ds.y.tolist() == [int(v) - 1 for v in y]


def test_good_files_load_as_before(data):
    """Numbers, integral floats, +1/-1, padded values and names: the classes and codes they always gave."""
    _, y = data
    expect = np.array([int(v) - 1 for v in y])
    for lines, classes in ((y, [1, 2, 3]), ([v + ".0" for v in y], [1, 2, 3]), ([f" {v}\t" for v in y], [1, 2, 3]),
                           ([["cat", "dog", "emu"][int(v) - 1] for v in y], ["cat", "dog", "emu"]),
                           ([v + ".5" for v in y], [1.5, 2.5, 3.5])):
        ds = user.files(features="x.npy", labels=write("y.txt", lines))
        assert ds.classes == classes and ds.y.dtype == np.int64 and np.array_equal(ds.y, expect)
    ds = user.files(features="x.npy", labels=write("y.txt", ["+1" if v == "1" else "-1" for v in y]))
    assert ds.classes == [-1, 1]


@pytest.mark.parametrize("labels, classes", [
    (lambda y: y, [1, 2, 3]),
    (lambda y: y[:, None], [1, 2, 3]),
    (lambda y: y.astype(float), [1, 2, 3]),
    (lambda y: y.astype(str), [1, 2, 3]),
    (lambda y: np.array(["cat", "dog", "emu"])[y - 1], ["cat", "dog", "emu"]),
], ids=["ints", "column", "floats", "numeric_strings", "names"])
def test_npy_labels_fine(data, labels, classes):
    _, y = data
    y = np.array(y, dtype=np.int64)
    np.save("y.npy", labels(y))
    ds = user.files(features="x.npy", labels="y.npy")
    assert ds.classes == classes and np.array_equal(ds.y, y - 1)


def test_npy_labels_checked_by_index(data):
    folder, y = data
    y[16] = "cat"
    np.save("y.npy", np.array(y))
    assert load_error("y.npy").startswith(f"{folder / 'y.npy'}: label 16 (0-based): 'cat' is not a number")
    np.save("y.npy", np.ones(N + 1, dtype=int))
    assert "81 labels for 80 points; label 80 (0-based) holds the first extra label" in load_error("y.npy")


def test_gyrb_labels_checked(tmp_path):
    G = np.random.default_rng(0).normal(size=(52, 5))
    np.save(tmp_path / "kernel.npy", G @ G.T)
    (tmp_path / "labels.txt").write_text("species\n" + "\n".join(["A", "B", "C", "D"] * 13) + "\n")
    with pytest.raises(DataError, match=r"labels\.txt: 53 labels for 52 points; line 53 holds the first extra"):
        user.gyrb(path=str(tmp_path))


def test_encode_labels_without_lines_names_indexes():
    with pytest.raises(DataError, match=r"^data: label 2 \(0-based\): 'x' is not a number"):
        encode_labels(np.array(["1", "2", "x", "1"]), "data")
    with pytest.raises(DataError, match=r"^data: label 1 \(0-based\) is NaN or infinite"):
        encode_labels(np.array([1.0, np.nan]), "data")


def test_run_exits_2_with_one_paragraph(data, inproc):
    folder, y = data
    y[16] = "cat"
    write("y.txt", y)
    Path("c.yaml").write_text(
        "name: stray_label\nseed: 0\ndataset: {name: files, features: x.npy, labels: y.txt}\n"
        "kernel: {name: linear}\nconstraints: {name: idealized_pairs, count: 20, epsilon: 0.25}\n"
        "solver: {name: burg, tol: 1.0e-3, slack: 1.0}\nevaluate:\n  - {name: knn_accuracy, k: 5, repeats: 10}\n")
    code, out, err = inproc("run", "c.yaml", "--out", folder / "results")
    assert code == 2 and "Traceback" not in err and "least populated" not in err
    assert err.strip().count("\n") == 0
    assert err.startswith(f"kernlearn: error: {folder / 'y.txt'}: line 17: 'cat' is not a number")
