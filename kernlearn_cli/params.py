"""What a setting accepts, declared once in its annotation, and the one validator of settings.

A component's keyword-only parameters are its settings (:mod:`kernlearn_cli.registry`). Their
annotations are the schema: the type, and in ``typing.Annotated`` metadata the range of a number
(:class:`Interval`) or the length of a list (:class:`Length`); ``typing.Literal`` lists the choices
of a string::

    from typing import Annotated, Literal

    from kernlearn_cli.params import Interval

    @solvers.register("my_solver")
    def my_solver(G0, constraints, *, tol: Annotated[float, Interval(0, None, closed="neither")] = 1e-3,
                  order: Literal["cyclic", "greedy"] = "cyclic"): ...

:func:`coerce` checks a value against such an annotation, for a config (``Registry.bind``) and for
a direct call of a registered function alike: it converts first (an int where a float is
declared, a string such as ``"1e-6"`` that YAML reads as text) and then checks the range or the
choice, with a message naming where the value was given and what is valid
(``configs/x.yaml: solver.tol: expected a float in (0, inf), got -1.``).
"""

from __future__ import annotations

import difflib
import inspect
import math
import numbers
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from .errors import ConfigError

CLOSED = ("both", "left", "right", "neither")


def did_you_mean(name: str, valid) -> str:
    """' Did you mean 'x'?' for the closest valid name, or ''."""
    close = difflib.get_close_matches(str(name), list(valid), n=1, cutoff=0.5)
    return f" Did you mean '{close[0]}'?" if close else ""


