"""The boundary of every public call: its rules first, then a net no raw error passes through.

``@public("mod.fit()", num_epoch=rules.whole(1, "num_epoch=10"), ...)`` wraps a call so that

1. a wrong value is refused by the call's declared rules (:mod:`mxlearn.rules`) before anything
   runs, with the rule's example as the fix;
2. an error escaping MXNet or Python's internals during the call becomes :class:`CallFailed`,
   which names the call, gives MXNet's message condensed to its one meaningful line (no C++
   stack, no engine timestamps) and the module's state; it is also the built-in type the raw
   error was (a ``ValueError`` stays a ``ValueError``), so ``except`` clauses keep working;
3. an error raised in the student's own code (a callback, a custom metric, a data iterator:
   any frame outside mxlearn and the installed libraries) stays the student's, with a note
   naming it as theirs: it is their bug, and their traceback shows where.

mxlearn's own errors pass unchanged. A call nested in another (fit binds the module) is
explained by the innermost boundary, which knows the most.
"""

from __future__ import annotations

import functools
import os
import re
import sysconfig

from .errors import N_, MXLearnError, Signal
from .language import say

PACKAGE_FOLDER = os.path.dirname(os.path.abspath(__file__))
LIBRARY_FOLDERS = tuple(
    os.path.abspath(p) + os.sep
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }
)
# Built-in families a raw error keeps, most specific first; anything else is a RuntimeError.
FAMILIES = (
    KeyError,
    IndexError,
    LookupError,
    TypeError,
    AttributeError,
    NotImplementedError,
    AssertionError,
    ZeroDivisionError,
    ArithmeticError,
    FileNotFoundError,
    OSError,
    ValueError,
    RuntimeError,
)
# "[13:30:48] ../src/operator/nn/convolution.cc:151: " says nothing to a student
ENGINE_PLACE = re.compile(r"\[[\d:]+\] \S+:\d+: ")
PASSED = (MXLearnError, Signal, StopIteration, Warning)  # mxlearn's words, signals, ends


class CallFailed(MXLearnError):
    """An error from inside MXNet or Python during a public call, explained at the boundary."""

    says = N_("{called} failed inside {where}: {reason}")


class CallFailedInMxlearn(CallFailed):
    says = N_(
        "{called} failed inside mxlearn: {reason}. That is a gap in mxlearn, not a mistake in "
        "your code; the traceback (%tb) shows where."
    )


def public(called: str, /, **rules):
    """Decorate a public function or method (``called`` as students write it) with its rules."""

    def wrap(function):
        check = _argument_checker(function, called, rules) if rules else None

        @functools.wraps(function)
        def guarded(*args, **kwargs):
            try:
                if check is not None:
                    check(args, kwargs)
                return function(*args, **kwargs)
            except PASSED:
                raise
            except Exception as raw:
                failed = explained(raw, called, args)
                if failed is raw:
                    raise  # the student's own error, with its note: their traceback unchanged
                raise failed from raw

        guarded.__mxlearn_public__ = called
        guarded.__mxlearn_rules__ = rules
        return guarded

    return wrap


def guard_methods(cls, prefix: str, names: list[str]) -> None:
    """Put the boundary around the methods ``names`` of ``cls`` that have none yet: those it
    defines without ``@public`` and those it inherits from MXNet (``__init__`` is the class's
    own call, ``mxlearn.Module()``)."""
    for name in names:
        found = next(vars(k)[name] for k in cls.__mro__ if name in vars(k))
        is_class_method = isinstance(found, classmethod)
        method = found.__func__ if is_class_method else found
        if getattr(method, "__mxlearn_public__", None) is not None:
            continue
        if name == "__init__":
            called = f"mxlearn.{cls.__name__}()"
        else:
            called = f"{cls.__name__ if is_class_method else prefix}.{name}()"
        guarded = public(called)(method)
        setattr(cls, name, classmethod(guarded) if is_class_method else guarded)


