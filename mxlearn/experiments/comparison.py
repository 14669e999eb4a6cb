"""``mxlearn.compare(a, b, ...)``: the curves of several runs (modules, histories or
checkpoint prefixes) overlaid, a subplot per metric and a colour per run, and a table of them.
A run's label shows its optimizer's settings only when they are known: mxlearn does not guess.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import rules
from ..boundary import public
from ..checkpoint.files import latest
from ..errors import N_, InputError
from ..language import drawn_language, say, say_drawn
from ..live.figure import EPOCH_TICKS, agg_figure
from ..live.renderers import choose_backend, figure_png, show_figure
from ..metrics.catalogue import metric_title
from ..metrics.history import MetricHistory

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
# The table's columns: indexed by these English names, headed in the language mxlearn speaks
TABLE_COLUMNS = {
    "run": N_("run"),
    "metric": N_("metric"),
    "epochs": N_("epochs"),
    "final epoch": N_("final epoch"),
    "final train": N_("final train"),
    "final validation": N_("final validation"),
    "best validation": N_("best validation"),
    "best epoch": N_("best epoch"),
}
WHOLE_NUMBERS = ("epochs", "final epoch", "best epoch")
PHASE_STYLE = {"train": dict(ls="-", marker="o"), "validation": dict(ls="--", marker="s")}


class NotAFigureFile(InputError):
    says = N_("compare(...).save({path!r}): the figure is written as .png or .svg.")
    fix_code = "comparison.save('runs/plots/compare.png')"


class RunComparison:
    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs
        # every metric any run measured, in the order they first appear
        self.metrics = list(dict.fromkeys(m for run in runs for m in run.history.metrics()))
        self.fig = self._draw()

    def lines(self, metric: str) -> dict[tuple[str, str], tuple[list, list]]:
        """(run label, phase) -> (epochs completed, values): what the figure draws."""
        found = {}
        for run in self.runs:
            if metric not in run.history.metrics():  # another run's metric: nothing to draw
                continue
            for phase in PHASE_STYLE:
                epochs, values = run.history.series(metric, phase, "epoch")
                if values:
                    found[(run.label, phase)] = ([e + 1 for e in epochs], values)
        return found

    def _draw(self) -> Figure:
        n = len(self.metrics)
        fig, font = agg_figure((min(5.0 * n, 15.0), 3.8))
        labels = [r.label for r in self.runs]  # one each (as_runs refuses two alike)
        colour = {label: COLOURS[i % len(COLOURS)] for i, label in enumerate(labels)}
        for ax, metric in zip(fig.subplots(1, n, squeeze=False)[0], self.metrics):
            for (label, phase), (xs, ys) in self.lines(metric).items():
                ax.plot(xs, ys, color=colour[label], ms=4, **PHASE_STYLE[phase])
            ax.set_title(metric_title(metric, drawn_language()), fontdict=font)
            ax.set_xlabel(say_drawn("epochs completed"), fontdict=font)
            ax.xaxis.set_major_locator(EPOCH_TICKS())  # whole epochs, as the live plot counts
            ax.grid(alpha=0.3)
        handles = [Line2D([], [], color=c, lw=3) for c in colour.values()]
        handles += [Line2D([], [], color="grey", ms=4, **PHASE_STYLE[p]) for p in PHASE_STYLE]
        names = labels + [say_drawn("train (epoch)"), say_drawn("validation")]
        prop = {**font, "size": "small"}
        fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), prop=prop)
        fig.subplots_adjust(bottom=0.22 + 0.06 * (len(names) // 4), top=0.9, wspace=0.3)
        return fig

    def table(self):
        """A row per run and metric, epochs numbered as fit's log numbers them (from 0; the
        figure counts epochs completed). ``final epoch``: the one whose weights the run ended
        with (early stopping's best); ``best ...``: empty while a metric's direction is unknown
        (``history.describe(name, higher_is_better=...)`` says it). The columns are headed in
        the language mxlearn speaks (:data:`TABLE_COLUMNS`), and so are the metrics (a Chinese
        table says 准确率 where fit recorded 'accuracy')."""
        import pandas as pd

        rows = []
        for run in self.runs:
            for metric in self.metrics:
                train = _by_epoch(run.history, metric, "train")
                validation = _by_epoch(run.history, metric, "validation")
                if not (train or validation):
                    continue  # this run never measured it
                epochs = sorted({*train, *validation})
                final = _final(run.history, epochs)
                best, best_epoch = _best(validation, run.history.facts(metric))
                rows.append(
                    (run.label, metric_title(metric), len(epochs), final, train.get(final))
                    + (validation.get(final), best, best_epoch)
                )
        if not rows:
            return pd.DataFrame()
        table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
        for column in WHOLE_NUMBERS:  # whole numbers, or empty
            table[column] = table[column].astype("Int64")
        return table.rename(columns={k: say(v) for k, v in TABLE_COLUMNS.items()})

    def png(self) -> bytes:
        return figure_png(self.fig)

    def save(self, path) -> str:
        path = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)
        kind = os.path.splitext(path)[1].lower().lstrip(".")
        if kind not in ("png", "svg"):
            raise NotAFigureFile(path=path)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.fig.savefig(path, format=kind)
        return path

    def show(self, backend: str | None = None) -> str | None:
        """Show the figure where the code runs (in a terminal, after the table)."""
        if choose_backend(backend) == "console":
            print(self.table().to_string(index=False))
        return show_figure(self.fig, "compare", backend)

    def __repr__(self) -> str:
        return say(
            "<comparison of {count} runs: {labels}>",
            count=len(self.runs),
            labels="; ".join(r.label for r in self.runs),
        )


@public("mxlearn.compare()", show=rules.flag("mxlearn.compare(mod_a, mod_b, show=False)"))
def compare(*runs, labels=None, show: bool = True, backend: str | None = None) -> RunComparison:
    """Overlay the curves of several runs: modules trained with fit, ``MetricHistory`` objects,
    or checkpoint prefixes (the history fit saved with them)."""
    comparison = RunComparison(as_runs(runs, labels))
    if show:
        comparison.show(backend)
    return comparison


def _by_epoch(history, metric: str, phase: str) -> dict[int, float]:
    """Epoch -> value, in epoch order; an epoch recorded twice (a resumed run's) by its latest."""
    if metric not in history.metrics():  # measured by another run of the comparison
        return {}
    latest = dict(zip(*history.series(metric, phase, "epoch")))
    return {epoch: latest[epoch] for epoch in sorted(latest)}


def _final(history, epochs: list[int]) -> int:
    """The epoch whose weights the run ended with: the last, or the one early stopping put back."""
    last = history.events[-1] if history.events else None
    if last is None or last.kind != "restored" or last.epoch - 1 not in epochs:
        return epochs[-1]
    return last.epoch - 1  # the event stands at "epochs completed", as drawn


def _best(values: dict[int, float], facts) -> tuple[float | None, int | None]:
    """The best finite value and its epoch, when the metric's direction is known."""
    finite = {e: v for e, v in values.items() if math.isfinite(v)}
    if not finite or facts is None:
        return None, None
    pick = max if facts.higher_is_better else min
    epoch = pick(finite, key=finite.get)
    return finite[epoch], epoch


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


def as_run(item, index: int, label: str | None = None) -> Run:
    """The run ``item`` stands for; ``index`` numbers it in a default label ('run 2')."""
    prefix = isinstance(item, (str, os.PathLike)) and label is None
    if isinstance(item, MetricHistory):
        history, settings = item, None
    elif isinstance(item, (str, os.PathLike)):
        # latest() refuses a prefix with no complete checkpoint, naming why
        epoch, manifest = latest(os.fspath(item))
        if not manifest.get("history"):
            raise NoHistoryInCheckpoint(epoch=epoch, prefix=os.fspath(item))
        history = MetricHistory.from_dict(manifest["history"])
        settings = (manifest.get("optimizer") or {}).get("settings")
    elif isinstance(getattr(item, "history", None), MetricHistory):
        history, settings = item.history, getattr(item, "optimizer_settings", None)
    else:
        raise NotARun(number=index + 1, kind=type(item).__name__)
    if len(history) == 0:
        raise RunHoldsNothing(number=index + 1)
    if not any(r.kind == "epoch" for r in history.records):
        raise RunHoldsNoEpoch(number=index + 1)
    if not label:  # the prefix as given (its folders tell runs apart), else "run 2"
        label = os.fspath(item) if prefix else say_drawn("run {number}", number=index + 1)
        text = settings_text(settings)
        label = f"{label}: {text}" if text else label
    return Run(label, history, settings)


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
