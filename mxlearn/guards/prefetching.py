"""A PrefetchingIter whose inner iterator raises: an explained error instead of a hang.

A dead prefetch thread leaves MXNet's training thread waiting for ever. mxlearn's excepthook
records which thread died of what and, while fit or score reads the iterator, marks its batch as
the end of the data and sets its "ready" event (public fields), so the pass ends and
``PrefetchWatch.refuse_dead`` raises the inner error before the cut-short pass is believed.
"""

from __future__ import annotations

import contextlib
import threading
import weakref

from .._compat import mx
from ..errors import N_, InputError
from ..language import say

_died: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # thread -> its exception
_watched: dict = {}  # prefetch thread being read now -> (its PrefetchingIter, its index)
_previous_hook = threading.excepthook


def _record(args) -> None:
    if args.thread is not None and args.exc_value is not None:
        _died[args.thread] = args.exc_value
        owner = _watched.get(args.thread)
        if owner is not None:
            prefetching_iter, index = owner
            prefetching_iter.next_batch[index] = None  # no batch will come from this thread
            prefetching_iter.data_ready[index].set()  # the training thread stops waiting
    _previous_hook(args)


threading.excepthook = _record


class PrefetchFailed(InputError):
    says = N_(
        "{called}: the PrefetchingIter's inner iterator raised {cause}. Its reading thread has "
        "ended, so MXNet would wait for its next batch for ever; the PrefetchingIter cannot be "
        "used again."
    )
    fix_says = N_(
        "fix the inner iterator (try next(inner_iter) on its own to see the error), then make a "
        "new mx.io.PrefetchingIter(inner_iter)"
    )


def _threads(iterator) -> dict:
    if isinstance(iterator, mx.io.ResizeIter):
        return _threads(iterator.data_iter)
    if not isinstance(iterator, mx.io.PrefetchingIter):
        return {}
    found = {t: (iterator, i) for i, t in enumerate(iterator.prefetch_threads)}
    for inner in iterator.iters:
        found.update(_threads(inner))
    return found


class PrefetchWatch:  # the prefetch threads of the iterators one fit or score reads
    def __init__(self, iterators, called: str) -> None:
        self.called = called
        self.threads: dict = {}
        for iterator in iterators:
            if iterator is not None:
                self.threads.update(_threads(iterator))

    def refuse_dead(self) -> None:
        for thread in self.threads:
            if thread in _died or not thread.is_alive():
                error = _died.get(thread)
                cause = (
                    f"{type(error).__name__}: {error}"
                    if error is not None
                    else say("an error (its traceback is printed above)")
                )
                raise PrefetchFailed(called=self.called, cause=cause)

    @contextlib.contextmanager
    def watching(self):
        """While the iterators are read; what MXNet raises after a thread died becomes its error."""
        self.refuse_dead()
        _watched.update(self.threads)
        try:
            yield
        except Exception:
            if any(t in _died for t in self.threads):
                self.refuse_dead()
            raise
        finally:
            for thread in self.threads:
                _watched.pop(thread, None)
