"""A :class:`Finding` of a diagnosis and the words of each kind. The detection is in
``diagnosis.py``; this file only puts the numbers it is given into sentences, so that the
English and the Chinese of a finding always hold the same numbers."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

from ..errors import N_, InputError
from ..language import current_language, say, sentences, set_language
from .catalogue import metric_title

# Each kind, found by one detector of diagnosis.DETECTORS and said by its *_words function
# below, with how prose names it: the kind itself in English (what no_finding(mod, kind) is
# given), the template the key of its Chinese name
KIND_TITLES = {
    "overfitting": N_("overfitting"),
    "overconfidence": N_("overconfidence"),
    "learning_rate_too_high": N_("learning rate too high"),
    "plateau": N_("plateau"),
    "underfitting": N_("underfitting"),
    "not_learning": N_("not learning"),
}
KINDS = tuple(KIND_TITLES)
LANGUAGES = (None, "en", "zh")


def kind_title(kind: str) -> str:
    """A kind of :data:`KINDS` as prose in the language mxlearn speaks: 'overfitting' in English
    (the name a student passes), '过拟合' in Chinese."""
    return kind if current_language() == "en" else say(KIND_TITLES[kind])


class NotADiagnosisLanguage(InputError):
    says = N_(
        "diagnose(lang={lang!r}): give 'en' (English), 'zh' (Chinese) or None (the "
        "language mxlearn speaks now)."
    )
    fix_code = "mod.history.diagnose(lang='zh')"


@dataclass
class Finding:
    """One thing the curves show: ``kind`` of :data:`KINDS`, the ``epochs`` (from 0) and
    ``numbers`` that show it, the ``text`` and ``next_step`` in ``language``; no next step when
    following it would not make this run better (#26)."""

    kind: str
    metric: str
    epochs: tuple[int, ...]
    numbers: dict[str, float | int]
    text: str
    next_step: str
    language: str = field(default="en")

    def __str__(self) -> str:
        if not self.next_step:
            return self.text
        with speaking(self.language):  # the label in the language of the text it introduces
            return say("{text}\n  Next step: {step}", text=self.text, step=self.next_step)


@contextlib.contextmanager
def speaking(lang: str | None):
    """Say things in ``lang`` inside the block, then speak as before: through language.py's
    public calls, ``set_language(None)`` (back to MXLEARN_LANG), then the one before if not."""
    before = current_language()
    if lang is None or lang == before:
        yield
        return
    set_language(lang)
    try:
        yield
    finally:
        set_language(None)
        if current_language() != before:
            set_language(before)


# Each returns (what is seen, the next step), the numbers as the templates' fields.
def overfitting_words(metric: str, judged: str | None, stop: dict | None, **numbers):
    text = say(
        "Overfitting from epoch {first}: validation {metric} was best at epoch {best_epoch} "
        "({best:.4g}) and is {latest:.4g} at epoch {latest_epoch}, while training {metric} kept "
        "improving ({train_then:.4g} -> {train_now:.4g}).",
        metric=metric_title(metric),
        **numbers,
    )
    return text, early_stopping_step(judged, stop)


def overconfidence_words(metric: str, other: str, judged, stop, **numbers) -> tuple[str, str]:
    text = say(
        "Validation {metric} has risen since epoch {best_epoch} ({best:.4g} -> {latest:.4g} at "
        "epoch {latest_epoch}) while training {metric} kept improving ({train_then:.4g} -> "
        "{train_now:.4g}), but validation {other} kept improving too ({other_then:.4g} -> "
        "{other_now:.4g}): the network grows surer of the rows it gets wrong while it gets more "
        "of them right. By {other}, it is not overfitting yet.",
        metric=metric_title(metric),
        other=metric_title(other),
        **numbers,
    )
    return text, early_stopping_step(judged, stop)


def early_stopping_step(judged: str | None, stop: dict | None) -> str:
    """The early stopping diagnosis.restoring_stop found, or nothing."""
    if stop is None:
        return ""
    return say(
        "Train again with early_stopping=mxlearn.EarlyStopping('{name}', patience={patience}): "
        "on this run it stops {patience} epochs after epoch {epoch} and puts back that epoch's "
        "weights, with validation {metric} {value:.4g} instead of {latest:.4g} at the end.",
        name=judged,  # in the code a student copies; {metric} names it in prose
        metric=metric_title(judged),
        **stop,
    )


def spikes_words(metric: str, **numbers) -> tuple[str, str]:
    text = say(
        "Learning rate too high: in {count} of the training batches, {metric} rose over "
        "{ratio:g} times the running level, the highest to {largest:.4g} in epoch {epoch} (level "
        "{level:.4g}; {start:.4g} at the start). Steps that large overshoot: the loss jumps "
        "above where training started.",
        metric=metric_title(metric),
        **numbers,
    )
    # #26: at lr 5 and 10 on the letters, 10 times smaller collapses too; 100 times learns
    return text, say(
        "Train 2 epochs each from fresh weights with learning rates 10, 100 and 1,000 times "
        "smaller, and keep the one whose training {metric} falls most: steps that overshoot "
        "this far can overshoot at 10 times smaller too.",
        metric=metric_title(metric),
    )


def decline_words(metric: str, **numbers) -> tuple[str, str]:
    text = say(
        "Learning rate too high: training {metric} got worse, from its best {best:.4g} at "
        "epoch {best_epoch} to {latest:.4g} at epoch {latest_epoch}; with a learning rate "
        "that suits the network, the training value keeps improving.",
        metric=metric_title(metric),
        **numbers,
    )
    return text, smaller_rate_step(metric)


def oscillation_words(metric: str, epochs: tuple[int, ...], **numbers) -> tuple[str, str]:
    text = say(
        "Learning rate too high: training {metric} got worse from one epoch to the next {count} "
        "times (at epochs {epochs}), by up to {largest:.4g}: it oscillates instead of settling.",
        metric=metric_title(metric),
        epochs=", ".join(str(e) for e in epochs),
        **numbers,
    )
    return text, smaller_rate_step(metric)


def smaller_rate_step(metric: str) -> str:
    return say(
        "Train again from fresh weights with a learning rate 3 times smaller and compare "
        "training {metric} epoch by epoch.",
        metric=metric_title(metric),
    )


def plateau_words(metric: str, leveled_off: bool, **window) -> tuple[str, str]:
    text = say(
        "Plateau: training {metric} averaged {after:.4g} over epochs {first}-{last}, only "
        "{gain:+.3g} on the {window} epochs before ({before:.4g}), and is still far from 1.",
        metric=metric_title(metric),
        gain=window["after"] - window["before"],
        **window,
    )
    if leveled_off:  # it learned, then stopped: too small a network is the first suspect
        return text, wider_network_step(metric, window["after"])
    return text, say(
        "Train again with a learning rate 3 times larger and compare training {metric} after "
        "the same number of epochs: steps this small move the weights too slowly.",
        metric=metric_title(metric),
    )


def underfitting_words(metric: str, **numbers) -> tuple[str, str]:
    text = say(
        "Underfitting: training {metric} has leveled off, averaging {after:.4g} over epochs "
        "{first}-{last} ({gain:+.3g} on the {window} epochs before), and validation {metric} is "
        "close to it ({validation:.4g}): the network fits its own training rows hardly better "
        "than unseen ones.",
        metric=metric_title(metric),
        gain=numbers["after"] - numbers["before"],
        **numbers,
    )
    return text, wider_network_step(metric, numbers["after"])


def wider_network_step(metric: str, reached: float) -> str:
    return say(
        "Train a network with 4 times as many hidden units (num_hidden) with the same settings: "
        "if its training {metric} rises well past {reached:.4g}, this network was too small.",
        metric=metric_title(metric),
        reached=reached,
    )


def not_learning_words(metric: str, is_loss: bool, frozen: bool, **numbers) -> tuple[str, str]:
    if is_loss:
        text = say(
            "Not learning: training {metric} has stayed within {share:.0%} of its level at the "
            "start ({start:.4g}, the lowest of the first {batches} batches) for all {count} "
            "epochs (best {best:.4g}, latest {latest:.4g}).",
            metric=metric_title(metric),
            **numbers,
        )
        classes = guessed_classes(metric, numbers["start"])
        if classes:
            text = sentences(
                text,
                say(
                    "{start:.4g} is ln({classes}): the loss of guessing evenly among {classes} "
                    "classes.",
                    start=numbers["start"],
                    classes=classes,
                ),
            )
    else:
        text = say(
            "Not learning: training {metric} has stayed at its level at the start ({start:.4g}, "
            "the mean of the first {batches} batches) for all {count} epochs (best {best:.4g}, "
            "latest {latest:.4g}): no better than the network was before training.",
            metric=metric_title(metric),
            **numbers,
        )
    if frozen:  # the weights hardly move: "check the labels" would send the student astray
        return text, say(
            "Training {metric} has not moved at all: the steps are far too small to change the "
            "weights. Train 2 epochs each from fresh weights with learning rates 10, 100, "
            "1,000, 10,000 and 100,000 times larger, and keep the one whose training {metric} "
            "falls most.",
            metric=metric_title(metric),
        )
    step = say(
        "Train 2 epochs each with a learning rate 10 times larger and 10 times smaller: a rate "
        "far off in either direction keeps a network where it started; if neither moves "
        "training {metric}, check that the labels belong to the rows.",
        metric=metric_title(metric),
    )
    return text, step


def guessed_classes(metric: str, loss: float) -> int | None:
    """K when a cross-entropy is ln(K) to 0.5%: the loss of outputs all 1/K (what a small
    initialisation gives)."""
    if metric not in ("cross-entropy", "nll-loss") or not math.isfinite(loss) or loss <= 0.5:
        return None
    classes = round(math.exp(loss))
    close = abs(math.log(classes) - loss) <= 0.005 * loss if classes >= 2 else False
    return classes if close else None
