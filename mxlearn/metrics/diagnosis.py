"""``diagnose(history)``: what went wrong in a run, if anything, as :class:`Finding` s.

Each kind (:data:`findings.KINDS`) is found by one detector of :data:`DETECTORS`, run in order,
whose finding suppresses the kinds it names. It never guesses: a metric of unknown direction is
not read, and a kind the history cannot tell (too few epochs, no validation, no first batches)
is not reported. Each threshold, set from seeded letters-MLP runs, says why.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import N_, InputError
from ..language import current_language
from . import findings
from .findings import Finding
from .stopping import early_stop, restoring_stop  # noqa: F401 (early_stop: for the tests)


class NotAHistory(InputError):
    says = N_("diagnose() reads a MetricHistory (mod.history after fit); got {kind}.")
    fix_code = "mod.history.diagnose()"


class NotJudgeable(InputError):
    says = N_(
        "diagnose(metric={metric!r}): mxlearn does not know whether a larger '{name}' is "
        "better, so it cannot judge the run by it; it can by {judgeable}."
    )
    fix_code = "mod.history.describe({name!r}, higher_is_better=False)"


def judged_metric(history, metric, train: dict, validation: dict) -> str | None:
    """The metric the student judges the run by: ``metric`` (any name fit understands), else
    the first one fit was given (its eval_metric, the one EarlyStopping judges by default)
    that has a known direction, its validation curve first."""
    if metric is not None:
        name = history.metric_name(metric, "diagnose()")
        if name not in validation and name not in train:
            judgeable = list(dict.fromkeys([*validation, *train]))
            raise NotJudgeable(metric=metric, name=name, judgeable=judgeable)
        return name
    order = history.metrics()
    return next((m for m in order if m in validation), next((m for m in order if m in train), None))


# A validation value has to stay worse than its best for this many epochs: the healthy letters
# MLP's validation accuracy drops 5 points for a single epoch and recovers (and it is
# EarlyStopping's default patience, the next step we suggest).
PATIENCE = 3
# Differences smaller than these are noise. Accuracy-like values (bounded): 1 point (4,000
# validation rows give a standard error of about 0.7 point at 75%); losses: 2% of the value.
BOUNDED_MARGIN = 0.01
LOSS_MARGIN = 0.02
LOSS_FLOOR = 0.01  # ...and never less than 1% of the loss's first epoch value (see allowed)
# A spike: a batch loss over twice the higher of the starting level (the lowest of the first 5
# batches) and the median of the 20 before it (late in healthy training a batch of 32 rows
# reaches 3 times that median alone). In seeded letters-MLP runs that do not overshoot (lr
# 1e-6, or 0.1 with batches of 16-100 rows) no batch reached 1.9 times that level; at lr 10
# and 20 every run had batches 2.1-7.5 times above it. (At 2 and 5 most runs collapse without
# a spike: found as not learning, whose next step tries a 10 times smaller rate too.)
SPIKE_RATIO = 2.0
START_BATCHES = 5
SPIKE_WINDOW = 20
# An epoch whose training value is worse than the one before by more than these (see allowed)
# is a step back: epoch means of training values are smooth in healthy runs (the letters MLP's
# training loss never rose 1% from one epoch to the next); two steps back is oscillation.
STEP_BACK = {"bounded": 0.02, "loss": 0.03}
STEPS_BACK = 2
# The last training value this far behind the best: the run has lost what it had learned.
DECLINE = {"bounded": 0.05, "loss": 0.10}
DECLINE_EPOCHS = 2  # ...at each of the last 2 epochs: not one bad epoch
# Not learning: a training loss never 3% below its starting level (a run at learning rate 1e-6
# stays within 0.01% of it; a slow run at 1e-3 is 5% below after 10 epochs), and an accuracy
# never 5 points (or 3 standard errors of its start) above its own: both, when both are
# measured. A slow start (lr 0.01: the loss 1.6% lower after 3 epochs, the accuracy from 0.05
# to 0.13) is learning; shuffled labels (accuracy from 0.02 to 0.045 by memorising) are not.
STILL_LOSS_SHARE = 0.03
# Frozen: no epoch's loss 0.02% away from the start. At lr 1e-6 the letters MLP's stays within
# 0.01% (its weights hardly move); shuffled labels at lr 0.1 move it 0.06% (memorising). Only
# a rate 10^5 times larger (0.1) learns there: 10 times larger would not move it either (#26).
FROZEN_SHARE = 0.0002
STILL_ACCURACY = 0.05
NOT_LEARNING_EPOCHS = 3  # "for the whole run" means little before 3 epochs
# Plateau and underfitting judge accuracy-like values in [0, 1], where "poor" has a meaning:
GOOD = 0.9  # a network fitting 9 in 10 training rows is not called poor
WINDOW = 3  # the mean of the last 3 epochs, against the mean of the 3 before...
SLOW_SHARE = 0.05  # ...gained less than 5% of what was left to 1: a plateau
# Leveled off (rather than slow from the start): earlier, a window gained at least 5 points on
# the one before it, and the last gained at most a quarter of the best such gain.
CLEAR_PROGRESS = 0.05
LEVELED_SHARE = 0.25
CLOSE = 0.05  # training and validation within 5 points: the network does not overfit


@dataclass
class Curve:  # one metric's epoch values in one phase
    metric: str
    higher_is_better: bool
    bounded: bool  # a known range: accuracy, F1, MCC...; False: a loss
    epochs: list[int]
    values: list[float]
    rows: int | None = None  # rows per epoch, for a training curve (its values are means)

    fraction: bool = False  # accuracy-like: larger is better and values lie in [0, 1]

    def gain(self, new: float, old: float) -> float:  # negative: worse
        return new - old if self.higher_is_better else old - new

    def noise(self, reference: float) -> float:
        return self.allowed({"bounded": BOUNDED_MARGIN, "loss": LOSS_MARGIN}, reference)

    def allowed(self, table: dict, reference: float) -> float:
        """A difference that counts: bounded values, absolute and at least 3 standard errors over
        an epoch's rows; a loss, a share of the value and at least a share of its first epoch's
        (the jitter of a loss near 0 at the end of a good run is no change)."""
        if self.bounded:
            p = min(max(abs(reference), 0.01), 0.99)
            sampled = 3 * math.sqrt(p * (1 - p) / self.rows) if self.rows else 0.0
            return max(table["bounded"], sampled)
        return max(table["loss"] * abs(reference), LOSS_FLOOR * abs(self.values[0]))

    def best_index(self) -> int:
        pick = max if self.higher_is_better else min
        return self.values.index(pick(self.values))

    def value_at(self, epoch: int) -> float | None:
        return self.values[self.epochs.index(epoch)] if epoch in self.epochs else None


@dataclass
class Run:  # what the detectors read of a history
    train: dict[str, Curve]
    validation: dict[str, Curve]
    batches: dict[str, list]
    losses: dict[str, list]
    judged: str | None = None  # the metric the student judges the run by

    @classmethod
    def of(cls, history, metric: str | None = None) -> Run:
        batches = first_batches(history)
        losses = {m: rows for m, rows in batches.items() if not history.facts(m).higher_is_better}
        train, validation = curves(history, "train"), curves(history, "validation")
        return cls(
            train, validation, batches, losses, judged_metric(history, metric, train, validation)
        )

    def judged_curve(self) -> Curve | None:  # the one "best" is said of
        return self.validation.get(self.judged) or self.train.get(self.judged)


@dataclass(frozen=True)
class Detector:
    """``find`` returns a finding of one of ``kinds`` or None; a finding suppresses the later
    ones of the kinds in ``suppresses``."""

    find: Callable[[Run], Finding | None]
    kinds: tuple[str, ...]
    suppresses: tuple[str, ...] = ()


def diagnose(history, lang: str | None = None, metric: str | None = None) -> list[Finding]:
    """What the curves of ``history`` show: empty for a run that went well, or one the history
    cannot judge. ``lang``: 'en', 'zh' or None (as now). ``metric``: the one the run is judged
    by (None: the first fit was given), whose best epoch an advice to restore names.

    Examples
    --------
    >>> from mxlearn import MetricHistory
    >>> h = MetricHistory()
    >>> for epoch, value in enumerate([0.5, 0.7, 0.8, 0.85]):
    ...     h.record("accuracy", "train", "epoch", epoch=epoch, batch=10, samples=0, time=0.0,
    ...              value=value)
    >>> diagnose(h)
    []
    """
    if lang not in findings.LANGUAGES:
        raise findings.NotADiagnosisLanguage(lang=lang)
    if not isinstance(getattr(history, "records", None), list):
        raise NotAHistory(kind=type(history).__name__)
    with findings.speaking(lang):
        language, run = current_language(), Run.of(history, metric)
        found: list[Finding] = []
        suppressed: set[str] = set()
        for detector in DETECTORS:
            if suppressed.issuperset(detector.kinds):
                continue
            finding = detector.find(run)
            if finding is None or finding.kind in suppressed:
                continue
            finding.language = language
            found.append(finding)
            suppressed.update(detector.suppresses)
        return found


def curves(history, phase: str) -> dict[str, Curve]:
    """The epoch curves of ``phase`` of known direction (an epoch recorded twice, as after a
    resume: the latest value)."""
    by_metric: dict[str, dict[int, float]] = {}
    seen: dict[int, int] = {}  # epoch -> training samples seen at its end
    for r in history.records:
        if r.phase == phase and r.kind == "epoch" and math.isfinite(r.value):
            by_metric.setdefault(r.metric, {})[r.epoch] = r.value
            seen[r.epoch] = r.samples
    counts = [seen[e] for e in sorted(seen)]
    steps = [b - a for a, b in zip(counts, counts[1:]) if b > a] or counts[:1]
    rows = int(statistics.median(steps)) if phase == "train" and steps and steps[0] else None
    found = {}
    for metric, values in by_metric.items():
        facts = history.facts(metric)
        if facts is None:  # a custom metric: better when higher or lower? never guessed
            continue
        epochs = sorted(values)
        found[metric] = Curve(
            metric,
            facts.higher_is_better,
            facts.value_range is not None,
            epochs,
            [values[e] for e in epochs],
            rows,
            facts.higher_is_better and facts.value_range == (0.0, 1.0),
        )
    return found


def first_batches(history) -> dict[str, list]:
    """Each metric's training batch records, when they start at batch 0 of epoch 0: the value of
    the network before any update (a run begun later started from trained weights)."""
    if any(e.kind == "given_weights" for e in history.events):
        return {}  # the first batch already ran on trained weights (fine-tuning)
    batches: dict[str, list] = {}
    for r in history.records:
        if r.phase == "train" and r.kind == "batch":
            batches.setdefault(r.metric, []).append(r)
    return {
        metric: rows
        for metric, rows in batches.items()
        if rows[0].batch == 0 and rows[0].epoch == 0 and history.facts(metric)
    }


def overfitting(run: Run) -> Finding | None:
    """The metric whose validation value turned worse earliest while training improved: a
    validation loss when one was measured (it turns first and moves smoothly; an accuracy that
    dips while the loss does not rise is noise: runs on 2,000 rows at lr 0.1 swing by 7 points
    from epoch to epoch and recover), else an accuracy-like value."""
    train, validation = run.train, run.validation
    losses = {m: c for m, c in validation.items() if not c.higher_is_better}
    seen = [
        shown
        for metric, curve in (losses or validation).items()
        if metric in train and (shown := _worse_since_best(train[metric], curve))
    ]
    if not seen:
        return None
    best_epoch, metric, numbers, epochs = min(seen, key=lambda s: s[0])
    stop = restoring_stop(run.judged_curve())
    if stop:  # what following the advice gives, for a test to check by following it
        numbers = dict(numbers, **{f"stop_{k}": v for k, v in stop.items() if k != "latest"})
    # #26: checked against the run's other curves. A validation loss rising while validation
    # accuracy still improves is a network ever surer of the rows it gets wrong while it gets
    # more of them right: said as such, with both, not as "worse since epoch N".
    others = sorted(
        (c for m, c in validation.items() if m != metric), key=lambda c: c.metric != run.judged
    )
    improving = [c for c in others if _kept_improving(c, best_epoch, numbers["latest_epoch"])]
    if improving:
        other = improving[0]
        numbers = dict(
            numbers,
            other_then=other.value_at(best_epoch),
            other_now=other.value_at(numbers["latest_epoch"]),
        )
        text, step = findings.overconfidence_words(
            metric, other.metric, run.judged, stop, **numbers
        )
        return Finding("overconfidence", metric, epochs, numbers, text, step)
    text, step = findings.overfitting_words(metric, run.judged, stop, **numbers)
    return Finding("overfitting", metric, epochs, numbers, text, step)


def _kept_improving(curve: Curve, since: int, until: int) -> bool:
    """Better at ``until`` than at ``since``, and still at its best."""
    then, now = curve.value_at(since), curve.value_at(until)
    if then is None or now is None:
        return False
    best = curve.values[curve.best_index()]
    return curve.gain(now, then) > curve.noise(then) and curve.gain(now, best) > -curve.noise(best)


# Memorising fits the training rows clearly better than unseen ones: a validation loss 1.5
# times the training loss (0.08 against 1.2 in notebook 07) or accuracy 5 points below. A
# healthy letters MLP ends within 1.25 times and 4 points, its validation swings that much.
GAP = {"loss": 1.5, "bounded": 0.05}


def _apart(train_now: float, validation_now: float, higher_is_better: bool) -> bool:
    gap = train_now - validation_now if higher_is_better else validation_now / max(train_now, 1e-12)
    return gap > (GAP["bounded"] if higher_is_better else GAP["loss"])


def jitter(curve: Curve) -> float:
    """Epoch-to-epoch noise: the median second difference (a steady trend has none) over
    sqrt(6), their standard deviation for noise of standard deviation 1."""
    v = curve.values
    bends = [abs(v[i + 1] - 2 * v[i] + v[i - 1]) for i in range(1, len(v) - 1)]
    return statistics.median(bends) / math.sqrt(6) if bends else 0.0


def _worse_since_best(train: Curve, validation: Curve):
    best = validation.best_index()
    after = validation.values[best + 1 :]
    if len(after) < PATIENCE:
        return None
    best_value, latest = validation.values[best], validation.values[-1]
    # worse by more than the margin, and than twice the curve's own jitter
    noise = max(validation.noise(best_value), 2 * jitter(validation))
    # the latest and the typical epoch since the best are both worse: not one unlucky epoch
    if validation.gain(latest, best_value) > -noise:
        return None
    if validation.gain(statistics.median(after), best_value) > -noise:
        return None
    best_epoch, latest_epoch = validation.epochs[best], validation.epochs[-1]
    train_then, train_now = train.value_at(best_epoch), train.value_at(latest_epoch)
    if train_then is None or train_now is None:
        return None
    if train.gain(train_now, train_then) < train.noise(train_then):  # training improved too
        return None
    if not _apart(train_now, latest, validation.higher_is_better):
        return None
    numbers = dict(
        first=validation.epochs[best + 1],
        best_epoch=best_epoch,
        best=best_value,
        latest_epoch=latest_epoch,
        latest=latest,
        train_then=train_then,
        train_now=train_now,
    )
    return best_epoch, validation.metric, numbers, tuple(validation.epochs[best + 1 :])


def learning_rate_too_high(run: Run) -> Finding | None:
    """Spikes in a batch loss (the clearest sign), then epoch values that fall back."""
    for metric, rows in run.losses.items():
        spikes = _spikes(rows)
        if spikes:
            epochs = tuple(sorted(set(spikes.pop("epochs"))))
            text, step = findings.spikes_words(metric, **spikes)
            return Finding("learning_rate_too_high", metric, epochs, spikes, text, step)
    ordered = sorted(run.train.values(), key=lambda c: c.higher_is_better)  # losses first
    for curve in ordered:
        finding = _decline(curve) or _oscillation(curve)
        if finding and not _contradicted(finding, run):
            return finding
    return None


def _contradicted(finding: Finding, run: Run) -> bool:
    """The run did not lose what it had learned (#26): the same metric's validation ends within
    its noise of its best, or, for a fall from a best epoch, another training curve kept
    improving to its best over the epochs this one fell back. A Dropout network's training
    values are measured with units dropped, so they step back and fall while validation
    settles; the advised smaller rate made such runs worse (an oscillation, #27: 0.717 ->
    0.646; a fall from epoch 35, #26: 0.731 -> 0.661)."""
    validation = run.validation.get(finding.metric)
    if validation is not None:
        best = validation.values[validation.best_index()]
        if validation.gain(validation.values[-1], best) > -validation.noise(best):
            return True
    if "best_epoch" not in finding.numbers:  # an oscillation: each step back is its own
        return False
    since, until = finding.numbers["best_epoch"], finding.numbers["latest_epoch"]
    others = (c for m, c in run.train.items() if m != finding.metric)
    return any(_kept_improving(c, since, until) for c in others)


def _spikes(rows: list) -> dict | None:
    values = [r.value for r in rows]
    start = starting_level(rows, higher_is_better=False)
    if not (math.isfinite(start) and start > 0):
        return None
    spiked = []  # (value, level, record)
    for i in range(1, len(values)):
        recent = [v for v in values[max(0, i - SPIKE_WINDOW) : i] if math.isfinite(v)]
        level = max(start, statistics.median(recent)) if recent else start
        if not math.isfinite(values[i]) or values[i] > SPIKE_RATIO * level:
            spiked.append((values[i], level, rows[i]))
    if not spiked:
        return None
    # a NaN or infinite loss is the highest of all
    largest, level, record = max(spiked, key=lambda s: s[0] if math.isfinite(s[0]) else math.inf)
    return dict(
        count=len(spiked),
        ratio=SPIKE_RATIO,
        largest=largest,
        epoch=record.epoch,
        level=level,
        start=start,
        epochs=[s[2].epoch for s in spiked],
    )


def _decline(curve: Curve) -> Finding | None:
    best = curve.best_index()
    best_value, latest = curve.values[best], curve.values[-1]
    last = curve.values[-DECLINE_EPOCHS:]
    if best >= len(curve.values) - DECLINE_EPOCHS:
        return None
    if any(curve.gain(v, best_value) > -curve.allowed(DECLINE, best_value) for v in last):
        return None
    numbers = dict(
        best_epoch=curve.epochs[best], best=best_value, latest_epoch=curve.epochs[-1], latest=latest
    )
    text, step = findings.decline_words(curve.metric, **numbers)
    epochs = tuple(curve.epochs[best + 1 :])
    return Finding("learning_rate_too_high", curve.metric, epochs, numbers, text, step)


def steps_back(curve: Curve) -> list[tuple[int, float]]:
    """(epoch, by how much) of each epoch worse than the one before by more than STEP_BACK."""
    return [
        (curve.epochs[i], -curve.gain(curve.values[i], curve.values[i - 1]))
        for i in range(1, len(curve.values))
        if curve.gain(curve.values[i], curve.values[i - 1])
        < -curve.allowed(STEP_BACK, curve.values[i - 1])
    ]


def _oscillation(curve: Curve) -> Finding | None:
    back = steps_back(curve)
    # each step back in a run that otherwise improves is a change of direction twice over
    if len(back) < STEPS_BACK or _settled(curve, back[-1][0]):
        return None
    epochs = tuple(e for e, _ in back)
    numbers = dict(count=len(back), largest=max(size for _, size in back))
    text, step = findings.oscillation_words(curve.metric, epochs, **numbers)
    return Finding("learning_rate_too_high", curve.metric, epochs, numbers, text, step)


def _settled(curve: Curve, last_step_back: int) -> bool:
    """The steps back all came early and the curve ends at its best: it did settle. The advised
    smaller rate did not help such a run (SGD 0.3 with momentum on 1,000 letters: steps back at
    epochs 8, 9 and 13 of 30, training loss 0.00078 at the end; at 0.1 it ended at 0.017)."""
    best = curve.values[curve.best_index()]
    ends_best = curve.gain(curve.values[-1], best) > -curve.allowed(STEP_BACK, best)
    return ends_best and last_step_back < curve.epochs[-1] - len(curve.epochs) // 3


def not_learning(run: Run) -> Finding | None:
    """Every training curve with a known start (a loss, an accuracy) no better than at the start:
    a loss alone hardly moves in a slow start while the accuracy already rises."""
    batches = run.batches
    judged = [
        c
        for c in run.train.values()
        if c.metric in batches and (c.fraction or not c.higher_is_better)
        and len(c.values) >= NOT_LEARNING_EPOCHS
    ]  # fmt: skip
    if not judged or not all(_still(c, batches[c.metric]) for c in judged):
        return None
    curve = min(judged, key=lambda c: c.higher_is_better)  # a loss's start says more: ln(K)
    numbers = dict(
        count=len(curve.values),
        start=starting_level(batches[curve.metric], curve.higher_is_better),
        batches=min(START_BATCHES, len(batches[curve.metric])),
        best=curve.values[curve.best_index()],
        latest=curve.values[-1],
    )
    is_loss = not curve.higher_is_better
    start = numbers["start"]
    frozen = is_loss and all(abs(v - start) <= FROZEN_SHARE * start for v in curve.values)
    text, step = findings.not_learning_words(
        curve.metric, is_loss, frozen, share=STILL_LOSS_SHARE, **numbers
    )
    return Finding("not_learning", curve.metric, tuple(curve.epochs), numbers, text, step)


def starting_level(rows: list, higher_is_better: bool) -> float:
    """The network's value from its first batches: for a loss the lowest (a spike must not
    raise it), for a score their mean (one batch of 100 rows is a small sample)."""
    first = [r.value for r in rows[:START_BATCHES] if math.isfinite(r.value)]
    if not first:
        return math.nan
    return statistics.fmean(first) if higher_is_better else min(first)


def _still(curve: Curve, rows: list) -> bool:
    start = starting_level(rows, curve.higher_is_better)
    if not math.isfinite(start):
        return False
    best = curve.values[curve.best_index()]
    if not curve.higher_is_better:
        return start > 0 and best >= (1 - STILL_LOSS_SHARE) * start
    if best >= GOOD:
        return False
    # the start is an accuracy over the first batches' rows (samples counts the rows seen, so
    # the first batch's is its size)
    measured = rows[0].samples * min(START_BATCHES, len(rows))
    p = min(max(start, 0.01), 0.99)
    spread = 3 * math.sqrt(p * (1 - p) / max(measured, 1))
    return best <= start + max(STILL_ACCURACY, spread)


def plateau_or_underfitting(run: Run) -> Finding | None:
    """On the first accuracy-like metric (where "poor" is known), by means over windows of
    epochs: one epoch of a small data set moves a lot."""
    # A curve that steps back may be flat from steps too large: "raise the learning rate" would
    # be wrong. One step back (too few to call oscillation) leaves it open: a run at lr 0.2 with
    # batches of 64 crept along with one.
    if any(steps_back(c) for c in run.train.values()):
        return None
    curve = next((c for c in run.train.values() if c.fraction), None)
    if curve is None or len(curve.values) < 2 * WINDOW:
        return None  # a window to see the last gain, and one before it to compare with
    values, epochs, n = curve.values, curve.epochs, len(curve.values)

    def mean(start: int) -> float:
        return statistics.fmean(values[start : start + WINDOW])

    before, after = mean(n - 2 * WINDOW), mean(n - WINDOW)
    if after >= GOOD or after - before >= SLOW_SHARE * (1 - before):
        return None
    # the best gain between two windows before the last: did it learn, then stop?
    earlier = max((mean(i + WINDOW) - mean(i) for i in range(n - 3 * WINDOW + 1)), default=0.0)
    leveled_off = earlier >= CLEAR_PROGRESS and after - before <= LEVELED_SHARE * earlier
    leveled_off = leveled_off and not _loss_still_falling(run)
    window = dict(
        window=WINDOW, first=epochs[n - WINDOW], last=epochs[-1], before=before, after=after
    )
    concerned = tuple(epochs[n - WINDOW :])
    checked = run.validation.get(curve.metric)
    seen = [checked.value_at(e) for e in concerned] if checked else [None]
    if leveled_off and None not in seen and abs(after - statistics.fmean(seen)) <= CLOSE:
        validated = statistics.fmean(seen)
        text, step = findings.underfitting_words(curve.metric, validation=validated, **window)
        numbers = dict(window, validation=validated)
        return Finding("underfitting", curve.metric, concerned, numbers, text, step)
    text, step = findings.plateau_words(curve.metric, leveled_off=leveled_off, **window)
    return Finding("plateau", curve.metric, concerned, window, text, step)


def _loss_still_falling(run: Run) -> bool:
    """A loss of the run, training or validation, whose last epochs average better than those
    before by more than its noise: the network is still learning, slowly, and has not leveled
    off (#26: at lr 0.003 a Dropout network's accuracy crept +0.013 while its cross-entropy
    kept falling; "too small a network" was wrong, as it overfits at lr 0.03)."""
    for curve in (*run.train.values(), *run.validation.values()):
        if curve.higher_is_better or len(curve.values) < 2 * WINDOW:
            continue
        before = statistics.fmean(curve.values[-2 * WINDOW : -WINDOW])
        after = statistics.fmean(curve.values[-WINDOW:])
        if curve.gain(after, before) > curve.noise(before):
            return True
    return False


# A flat curve is explained by steps too large, or by a network that never learned: "plateau"
# or "underfitting" would then send the student after the wrong cause.
FLAT = ("plateau", "underfitting")
DETECTORS = (
    Detector(learning_rate_too_high, ("learning_rate_too_high",), ("not_learning", *FLAT)),
    Detector(not_learning, ("not_learning",), FLAT),
    Detector(overfitting, ("overfitting", "overconfidence")),
    Detector(plateau_or_underfitting, FLAT),
)
