"""The solvers as scikit-learn estimators, for notebooks and pipelines.

A solver registered with an ``estimator`` (:class:`~kernlearn_cli.registry.EstimatorSpec`; built in or
by a plugin) has one, named there (``BurgKernel``, ``TRINKernel``, ...; :data:`ESTIMATORS` by solver).
Each estimator learns a kernel on the training points X from side information: the constraints a
generator draws from the labels y (the same generators a config names), or a
:class:`~kernlearn_cli.types.Constraints` given to ``fit``.  It calls the registered solver, the
function ``kernlearn run`` calls (no second copy), with its settings validated by the registry as
a config's are, and keeps

- ``G_`` (n × r): the learned factor, K = G_ G_ᵀ on the training points;
- ``certificate_``, ``converged_``, ``n_iter_``, ``objective_``: the solver's result;
- ``constraints_``: the constraints used.

``transform(X_new)`` gives the rows of the learned factor for new points where the method is
inductive (:mod:`kernlearn_cli.embed`; the registry's ``inductive``, listed by
:func:`kernlearn_cli.inductive.inductive_text`): through the initial factor with a ``linear`` or
``rbf`` initial kernel, or through the landmarks; a transductive method transforms its training
points only.  A solver that does not converge warns with
:class:`~kernlearn_cli.solvers.protocol.ConvergenceWarning`, as on the command line.  The output columns are named ``burgkernel0``, ``burgkernel1``, ...
(``get_feature_names_out``), and ``set_output(transform="pandas")`` gives DataFrames.

``random_state`` follows scikit-learn: an int is the cell's seed (the same bits as ``kernlearn
run`` with that ``seed:`` and one BLAS thread), None, a ``RandomState`` or a ``Generator`` draw
one (:func:`cell_seed`).  A ``y`` of one class is refused where the constraints are drawn from
it.  ``constraint_params`` may name a ``reference`` kernel for the generator's bounds, as a
config's ``constraints.reference`` does (``MEGKernel``'s stream of target distances needs one:
an RBF kernel by default).

    >>> from sklearn.datasets import load_iris
    >>> from kernlearn_cli.estimators import BurgKernel
    >>> X, y = load_iris(return_X_y=True)
    >>> BurgKernel(slack=1.0, constraint_params={"count": 40}).fit(X, y).transform(X[:2]).shape
    (2, 4)
"""

from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from .inductive import OUT_OF_SAMPLE, transform_through_initial
from .errors import KernlearnError
from .registry import constraints as constraint_generators
from .registry import kernels as initial_kernels
from .inductive import inductive_text
from .registry import solvers
from .types import Constraints, Dataset


def cell_seed(random_state) -> int:
    """The cell seed of a fit: an int ``random_state`` is the seed itself (the same bits as ``kernlearn
    run`` with ``seed:`` that int); None (numpy's global RandomState), a RandomState or a Generator
    give a seed drawn from it, as scikit-learn's ``check_random_state`` would."""
    if isinstance(random_state, numbers.Integral) and random_state >= 0:
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    try:
        return int(check_random_state(random_state).randint(0, 2**31 - 1))
    except ValueError:
        raise ValueError(f"random_state = {random_state!r}: expected None, an int >= 0, a numpy.random.RandomState "
                         "or a numpy.random.Generator.") from None


