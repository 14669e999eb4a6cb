"""Checks of a student's answer to a question (which epochs, how many, which run): the right
value is worked out from the exercise's own settings or from what the student's run shows,
never written in the check cell. ``mxlearn.checks`` re-exports them.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import N_, CheckFailed
from .run_checks import NotAComparison, _ok


class OtherEpochsAnswered(CheckFailed):
    says = N_(
        "kept_epochs = {answer!r} is not what stays on disk: a checkpoint is saved after every "
        "{period} epochs of the {num_epoch}, and keep={keep} leaves only the newest {keep} of "
        "them (a list of epoch numbers)."
    )


class OtherRebindsAnswered(CheckFailed):
    says = N_(
        "rebinds = {answer!r} is not the number of rebinds the module's inspector counted: "
        "read it in the line mod.inspector.text() prints."
    )


class NotARunAnswered(CheckFailed):
    says = N_(
        "faster = {answer!r} names no run of the comparison: answer with the optimizer of the "
        "run with the higher validation accuracy after the first epoch (epoch 0), one of {names}."
    )


class OtherRunAnswered(CheckFailed):  # the runs are not named: with two, it would be the answer
    says = N_(
        "faster = {answer!r} is not the optimizer of the run with the higher validation accuracy "
        "after the first epoch (epoch 0): read epoch 0 in the comparison's table or curves again."
    )


def epochs_kept(kept_epochs, num_epoch: int, period: int, keep: int) -> None:
    """The epochs whose checkpoints stay when ``num_epoch`` epochs save one every ``period``
    and keep the newest ``keep``."""
    saved = list(range(period, num_epoch + 1, period))
    right = saved[-keep:] if keep else saved
    try:  # whole numbers in any order, as a list, a tuple, a set or an array
        answer = sorted(int(e) for e in kept_epochs if _whole(e))
        if len(answer) != len(kept_epochs) or isinstance(kept_epochs, str):
            answer = None
    except TypeError:
        answer = None
    if answer != right:
        facts = dict(period=period, num_epoch=num_epoch, keep=keep)
        raise OtherEpochsAnswered(answer=kept_epochs, **facts)
    _ok(N_("checkpoints {epochs} stay on disk."), epochs=right)


def rebinds_counted(rebinds, mod) -> None:
    """The number of rebinds a MutableModule's inspector counted."""
    if isinstance(rebinds, bool) or rebinds != mod.inspector.rebinds:
        raise OtherRebindsAnswered(answer=rebinds)
    _ok(N_("{count} rebinds, as the inspector counted."), count=rebinds)


def faster_learner(faster, comparison) -> None:
    """The optimizer of the compared run with the higher validation accuracy after epoch 0
    (either, when they tie)."""
    runs = getattr(comparison, "runs", None)
    if runs is None:
        raise NotAComparison(kind=type(comparison).__name__)
    first = {}
    for run in runs:
        epochs, values = run.history.series("accuracy", "validation", "epoch")
        name = str((run.settings or {}).get("optimizer")).lower()  # MXNet reads any case
        if epochs and epochs[0] == 0:
            first[name] = values[0]
    best = max(first.values(), default=None)
    right = [name for name, value in first.items() if value == best]
    if not isinstance(faster, str) or faster.lower() not in first:
        raise NotARunAnswered(answer=faster, names=sorted(first))
    if faster.lower() not in right:
        raise OtherRunAnswered(answer=faster)
    _ok(N_("{name} learns faster in the first epoch."), name=faster)


def _whole(value) -> bool:
    """4, 4.0, a NumPy integer: an epoch number; not '4', 4.5 or True."""
    if isinstance(value, (bool, np.bool_, str)):
        return False
    return isinstance(value, numbers.Real) and float(value).is_integer()