def _argument_checker(function, called: str, rules: dict):
    """A fast check of the declared arguments: positions are worked out once, not per call
    (forward and update go through here every batch)."""
    import inspect

    from .rules import refuse

    parameters = inspect.signature(function).parameters
    # a position only for those that can be given by position (none after a *runs)
    positional = [
        n for n, p in parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    unknown = set(rules) - set(parameters)
    if unknown:
        raise TypeError(f"{called}: rules for parameters it does not have: {sorted(unknown)}")
    declared = [
        (name, positional.index(name) if name in positional else None, rule)
        for name, rule in rules.items()
    ]

    def check(args, kwargs):
        for name, position, rule in declared:
            if name in kwargs:
                value = kwargs[name]
            elif position is not None and position < len(args):
                value = args[position]
            else:
                continue  # the default: the call's own, right by definition
            problem = rule.test(value)
            if problem is not None:
                refuse(called, name, value, rule, problem)

    return check


def explained(raw: Exception, called: str, args: tuple) -> Exception:
    """``raw`` as the student should meet it: theirs with a note, or explained by mxlearn."""
    if getattr(raw, "__mxlearn_seen__", False):
        return raw
    raw.__mxlearn_seen__ = True
    frames = _frames(raw.__traceback__)
    own = [f for f in frames if _whose(f) == "student"]
    if own:
        where = f"{os.path.basename(own[-1].f_code.co_filename)}, {own[-1].f_code.co_name}"
        raw.add_note(
            say("(raised by your own code, {where}, during {called})", where=where, called=called)
        )
        return raw
    last = _whose(frames[-1]) if frames else "library"
    state = _state_of(args)
    kind = CallFailedInMxlearn if last == "mxlearn" else CallFailed
    failed = _family(kind, type(raw))(
        called=called,
        where="MXNet" if _from_mxnet(raw, frames) else "Python",
        reason=condensed(raw),
        state=state,
    )
    failed.raw = raw
    return failed


def condensed(raw: Exception) -> str:
    """The one informative line of an error: MXNet's without its C++ stack and timestamps."""
    lines = [ln.strip() for ln in str(raw).splitlines() if ln.strip()]
    for line in lines:
        if "Error in operator" in line or line.startswith("MXNetError"):
            return ENGINE_PLACE.sub("", line.removeprefix("MXNetError: "))
    for line in lines:  # MXNet's message sits above its stack trace
        if not line.startswith(("Stack trace", "File ", "[bt]")) and not line[:1].isdigit():
            return f"{type(raw).__name__}: {ENGINE_PLACE.sub('', line)}"
    return type(raw).__name__


def _frames(tb) -> list:
    frames = []
    tb = tb.tb_next if tb is not None else None  # the first frame is the boundary itself
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _whose(frame) -> str:
    path = frame.f_code.co_filename
    if path.startswith("<frozen"):
        return "library"
    path = os.path.abspath(path)
    if path.startswith(PACKAGE_FOLDER + os.sep):
        return "mxlearn"
    if path.startswith(LIBRARY_FOLDERS) or f"-packages{os.sep}" in path:
        return "library"
    return "student"


def _from_mxnet(raw: Exception, frames: list) -> bool:
    return type(raw).__module__.startswith("mxnet") or any(
        f"{os.sep}mxnet{os.sep}" in f.f_code.co_filename for f in frames
    )


def _state_of(args: tuple) -> str | None:
    state_text = getattr(args[0], "state_text", None) if args else None
    if not callable(state_text):
        return None
    try:
        return state_text()
    except Exception:  # a half-made object: its state is not worth a second failure
        return None


@functools.cache
def _family(kind: type, raw_type: type) -> type:
    """``kind`` that is also the built-in family of ``raw_type`` (made once per pair)."""
    base = next((f for f in FAMILIES if issubclass(raw_type, f)), RuntimeError)
    return type(kind.__name__, (kind, base), {"__module__": kind.__module__})
