"""Stops fit when training diverges, instead of running to the end on ruined weights.

Checked every ``every`` batches and at each epoch end, never per batch, from the parameters' norms
and the loss of the batch still in the executors: it stops when a weight or the loss is NaN or
infinite, or the loss stays past a limit set at the first check (``LossKind.growth`` times it, at
least that times guessing's for a classifier) for ``patience`` checks in a row. It warns once when
a classifier predicts one class at ``patience`` checks in a row no better than guessing (a
collapsed network: typically ReLUs killed by a step too large).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._compat import mx
from ..boundary import warn
from ..errors import N_, DivergenceError, NonFiniteError, TrainingWarning
from ..language import say, sentences
from . import rate_probe
from .callback import Callback, RunContext
from .layer_outputs import DOMAIN_FIXES, dead_units, layer_making_nan, layer_outputs


# Each is raised with fix= the advice of _advice(): a rate a probe found, or what to try.
class WeightsNotFinite(NonFiniteError):
    says = N_(
        "Training diverged: by {where} some weights are NaN or infinite, so every "
        "later update would be meaningless. {cause}"
    )


class LossNotFinite(NonFiniteError):
    says = N_("Training diverged: at {where} the training loss ({loss_name}) is {loss}. {cause}")


class LossDiverging(DivergenceError):
    says = N_(
        "Training is diverging: the training loss ({loss_name}) was {start:.3g} at the "
        "first check and has stayed above {limit:.3g} (the limit) for {patience} checks "
        "in a row ({streak}). The network is getting worse, not better. {cause} No "
        "checkpoint was written while the loss was past the limit."
    )


# A ReLU layer with this share of its units dead (0 for every row) has collapsed; in healthy
# and slow runs on the letters it is at most 0.36, after a collapse 1.0.
DEAD_SHARE = 0.9
# The first layer's gradient norm over the last one's, below which the gradient has faded:
# about 1 in healthy runs on the letters, 1e-11 in a stack of six sigmoid layers.
FADED_RATIO = 1e-4


def _activations(symbol) -> set[str]:
    """The act_types of the network's Activation layers."""
    nodes = json.loads(symbol.tojson())["nodes"]
    return {n.get("attrs", {}).get("act_type") for n in nodes if n["op"] == "Activation"}


def _cross_entropy(outputs: np.ndarray, labels: np.ndarray) -> float | None:
    if outputs.ndim != 2 or labels.shape != (outputs.shape[0],):
        return None
    rows = np.arange(len(labels))
    classes = np.clip(labels.astype(np.int64), 0, outputs.shape[1] - 1)
    return float(-np.mean(np.log(np.maximum(outputs[rows, classes], 1e-12))))


def _binary_cross_entropy(outputs: np.ndarray, targets: np.ndarray) -> float:
    p = np.clip(outputs, 1e-12, 1 - 1e-12)
    return float(-np.mean(targets * np.log(p) + (1 - targets) * np.log(1 - p)))


@dataclass(frozen=True)
class LossKind:
    name: str  # an N_ template: words() says it in the language mxlearn speaks
    growth: float  # how many times its starting value the loss may reach
    classifier: bool
    measure: Callable[[np.ndarray, np.ndarray], float | None]

    def words(self) -> str:
        return say(self.name)


# The output layers whose loss the watchdog knows how to compute from (outputs, labels).
LOSS_KINDS = {
    "SoftmaxOutput": LossKind(N_("cross-entropy"), 2.0, True, _cross_entropy),
    "LogisticRegressionOutput": LossKind(
        N_("binary cross-entropy"), 2.0, False, _binary_cross_entropy
    ),
    "LinearRegressionOutput": LossKind(
        N_("squared error"), 10.0, False, lambda out, y: float(np.mean((out - y) ** 2))
    ),
    "MAERegressionOutput": LossKind(
        N_("absolute error"), 10.0, False, lambda out, y: float(np.mean(np.abs(out - y)))
    ),
}


def batch_loss(kind: LossKind, outputs: np.ndarray, labels: np.ndarray) -> float | None:
    """The mean loss over one batch, or None when the shapes are not the usual ones."""
    if kind.classifier:
        return kind.measure(outputs, labels)
    if labels.size != outputs.size:
        return None
    return kind.measure(outputs, labels.reshape(outputs.shape))


