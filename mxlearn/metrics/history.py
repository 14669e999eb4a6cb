"""MetricHistory: every metric value of a run as plain data (no matplotlib: renderers read it).

A row is (metric, phase 'train'/'validation', kind 'batch'/'epoch', epoch, batch (for epoch rows:
the number of batches), samples seen since training started, seconds, value). Events ("resumed
at epoch 3") are kept beside, and so is what fit knew of each metric from its object: a name is
the user's choice and says nothing certain about what it measures.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from dataclasses import asdict
from typing import NamedTuple

from ..atomic_write import atomic_write_bytes
from ..errors import N_, InputError, closest, did_you_mean
from ..language import say
from ..states import Phase
from .catalogue import KNOWN_METRICS, MetricFacts, facts_of_name
from .directions import described, is_range

PHASES = tuple(phase.value for phase in Phase)
KINDS = ("batch", "epoch")
# a Record's fields, in order: the writers below write the tuples as they are
COLUMNS = ("metric", "phase", "kind", "epoch", "batch", "samples", "time", "value")
FORMAT = "mxlearn.MetricHistory/1"
# The names students give a phase (fit's own words and Keras' 'val'), each meaning one phase.
PHASE_NAMES = {
    "train": "train",
    "training": "train",
    "validation": "validation",
    "val": "validation",
    "eval": "validation",
}


class NoSuchPhaseOrKind(InputError):
    says = N_("phase must be one of {phases} and kind one of {kinds}")


class NotInHistory(InputError):
    says = N_(
        "{called}: this history holds no metric {metric!r} (by that name or an alias of "
        "it); it holds {held}. {suggestion}"
    )


class NoSuchPhase(InputError):
    says = N_(
        "{called}: there is no phase {phase!r}; a history has 'train' (or 'training') and "
        "'validation' (or 'val', 'eval'). {suggestion}"
    )


class NoSuchKind(InputError):
    says = N_("{called}: there is no kind {kind!r}; a value is a 'batch' or an 'epoch' one.")
    fix_code = "history.series('accuracy', 'train', 'epoch')"


class NoSuchColumn(InputError):
    says = N_("{called}: there is no column {x!r}. {suggestion}")


class NotASavedHistory(InputError):
    says = N_("not a saved MetricHistory (format {found!r})")
    fix_says = N_("load a file written by history.save(path) or a checkpoint's manifest")


class SavedHistoryUnreadable(InputError):
    says = N_(
        "the saved metric history is not readable ({kind}: {error}): its rows or "
        "events were changed by hand, or cut short."
    )
    fix_says = N_(
        "use the file as history.save wrote it, or another checkpoint: "
        "mxlearn.checkpoint.latest(prefix)"
    )


class Record(NamedTuple):  # a tuple: cheap to make, one per batch and metric
    metric: str
    phase: str
    kind: str
    epoch: int
    batch: int
    samples: int
    time: float
    value: float


EVENT_KINDS = ("note", "restored", "given_weights")


class Event(NamedTuple):
    epoch: int
    samples: int
    time: float
    text: str
    kind: str = "note"  # 'restored': the run ended with the weights of epochs completed = epoch


class MetricHistory:
    """The values of a run, grouped by metric with train and validation side by side.

    Examples
    --------
    >>> h = MetricHistory()
    >>> h.record("accuracy", "train", "epoch", epoch=0, batch=500, samples=16000, time=1.5,
    ...          value=0.61)
    >>> h.metrics()
    ['accuracy']
    >>> h.series("accuracy", "train", "epoch")
    ([0], [0.61])
    """

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.events: list[Event] = []
        # metric name -> what fit knew of it (None: a custom metric whose direction nobody said)
        self.known: dict[str, MetricFacts | None] = {}
        # begin epoch -> weights_digest of the weights each fit started from, the newest last;
        # the begin epochs whose weights fit's initializer made
        self.starts: dict[int, str | None] = {}
        self.fresh_starts: set[int] = set()
        self.stops: list[int] = []  # the epochs after which a StopTraining ended a fit
        # (patience, metric) of each early stopping that judged the run
        self.watched_with: list[tuple[int, str]] = []
        self._version = 0  # bumped on every change: renderers redraw only what is new

    def started(self, begin_epoch: int, digest: str | None) -> None:
        """A fit begins at ``begin_epoch`` from weights of this digest (None: not made yet)."""
        self.starts.pop(begin_epoch, None)  # the newest last
        self.starts[begin_epoch] = digest
        self.fresh_starts.discard(begin_epoch)

    def fresh_start(self, digest: str) -> None:
        """The newest fit's weights were made by its initializer, with this digest."""
        begin_epoch = next(reversed(self.starts))
        self.starts[begin_epoch] = digest
        self.fresh_starts.add(begin_epoch)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def version(self) -> int:
        return self._version

    def record(
        self,
        metric: str,
        phase: str,
        kind: str,
        *,
        epoch: int,
        batch: int,
        samples: int,
        time: float,
        value: float,
    ) -> None:
        if phase not in PHASES or kind not in KINDS:
            raise NoSuchPhaseOrKind(phases=PHASES, kinds=KINDS)
        row = metric, phase, kind, int(epoch), int(batch), int(samples), float(time), float(value)
        self.records.append(Record(*row))
        self._version += 1

    def mark(
        self, text: str, *, epoch: int, samples: int = 0, time: float = 0.0, kind: str = "note"
    ) -> None:
        """Add an event, e.g. ``mark('resumed at epoch 3', epoch=3)``."""
        self.events.append(Event(int(epoch), int(samples), float(time), text, kind))
        self._version += 1

    def describe(
        self, metric: str, higher_is_better: bool, value_range: tuple | None = None
    ) -> None:
        """Say what a custom metric measures, for ``diagnose`` and ``compare``:
        ``mod.history.describe('my_error', higher_is_better=False)``; ``value_range``: its
        (low, high) when bounded."""
        held = [*self.known, *self.metrics()]
        if isinstance(metric, str) and metric not in held:
            metric = _alias_of(metric, held) or metric  # else described() refuses it
        self.know(metric, described(self, metric, higher_is_better, value_range))

    def know(self, metric: str, facts: MetricFacts | None) -> None:
        """Record what is known of ``metric`` (None: nothing); what was known is kept when
        nothing new is."""
        if facts is not None or self.known.get(metric) is None:
            self.known[metric] = facts

    def facts(self, metric: str) -> MetricFacts | None:
        """What ``metric`` measures: as fit recorded or :meth:`describe` said; else (a history
        built by hand, or saved by an older mxlearn) MXNet's metric of that name, or None."""
        if metric in self.known:
            return self.known[metric]
        metric = self.metric_name(metric, "history.facts()")  # 'acc' is fit's 'accuracy'
        return self.known[metric] if metric in self.known else facts_of_name(metric)

    def metrics(self) -> list[str]:  # in the order they first appeared
        return list(dict.fromkeys(r.metric for r in self.records))

    def groups(self) -> dict[str, dict[str, list[Record]]]:
        grouped: dict[str, dict[str, list[Record]]] = {}
        for r in self.records:
            grouped.setdefault(r.metric, {p: [] for p in PHASES})[r.phase].append(r)
        return grouped

    def series(self, metric: str, phase: str, kind: str, x: str = "epoch"):
        """(xs, values) of one curve (names as :meth:`curve` reads them); ``x``: any column."""
        metric, phase, kind = self.curve(metric, phase, kind, "history.series()")
        if x not in COLUMNS:
            raise NoSuchColumn(called="history.series()", x=x, suggestion=did_you_mean(x, COLUMNS))
        rows = [r for r in self.records if (r.metric, r.phase, r.kind) == (metric, phase, kind)]
        return [getattr(r, x) for r in rows], [r.value for r in rows]

    def last_record(self, metric: str, phase: str = "train", kind: str = "epoch") -> Record | None:
        return self._latest(metric, phase, kind, "history.last_record()")

    def last(self, metric: str, phase: str = "train", kind: str = "epoch") -> float | None:
        """The latest value of one curve, e.g. ``history.last('accuracy', 'validation')``."""
        r = self._latest(metric, phase, kind, "history.last()")
        return None if r is None else r.value

    def _latest(self, metric, phase, kind, called: str) -> Record | None:
        metric, phase, kind = self.curve(metric, phase, kind, called)
        for r in reversed(self.records):
            if (r.metric, r.phase, r.kind) == (metric, phase, kind):
                return r
        return None

    def curve(self, metric, phase, kind="epoch", called: str = "history.curve()"):
        """(metric, phase, kind) as recorded, from a student's names: a metric by any name MXNet's
        factory makes it from, in any case ('acc' is 'accuracy', 'top_k_acc' the run's one
        top-k accuracy); a phase as in :data:`PHASE_NAMES`. Anything else is refused, naming
        what the history holds (#26: 'acc' and 'val' read an empty curve without a word)."""
        return self.metric_name(metric, called), phase_name(phase, called), kind_name(kind, called)

    def metric_name(self, metric, called: str = "history.curve()") -> str:
        if isinstance(metric, str) and metric in self.known:
            return metric  # fit knew it by this name: the per-epoch questions take this path
        held = list(dict.fromkeys([*self.known, *self.metrics()]))
        if not held and isinstance(metric, str):
            return metric  # nothing recorded yet: every curve is empty, whatever its name
        name = _alias_of(metric, held) if isinstance(metric, str) else None
        if name is None:
            near = closest(str(metric), held)
            suggestion = did_you_mean(str(metric), held) if near else ""
            raise NotInHistory(called=called, metric=metric, held=held, suggestion=suggestion)
        return name

    def diagnose(self, lang: str | None = None, metric: str | None = None) -> list:
        """What the curves show (overfitting, a learning rate too high, a plateau, underfitting,
        no learning), each with its numbers and a next step; see
        :func:`mxlearn.metrics.diagnosis.diagnose`."""
        from .diagnosis import diagnose  # imported when asked: reading curves is rarely needed

        return diagnose(self, lang, metric)

    def to_pandas(self):
        # pandas adds ~0.15 s to every `import mxlearn` (python -X importtime); only this needs it
        import pandas as pd

        return pd.DataFrame(self.records, columns=list(COLUMNS))

    def to_csv(self, path: str | os.PathLike) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(COLUMNS)
            writer.writerows(self.records)

    def to_dict(self) -> dict:
        def number(v: float):  # NaN and infinity are not JSON: written as strings
            return v if math.isfinite(v) else repr(v)

        return {
            "format": FORMAT,
            "columns": list(COLUMNS),
            "rows": [[*r[:-1], number(r.value)] for r in self.records],
            "events": [e._asdict() for e in self.events],
            "metrics": {
                name: None if facts is None else asdict(facts) for name, facts in self.known.items()
            },
        }

    @classmethod
    def from_dict(cls, data: dict) -> MetricHistory:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise NotASavedHistory(found=found)
        history = cls()
        try:
            for row in data["rows"]:
                values = dict(zip(data["columns"], row))
                values["value"] = float(values["value"])
                history.records.append(Record(**values))
            history.events = [_saved_event(e) for e in data.get("events", [])]
            for name, facts in data.get("metrics", {}).items():
                history.known[name] = _saved_facts(facts)
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            raise SavedHistoryUnreadable(kind=type(err).__name__, error=err) from None
        history._version = len(history.records) + len(history.events)
        return history

    def save(self, path: str | os.PathLike) -> None:
        """Write the history as JSON, atomically."""
        atomic_write_bytes(os.fspath(path), json.dumps(self.to_dict()).encode())

    @classmethod
    def load(cls, path: str | os.PathLike) -> MetricHistory:
        with open(path) as f:
            return cls.from_dict(json.load(f))

    def __repr__(self) -> str:
        last = ", ".join(
            f"{m} {self.last(m):.4g}" for m in self.metrics() if self.last(m) is not None
        )
        epochs = len({r.epoch for r in self.records if r.kind == "epoch"})
        counts = say("{values} values, {epochs} epochs", values=len(self.records), epochs=epochs)
        return f"MetricHistory({counts}{': ' + last if last else ''})"


