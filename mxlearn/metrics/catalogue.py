"""Metric creation by name, with explanations instead of MXNet's bare assertions, and
:data:`KNOWN_METRICS`: one row per MXNet metric class with all that mxlearn knows of it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .._compat import mx
from ..boundary import public
from ..errors import N_, ArgumentTypeError, InputError, did_you_mean
from ..language import current_language, say, say_in
from .deferred import leaf_metrics


class NotAMetric(ArgumentTypeError):
    says = N_(
        "{called}: eval_metric={spec!r} is neither a metric name nor an mx.metric.EvalMetric."
    )
    fix_code = "eval_metric='acc'"


class NoSuchMetric(InputError):
    says = N_("{called}: there is no metric named '{spec}'. {suggestion}")
    fix_says = N_("eval_metric='acc' (or 'ce', 'mse', 'rmse', 'mae', 'f1', ['acc', 'ce'])")


class NotAnAverage(InputError):
    says = N_("F1(average={average!r}): average is 'macro' or 'micro'.")
    fix_code = "F1(average='macro')"


class TopKIsAccuracy(InputError):
    says = N_("top_k_accuracy with k={k} is plain accuracy.")
    fix_code = "eval_metric='acc'"


class PerplexityIgnoresDiffer(InputError):
    says = N_(
        "{called}: 'perplexity' by name takes the ignore_label of the network's classifier, but "
        "its classifiers leave out different labels: {ignored}. One Perplexity has one."
    )
    fix_code = (
        "mx.metric.CompositeEvalMetric([mx.metric.Perplexity(ignore_label=..., name='perplexity_"
        "<layer>', output_names=['<layer>_output'], label_names=['<layer>_label']) for each "
        "classifier])"
    )


class MetricNotMade(InputError):
    says = N_("{called}: cannot create the metric {spec!r}: {error}")


class RegressionMetricOfClasses(InputError):
    says = N_(
        "{called}: '{metric}' measures how far predicted numbers are from target "
        "numbers, but this network's SoftmaxOutput gives class probabilities, so the "
        "value would mean nothing (MXNet would report one anyway)."
    )
    fix_says = N_("for a classifier: eval_metric='acc' (or 'ce', 'f1', 'top_k_acc')")


class ClassMetricOfNumbers(InputError):
    says = N_(
        "{called}: '{metric}' counts right and wrong classes, but this network "
        "predicts numbers (a regression output)."
    )
    fix_says = N_("for a regression: eval_metric='mse' (or 'rmse', 'mae')")


class ClassMetricOfProbabilities(ClassMetricOfNumbers):
    fix_says = None  # LogisticRegressionOutput: a probability per row, a class at a threshold
    fix_code = (
        "eval_metric=mx.metric.np(lambda label, pred: ((pred.ravel() > 0.5) == label.ravel())"
        ".mean(), name='accuracy_at_0.5')"
    )


class ClassMetricOfProbabilityLabels(InputError):
    says = N_(
        "{called}: '{metric}' reads each label as a class number, but the labels of this "
        "{op} are shaped like its output: a probability per class, as MXNet trains on them. "
        "MXNet's metric would cut each probability to a whole number, and its value would mean "
        "nothing (its accuracy on smoothed labels reads 1.0 whatever the network predicts). "
        "One-hot rows are probabilities too: y.argmax(axis=1) gives the class numbers every "
        "metric reads."
    )
    fix_code = (
        "eval_metric=mx.metric.np(lambda label, pred: (pred.argmax(axis={axis}) == "
        "label.argmax(axis={axis})).mean(), name='accuracy')"
    )


class TopKCountsAll(InputError):
    says = N_(
        "{called}: '{metric}' with {classes} classes counts every prediction as "
        "right (the true class is always among the top {top_k})."
    )


def metric_names() -> list[str]:
    return sorted({*mx.registry.get_registry(mx.metric.EvalMetric), *_BY_REPORTED})


def check_metric_spec(spec, called: str) -> None:
    if isinstance(spec, mx.metric.EvalMetric) or callable(spec):
        return
    if isinstance(spec, (list, tuple)):
        for item in spec:
            check_metric_spec(item, called)
        return
    if not isinstance(spec, str):
        raise NotAMetric(called=called, spec=spec)
    if spec.lower() not in metric_names():
        suggestion = did_you_mean(spec, metric_names())
        raise NoSuchMetric(called=called, spec=spec, suggestion=suggestion)


DEFAULT_TOP_K = 5


class F1(mx.metric.EvalMetric):
    """F1 for any number of classes, from counts since the last reset: ``'macro'`` averages
    the classes that occur, ``'micro'`` pools the counts. MXNet's ``'f1'`` handles two classes
    and averages per-batch values, which depends on the batch size."""

    def __init__(
        self, name: str = "f1", average: str = "macro", output_names=None, label_names=None
    ):
        if average not in ("macro", "micro"):
            raise NotAnAverage(average=average)
        self.average = average
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def reset(self):
        self._counts = np.zeros((0, 3), dtype=np.int64)  # per class: TP, FP, FN
        self.num_inst = self.global_num_inst = 0
        self.sum_metric = self.global_sum_metric = 0.0

    def reset_local(self):
        self.reset()

    def update(self, labels, preds):
        for label, pred in zip(labels, preds):
            if pred.shape != label.shape:
                pred = mx.nd.argmax(pred, axis=1)
            truth = label.asnumpy().astype(np.int64).ravel()
            guess = pred.asnumpy().astype(np.int64).ravel()
            classes = int(max(truth.max(initial=-1), guess.max(initial=-1))) + 1
            if classes > len(self._counts):
                self._counts = np.pad(self._counts, ((0, classes - len(self._counts)), (0, 0)))
            hit = truth == guess
            np.add.at(self._counts[:, 0], truth[hit], 1)
            np.add.at(self._counts[:, 1], guess[~hit], 1)
            np.add.at(self._counts[:, 2], truth[~hit], 1)
            self.num_inst += len(truth)
            self.global_num_inst += len(truth)
        value = self._value()
        # sum/num keep the EvalMetric contract: get() divides one by the other
        self.sum_metric = self.global_sum_metric = value * self.num_inst

    def _value(self) -> float:
        tp, fp, fn = self._counts.T if len(self._counts) else (np.zeros(0),) * 3
        if self.average == "micro":
            denominator = 2 * tp.sum() + fp.sum() + fn.sum()
            return float(2 * tp.sum() / denominator) if denominator else float("nan")
        present = (tp + fp + fn) > 0
        if not present.any():
            return float("nan")
        scores = 2 * tp[present] / (2 * tp[present] + fp[present] + fn[present])
        return float(scores.mean())


class _WholeSetError:
    """Regression errors over every value seen: MXNet's MSE, RMSE and MAE average per-batch
    means (a short last batch weighs as much as a full one; RMSE is a mean of roots).
    ``value_of`` turns any (sum, count) into the metric, for a batch or for the whole set."""

    def update(self, labels, preds):
        labels, preds = mx.metric.check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = label.asnumpy(), pred.asnumpy()
            label, pred = (a[:, None] if a.ndim == 1 else a for a in (label, pred))
            errors = self.errors(label - pred)
            total, count = float(errors.sum()), errors.size
            self.sum_metric += total
            self.global_sum_metric += total
            self.num_inst += count
            self.global_num_inst += count

    def value_of(self, total: float, count: float) -> float:
        return total / count if count else float("nan")

    def get(self):
        return self.name, self.value_of(self.sum_metric, self.num_inst)

    def get_global(self):
        return self.name, self.value_of(self.global_sum_metric, self.global_num_inst)


class MSE(_WholeSetError, mx.metric.MSE):
    errors = staticmethod(np.square)


class RMSE(_WholeSetError, mx.metric.RMSE):
    errors = staticmethod(np.square)

    def value_of(self, total: float, count: float) -> float:
        return float(np.sqrt(total / count)) if count else float("nan")


class MAE(_WholeSetError, mx.metric.MAE):
    errors = staticmethod(np.abs)


@dataclass(frozen=True)
class MetricFacts:
    higher_is_better: bool
    value_range: tuple[float, float] | None  # None: unbounded (losses, distances)


@dataclass(frozen=True)
class KnownMetric:
    cls: type  # MXNet's class
    names: tuple[str, ...]  # every name MXNet registers it under (mxlearn adds none)
    reports: str  # the name its values are recorded under, as a pattern (top-k names its k)
    facts: MetricFacts  # whether larger is better, and the range of its values
    kind: str | None  # the output it measures: 'classification', 'regression', None: any
    whole_set: type | None = None  # mxlearn's class create_metric makes instead of cls
    title: str = ""  # its name in prose, the key of its Chinese one (metric_title)

    @property
    def classes(self) -> tuple[type, ...]:
        return (self.cls, self.whole_set) if self.whole_set else (self.cls,)


_FRACTION = MetricFacts(True, (0.0, 1.0))
_CORRELATION = MetricFacts(True, (-1.0, 1.0))
_SMALLER = MetricFacts(False, None)
_C, _R, _ANY = "classification", "regression", None

# Facts by exact class (a subclass or a CustomMetric may measure anything: its user says it);
# the kind for subclasses too. Names are MXNet's: create_metric accepts exactly those.
KNOWN_METRICS = (
    KnownMetric(
        mx.metric.Accuracy, ("acc", "accuracy"), "accuracy", _FRACTION, _C, title=N_("accuracy")
    ),
    KnownMetric(
        mx.metric.TopKAccuracy,
        ("top_k_acc", "top_k_accuracy", "topkaccuracy"),
        r"top_\d+_accuracy|top_k_accuracy_\d+",  # mxlearn's name for it, and MXNet's
        _FRACTION,
        _C,
        title=N_("top-{k} accuracy"),
    ),
    KnownMetric(mx.metric.F1, ("f1",), "f1", _FRACTION, _C, whole_set=F1, title=N_("F1 score")),
    KnownMetric(
        mx.metric.MCC,
        ("mcc",),
        "mcc",
        _CORRELATION,
        _C,
        title=N_("Matthews correlation coefficient"),
    ),
    KnownMetric(
        mx.metric.PearsonCorrelation,
        ("pearsonr", "pearsoncorrelation"),
        "pearsonr",
        _CORRELATION,
        _ANY,
        title=N_("Pearson correlation coefficient"),
    ),
    KnownMetric(
        mx.metric.PCC,
        ("pcc",),
        "pcc",
        _CORRELATION,
        _ANY,
        title=N_("multiclass Pearson correlation coefficient"),
    ),
    KnownMetric(
        mx.metric.CrossEntropy,
        ("ce", "crossentropy"),
        "cross-entropy",
        _SMALLER,
        _C,
        title=N_("cross-entropy"),
    ),
    KnownMetric(
        mx.metric.NegativeLogLikelihood,
        ("nll_loss", "negativeloglikelihood"),
        "nll-loss",
        _SMALLER,
        _C,
        title=N_("negative log-likelihood"),
    ),
    KnownMetric(
        mx.metric.Perplexity, ("perplexity",), "perplexity", _SMALLER, _C, title=N_("perplexity")
    ),
    KnownMetric(mx.metric.Loss, ("loss",), "loss", _SMALLER, _ANY, title=N_("loss")),
    KnownMetric(
        mx.metric.MAE, ("mae",), "mae", _SMALLER, _R, whole_set=MAE, title=N_("mean absolute error")
    ),
    KnownMetric(
        mx.metric.MSE, ("mse",), "mse", _SMALLER, _R, whole_set=MSE, title=N_("mean squared error")
    ),
    KnownMetric(
        mx.metric.RMSE,
        ("rmse",),
        "rmse",
        _SMALLER,
        _R,
        whole_set=RMSE,
        title=N_("root mean squared error"),
    ),
)

# The metric classes MXNet registers by name that have no row, each with why.
LEFT_OUT = (
    mx.metric.CompositeEvalMetric,  # several metrics in one: create_metric makes it from a list
    mx.metric.CustomMetric,  # a user's function (mx.metric.np): only its author knows it
    mx.metric.Torch,  # a Loss named for the criterions of MXNet's Torch plugin (not built)
    mx.metric.Caffe,  # a Loss named for the losses of MXNet's Caffe plugin (not built)
)

_BY_NAME = {name: row for row in KNOWN_METRICS for name in row.names}
# The names metrics report, as fit records them ('cross-entropy'), where MXNet's own differ
_BY_REPORTED = {
    row.reports: row
    for row in KNOWN_METRICS
    if re.fullmatch(r"[a-z0-9-]+", row.reports) and row.reports not in _BY_NAME
}
_BY_CLASS = {cls: row for row in KNOWN_METRICS for cls in row.classes}


def facts_of(metric) -> MetricFacts | None:
    row = _BY_CLASS.get(type(metric))
    return row and row.facts


def _row_reporting(name: str) -> KnownMetric | None:
    return next((row for row in KNOWN_METRICS if re.fullmatch(row.reports, name)), None)


def facts_of_name(name: str) -> MetricFacts | None:
    row = _row_reporting(name)
    return row and row.facts


def metric_title(name: str, language: str | None = None) -> str:
    """How prose in ``language`` (None: the one mxlearn speaks) names the metric fit recorded as
    ``name``: in English that name ('cross-entropy', as the history and MXNet's log show it), in
    Chinese its term ('交叉熵', 'top_5_accuracy': '前 5 准确率'). A name mxlearn does not know
    (a custom metric's) is its author's, the same in every language.

    Examples
    --------
    >>> metric_title('accuracy', 'zh'), metric_title('top_3_accuracy', 'zh')
    ('准确率', '前 3 准确率')
    >>> metric_title('accuracy', 'en'), metric_title('my_score', 'zh')
    ('accuracy', 'my_score')
    """
    language = language or current_language()
    row = _row_reporting(name)
    if language == "en" or row is None:
        return name
    k = next(iter(re.findall(r"\d+", name)), "")  # top-k names its k
    return say_in(language, row.title, k=k)


@public("mxlearn.create_metric()")
def create_metric(
    spec, called: str = "mxlearn.create_metric()", *, network_ignore_labels=(), **kwargs
):
    """Like ``mx.metric.create``, with the seed tutorial's names made to work, case-insensitive:
    ``'top_k_acc'`` (k=5 unless ``top_k=`` is given; named ``top_5_accuracy``), ``'f1'`` for
    any number of classes (``average='macro'`` or ``'micro'``), ``'mse'``, ``'rmse'`` and
    ``'mae'`` over every value rather than per batch, ``'perplexity'`` without its required
    ``ignore_label`` (``network_ignore_labels``, those of the network's classifiers, when a
    module creates it), and unknown names or settings explained.

    Examples
    --------
    >>> create_metric('acc').get()
    ('accuracy', nan)
    >>> create_metric('TOP_K_ACC').name
    'top_5_accuracy'
    """
    if isinstance(spec, mx.metric.EvalMetric):
        return spec
    check_metric_spec(spec, called)
    if isinstance(spec, (list, tuple)):
        composite = mx.metric.CompositeEvalMetric()
        for item in spec:
            composite.add(
                create_metric(item, called, network_ignore_labels=network_ignore_labels, **kwargs)
            )
        return composite
    if isinstance(spec, str):
        spec = spec.lower()
        row = _BY_NAME.get(spec)
        if row is None and spec in _BY_REPORTED:  # read back as fit recorded it
            row, spec = _BY_REPORTED[spec], _BY_REPORTED[spec].names[0]
        if row is not None and row.cls is mx.metric.TopKAccuracy:
            k = int(kwargs.get("top_k", DEFAULT_TOP_K))
            if k < 2:
                raise TopKIsAccuracy(k=k)
            metric = mx.metric.TopKAccuracy(top_k=k)
            metric.name = f"top_{k}_accuracy"  # MXNet names it top_k_accuracy_5
            return metric
        if row is not None and row.cls is mx.metric.Perplexity and "ignore_label" not in kwargs:
            # MXNet's requires ignore_label; by name it is the network's (rows it leaves out)
            ignored = sorted(set(network_ignore_labels), key=str)
            if len(ignored) > 1:
                raise PerplexityIgnoresDiffer(called=called, ignored=ignored)
            return mx.metric.Perplexity(ignore_label=next(iter(ignored), None), **kwargs)
        if row is not None and row.whole_set is F1:
            return F1(average=kwargs.get("average", "macro"))
        if row is not None and row.whole_set is not None:
            return row.whole_set(**kwargs)
    try:
        return mx.metric.create(spec, **kwargs)
    except (AssertionError, TypeError, ValueError) as err:
        raise MetricNotMade(called=called, spec=spec, error=err) from None


def metric_kind(leaf) -> str | None:
    return next(
        (row.kind for row in KNOWN_METRICS if row.kind and isinstance(leaf, row.classes)), None
    )


def check_metric_fits(
    metric,
    output_kind: str | None,
    classes: int | None,
    called: str,
    op: str | None = None,
    axis: int = -1,
) -> None:
    """Refuse a metric that cannot measure this network's output; ``op``: the loss layer's;
    ``axis``: its classes' axis in a probability label shaped like its output."""
    for leaf in leaf_metrics(metric):
        kind = metric_kind(leaf)
        if output_kind == "probabilities" and kind == "classification":
            raise ClassMetricOfProbabilityLabels(called=called, metric=leaf.name, op=op, axis=axis)
        if output_kind == "classification" and kind == "regression":
            raise RegressionMetricOfClasses(called=called, metric=leaf.name)
        if output_kind == "regression" and kind == "classification":
            if op == "LogisticRegressionOutput":
                raise ClassMetricOfProbabilities(called=called, metric=leaf.name)
            raise ClassMetricOfNumbers(called=called, metric=leaf.name)
        if isinstance(leaf, mx.metric.TopKAccuracy) and classes and leaf.top_k >= classes:
            # the fix's top_k is a smaller one than the metric's own
            fix = say("mx.metric.TopKAccuracy(top_k={top_k}), or 'acc'", top_k=max(2, classes // 2))
            raise TopKCountsAll(
                called=called, metric=leaf.name, classes=classes, top_k=leaf.top_k, fix=fix
            )
