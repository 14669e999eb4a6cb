"""MXNet's high-level API, guarded: ``predict``, ``score`` and ``fit``.

``fit`` checks its arguments, then hands the run to the fit loop (:mod:`mxlearn.training`):
it builds no callbacks itself and reads no callback's fields.
"""

from __future__ import annotations

import contextlib

from .._compat import mx
from ..boundary import public
from ..checkpoint.policy import Checkpoint
from ..checkpoint.resume_state import ResumeState, load_resume_state
from ..guards import arguments, binding, data_values, fit_arguments, worker_batches
from ..guards import lifecycle as life
from ..guards.batch_values import QueuedValueChecks
from ..guards.prefetching import PrefetchWatch
from ..language import say
from ..live import LivePlot
from ..metrics.catalogue import create_metric
from ..metrics.outputs import check_metric_fits_network
from ..training.early_stopping import EarlyStopping
from ..training.loop import run_fit
from ..training.plan import plan_fit
from ..training.request import FitRequest
from . import parameters as P

# fit's documentation: MXNet's 21 parameters keep their meaning; mxlearn's own are these.
FIT_DOC = """Train the module: MXNet's ``fit``, plus live curves, checkpoints and callbacks.

All of MXNet's parameters keep their meaning and defaults. In addition:

live : bool, 'lines' or LivePlot, optional
    ``True`` draws live training curves (a widget in a notebook, one line per epoch in
    a terminal); a ``LivePlot(...)`` chooses its options. ``'lines'`` prints one line an
    epoch instead of MXNet's three; ``False`` prints none. Left out: MXNet's own log. (A
    logger given to the Module is yours: MXNet's lines go to it whatever ``live`` says.)
checkpoint : str or Checkpoint, optional
    A prefix such as ``'runs/mlp'``: a complete checkpoint (parameters, optimizer state,
    metric history) after every epoch; ``mxlearn.Checkpoint(prefix, period, keep, best)``
    chooses when and how many.
resume : str, optional
    A prefix: continue from its newest complete checkpoint (parameters, optimizer state,
    begin_epoch). ``mxlearn.resume(prefix)`` does the same and returns the module.
early_stopping : int or EarlyStopping, optional
    Stop when the validation metric has not improved for that many epochs, and put the
    best epoch's parameters back (needs ``eval_data``).
epoch_report_callback : function or list of functions, optional
    Called as ``fn(report)`` once per epoch after validation (MXNet's
    ``epoch_end_callback`` runs before it); ``report.train`` and ``report.validation``
    map metric names to the epoch's values. Raise ``mxlearn.StopTraining`` in it to
    end training after that epoch.
callbacks : list of mxlearn.Callback, optional
    Your own :class:`mxlearn.Callback` subclasses: they see every hook of the run
    (train begin, batch end, epoch end, validation end, epoch done, interrupt, train
    end), after mxlearn's own callbacks.

After training, ``mod.history`` holds every metric value (a MetricHistory). Metrics are
read from the device without a wait per batch; the values are exactly MXNet's.

Examples
--------
>>> mod.fit(train_iter, eval_data=val_iter, optimizer_params={'learning_rate': 0.1},
...         num_epoch=5, live=True)  # doctest: +SKIP
"""


def _watched(batches, prefetch):
    """``iter_predict``'s batches, while a PrefetchingIter among the data is watched."""
    with prefetch.watching():
        yield from batches
    prefetch.refuse_dead()


