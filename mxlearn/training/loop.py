"""The fit loop: MXNet's own ``fit`` (epochs, batches, validation, logging), whose three callback
slots hold one CallbackList, with the run's first and last hooks, its outcome, and the explained
endings (an empty iterator, StopTraining, an interrupt).
"""

from __future__ import annotations

from collections.abc import Callable

from ..array_batches import views_while_fitting
from ..boundary import warn
from ..guards import prefetching
from ..guards.fit_arguments import no_batch_error
from ..guards.lifecycle import state_text
from ..language import say, say_n
from ..states import Outcome
from .callback import RunContext, StopTraining
from .epoch_log import visible_epoch_log
from .plan import FitPlan


class TrainingInterrupted(KeyboardInterrupt):
    """fit stopped by the user (Ctrl-C, or "interrupt kernel"), with how to go on."""


def interrupt_text(run: RunContext) -> str:
    if run.last_checkpoint is None:
        return say(
            "Training stopped; no checkpoint was being written, so only the module in memory "
            "holds the progress. The data iterator was reset. Next time pass "
            "checkpoint='runs/name' to fit to keep every completed epoch on disk."
        )
    prefix, epoch = run.last_checkpoint
    return say_n(
        "Training stopped. Checkpoint {epoch} ({epoch} epoch done) is on disk and the "
        "data iterator was reset. To go on: mod = mxlearn.resume({prefix!r}); "
        "mod.fit(train_iter, num_epoch={num_epoch}, checkpoint={prefix!r})",
        "Training stopped. Checkpoint {epoch} ({epoch} epochs done) is on disk and the "
        "data iterator was reset. To go on: mod = mxlearn.resume({prefix!r}); "
        "mod.fit(train_iter, num_epoch={num_epoch}, checkpoint={prefix!r})",
        epoch,
        epoch=epoch,
        prefix=prefix,
        num_epoch=run.num_epoch,
    )


def _reset_after(train_data) -> None:
    """Reset after an interrupted or failed run; an iterator that cannot rewind (a stream)
    must not replace the error that ended the run."""
    try:
        train_data.reset()
    except Exception as error:  # noqa: BLE001 - the run's own error is the one to show
        warn(
            say(
                "the training iterator could not be reset after the run ended "
                "({error_type}: {error}); reset it before the next fit",
                error_type=type(error).__name__,
                error=error,
            )
        )


def run_fit(mxnet_fit: Callable, train_data, plan: FitPlan) -> None:
    """Train with ``mxnet_fit`` (MXNet's own fit, bound to the module) as ``plan`` says."""
    callbacks, run = plan.callbacks, plan.run
    with visible_epoch_log(run.module, plotted=plan.plotted):
        try:
            callbacks.dispatch("on_train_begin")
            # the same batches, with fewer copies
            views = views_while_fitting(train_data, plan.mxnet_arguments["eval_data"])
            with plan.prefetch.watching(), views:
                mxnet_fit(train_data, **plan.mxnet_arguments, **callbacks.slots())
            run.outcome = Outcome.COMPLETED
        except StopIteration:
            # MXNet's fit takes the first batch of each epoch with a bare next().
            run.outcome = Outcome.FAILED
            raise no_batch_error(train_data, state_text(run.module)) from None
        except StopTraining as stop:  # from a hook, or from MXNet's eval_batch_end_callback
            run.outcome = Outcome.STOPPED
            run.history.stops.append(run.epoch)
            callbacks.request_stop(str(stop))
            train_data.reset()  # stopped after the epoch, before fit's own reset
            print(run.stop_reason)
        except prefetching.PrefetchFailed:
            run.outcome = Outcome.FAILED  # no reset: the PrefetchingIter would wait for ever
            raise
        except KeyboardInterrupt:
            run.outcome = Outcome.INTERRUPTED
            _reset_after(train_data)  # the next fit starts from a full epoch
            callbacks.dispatch_to_all("on_interrupt")
            raise TrainingInterrupted(interrupt_text(run)) from None
        except BaseException:
            run.outcome = Outcome.FAILED
            _reset_after(train_data)  # a corrected fit starts from a full epoch
            raise
        finally:
            # Every callback ends, whatever happened; a failure here is raised only when
            # training itself ended well (the first error stays the one reported).
            errors = callbacks.dispatch_to_all("on_train_end")
    if errors:
        raise errors[0]
