"""Test fixtures: a private data home per session, and the shared mirror when it is beside the clone.

Helpers the test modules share are in tests/helpers.py (import them from there, not from here)."""

import builtins
import importlib.util
import inspect
import os
import pkgutil
import sys
from pathlib import Path

import pytest

from helpers import MIRROR, mirror_dir


@pytest.fixture(scope="session", autouse=True)
def data_env(tmp_path_factory):
    """Downloads go to a temporary data home; ``KERNLEARN_DATA_MIRROR`` defaults to ../shared/datasets."""
    old = {k: os.environ.get(k) for k in ("KERNLEARN_DATA", "KERNLEARN_DATA_MIRROR")}
    os.environ["KERNLEARN_DATA"] = str(tmp_path_factory.mktemp("data_home"))
    if not os.environ.get("KERNLEARN_DATA_MIRROR") and MIRROR.is_dir():
        os.environ["KERNLEARN_DATA_MIRROR"] = str(MIRROR)
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    """An empty data home, no mirror."""
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path / "home"))
    monkeypatch.delenv("KERNLEARN_DATA_MIRROR", raising=False)
    return tmp_path / "home"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty data home fed from the dataset mirror (``KERNLEARN_DATA_MIRROR``, else ../shared/datasets)."""
    mirror = mirror_dir()
    if mirror is None:
        pytest.skip(f"no dataset mirror: KERNLEARN_DATA_MIRROR names no folder and {MIRROR} is absent")
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("KERNLEARN_DATA_MIRROR", str(mirror))
    return tmp_path / "home"


@pytest.fixture
def files_read(monkeypatch):
    """``files_read(call, under)``: the files below ``under`` that ``call()`` opened for reading (absolute
    paths), and its result, from the open() every Python-level reader goes through (``np.load``,
    ``Path.read_text``, pandas' ``read_csv``).  The sha256 that :func:`kernlearn_cli.inputs.input_files`
    takes of the files it is given is not counted (it would make every recorded file a read one)."""
    import io

    from kernlearn_cli import inputs

    opened, on = [], [True]
    real_open, real_sha256 = builtins.open, inputs.sha256_file

    def tracking_open(file, mode="r", *args, **kwargs):
        if on[0] and not isinstance(file, int) and not set(str(mode)) & set("wax+"):
            opened.append(str(Path(os.fsdecode(file)).absolute()))
        return real_open(file, mode, *args, **kwargs)

    def untracked_sha256(path):
        on[0] = False
        try:
            return real_sha256(path)
        finally:
            on[0] = True

    monkeypatch.setattr(builtins, "open", tracking_open)
    monkeypatch.setattr(io, "open", tracking_open)
    monkeypatch.setattr(inputs, "sha256_file", untracked_sha256)

    def read(call, under: Path):
        opened.clear()
        result = call()
        return {p for p in opened if Path(p).is_relative_to(under)}, result

    return read


@pytest.fixture
def inproc(capfd, monkeypatch):
    """Run ``kernlearn ARGS`` in this process: (exit status, stdout, stderr)."""
    from kernlearn_cli.cli import main

    def run(*args, env=None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "argv", ["kernlearn", *map(str, args)])
        capfd.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        out, err = capfd.readouterr()
        for key in env or {}:
            monkeypatch.delenv(key)
        return code, out, err

    return run


# ---- the fast tier imports every module (``make test-fast``: ``pytest -m "not slow" --every-module``) ----
#
# Every module of the package imported in a test process counts, except those only the test files whose
# tests did not run (deselected as slow, or run by another pytest-xdist worker) import at their top
# (directly or through the package's module-level imports) and no import statement executed while the
# tests ran names (a test's own ``from kernlearn_cli.x import y`` inside its body counts).

#: Modules no in-process test can import, with the reason; every other module of kernlearn_cli must be.
NOT_IMPORTABLE = {"kernlearn_cli.__main__": "runs the command line when imported (`python -m kernlearn_cli`)"}
TESTS = Path(__file__).resolve().parent
RAN = pytest.StashKey[set]()            # the test modules whose tests ran in this process
NAMED = pytest.StashKey[set]()          # package modules named by import statements while the tests ran
REAL_IMPORT = pytest.StashKey[object]()
IMPORTED = pytest.StashKey[set]()       # the controller (pytest-xdist): what the workers' tests imported
MISSING = pytest.StashKey[list]()


def pytest_addoption(parser):
    parser.addoption("--every-module", action="store_true",
                     help="fail the run if its tests leave a module of kernlearn_cli unimported (the fast tier's check)")


def package_modules(names) -> set[str]:
    return {name for name in names if name == "kernlearn_cli" or name.startswith("kernlearn_cli.")}


def referenced_modules(modules) -> set[str]:
    """The package modules that ``modules`` import at their top, followed through the package's own
    module-level imports (a module, or an object defined in one, bound to a global name), with their
    parent packages."""
    found, todo = set(), list(modules)
    while todo:
        for value in list(vars(todo.pop()).values()):
            name = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
            if isinstance(name, str) and package_modules([name]) and name not in found and name in sys.modules:
                found.add(name)
                todo.append(sys.modules[name])
    return found | {name.rsplit(".", k)[0] for name in found for k in range(name.count("."))}


def pytest_collection_finish(session):
    """From here on, record the package modules each import statement names (cached ones too)."""
    if not session.config.getoption("every_module"):
        return
    named, real = session.config.stash.setdefault(NAMED, set()), builtins.__import__

    def recording(name, globals=None, locals=None, fromlist=(), level=0):
        module = real(name, globals, locals, fromlist, level)
        if level:
            name = importlib.util.resolve_name("." * level + name, (globals or {}).get("__package__") or "")
        if package_modules([name]):
            named.update([name, *(f"{name}.{item}" for item in fromlist or ())])
        return module

    session.config.stash[REAL_IMPORT] = real
    builtins.__import__ = recording


def pytest_runtest_setup(item):
    item.config.stash.setdefault(RAN, set()).add(item.module)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist, in the controller: add what a worker's tests imported (nothing from a crashed worker)."""
    output = getattr(node, "workeroutput", {})
    node.config.stash.setdefault(IMPORTED, set()).update(output.get("kernlearn_modules", ()))


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if not config.getoption("every_module"):
        return
    builtins.__import__ = config.stash.get(REAL_IMPORT, builtins.__import__)
    ran = config.stash.get(RAN, set())
    tests = {m for m in list(sys.modules.values()) if str(getattr(m, "__file__", "")).startswith(str(TESTS))}
    named = [sys.modules[n] for n in config.stash.get(NAMED, set()) if n in sys.modules]
    kept = referenced_modules(ran) | referenced_modules(named) | {m.__name__ for m in named}
    imported = package_modules(sys.modules) - (referenced_modules(tests - ran) - kept)
    if hasattr(config, "workerinput"):                        # an xdist worker: the controller checks
        config.workeroutput["kernlearn_modules"] = sorted(imported)
        return
    import kernlearn_cli

    every = {m.name for m in pkgutil.walk_packages(kernlearn_cli.__path__, "kernlearn_cli.")}
    missing = sorted(every - imported - config.stash.get(IMPORTED, set()) - set(NOT_IMPORTABLE))
    config.stash[MISSING] = missing
    if missing and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    missing = config.stash.get(MISSING, [])
    if missing:
        terminalreporter.section("modules no test imported (--every-module)", red=True)
        terminalreporter.line("give each a test that is not marked slow:\n  " + "\n  ".join(missing))