class HighLevelAPI:
    """Mixed into :class:`mxlearn.Module`: predict, score and fit over its intermediate API."""

    def _prepare_inference(self, called: str, eval_data) -> bool:
        """Bound and ready to predict or score ``eval_data``; True if it is an array."""
        is_array = arguments.check_inference_data(eval_data, called)
        if self.binded or not self.params_initialized:
            life.require_params(self, called)
            return is_array
        # A module from Module.load has parameters but no memory: bind it for prediction from
        # the data itself instead of failing.
        if is_array:
            data_shapes, label_shapes = [(self._data_names[0], eval_data.shape)], None
        else:
            data_shapes = eval_data.provide_data
            given = sorted(d.name for d in eval_data.provide_label or [])
            label_shapes = eval_data.provide_label if given == sorted(self._label_names) else None
        self.bind(data_shapes, label_shapes, for_training=False)
        self._auto_bound = True
        print(
            say(
                "Note: {called} bound the module for prediction from the data's shapes "
                "(the same as mod.bind(data_shapes=val_iter.provide_data, for_training=False)).",
                called=called,
            )
        )
        return is_array

    @public("mod.predict()", **P.PREDICT)
    def predict(
        self,
        eval_data,
        num_batch=None,
        merge_batches=True,
        reset=True,
        always_output_list=False,
        sparse_row_id_fn=None,
        **unknown,
    ):
        arguments.refuse_unknown("mod.predict()", unknown, HighLevelAPI.predict)
        is_array = self._prepare_inference("mod.predict()", eval_data)
        if is_array:
            with self._lifecycle.inside("predict"):
                return self._predict_array(eval_data)
        prefetch = PrefetchWatch([eval_data], "mod.predict()")
        with self._lifecycle.inside("predict"), prefetch.watching():
            outputs = super().predict(
                eval_data, num_batch, merge_batches, reset, always_output_list, sparse_row_id_fn
            )
        prefetch.refuse_dead()  # a PrefetchingIter that failed ended the pass early
        return outputs

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        life.require_params(self, "mod.iter_predict()")  # now, not at the first next()
        prefetch = PrefetchWatch([eval_data], "mod.iter_predict()")
        prefetch.refuse_dead()
        batches = super().iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)
        return _watched(batches, prefetch)

    def _predict_array(self, data):
        """An array's outputs in inference mode (no Dropout), whatever its number of rows.

        MXNet's predict runs an array in the module's training mode, and a row count other than
        the bound batch size fails in the reshape for want of a label shape (forward's reshape
        gives the label its shape at the array's rows).
        """
        array = data if isinstance(data, mx.nd.NDArray) else mx.nd.array(data)
        arguments.check_rows(array.shape, "mod.predict()")
        provide_data = [mx.io.DataDesc(self._data_names[0], array.shape)]
        self.forward(mx.io.DataBatch([array], provide_data=provide_data), is_train=False)
        return self.get_outputs()[0]

    @public("mod.score()", **P.SCORE)
    def score(
        self,
        eval_data,
        eval_metric,
        num_batch=None,
        batch_end_callback=None,
        score_end_callback=None,
        reset=True,
        epoch=0,
        sparse_row_id_fn=None,
        **unknown,
    ):
        arguments.refuse_unknown("mod.score()", unknown, HighLevelAPI.score)
        arguments.check_labelled_data(eval_data)
        for taken in self._labels_taken_for_params():
            raise binding.ModuleReadsNoLabels(name=taken)
        self._prepare_inference("mod.score()", eval_data)
        if not self._label_shapes and self._label_names:
            raise binding.BoundWithoutLabels(called="mod.score()")
        self._check_eval_labels(eval_data, "mod.score()", self._label_shapes)
        eval_metric = self._metric(eval_metric, eval_data, "mod.score()")
        checks, first_callbacks = self._evaluation_checks(eval_data)
        score_end_callback = [*first_callbacks, *arguments.as_list(score_end_callback)] or None
        with checks:
            return super().score(
                eval_data,
                eval_metric,
                num_batch,
                batch_end_callback,
                score_end_callback,
                reset,
                epoch,
                sparse_row_id_fn,
            )

    def _evaluation_checks(self, eval_data):
        """The checks of a score's data: every row of an in-memory iterator now; otherwise each
        batch's values queued, and a PrefetchingIter's threads watched. Returns the context
        score runs in, and the score_end_callbacks that read the checks before anyone (fit's
        validation hooks included) gets the score."""
        what = "validation" if self._lifecycle.call == "fit" else "evaluation"
        provided = eval_data.provide_data, getattr(eval_data, "provide_label", None)
        rules = data_values.rules_for(self._symbol, self._label_inputs, *provided)
        facts = data_values.check_source(eval_data, what, rules)
        names = [d.name for d in eval_data.provide_data]
        queued = QueuedValueChecks(what, names, rules) if facts is None else None
        prefetch = PrefetchWatch([eval_data], "mod.score()")
        first = [lambda _: queued.read()] if queued is not None else []
        first += [lambda _: prefetch.refuse_dead()] if prefetch.threads else []
        checks = contextlib.ExitStack()
        checks.enter_context(prefetch.watching())  # first: it may refuse a dead one at once
        rolls_over = data_values.rolls_over(eval_data)
        checks.enter_context(self._lifecycle.inside("score", facts is not None, queued, rolls_over))
        return checks, first

    @public("mod.fit()", **P.FIT)
    def fit(
        self,
        train_data,
        eval_data=None,
        eval_metric="acc",
        epoch_end_callback=None,
        batch_end_callback=None,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        eval_end_callback=None,
        eval_batch_end_callback=None,
        initializer=mx.init.Uniform(0.01),
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_rebind=False,
        force_init=False,
        begin_epoch=0,
        num_epoch=None,
        validation_metric=None,
        monitor=None,
        sparse_row_id_fn=None,
        live=None,
        checkpoint=None,
        resume=None,
        early_stopping=None,
        epoch_report_callback=None,
        callbacks=None,
        **unknown,
    ):
        arguments.refuse_unknown("mod.fit()", unknown, HighLevelAPI.fit)
        life.refuse_nested_fit(self, self._lifecycle)
        # Every argument by name (checked, completed by a resume, then handed to the loop).
        request = FitRequest.of(locals())
        pending, plan = self._resume, None  # from mxlearn.resume: kept until a batch trains
        try:
            plan = self._plan(request, resume)
            self.history = plan.run.history
            rolls_over = data_values.rolls_over(train_data)
            with self._lifecycle.inside("fit", plan.rows_checked, plan.queued_checks, rolls_over):
                run_fit(super().fit, train_data, plan)
        except BaseException:
            if plan is None or plan.run.nothing_trained:
                # refused before any update: a corrected call still continues the checkpoint
                self._resume, self._pending_optimizer_state = pending, None
            raise

    fit.__doc__ = FIT_DOC  # kept apart: fit's body stays within 60 lines

    def _plan(self, request: FitRequest, resume):
        saver, stopper = (
            Checkpoint.of(request.checkpoint),
            EarlyStopping.of(request.early_stopping),
        )
        state = self._take_resume_state(resume)
        if state is not None:
            fit_arguments.continue_from(state, request, self.params_initialized)
        self._check_fit_request(request, resumed=state is not None)
        if not self.optimizer_initialized:  # MXNet's fit makes its kvstore: made here, checked
            request.kvstore = worker_batches.checked_kvstore(request.kvstore, request.train_data)
        plan = plan_fit(self, request, LivePlot.of(request.live), saver, stopper, state)
        if state is not None and state.optimizer is not None:  # restored by init_optimizer
            self._pending_optimizer_state = (state.optimizer_arrays, state.optimizer)
        return plan

    def _take_resume_state(self, resume) -> ResumeState | None:
        """The checkpoint this fit continues: ``fit(resume=prefix)``'s or mxlearn.resume's."""
        if resume is not None:
            self._resume = load_resume_state(resume)
            print(self._resume.explain())
        state, self._resume = self._resume, None
        return state

    def _check_eval_labels(self, eval_data, called: str, trained) -> None:
        """Labels of an evaluation iterator shaped as the network expects (as bind checks the
        training iterator's), and of the kind of the ``trained`` ones (their descriptions):
        MXNet would fail deep in its engine."""
        given = {d.name for d in eval_data.provide_label or []}
        if given and given == set(self._label_names):
            binding.check_label_shapes(
                self._symbol,
                eval_data.provide_data,
                eval_data.provide_label,
                self._label_names,
                self._label_inputs,
                called,
            )
            labels = eval_data.provide_label
            binding.check_labels_as_trained(self._label_inputs, labels, trained, called)

    def _check_fit_request(self, request: FitRequest, resumed: bool) -> None:
        called = "mod.fit()"
        arguments.check_kvstore(request.kvstore, called)
        if self._auto_bound and not self.for_training:
            request.force_rebind = True  # bound for prediction by predict/score
        fit_arguments.check_epochs_and_params(request, resumed, self.params_initialized)
        for taken in self._labels_taken_for_params().values():
            raise binding.LabelTakenForTraining(
                name=taken.name, layer=f"{taken.op} '{taken.layer}'"
            )
        if self._label_inputs:
            if not getattr(request.train_data, "provide_label", None):
                expects = "; ".join(li.describe() for li in self._label_inputs.values())
                raise fit_arguments.TrainDataWithoutLabels(expects=expects)
        if request.eval_data is not None:
            trained = getattr(request.train_data, "provide_label", None)
            self._check_eval_labels(request.eval_data, "mod.fit(eval_data=...)", trained)
        self._check_optimizer_request(
            request.kvstore, request.optimizer, request.optimizer_params, called
        )
        if request.validation_metric is None:
            request.validation_metric = request.eval_metric
        for key in ("eval_metric", "validation_metric"):
            metric = self._metric(getattr(request, key), request.train_data, called)
            setattr(request, key, metric)

    def _metric(self, spec, data, called: str):
        """The metric ``spec`` names, refused if it cannot measure this network's outputs as
        ``data`` feeds them."""
        ignored = [li.ignore_label for li in self._label_inputs.values() if li.is_classification]
        metric = create_metric(spec, called, network_ignore_labels=ignored)
        labels = getattr(data, "provide_label", None)
        fits = self._symbol, self._label_inputs, data.provide_data, called, labels
        check_metric_fits_network(metric, *fits)
        return metric
