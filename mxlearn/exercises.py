"""The course's exercises: their titles, graded hints, and how a check speaks about one.

A check cell of the course passes ``exercise='03.2'`` to a check of :mod:`mxlearn.checks`.
The check then names the exercise in its verdict, says "nothing to check yet" (not a Python
error about ``None``) while the answer cell still holds the stub, and from the second failure on
adds the next hint. ``mxlearn.hint('03.2')`` shows the next hint at any time. Hints say where
to look and what to think about; none holds a line of the answer.

For example, ``mxlearn.hint('03.2')`` prints "Exercise 03.2 (top-3 accuracy), hint 1 of 3: score
takes one metric or a list of them; ..." and the next call hint 2 of 3.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

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
    found = {}
    for notebook in (
        _notebook_01,
        _notebook_02,
        _notebook_03,
        _notebook_04,
        _notebook_05,
        _notebook_06,
        _notebook_07,
    ):
        found.update(notebook())
    return found


def _notebook_01() -> dict[str, tuple[str, list[str]]]:
    return {
        "01.1": (
            say("your own module, step by step"),
            [
                say(
                    "the steps are the ones this notebook took for mod, in the same order, now for my_mod and the iterators of batch 50."
                ),
                say(
                    "bind needs the data and label shapes of my_train (its provide_data and provide_label)."
                ),
                say(
                    "per batch: a training forward, then backward, then update; reset the iterator before each epoch."
                ),
            ],
        ),
        "01.2": (
            say("a module for predictions only"),
            [
                say(
                    "a module that never trains needs no labels: bind it with the data shapes only, and for_training=False."
                ),
                say("the data shape for batches of 64 letters is (64, 16)."),
                say(
                    "get_params() returns (arg_params, aux_params); set_params takes the same two."
                ),
            ],
        ),
    }


def _notebook_02() -> dict[str, tuple[str, list[str]]]:
    return {
        "02.1": (
            say("stop when validation stops improving"),
            [
                say(
                    "fit has a parameter that stops training after a number of epochs without a better validation accuracy."
                ),
                say("early stopping needs validation data: eval_data=val_iter."),
                say("reset train_iter before fit if a cell above ran it to its end."),
            ],
        ),
        "02.2": (
            say("train on scaled features"),
            [
                say(
                    "make the training iterator from the first 16000 rows of X_scaled and y, as validation_accuracy does."
                ),
                say("val_scaled already holds the scaled validation rows: pass it as eval_data."),
                say(
                    "scaled features learn at larger rates: try the rates the sweep above shows learning."
                ),
            ],
        ),
        "02.3": (
            say("a callback class"),
            [
                say(
                    "a callback subclasses mxlearn.Callback and overrides the hooks it needs; each hook gets run and the epoch."
                ),
                say("on_validation_end runs once an epoch's validation values are in run.history."),
                say(
                    "run.history.last(metric, phase) reads the newest value of a curve; keep it when it beats the best so far."
                ),
            ],
        ),
    }


def _notebook_03() -> dict[str, tuple[str, list[str]]]:
    return {
        "03.1": (
            say("predict and count by hand"),
            [
                say(
                    "predict returns one row of 26 class scores per validation letter, padding left out."
                ),
                say(
                    "the predicted class of a row is the index of its largest score: argmax(axis=1)."
                ),
                say(
                    "the true classes of the validation letters are the rows from 16000 on of labels_all."
                ),
            ],
        ),
        "03.2": (
            say("top-3 accuracy"),
            [
                say(
                    "score takes one metric or a list of them; its result is a list of (name, value) pairs."
                ),
                say(
                    "mxlearn.create_metric makes a metric from its name and settings, such as top_k."
                ),
                say("take the value, not the pair: the second element of the first pair."),
            ],
        ),
    }


def _notebook_04() -> dict[str, tuple[str, list[str]]]:
    return {
        "04.1": (
            say("resume from checkpoint 5"),
            [
                say("checkpoint n is saved after n epochs: the next epoch to train is numbered n."),
                say(
                    "mx.model.load_checkpoint(prefix, epoch) returns the network and its two parameter dictionaries."
                ),
                say(
                    "fit takes arg_params, aux_params and begin_epoch; num_epoch is where training ends."
                ),
            ],
        ),
        "04.2": (
            say("keep every second checkpoint"),
            [
                say(
                    "mxlearn.Checkpoint(prefix, period=..., keep=...) is what fit's checkpoint= takes."
                ),
                say("with period 2 the epochs saved are 2, 4 and 6; keep says how many stay."),
                say("use the prefix the check names, so that it finds the files."),
            ],
        ),
    }


def _notebook_05() -> dict[str, tuple[str, list[str]]]:
    return {
        "05.1": (
            say("a MutableModule with a small cache"),
            [
                say("a MutableModule is bound once at its largest data shape: max_data_shapes."),
                say("cache_size is a parameter of MutableModule itself, not of fit."),
                say(
                    "the largest images of this data set are 32x32, in batches of 16 with one channel."
                ),
            ],
        ),
        "05.2": (
            say("room for 40x40 images"),
            [
                say(
                    "a batch larger than the maximum in any dimension is refused: the maximum itself must grow."
                ),
                say(
                    "a new MutableModule with a larger max_data_shapes, bound for prediction, is enough."
                ),
                say(
                    "a convolutional network's weights fit any image size: set_params takes those mod trained."
                ),
            ],
        ),
    }


def _notebook_06() -> dict[str, tuple[str, list[str]]]:
    return {
        "06.1": (
            say("two devices with kvstore='device'"),
            [
                say("a Module takes a list of contexts as its context: contexts, made above."),
                say("kvstore is a parameter of fit."),
                say(
                    "train with the settings of the train function above, on pair_train and pair_val."
                ),
            ],
        ),
        "06.2": (
            say("the two-device weights on one device"),
            [
                say(
                    "a module bound on one context can take the weights another one trained: set_params."
                ),
                say("two.get_params() returns the weights the two-device run trained."),
                say(
                    "bind it for prediction only, with the data and label shapes pair_val provides."
                ),
            ],
        ),
    }


def _notebook_07() -> dict[str, tuple[str, list[str]]]:
    return {
        "07.1": (
            say("SGD against Adam"),
            [
                say(
                    "train(...) already makes the SGD run; the Adam run needs a module of its own and a fit call."
                ),
                say(
                    "fit takes the optimizer by name (optimizer=...) and its settings in optimizer_params."
                ),
                say(
                    "mxlearn.compare takes the two modules themselves: their settings come with them."
                ),
            ],
        ),
        "07.2": (
            say("fix the memorising network with dropout"),
            [
                say(
                    "copy the big network of section 4 under a new name and add a layer after each hidden activation."
                ),
                say(
                    "mx.sym.Dropout(x, name=..., p=0.5) drops half of the values while training, none while predicting."
                ),
                say("train(...) takes the symbol, the number of rows and of epochs as arguments."),
            ],
        ),
    }


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
        fix = did_you_mean(name, known) or say("exercises are named like '03.2'")
        raise NoSuchExercise(exercise=exercise, fix=fix)
    return name


def _title(exercise: str) -> str:
    return catalogue()[exercise][0]


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
    """The check's words about the exercise; its fix (which may be the answer) replaced by
    the way to a hint, and from the second failure the next hint itself. A CheckFailed itself,
    not a kind of it: the grader and the course's notebooks know a failed check by that name."""
    problem, fix = failure.problem, failure.fix
    if counted:
        fix = say("mxlearn.hint('{exercise}') gives a hint", exercise=exercise)
        _failures[exercise] = _failures.get(exercise, 0) + 1
        if _failures[exercise] >= 2:
            problem += "\n  " + _next_hint(exercise)
    title = _title(exercise)
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