class KernelLearner(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base of the estimators: a registered solver (``_solver``) as a transformer.

    Subclasses are made by :func:`estimator_class` from a solver's registry entry; their ``__init__``
    takes the initial ``kernel`` and its ``kernel_params``, the ``constraints`` generator and its
    ``constraint_params`` (with a ``reference`` kernel, as in a config), ``random_state`` (the cell's seed, see
    :func:`cell_seed`) and every setting of the solver, with the solver's defaults.  The
    columns of ``transform`` are named ``<class name, lower case>0`` ... (``get_feature_names_out``;
    ``set_output(transform="pandas")``).
    """

    _solver = ""
    _settings: tuple = ()
    _constraint_defaults: dict = {}     # the generator's settings when constraint_params is None

    # ---- the solve --------------------------------------------------------------------------
    def _bound(self, registry, spec, what: str):
        try:
            return registry.bind(spec, f"{type(self).__name__}: {what}")
        except KernlearnError as exc:
            raise ValueError(str(exc)) from None

    def fit(self, X, y=None, constraints: Constraints | None = None):
        """Learn the kernel of the points X (n × d).

        Parameters
        ----------
        X : array-like (n, d)
            Training points.
        y : array-like (n,), optional
            Labels, from which the ``constraints`` generator draws the side information.
        constraints : Constraints, optional
            The side information itself (then y is not needed).
        """
        from .prepare import runner_extras
        from .refusals import refuse_conflicts
        from .rng import STREAM_CONSTRAINTS, component_rng

        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        codes, classes = (None, None)
        if y is not None:
            classes, codes = np.unique(np.asarray(y), return_inverse=True)
            if len(codes) != len(X):
                raise ValueError(f"{type(self).__name__}: y has {len(codes)} labels for {len(X)} points.")
        ds = Dataset(name="array", X=X, y=codes, classes=None if classes is None else classes.tolist())
        seed = cell_seed(self.random_state)
        solver, settings = self._bound(solvers, {"name": self._solver, **{k: getattr(self, k) for k in self._settings}},
                                       "solver")
        G0 = None
        if not solver.instead_of_kernel:
            entry, params = self._bound(initial_kernels, {"name": self.kernel, **(self.kernel_params or {})}, "kernel")
            G0 = entry.func(ds, **params)
        G_ref = G0 if G0 is not None else X
        params = dict(self._constraint_defaults if self.constraint_params is None else self.constraint_params)
        if "reference" in params:              # the kernel the generator's bounds come from, as in a config
            entry, ref_params = self._bound(initial_kernels, params.pop("reference"), "constraints.reference")
            G_ref = entry.func(ds, **ref_params)
        try:
            if constraints is None:
                gen, params = self._bound(constraint_generators, {"name": self.constraints, **params}, "constraints")
                constraints = gen.func(ds, G_ref, rng=component_rng(seed, STREAM_CONSTRAINTS), **params)
            refuse_conflicts(constraints, solver, settings, type(self).__name__)
            result = solver.func(G0, constraints, **runner_extras(solver.func, ds, G_ref, seed), **settings)
        except KernlearnError as exc:
            hint = (f" Pass labels y (the constraints are drawn from them by '{self.constraints}') or "
                    "constraints= to fit." if y is None and constraints is None else "")
            raise ValueError(f"{type(self).__name__}: {exc}{hint}") from None
        self.G_, self.constraints_, self.result_ = result.G, constraints, result
        self.certificate_, self.converged_ = result.certificate, result.converged
        self.n_iter_, self.objective_ = int(result.iterations), float(result.objective)
        self.G0_, self.X_fit_, self.dataset_ = G0, X, ds
        self._n_features_out = self.G_.shape[1]
        return self

    def fit_transform(self, X, y=None, constraints: Constraints | None = None):
        """Fit, then the learned factor's rows of the training points (``G_``)."""
        return self.fit(X, y, constraints=constraints).G_

    # ---- new points -------------------------------------------------------------------------
    def transform(self, X):
        """Rows of the learned factor for the points X (K(x, y) = rowₓ · row_yᵀ).

        Raises
        ------
        ValueError
            For a transductive method given points other than its training points.
        """
        from .solvers.nystrom import factor_rows, psd_sqrt

        check_is_fitted(self, "G_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        arrays = self.result_.arrays
        if "landmarks" in arrays and "S" in arrays:
            return factor_rows(np.ascontiguousarray(X), arrays["landmarks"], float(arrays["kernel_width"]),
                               psd_sqrt(arrays["S"]))
        if self.G0_ is not None and self.kernel in OUT_OF_SAMPLE and solvers.get(self._solver).inductive == "initial factor":
            _, params = self._bound(initial_kernels, {"name": self.kernel, **(self.kernel_params or {})}, "kernel")
            try:
                return transform_through_initial(self.G0_, self.G_,
                                                 OUT_OF_SAMPLE[self.kernel](self.dataset_, X, self.G0_, **params))
            except KernlearnError as exc:
                raise ValueError(str(exc)) from None
        if X.shape == self.X_fit_.shape and np.array_equal(X, self.X_fit_):
            return self.G_
        how = f"solver '{self._solver}'" + (f" with kernel '{self.kernel}'" if self.kernel else "")
        raise ValueError(f"{type(self).__name__}: {how} is transductive: it learns the kernel of its training points only, so it transforms "
                         f"those and no others. Inductive: {inductive_text()}.")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False          # y or constraints=
        return tags


@functools.cache
def estimator_class(solver: str) -> type:
    """The estimator class of a registered solver, from its registry entry's ``estimator``
    (:class:`~kernlearn_cli.registry.EstimatorSpec`): its ``__init__`` from the solver's settings (names,
    defaults) and the components' defaults; sklearn reads the parameters from it.

    Raises
    ------
    ValueError
        A solver registered without an estimator.
    """
    entry = solvers.get(solver)
    spec = entry.estimator
    if spec is None:
        raise ValueError(f"solver '{solver}' has no estimator (solvers.register(..., estimator=EstimatorSpec(...))); "
                         f"those with one: {', '.join(ESTIMATORS)}.")
    settings = entry.parameters()
    fixed = [("kernel", None if entry.instead_of_kernel else spec.kernel), ("kernel_params", None),
             ("constraints", spec.constraints), ("constraint_params", None), ("random_state", 0)]
    if entry.instead_of_kernel:
        fixed = fixed[2:]
    names = [n for n, _ in fixed] + list(settings)
    defaults = dict(fixed) | {n: p.default for n, p in settings.items()}
    class_name = spec.name

    def __init__(self, **kwargs):
        for name in names:
            setattr(self, name, kwargs.pop(name, defaults[name]))
        if kwargs:
            raise TypeError(f"{class_name}: unknown parameter(s) {', '.join(kwargs)}; valid: {', '.join(names)}.")

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=defaults[n]) for n in names])
    doc = (f"{spec.summary}\n\nThe solver ``{solver}`` (``kernlearn list solvers``; docs/solvers.md) as an estimator:"
           f" see :mod:`kernlearn_cli.estimators`. Parameters: {', '.join(names)}.")
    cls = type(class_name, (KernelLearner,), {"__init__": __init__, "__doc__": doc, "_solver": solver,
                                              "_settings": tuple(settings), "__module__": __name__,
                                              "_constraint_defaults": dict(spec.constraint_defaults)})
    if entry.instead_of_kernel:
        cls.kernel, cls.kernel_params = None, None
    return cls


#: The estimators, by solver: every solver registered (built in or by a plugin) with an ``estimator``.
ESTIMATORS = {e.name: estimator_class(e.name) for e in solvers.entries() if e.estimator is not None}
globals().update({cls.__name__: cls for cls in ESTIMATORS.values()})     # BurgKernel, VonNeumannKernel, ...
