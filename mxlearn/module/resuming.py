"""mxlearn.resume(): a module holding a checkpoint's run, of the kind its arguments name."""

from __future__ import annotations

import inspect

from ..boundary import public
from ..guards import arguments
from .checkpoints import resume_checkpoint
from .module import Module
from .mutable import MutableModule


def _arguments(module_class) -> set:
    # a module's own arguments but its network, which the checkpoint gives
    return set(inspect.signature(module_class.__init__).parameters) - {"self", "symbol"}


MUTABLE_ONLY = _arguments(MutableModule) - _arguments(Module)  # max_data_shapes, cache_size...


@public("mxlearn.resume()")
def resume(prefix: str, context=None, **module_args) -> Module:
    """A Module ready to continue the newest complete checkpoint under ``prefix``; with a
    MutableModule's own arguments (``max_data_shapes=``, ``cache_size=``...), a MutableModule.

    ``mod.fit(train_iter, num_epoch=N, checkpoint=prefix)`` then goes on from the saved epoch
    with the saved optimizer state.

    Examples
    --------
    >>> mod = mxlearn.resume('runs/mlp', context=mx.cpu())  # doctest: +SKIP
    >>> mod.fit(train_iter, num_epoch=10, checkpoint='runs/mlp')  # doctest: +SKIP
    """
    known = _arguments(Module) | _arguments(MutableModule)
    unknown = {k: v for k, v in module_args.items() if k not in known}
    inits = (Module.__init__, MutableModule.__init__)
    arguments.refuse_unknown("mxlearn.resume()", unknown, inits, ("symbol",))
    module_class = MutableModule if MUTABLE_ONLY & set(module_args) else Module
    return resume_checkpoint(module_class, prefix, context, **module_args)
