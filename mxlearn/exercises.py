"""The course's exercises: titles and hints (``exercises.toml``), and how a check given
``exercise='03.2'`` speaks about one: it names the exercise, says "nothing to check yet" while
the answer is still the stub, and adds the next hint from the second failure on. Hints say
where to look and what to think about, never a line of the answer.
"""

from __future__ import annotations

import functools
import inspect
import tomllib
from collections.abc import Callable
from importlib import resources

from .boundary import public
from .errors import N_, CheckFailed, InputError, did_you_mean
from .language import say


class ExerciseNotNamed(InputError):
    says = N_(
        "An exercise is named by a string such as '03.2' (notebook 03, exercise 2); got {given!r}."
    )
    fix_code = "mxlearn.hint('03.2')"


class NoSuchExercise(InputError):
    says = N_("There is no exercise {exercise!r}.")


class NothingToCheckYet(CheckFailed):
    says = N_(
        "nothing to check yet: a value the check needs is still None, so the exercise's "
        "answer has not run (or left it None)."
    )
    fix_says = N_(
        "replace '# YOUR CODE HERE' and 'raise NotImplementedError()' in the exercise's cell "
        "with your code, run it, then run this check again"
    )


class WrongKindOfAnswer(CheckFailed):
    says = N_(
        "the check could not use what it was given ({error}): a value is not of the "
        "kind the exercise asks for (a module, a number, a list...). Read the task "
        "again."
    )


_hints_given: dict[str, int] = {}  # per kernel: how many hints of each exercise were shown
_failures: dict[str, int] = {}  # per kernel: how often each exercise's check failed


def catalogue() -> dict[str, tuple[str, list[str]]]:
    """Each exercise's title and hints, in the language mxlearn speaks now."""
    return {
        name: (say(entry["title"]), [say(hint) for hint in entry["hints"]])
        for name, entry in _exercises().items()
    }


def parts_of(exercise: str) -> list[str]:
    """The names of an exercise's graded parts, one check cell each, in the language mxlearn
    speaks now; [] for an exercise checked by one cell (or not in the catalogue)."""
    return [say(part) for part in _exercises().get(exercise, {}).get("parts", [])]


@functools.cache
def _exercises() -> dict:
    return tomllib.loads(resources.files(__package__).joinpath("exercises.toml").read_text("utf-8"))


def exercise_name(exercise) -> str:
    """'03.2' as given, or written a usual other way ('3.2', ' 03.2 '); refused otherwise."""
    if not isinstance(exercise, str):
        raise ExerciseNotNamed(given=exercise)
    name = exercise.strip()
    notebook, dot, number = name.partition(".")
    if dot and notebook.isdigit() and number.isdigit():
        name = f"{int(notebook):02d}.{int(number)}"
    known = catalogue()
    if name not in known:
        raise NoSuchExercise(exercise=exercise, fix=did_you_mean(name, known))
    return name


def _next_hint(exercise: str) -> str:
    title, hints = catalogue()[exercise]
    shown = min(_hints_given.get(exercise, 0) + 1, len(hints))
    _hints_given[exercise] = shown
    text = say(
        "Exercise {exercise} ({title}), hint {n} of {total}: {hint}",
        exercise=exercise,
        title=title,
        n=shown,
        total=len(hints),
        hint=hints[shown - 1],
    )
    if shown == len(hints):
        text += " " + say("(the last hint: ask your teacher if it is not enough)")
    return text


@public("mxlearn.hint()")
def hint(exercise: str) -> None:
    """Print the next hint of an exercise: each call gives one more, none gives the answer."""
    print(_next_hint(exercise_name(exercise)))


def _unanswered(check: Callable, args: tuple, kwargs: dict) -> bool:
    """An argument the check cannot do without is still None (an answer not made yet)."""
    signature = inspect.signature(check)
    parameters = signature.parameters
    return any(
        value is None and parameters[name].default is not None
        for name, value in signature.bind(*args, **kwargs).arguments.items()
    )


# What a check raises when it is given something of another kind than the exercise asks for
# (a tuple for a number, an int for a module): a wrong answer, not a broken check.
WRONG_KIND = (AttributeError, TypeError, ValueError, KeyError, IndexError)


def _verdict(exercise: str, failure: CheckFailed, counted: bool) -> CheckFailed:
    """The check's words about the exercise, its fix (which may be the answer) replaced by the
    way to a hint. A CheckFailed, not a kind of it: the grader knows a failed check by name."""
    problem, fix = failure.problem, failure.fix
    if counted:
        fix = say("mxlearn.hint('{exercise}') gives a hint", exercise=exercise)
        _failures[exercise] = _failures.get(exercise, 0) + 1
        if _failures[exercise] >= 2:
            problem += "\n  " + _next_hint(exercise)
    title = catalogue()[exercise][0]
    said = say(
        "Exercise {exercise} ({title}): {problem}", exercise=exercise, title=title, problem=problem
    )
    return CheckFailed(said, fix=fix)


def for_exercises(check: Callable) -> Callable:
    """Let ``check`` take ``exercise='03.2'`` and speak about that exercise."""

    @functools.wraps(check)
    def checked(*args, exercise: str | None = None, **kwargs):
        if exercise is None:
            return check(*args, **kwargs)
        exercise = exercise_name(exercise)
        if _unanswered(check, args, kwargs):
            raise _verdict(exercise, NothingToCheckYet(), counted=False) from None
        try:
            return check(*args, **kwargs)
        except CheckFailed as failure:
            raise _verdict(exercise, failure, counted=True) from None
        except WRONG_KIND as error:
            failure = WrongKindOfAnswer(error=f"{type(error).__name__}: {str(error)[:120]}")
            raise _verdict(exercise, failure, counted=True) from None

    return checked