class DivergenceWatchdog(Callback):
    """Stops a fit run whose training diverges; sets ``run.weights_suspect`` meanwhile."""

    def __init__(self, every: int = 100, patience: int = 3):
        self.every = every
        self.patience = patience
        self.module = None
        self.kind: LossKind | None = None
        self.label_name: str | None = None
        self.output_index = 0
        self.start_loss: float | None = None
        self.limit: float | None = None
        self.over_limit: list[tuple[str, float]] = []  # (where, loss) of the current streak
        self.one_class_streak = 0
        self.warned = False
        self.checked = False
        self.run: RunContext | None = None
        self.advice: dict | None = None  # the cause and fix, once a stop is explained

    @property
    def suspect(self) -> bool:
        """The loss is past the limit now: a checkpoint of these weights would not be good."""
        return bool(self.over_limit)

    def on_train_begin(self, run: RunContext) -> None:
        self.module, self.run, self.advice = run.module, run, None
        # the first loss layer the watchdog can read, with its label and its output
        inputs = self.module.label_inputs.values()
        watched = next((li for li in inputs if li.op in LOSS_KINDS), None)
        self.kind = LOSS_KINDS[watched.op] if watched else None
        self.label_name = watched.name if watched else None
        outputs = self.module.output_names
        self.output_index = (
            outputs.index(watched.output_name) if watched and watched.output_name in outputs else 0
        )

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        # the first batch gives the starting loss (the outputs are from before its update)
        if not self.checked or (batch and batch % self.every == 0):
            self.check(run.epoch, batch)
            run.weights_suspect = self.suspect

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        self.check(epoch, None)
        run.weights_suspect = self.suspect

    # ---------------------------------------------------------------- the check
    def check(self, epoch: int, batch: int | None) -> None:
        self.checked = True
        if not self._weights_finite():
            raise WeightsNotFinite(where=_where(epoch, batch), **self._advice())
        reading = self._read_batch()
        if reading is None:
            return
        loss, predicted = reading
        if not math.isfinite(loss):
            where, loss_name = _where(epoch, batch), self.kind.words()
            raise LossNotFinite(where=where, loss_name=loss_name, loss=loss, **self._advice())
        self._judge_growth(epoch, batch, loss)
        self._judge_one_class(loss, predicted)

    def _judge_growth(self, epoch: int, batch: int | None, loss: float) -> None:
        if self.start_loss is None:
            self.start_loss = loss
            guessing = self._guessing_loss()
            self.limit = self.kind.growth * max(loss, guessing or 0.0)
            return
        if loss <= self.limit:
            self.over_limit = []
            return
        self.over_limit.append((_where(epoch, batch), loss))
        if len(self.over_limit) < self.patience:
            return
        streak = "; ".join(f"{at}: {value:.3g}" for at, value in self.over_limit)
        facts = dict(start=self.start_loss, limit=self.limit, patience=self.patience)
        raise LossDiverging(loss_name=self.kind.words(), streak=streak, **facts, **self._advice())

    def _judge_one_class(self, loss: float, predicted: np.ndarray | None) -> None:
        guessing = self._guessing_loss()
        if predicted is None or guessing is None or self.warned or self.suspect:
            return  # a diverging loss gets its own, stronger message
        one_class = len(predicted) > 1 and bool((predicted == predicted[0]).all())
        self.one_class_streak = self.one_class_streak + 1 if one_class else 0
        if self.one_class_streak < self.patience or loss < 0.98 * guessing:
            return
        if self.one_class_streak % self.patience:
            return  # the layers are read at the end of each streak of patience checks
        try:
            stalled = self._stall_cause()
        except Exception:  # noqa: BLE001 - a reading that fails says nothing rather than guess
            stalled = None
        if stalled is None:
            return  # no evidence of a collapse: a slow start, left to train
        self.warned = True
        collapse, advice = stalled
        warn(
            say(
                "The network predicts the same class for every row at the last {patience} "
                "checks, and its loss ({loss:.3g}) is no better than guessing ({guessing:.3g}): "
                "it is not learning. {collapse} {advice}",
                patience=self.patience,
                loss=loss,
                guessing=guessing,
                collapse=collapse,
                advice=advice,
            ).rstrip(),
            TrainingWarning,
        )

    # ---------------------------------------------------------------- readings
    def _weights_finite(self) -> bool:
        arrays = [devices[0] for devices in self.module.executor_group.param_arrays]
        if not arrays:
            return True
        total = mx.nd.add_n(*[mx.nd.norm(a).reshape((1,)) for a in arrays])
        return math.isfinite(float(total.asscalar()))

    def _read_batch(self) -> tuple[float, np.ndarray | None] | None:
        """The loss of the batch just trained, and its predicted classes (classifiers)."""
        if self.kind is None:
            return None
        group = self.module.executor_group
        if self.label_name not in group.execs[0].arg_dict:  # bound without labels
            return None
        outputs = np.concatenate([e.outputs[self.output_index].asnumpy() for e in group.execs])
        labels = np.concatenate([e.arg_dict[self.label_name].asnumpy() for e in group.execs])
        with np.errstate(over="ignore", invalid="ignore"):  # an infinite loss is reported
            loss = batch_loss(self.kind, outputs, labels)
        if loss is None:
            return None
        predicted = outputs.argmax(axis=1) if self.kind.classifier else None
        return loss, predicted

    def _guessing_loss(self) -> float | None:
        """A classifier's loss when it gives every class the same probability: ln(classes)."""
        if not (self.kind and self.kind.classifier):
            return None
        classes = self.module.output_shapes[self.output_index][1][1]
        return math.log(classes)

    def _learning_rate(self) -> float | None:
        return getattr(self.module.optimizer, "learning_rate", None)

    def _cause(self) -> str:
        rate = self._learning_rate()
        now = say(" (it is {rate:g} now)", rate=rate) if rate is not None else ""
        facts = self.run.data_facts  # set by DataValueChecks, which runs first
        if facts is None:  # batches are checked as they come: the ones so far were clean
            return say(
                "The usual cause is a learning rate too high for this network{rate_now}; data "
                "on very different scales is the other (the batches so far hold no NaN or "
                "infinity).",
                rate_now=now,
            )
        scale = ""
        if facts.largest > 100:
            scale = say(
                "; values as large as {largest:.3g} also make large steps: standardise the data "
                "((X - mean) / std)",
                largest=facts.largest,
            )
        return say(
            "{facts} The usual cause then is a learning rate too high for this "
            "network{rate_now}{scale}.",
            facts=facts.text(),
            rate_now=now,
            scale=scale,
        )

    def _advice(self) -> dict:
        """The cause and fix of a stopped run, found once: a layer that makes NaN itself, or
        the data's facts and a rate a probe found to learn."""
        if self.advice is not None:
            return self.advice
        made = self._layer_making_nan()
        if made is not None:
            layer, op = made
            cause = say(
                "The network itself makes NaN or infinity: its layer '{layer}' ({op}) gives "
                "them from finite inputs at the initial weights, before any update, so no "
                "learning rate avoids them.",
                layer=layer,
                op=op,
            )
            code = DOMAIN_FIXES.get(op)  # only a fix that was tried: none for other ops
            fix = code and say(
                "keep the input x of '{layer}' where {op} is defined: {code}",
                layer=layer,
                op=op,
                code=code,
            )
            self.advice = {"cause": cause, "fix": fix}
            return self.advice
        cause, rate = self._cause(), self._learning_rate()
        found = self._probe(may_reset=True)  # the run is over: its iterator may be read again
        if found is None:  # not probed: an optimizer object, or too few batches
            tried = [r for r in rate_probe.USUAL_RATES if not rate or r < rate][-3:] or [0.001]
            rates = ", ".join(f"{r:g}" for r in tried)
            fix = say(
                "train again from fresh weights at smaller rates ({rates}: a few epochs each) "
                "and keep the one whose loss falls; mxlearn could not probe them here (an "
                "optimizer object, or fewer than 20 batches)",
                rates=rates,
            )
        elif found.rate is None:
            fix = say("check the data and the network's last layer")
        else:
            fix = say(
                "train again from fresh weights (a new Module) with "
                "optimizer_params={{'learning_rate': {rate:g}}}",
                rate=found.rate,
            )
        if found is not None:
            cause = sentences(cause, found.text())
        self.advice = {"cause": cause, "fix": fix}
        return self.advice

    def _layer_making_nan(self) -> tuple[str, str] | None:
        """The layer that makes NaN from this batch at the initial weights (nan_source)."""
        if self.run.initializer is None:
            return None
        try:
            made = layer_making_nan(
                layer_outputs(self.module, self._batch_inputs(), self.run.initializer)
            )
        except Exception:  # noqa: BLE001 - advice must never replace the error it explains
            return None
        return None if made is None else (made.layer, made.op)

    def _batch_inputs(self) -> dict:
        """The data and labels of the batch just trained, as the executors hold them."""
        executor = self.module.executor_group.execs[0]
        names = [*self.module.data_names, *self.module.label_names]
        return {n: executor.arg_dict[n].asnumpy() for n in names if n in executor.arg_dict}

    def _stall_cause(self) -> tuple[str, str] | None:
        """Why a classifier stuck on one class does not learn, as this run shows it: (cause,
        advice). ReLUs that no longer fire, or a gradient that fades through the layers; None
        when neither shows (a slow start, which more batches may end: not a collapse)."""
        for output in layer_outputs(self.module, self._batch_inputs()):
            dead = dead_units(output)
            if dead is not None and dead[0] >= DEAD_SHARE * dead[1]:
                cause = say(
                    "The ReLU layer '{layer}' gives 0 for every row in {dead} of its {units} "
                    "units: they no longer fire for any input, so they get no gradient and more "
                    "epochs will not bring them back.",
                    layer=output.layer,
                    dead=dead[0],
                    units=dead[1],
                )
                return cause, self._probed_advice()
        faded = self._faded_gradient()
        if faded is None:
            return None
        first, last, ratio = faded
        cause = say(
            "The gradient fades on its way back through the layers: at the first ('{first}') "
            "it is {ratio:.1e} times what it is at the last ('{last}'), so the first layers "
            "hardly learn, as in a deep stack of sigmoid or tanh layers (mxlearn.LayerStats "
            "shows it layer by layer).",
            first=first,
            last=last,
            ratio=ratio,
        )
        squashing = _activations(self.module.symbol) & {"sigmoid", "tanh"}
        advice = ""
        if squashing:  # the advice followed in tests/test_watchdog.py
            advice = say(
                "Activations that pass the gradient back, with weights scaled to each layer: "
                "act_type='relu' in place of {acts}, and fit(..., initializer=mx.init.Xavier()).",
                acts=", ".join(f"'{a}'" for a in sorted(squashing)),
            )
        return cause, advice

    def _faded_gradient(self) -> tuple[str, str, float] | None:
        """(first weight, last weight, first's gradient norm / last's) when it is below
        FADED_RATIO: the gradient of the batch just trained, still in the executors."""
        group = self.module.executor_group
        weights = [
            (name, grads[0])
            for name, grads in zip(group.param_names, group.grad_arrays)
            if name.endswith("_weight") and grads and grads[0] is not None
        ]
        if len(weights) < 3:
            return None
        (first, g_first), (last, g_last) = weights[0], weights[-1]
        top = float(mx.nd.norm(g_last).asscalar())
        ratio = float(mx.nd.norm(g_first).asscalar()) / top if top > 0 else math.nan
        layers = first.removesuffix("_weight"), last.removesuffix("_weight")
        return (*layers, ratio) if ratio < FADED_RATIO else None

    def _probed_advice(self) -> str:
        """A rate a short probe from fresh weights found to learn, or nothing."""
        found = self._probe(may_reset=False)  # training goes on: its iterator is left alone
        if found is None or found.rate is None:
            return ""
        return say(
            "{probe} Train again from fresh weights with "
            "optimizer_params={{'learning_rate': {rate:g}}}.",
            probe=found.text(),
            rate=found.rate,
        )

    def _probe(self, may_reset: bool):
        """A short probe of smaller rates from fresh weights (``rate_probe``), or None."""
        rate = self._learning_rate()
        if not rate or self.kind is None or self.run.initializer is None:
            return None
        return rate_probe.probe(
            self.module,
            self.run.train_data,
            rate,
            self.run.initializer,
            self._trial_loss,
            guessing=self._guessing_loss(),
            may_reset=may_reset,
        )

    def _trial_loss(self, trial, batch) -> float:
        """A probe's loss on one batch, as the watchdog measures the run's."""
        outputs = trial.get_outputs()[self.output_index].asnumpy()
        order = [d.name for d in self.run.train_data.provide_label]
        labels = batch.label[order.index(self.label_name)].asnumpy()
        loss = batch_loss(self.kind, outputs, labels)
        return float("nan") if loss is None else loss


def _where(epoch: int, batch: int | None) -> str:
    """Where a check stood, said only when a message needs it (checks run every 100 batches)."""
    if batch is not None:
        return say("epoch {epoch}, batch {batch}", epoch=epoch, batch=batch)
    return say("epoch {epoch} (its end)", epoch=epoch)
