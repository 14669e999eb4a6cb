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
import inspect
import os
import re
import site
import sysconfig
import warnings

from .errors import N_, MXLearnError, Signal, rebuilt
from .language import say

PACKAGE_FOLDER = os.path.dirname(os.path.abspath(__file__))
LIBRARY_FOLDERS = tuple(
    os.path.abspath(p) + os.sep
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["platstdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        *site.getsitepackages(),
        site.getusersitepackages(),
    }
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
        "your code; the full traceback shows where."
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
                result = function(*args, **kwargs)
                if inspect.isgenerator(result):  # iter_predict: its failures come later
                    return _iterated(result, called, args)
                return result
            except PASSED:
                raise
            except Exception as raw:
                _raise_explained(raw, called, args)

        guarded.__mxlearn_public__ = called
        guarded.__mxlearn_rules__ = rules
        return guarded

    return wrap


def _iterated(generator, called: str, args: tuple):
    try:
        yield from generator
    except PASSED:
        raise
    except Exception as raw:
        _raise_explained(raw, called, args)


def _raise_explained(raw: Exception, called: str, args: tuple):
    failed = explained(raw, called, args)
    if failed is raw:
        raise raw  # the student's own error, with its note: their traceback unchanged
    raise failed from raw


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
    # the student's code anywhere on the way, also in the error that caused this one (a
    # StopIteration in a callback, which Python turns into a RuntimeError in mxlearn's frame)
    own = [f for e in _chain(raw) for f in _frames(e.__traceback__) if _whose(f) == "student"]
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


def _chain(raw: BaseException) -> list:
    chain = [raw]
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        cause = chain[-1].__cause__ or chain[-1].__context__
        if cause in chain or len(chain) > 8:
            break
        chain.append(cause)
    return chain


# MXNet's lines that say where in its C++ an error was found, not what it is
NOISE = ("Stack trace", "File ", "[bt]", "Traceback (most recent call last)")


def condensed(raw: Exception) -> str:
    """The one informative line of an error: MXNet's without its C++ stack and timestamps."""
    lines = [ln.strip() for ln in str(raw).splitlines() if ln.strip()]
    for line in lines:
        if "Error in operator" in line or line.startswith("MXNetError"):
            line = ENGINE_PLACE.sub("", line.removeprefix("MXNetError: "))
            if not line.startswith(NOISE):
                return line
    meaningful = [ln for ln in lines if not ln.startswith(NOISE) and not ln[:1].isdigit()]
    # MXNet's own format puts the reason after its C++ frames: a "Check failed" line
    checked = [ln for ln in meaningful if "Check failed" in ln or "Error" in ln]
    for line in checked or meaningful:
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
    """'mxlearn', 'library' (MXNet, NumPy, Python's own) or 'student'. Code without a file
    (``<string>``: MXNet's generated operators; ``<__array_function__ internals>``: NumPy's;
    ``<ipython-input-...>``, exec) is told by the module it runs in."""
    path = frame.f_code.co_filename
    if path.startswith("<"):
        module = frame.f_globals.get("__name__") or "__main__"
        if module.split(".")[0] == "mxlearn":
            return "mxlearn"
        return "student" if module == "__main__" else "library"
    path = os.path.abspath(path)
    if path.startswith(PACKAGE_FOLDER + os.sep):
        return "mxlearn"
    return "library" if path.startswith(LIBRARY_FOLDERS) else "student"


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
    """``kind`` that is also the raw error's class where it can be (a built-in one, or
    MXNet's MXNetError, so ``except mx.base.MXNetError`` still catches it), else the nearest
    built-in class above it (JSONDecodeError: ValueError)."""
    base = next((c for c in raw_type.__mro__ if _keepable(c)), RuntimeError)
    made = type(kind.__name__, (kind, base), {"__module__": kind.__module__})
    made.family_of, made.rebuild_family = (kind, raw_type), staticmethod(rebuilt_failure)
    return made


def _keepable(c: type) -> bool:
    if c.__name__ == "MXNetError" and c.__module__.startswith("mxnet"):
        return True
    unicode = (UnicodeDecodeError, UnicodeEncodeError, UnicodeTranslateError)
    return c.__module__ == "builtins" and issubclass(c, Exception) and c not in unicode


def rebuilt_failure(kind: type, raw_type: type, *saved) -> MXLearnError:
    """A CallFailed again on the other side of a pickle (its class is made at run time)."""
    return rebuilt(_family(kind, raw_type), *saved)


def warn(text: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointing at the student's line that led to it, however many calls of
    mxlearn's (and boundaries) lie between."""
    frame, level = inspect.currentframe().f_back, 2  # 2: the caller of warn()
    while frame is not None and _whose(frame) != "student":
        frame, level = frame.f_back, level + 1
    warnings.warn(text, category, stacklevel=level if frame is not None else 2)
