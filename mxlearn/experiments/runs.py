"""What ``mxlearn.compare`` takes as a run: a module, a MetricHistory, or a checkpoint prefix.

Each becomes a :class:`Run`: a label for the legend, the history, and the optimizer's settings
when they are known (a module trained with ``fit``, a checkpoint that saved them). A run whose
settings are not known gets none in its label: mxlearn does not guess them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..checkpoint.files import latest
from ..errors import N_, InputError
from ..language import say_drawn
from ..metrics.history import MetricHistory

EXAMPLE = "mxlearn.compare(mod_a, mod_b, labels=['lr 0.1', 'lr 0.5'])"


class NoHistoryInCheckpoint(InputError):
    says = N_(
        "mxlearn.compare: checkpoint {epoch} of '{prefix}' holds no metric history (it "
        "was not saved by fit(checkpoint=...))."
    )
    fix_says = N_("pass the module itself, or its mod.history")


class NotARun(InputError):
    says = N_(
        "mxlearn.compare: run {number} is a {kind}; a run is a module trained with fit, "
        "its mod.history, or a checkpoint prefix such as 'runs/checkpoints/mlp'."
    )
    fix_code = EXAMPLE


class RunHoldsNothing(InputError):
    says = N_("mxlearn.compare: run {number} holds no metric values yet.")
    fix_says = N_("train it first: mod.fit(train_iter, eval_data=val_iter, num_epoch=5)")


class RunHoldsNoEpoch(InputError):
    says = N_(
        "mxlearn.compare: run {number} holds no epoch's values (it stopped before its "
        "first epoch ended), and the figure and table compare epochs."
    )
    fix_says = N_("train it for an epoch or more, or leave it out of the comparison")


class NoRuns(InputError):
    says = N_("mxlearn.compare needs at least one run.")
    fix_code = "mxlearn.compare(mod_a, mod_b)"


class NotOneLabelPerRun(InputError):
    says = N_(
        "mxlearn.compare: {count} runs but labels={labels!r}: give one label per run, in a list."
    )
    fix_code = EXAMPLE


class LabelledAlike(InputError):
    says = N_(
        "mxlearn.compare: two runs are labelled {labels}: the legend and the table could "
        "not tell them apart."
    )
    fix_code = EXAMPLE


@dataclass
class Run:
    label: str
    history: MetricHistory
    settings: dict | None  # {'optimizer': 'sgd', 'params': {'learning_rate': 0.1, ...}}


def settings_text(settings: dict | None) -> str:
    """'sgd, learning_rate=0.1, momentum=0.9' (empty when not known)."""
    if not settings:
        return ""
    params = settings.get("params") or {}
    shown = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()]
    return ", ".join([str(settings.get("optimizer", "")), *shown]).strip(", ")


def _from_prefix(prefix: str) -> tuple[MetricHistory, dict | None]:
    epoch, manifest = latest(prefix)  # refuses a prefix with no complete checkpoint, naming why
    if not manifest.get("history"):
        raise NoHistoryInCheckpoint(epoch=epoch, prefix=prefix)
    optimizer = manifest.get("optimizer") or {}
    return MetricHistory.from_dict(manifest["history"]), optimizer.get("settings")


def as_run(item, index: int, label: str | None = None) -> Run:
    """The run ``item`` stands for; ``index`` numbers it in a default label ('run 2')."""
    if isinstance(item, MetricHistory):
        history, settings = item, None
    elif isinstance(item, (str, os.PathLike)):
        history, settings = _from_prefix(os.fspath(item))
        if label is None:  # the prefix as given (its folders tell runs apart), and settings
            text = settings_text(settings)
            label = f"{os.fspath(item)}: {text}" if text else os.fspath(item)
    elif isinstance(getattr(item, "history", None), MetricHistory):
        history, settings = item.history, getattr(item, "optimizer_settings", None)
    else:
        raise NotARun(number=index + 1, kind=type(item).__name__)
    if len(history) == 0:
        raise RunHoldsNothing(number=index + 1)
    if not any(r.kind == "epoch" for r in history.records):
        raise RunHoldsNoEpoch(number=index + 1)
    default = say_drawn("run {number}", number=index + 1)  # drawn in the legend
    text = settings_text(settings)
    return Run(label or (f"{default}: {text}" if text else default), history, settings)


def as_runs(items: tuple, labels) -> list[Run]:
    if not items:
        raise NoRuns()
    if labels is not None and (
        isinstance(labels, str) or not hasattr(labels, "__len__") or len(labels) != len(items)
    ):
        raise NotOneLabelPerRun(count=len(items), labels=labels)
    labels = list(labels) if labels is not None else [None] * len(items)
    runs = [as_run(item, i, label) for i, (item, label) in enumerate(zip(items, labels))]
    seen = [run.label for run in runs]
    twice = sorted({label for label in seen if seen.count(label) > 1})
    if twice:  # the figure's legend and the table could not tell them apart
        raise LabelledAlike(labels=", ".join(repr(label) for label in twice))
    return runs
