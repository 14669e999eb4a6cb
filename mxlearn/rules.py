"""What a public call's parameters accept, declared once beside the call (``@public``).

A rule says what it expects (in words, for the refusal) and gives an example of a right value
(code, for the fix). It answers ``None`` for a value it accepts, ``"kind"`` for a value of the
wrong type (refused as a ``TypeError``) and ``"range"`` for a value of the right type out of
range (a ``ValueError``). Rules check one value without running anything; what needs the
module (a name the network reads, a shape that fits) stays with the call's own checks.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .errors import N_, ArgumentTypeError, InputError
from .language import say


class WrongKind(ArgumentTypeError):
    says = N_("{called}: {name}={shown} is not {expected}.")
    fix_code = "{example}"


class OutOfRange(InputError):
    says = N_("{called}: {name}={shown} is not {expected}.")
    fix_code = "{example}"


@dataclass(frozen=True)
class Rule:
    test: Callable[[object], str | None]
    expected: str  # an N_ template, said when a value is refused
    example: str
    values: dict = field(default_factory=dict)
    either: tuple = ()  # the rules of either(), said one after the other

    def said(self) -> str:
        if not self.either:
            return say(self.expected, **self.values)
        text = self.either[0].said()
        for rule in self.either[1:]:
            text = say(self.expected, first=text, second=rule.said())
        return text


def refuse(called: str, name: str, value, rule: Rule, problem: str):
    kind = WrongKind if problem == "kind" else OutOfRange
    raise kind(
        called=called, name=name, shown=shown(value), expected=rule.said(), example=rule.example
    )


def shown(value) -> str:
    """A value as a refusal shows it: short, and an array by its type and shape."""
    if isinstance(value, np.ndarray) or type(value).__name__ in ("NDArray", "matrix"):
        return f"<{type(value).__name__} {tuple(value.shape)}>"
    if isinstance(value, (tuple, list)) and any(hasattr(v, "shape") for v in value):
        inner = ", ".join(shown(v) for v in value[:3]) + (", ..." if len(value) > 3 else "")
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    text = repr(value)
    if " at 0x" in text:  # an object, a generator: its address says nothing
        return f"<{type(value).__name__} object>"
    return text if len(text) <= 60 else text[:57] + "..."


def _optional(test, optional: bool):
    return (lambda v: None if v is None else test(v)) if optional else test


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def whole(
    minimum: int | None = None,
    example: str = "",
    *,
    maximum: int | None = None,
    optional: bool = False,
) -> Rule:
    def test(v):
        if not _is_int(v):
            return "kind"
        if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
            return "range"
        return None

    if maximum is not None:
        expected = N_("a whole number from {minimum} to {maximum}")
    elif minimum is not None:
        expected = N_("a whole number of at least {minimum}")
    else:
        expected = N_("a whole number")
    return Rule(
        _optional(test, optional), expected, example, {"minimum": minimum, "maximum": maximum}
    )


def number(
    example: str,
    *,
    above: float | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    optional: bool = False,
) -> Rule:
    """A finite real number; ``above`` and ``below`` are open bounds (a rate above 0, a
    smoothing below 1), ``minimum`` and ``maximum`` closed ones."""

    def test(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return "kind"
        if not math.isfinite(v):
            return "range"
        if (above is not None and v <= above) or (minimum is not None and v < minimum):
            return "range"
        if (maximum is not None and v > maximum) or (below is not None and v >= below):
            return "range"
        return None

    if minimum is not None and below is not None:
        expected = N_("a finite number from {minimum} up to (not including) {below}")
    elif above is not None:
        expected = N_("a finite number above {above}")
    elif minimum is not None and maximum is not None:
        expected = N_("a finite number from {minimum} to {maximum}")
    elif minimum is not None:
        expected = N_("a finite number of at least {minimum}")
    else:
        expected = N_("a finite number")
    return Rule(
        _optional(test, optional),
        expected,
        example,
        {"above": above, "minimum": minimum, "maximum": maximum, "below": below},
    )


def flag(example: str, *, optional: bool = False) -> Rule:
    def test(v):
        # MXNet reads a flag by its truth: 0 and 1 are what C-minded code writes for them
        plain = v is True or v is False or isinstance(v, np.bool_)
        return None if plain or (_is_int(v) and v in (0, 1)) else "kind"

    return Rule(_optional(test, optional), N_("True or False"), example)


def choice(values, example: str, *, optional: bool = False) -> Rule:
    values = tuple(values)

    def test(v):
        if any(v is x or (x is not None and isinstance(v, type(x)) and v == x) for x in values):
            return None
        return "range" if isinstance(v, str) else "kind"

    return Rule(
        _optional(test, optional),
        N_("one of {values}"),
        example,
        {"values": ", ".join(repr(v) for v in values)},
    )


def instance(types, what: str, example: str, *, optional: bool = False) -> Rule:
    """An instance of ``types``; ``what`` (an N_ template) says it: "an mx.sym.Symbol"."""
    return Rule(
        _optional(lambda v: None if isinstance(v, types) else "kind", optional), what, example
    )


def is_shape_pair(p) -> bool:
    """('data', (32, 16)), with a dtype and a layout too, or a DataDesc (a pair itself): what
    MXNet reads as DataDesc(*p). ('data', (32, 16)) is one, not a list of two."""
    return isinstance(p, (list, tuple)) and 2 <= len(p) <= 4 and isinstance(p[0], str)


def is_numbers(v) -> bool:
    """A list (or tuple) of real numbers, such as a work_load_list: not flags, not texts."""
    return isinstance(v, (list, tuple)) and all(
        isinstance(n, numbers.Real) and not isinstance(n, (bool, np.bool_)) for n in v
    )


def satisfying(ok: Callable[[object], bool], what: str, example: str, *, optional=False) -> Rule:
    """A value for which ``ok`` is true; ``what`` (an N_ template) says it."""
    return Rule(_optional(lambda v: None if ok(v) else "kind", optional), what, example)


def text(example: str, *, optional: bool = False) -> Rule:
    def test(v):
        if not isinstance(v, str):
            return "kind"
        return None if v.strip() else "range"

    return Rule(_optional(test, optional), N_("a text that is not empty"), example)


def path(example: str, *, optional: bool = False) -> Rule:
    def test(v):
        if not isinstance(v, (str, os.PathLike)):
            return "kind"
        return None if os.fspath(v).strip() else "range"

    return Rule(_optional(test, optional), N_("a path (a text such as 'runs/mlp')"), example)


def names(example: str, *, optional: bool = False) -> Rule:
    """A list of names: a bare string would be read letter by letter."""

    def test(v):
        if not isinstance(v, (list, tuple)) or not all(isinstance(n, str) for n in v):
            return "kind"
        return None

    return Rule(
        _optional(test, optional),
        N_("a list of names such as ['data'] (a bare string would be read letter by letter)"),
        example,
    )


def callbacks(example: str, *, left_to_the_call: tuple = ()) -> Rule:
    """MXNet's convention: None, one function, or a list of functions. Objects of the types
    ``left_to_the_call`` are the call's to explain (an mxlearn.Callback in MXNet's slot)."""

    def one(c) -> bool:
        return callable(c) or isinstance(c, left_to_the_call)

    def test(v):
        if v is None or one(v):
            return None
        if isinstance(v, (list, tuple)) and all(one(c) for c in v):
            return None
        return "kind"

    return Rule(test, N_("a function or a list of functions"), example)


def mapping(example: str, *, optional: bool = False) -> Rule:
    return Rule(
        _optional(lambda v: None if isinstance(v, dict) else "kind", optional),
        N_("a dict"),
        example,
    )


def size(example: str, *, optional: bool = False) -> Rule:
    """A figure's (width, height) in inches: two numbers above 0, at most a wall's 100."""

    def test(v):
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            return "kind"
        problems = [number("", above=0, maximum=100).test(side) for side in v]
        return None if problems == [None, None] else ("kind" if "kind" in problems else "range")

    return Rule(_optional(test, optional), N_("a (width, height) pair in inches"), example)


def having(attributes: tuple, what: str, example: str) -> Rule:
    """Any object with ``attributes`` (a batch is anything with ``data``, as MXNet reads it)."""
    return Rule(lambda v: None if all(hasattr(v, a) for a in attributes) else "kind", what, example)


def callable_as(what: str, example: str, *, optional: bool = False) -> Rule:
    """Anything callable, said as ``what`` (an initializer: MXNet calls it for each array)."""
    return Rule(_optional(lambda v: None if callable(v) else "kind", optional), what, example)


def function(example: str, *, optional: bool = False) -> Rule:
    return callable_as(N_("a function"), example, optional=optional)


def arrays(example: str, *, optional: bool = False) -> Rule:
    """Parameters by name: a dict of names to NDArrays (what ``mod.get_params()`` gives)."""

    def test(v):
        if not isinstance(v, dict):
            return "kind"
        # NDArrays: MXNet copies them with copyto, which a NumPy array has not
        ok = all(isinstance(k, str) and hasattr(a, "copyto") for k, a in v.items())
        return None if ok else "kind"

    return Rule(_optional(test, optional), N_("a dict of names to arrays"), example)


def data_iter(example: str, *, optional: bool = False) -> Rule:
    """An MXNet data iterator (anything with provide_data, reset and batches)."""

    def test(v):
        ok = all(hasattr(v, a) for a in ("provide_data", "reset")) and hasattr(v, "__iter__")
        return None if ok else "kind"

    return Rule(
        _optional(test, optional),
        N_("a data iterator such as mx.io.NDArrayIter(X, y, batch_size=32)"),
        example,
    )


def either(*rules: Rule, example: str | None = None, optional: bool = False) -> Rule:
    """Accepted when one of ``rules`` accepts; a type error only if every rule says so."""

    def test(v):
        problems = [r.test(v) for r in rules]
        if None in problems:
            return None
        return "kind" if all(p == "kind" for p in problems) else "range"

    test = _optional(test, optional)
    return Rule(test, N_("{first} or {second}"), example or rules[0].example, either=rules)