def _bound(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """The range of an ``int`` or ``float`` setting, as ``Annotated[float, Interval(...)]`` metadata.

    Parameters
    ----------
    low, high : float or None
        The bounds. None leaves that side unbounded, infinity excluded; a bound of ``math.inf``
        (``-math.inf``) that is closed admits infinity itself (``slack: inf`` means hard constraints).
    closed : {"both", "left", "right", "neither"}
        Which of the bounds belong to the range: ``Interval(0, 1, closed="left")`` is [0, 1).

    Examples
    --------
    >>> 0.0 in Interval(0, None, closed="neither"), math.inf in Interval(0, None, closed="neither")
    (False, False)
    >>> Interval(0, math.inf, closed="right").describe()
    'in (0, inf]'
    """

    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def __post_init__(self):
        if self.closed not in CLOSED:
            raise ValueError(f"Interval: closed must be one of {', '.join(CLOSED)}, got {self.closed!r}.")
        if self.low is not None and self.high is not None and not self.low <= self.high:
            raise ValueError(f"Interval: low {self.low} is above high {self.high}.")

    def _ends(self) -> tuple[float, float, bool, bool]:
        """(low, high, low included, high included); None is an excluded infinity."""
        return (-math.inf if self.low is None else self.low, math.inf if self.high is None else self.high,
                self.low is not None and self.closed in ("both", "left"),
                self.high is not None and self.closed in ("both", "right"))

    def __contains__(self, x) -> bool:
        low, high, with_low, with_high = self._ends()
        return (low <= x if with_low else low < x) and (x <= high if with_high else x < high)

    def describe(self) -> str:
        low, high, with_low, with_high = self._ends()
        return f"in {'[' if with_low else '('}{_bound(low)}, {_bound(high)}{']' if with_high else ')'}"


@dataclass(frozen=True)
class Length:
    """How many items a ``list`` setting holds, as ``Annotated[list[float], Length(...)]`` metadata.

    Parameters
    ----------
    low : int
        The fewest items.
    high : int or None
        The most items; None for no limit.
    """

    low: int = 0
    high: int | None = None

    def __contains__(self, items) -> bool:
        return self.low <= len(items) and (self.high is None or len(items) <= self.high)

    def describe(self) -> str:
        if self.high is None:
            return f"with at least {self.low} item{'s' * (self.low != 1)}"
        if self.low == self.high:
            return f"with exactly {self.low} item{'s' * (self.low != 1)}"
        return f"with {self.low} to {self.high} items"


#: The declarations many settings share.
Positive = Annotated[float, Interval(0, None, closed="neither")]
"""A finite float > 0 (a tolerance, a step, a weight)."""
PositiveInt = Annotated[int, Interval(1, None)]
"""An int >= 1 (a count, an iteration limit)."""
NonNegativeInt = Annotated[int, Interval(0, None)]
"""An int >= 0 (a seed, or a count where 0 means "not set")."""
Fraction = Annotated[float, Interval(0, 1, closed="left")]
"""A float in [0, 1) (a relative tolerance such as ``rank_tol``, a push such as ``epsilon``)."""

#: Type -> how a message names one value of it, and several.
_NOUNS = {bool: ("a bool", "bools"), int: ("an int", "ints"), float: ("a float", "floats"),
          str: ("a string", "strings"), dict: ("a mapping", "mappings"), list: ("a list", "lists"),
          type(None): ("None", "None")}


def describe(tp, plural: bool = False) -> str:
    """What an annotation accepts, in words: ``a float in (0, inf)``, ``one of 'kmeans', 'uniform'``,
    ``a list of floats in (0, inf) with at least 1 item or a float in (0, inf)``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return " ".join([describe(args[0], plural)] + [m.describe() for m in args[1:] if isinstance(m, (Interval, Length))])
    if origin is Literal:
        return ("values among " if plural else "one of ") + ", ".join(map(repr, args))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(a, plural) for a in args)
    if origin is list and args:
        return f"{'lists' if plural else 'a list'} of {describe(args[0], plural=True)}"
    nouns = _NOUNS.get(origin or tp)
    return nouns[plural] if nouns else getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _refuse(value, tp, where: str, tail: str = "") -> typing.NoReturn:
    raise ConfigError(f"{where}: expected {describe(tp)}, got {value!r}.{tail}")


def coerce(value: Any, tp, where: str) -> Any:
    """``value`` converted to annotation ``tp`` and checked against its declaration.

    Accepts ints (and numpy integers) for floats, numeric strings such as ``"1e-6"`` or ``"inf"``
    (YAML reads those as strings) for floats, and numpy integers for ints; refuses NaN and bools
    where a number is declared. Then checks the :class:`Interval` and :class:`Length` metadata of an
    ``Annotated`` annotation and the choices of a ``Literal``; unions take the first alternative
    that accepts the value. Any other annotation passes the value through unchecked.

    Raises
    ------
    ConfigError
        ``"{where}: expected {what the annotation accepts}, got {value!r}."``
    """
    origin = typing.get_origin(tp)
    if tp is Any or tp is inspect.Parameter.empty:
        return value
    if origin is Annotated:
        base, *meta = typing.get_args(tp)
        try:
            converted = coerce(value, base, where)
        except ConfigError:
            _refuse(value, tp, where)
        if not all(converted in m for m in meta if isinstance(m, (Interval, Length))):
            _refuse(value, tp, where)
        return converted
    if origin is Literal:
        choices = typing.get_args(tp)
        if any(value == c and type(value) is type(c) for c in choices):
            return value
        _refuse(value, tp, where, did_you_mean(value, map(str, choices)))
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return coerce(value, arg, where)
            except ConfigError:
                pass
        _refuse(value, tp, where)
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if tp is type(None):
        if value is None:
            return None
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if number and isinstance(value, numbers.Integral):
            return int(value)
    elif tp is float:
        if number and not math.isnan(value):
            return float(value)
        if isinstance(value, str):
            try:
                f = float(value)
                if not math.isnan(f):
                    return f
            except ValueError:
                pass
    elif tp is str:
        if isinstance(value, str):
            return value
    elif origin is list or tp is list:
        if isinstance(value, (list, tuple)):
            (arg,) = typing.get_args(tp) or (Any,)
            return [coerce(v, arg, f"{where}[{k}]") for k, v in enumerate(value)]
    elif origin is dict or tp is dict:
        if isinstance(value, dict):
            return value
    else:  # pragma: no cover - an annotation this checker does not know
        return value
    _refuse(value, tp, where)


def settings_hints(func, settings) -> dict[str, Any]:
    """The annotation of each of ``settings`` (parameter names of ``func``), with its ``Annotated``
    metadata; ``Any`` for a setting without one. Evaluated once, when the function is registered."""
    hints = typing.get_type_hints(func, include_extras=True)
    return {name: hints.get(name, Any) for name in settings}
