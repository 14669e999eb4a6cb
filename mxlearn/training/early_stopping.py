"""Early stopping on a validation metric, judged after each validation (MXNet's own
``epoch_end_callback`` runs before validation and so cannot see it)."""

from __future__ import annotations

from .. import rules
from ..boundary import public
from ..checkpoint import files, names
from ..errors import N_, InputError, MXLearnError
from ..language import say, say_drawn, say_n
from ..metrics.catalogue import metric_title
from ..metrics.directions import check_name, improves
from ..states import Outcome
from .callback import Callback, RunContext, StopTraining


class NotAPatience(InputError):
    says = N_("fit(early_stopping={spec!r}): give a patience in epochs or an EarlyStopping.")
    fix_code = "mod.fit(..., eval_data=val_iter, early_stopping=3)"


class NoValidationToJudge(InputError):
    says = N_(
        "{called} judges the validation metric, and there is no eval_data (checked "
        "before the first batch)."
    )
    fix_code = "mod.fit(train_iter, eval_data=val_iter, early_stopping=3, ...)"


class EarlyStopping(Callback):
    """Stop when the validation ``metric`` has not improved for ``patience`` epochs.

    ``metric`` is any name the metric factory takes ('acc', 'ce', ...) or the name of one of the
    run's validation metrics; by default the first of them. ``restore_best`` puts the best
    epoch's parameters back into the module when it stops training (in its own
    ``on_train_end``). For a custom metric, say ``higher_is_better``.

    Examples
    --------
    >>> mod.fit(train_iter, eval_data=val_iter, num_epoch=50,
    ...         early_stopping=mxlearn.EarlyStopping('accuracy', patience=3))  # doctest: +SKIP
    """

    @public(
        "mxlearn.EarlyStopping()",
        patience=rules.whole(1, "EarlyStopping('accuracy', patience=3)"),
        min_delta=rules.number("EarlyStopping('accuracy', patience=3, min_delta=0.01)", minimum=0),
        restore_best=rules.flag("EarlyStopping('accuracy', patience=3, restore_best=True)"),
    )
    def __init__(
        self,
        metric: str | None = None,
        patience: int = 3,
        min_delta: float = 0.0,
        restore_best: bool = True,
        higher_is_better: bool | None = None,
    ):
        check_name(metric, "EarlyStopping()")
        self.metric, self.patience, self.min_delta = metric, patience, min_delta
        self.restore_best = restore_best
        self.higher_is_better = higher_is_better
        self.judged: str | None = None  # the run's name of the metric judged
        self.is_higher: bool | None = None
        self.best_value: float | None = None
        self.best_epoch: int | None = None
        self.best_params = None
        self.waited = 0
        self.stopped = False
        self.prefix: str | None = None  # where a resumed run's earlier checkpoints are
        self.unreadable: str | None = None  # why the earlier best checkpoint could not load

    @classmethod
    def of(cls, spec) -> EarlyStopping | None:
        if spec is None or isinstance(spec, EarlyStopping):
            return spec
        if rules.whole().test(spec) is None:  # a NumPy integer is a patience too
            return cls(patience=int(spec))
        raise NotAPatience(spec=spec)

    def on_train_begin(self, run: RunContext) -> None:
        # Each fit is judged on its own: a reused object forgets the last run's best weights.
        self.best_value, self.best_epoch, self.best_params = None, None, None
        self.waited, self.stopped, self.unreadable = 0, False, None
        called = f"EarlyStopping('{self.metric}')" if self.metric else "EarlyStopping()"
        if not run.validation_metrics:
            raise NoValidationToJudge(called=called)
        self.judged, self.is_higher = run.judged_metric(
            self.metric or None, self.higher_is_better, called
        )
        # A resumed run: the checkpoint's epochs (their values are in the history) are judged
        # as the uninterrupted run judged them, so the best and the patience carry on.
        self.prefix = run.resumed_from
        run.history.watched_with.append((self.patience, self.judged))
        epochs, values = run.history.series(self.judged, "validation", "epoch")
        for epoch, value in zip(epochs, values):
            if epoch >= run.begin_epoch:
                break
            self._judge(value, epoch)

    def _judge(self, value: float, epoch: int) -> bool:
        """Count ``epoch`` in: True when it is the new best, else one more epoch waited."""
        if improves(self.is_higher, value, self.best_value, self.min_delta):
            self.best_value, self.best_epoch, self.waited = value, epoch, 0
            return True
        self.waited += 1
        return False

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        name = self.judged
        if self._judge(run.history.last(name, "validation"), epoch):
            if self.restore_best:
                params = run.module.get_params()
                self.best_params = tuple({k: v.copy() for k, v in p.items()} for p in params)
            return
        if self.waited >= self.patience:
            self.stopped = True
            raise StopTraining(self.summary(name))

    def on_train_end(self, run: RunContext) -> None:
        if run.outcome is Outcome.STOPPED and self.stopped and self.best_params is not None:
            run.module.set_params(*self.best_params)
            # in the history too: the run's final values are the best epoch's, not the last's
            run.history.mark(
                say_drawn("best weights put back (after epoch {epoch})", epoch=self.best_epoch),
                epoch=self.best_epoch + 1,
                kind="restored",
            )

    def _earlier_best_params(self):
        """The best epoch came before a resume: its parameters are in its checkpoint, if kept."""
        if self.prefix is None or self.best_epoch + 1 not in names.manifested_epochs(self.prefix):
            return None
        try:
            _, args, auxs = files.load_checkpoint(self.prefix, self.best_epoch + 1)
        except MXLearnError as err:  # a damaged file: the stop stands, the weights stay
            self.unreadable = err.problem
            return None
        return args, auxs

    def summary(self, name: str) -> str:
        if self.restore_best and self.best_params is None and self.best_epoch is not None:
            self.best_params = self._earlier_best_params()  # before the resume: from its file
        return say_n(
            "Early stopping: validation {name} has not improved for {count} epoch; the "
            "best was {best:.4f} after epoch {epoch}.{restored}",
            "Early stopping: validation {name} has not improved for {count} epochs; the "
            "best was {best:.4f} after epoch {epoch}.{restored}",
            self.patience,
            name=metric_title(name),
            best=self.best_value,
            epoch=self.best_epoch,
            restored=self._restored_text(),
        )

    def _restored_text(self) -> str:
        """What became of the best epoch's parameters, as a sentence after the summary's."""
        if self.best_params:
            return say(" Its parameters are back in the module.")
        if not self.restore_best:
            return ""
        if self.unreadable:
            return say(
                " It came before this run resumed, and its checkpoint cannot be read "
                "({problem}): the module keeps the last epoch's parameters.",
                problem=self.unreadable,
            )
        return say(
            " It came before this run resumed, and its checkpoint is not on disk (not saved by "
            "the period, or not kept): the module keeps the last epoch's parameters."
        )