def _alias_of(metric: str, held: list[str]) -> str | None:
    """The one name of ``held`` that ``metric`` means, case aside or as MXNet's alias."""
    same = [name for name in held if name.lower() == metric.lower()]
    if len(same) == 1:
        return same[0]
    row = next((row for row in KNOWN_METRICS if metric.lower() in row.names), None)
    if row is None:
        row = next((row for row in KNOWN_METRICS if re.fullmatch(row.reports, metric)), None)
    reported = [name for name in held if row is not None and re.fullmatch(row.reports, name)]
    return reported[0] if len(reported) == 1 else None


def phase_name(phase, called: str) -> str:
    if phase in PHASES:
        return phase
    if isinstance(phase, str) and phase.lower() in PHASE_NAMES:
        return PHASE_NAMES[phase.lower()]
    suggestion = did_you_mean(str(phase), PHASE_NAMES)
    raise NoSuchPhase(called=called, phase=phase, suggestion=suggestion)


def kind_name(kind, called: str) -> str:
    if isinstance(kind, str) and kind.lower() in KINDS:
        return kind.lower()
    raise NoSuchKind(called=called, kind=kind)


def _saved_event(saved: dict) -> Event:
    """An event as history.save wrote it; ValueError for one changed by hand."""
    event = Event(**saved)
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in event[:2])
    timed = isinstance(event.time, (int, float)) and not isinstance(event.time, bool)
    if not (whole and timed and isinstance(event.text, str) and event.kind in EVENT_KINDS):
        raise ValueError(repr(saved))
    return Event(event.epoch, event.samples, float(event.time), event.text, event.kind)


def _saved_facts(saved) -> MetricFacts | None:
    """What a saved history says a metric measures; ValueError for a value changed by hand
    (which could turn a loss into a score)."""
    if saved is None:
        return None
    if not isinstance(saved, dict) or set(saved) != {"higher_is_better", "value_range"}:
        raise ValueError(repr(saved))
    low_high = saved["value_range"]
    if not isinstance(saved["higher_is_better"], bool) or not (
        low_high is None or (isinstance(low_high, list) and is_range(low_high))
    ):
        raise ValueError(repr(saved))
    return MetricFacts(saved["higher_is_better"], None if low_high is None else tuple(low_high))
