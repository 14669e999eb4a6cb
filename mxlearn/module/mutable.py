"""MutableModule: a Module whose batches may change shape (image sizes, sequence lengths).

MXNet binds a network for fixed input shapes. This module binds it once at the largest shapes
it will see (``max_data_shapes``); a batch of another shape gets executors bound for that shape
that share memory with the largest ones (``shared_group``): parameters, gradients and the
buffers for data and intermediate results. So a new shape costs a bind (shape inference and
planning, a few milliseconds) but no new parameter memory, and the optimizer, its state and the
kvstore stay those of the one module. The executors for each shape are kept in a bounded LRU
cache, so a shape seen before costs nothing; the least recently used is dropped when the cache
is full.

A batch larger than the maximum in any dimension is refused, naming the dimension and the
maximum. MXNet itself compares total sizes: an input with no more numbers than at the maximum
borrows its memory, a larger one gets new memory and a line in the log. mxlearn's rule is
stricter and simpler to keep: within the maximum in every dimension, layers such as convolutions
and pooling make no array larger than at the maximum.

Everything else is :class:`mxlearn.Module`: the guards, ``fit`` with live plots and
checkpoints, ``predict``, ``score``, ``save_checkpoint``.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from .. import network
from .._compat import mx
from ..boundary import guard_methods, public
from ..errors import N_, InputError
from ..guards import arguments, rows
from ..guards.binding import new_shapes
from ..language import say
from . import parameters as P
from .module import Module


class UnknownMaxShapeName(InputError):
    says = N_(
        "MutableModule(max_{kind}_shapes=...) names {unknown}, but the module's "
        "{kind}_names are {names}."
    )
    fix_code = "max_{kind}_shapes=[('{first}', (batch, ...))]"


class BeyondMaxShape(InputError):
    """A batch shape the memory bound at the largest shapes cannot hold."""

    fix_code = "MutableModule(..., max_{kind}_shapes=[('{name}', {widest})])"


class OtherDimensions(BeyondMaxShape):
    says = N_(
        "{called}: '{name}' is shaped {shape}, with {dimensions} dimensions; "
        "the module was bound for {bound} ({largest})."
    )


class LargerThanMax(BeyondMaxShape):
    says = N_(
        "{called}: '{name}' is shaped {shape}: dimension {dimension} (counting from 0) is "
        "{size}, more than its maximum {limit}. A MutableModule is bound at {largest} and "
        "lends that memory to shapes no larger in any dimension (MXNet's own rule compares "
        "total sizes; mxlearn's asks every dimension to fit)."
    )


@dataclass
class ShapeInspector:
    """What shape changes have cost so far."""

    shapes_seen: dict = field(default_factory=dict)  # shapes key -> batches of that shape
    hits: int = 0  # shape changes served from the cache
    misses: int = 0  # shape changes that needed a new bind (a rebind)
    evictions: int = 0  # shapes dropped from the full cache
    bind_seconds: float = 0.0  # spent in those binds

    @property
    def batches(self) -> int:
        return sum(self.shapes_seen.values())

    @property
    def rebinds(self) -> int:
        return self.misses

    def text(self) -> str:
        return say(
            "{shapes} shapes in {batches} batches; {changes} changes of shape: {hits} from the "
            "cache, {misses} rebinds ({milliseconds} ms), {evictions} evicted",
            shapes=len(self.shapes_seen),
            batches=self.batches,
            changes=self.hits + self.misses,
            hits=self.hits,
            misses=self.misses,
            milliseconds=f"{self.bind_seconds * 1000:.0f}",
            evictions=self.evictions,
        )


def _descs(pairs) -> list:
    return [arguments.as_desc(p) for p in pairs or []]


def _max_descs(pairs, kind: str, names) -> list:
    """``max_data_shapes`` or ``max_label_shapes`` as DataDescs, each naming a known input."""
    descs = _descs(pairs)
    unknown = [d.name for d in descs if d.name not in names]
    if unknown:
        first = names[0] if names else kind
        raise UnknownMaxShapeName(kind=kind, unknown=unknown, names=list(names), first=first)
    return descs


def _key(data_descs, label_descs) -> tuple:
    return tuple((d.name, tuple(d.shape)) for d in [*data_descs, *(label_descs or [])])


class MutableModule(Module):
    """A Module for batches whose shapes vary, bound once at the largest shapes.

    Parameters (besides :class:`mxlearn.Module`'s)
    ----------
    max_data_shapes, max_label_shapes : list of (name, shape), optional
        The largest shape each input will have, in every dimension. Inputs not listed take
        their shape from ``bind`` (a label: at the data's maximum rows, or the shape the
        network gives it for the largest data); without them, the shapes given to ``bind``
        are the maximum.
    fixed_param_prefix : list of str, optional
        Parameters whose names contain one of these are not trained (e.g. ``['conv1']``).
    cache_size : int
        How many shapes keep their executors (least recently used dropped first).
    state_names, group2ctxs, compression_params
        As for :class:`mxlearn.Module` (and ``mx.mod.Module``).

    Examples
    --------
    >>> net = mxlearn.models.conv_net(num_classes=3)                      # doctest: +SKIP
    >>> mod = mxlearn.MutableModule(net, max_data_shapes=[('data', (16, 1, 32, 32))])  # doctest: +SKIP
    >>> mod.fit(images_iter, num_epoch=5)  # batches of 16x16 to 32x32 images  # doctest: +SKIP
    >>> mod.inspector.text()                                              # doctest: +SKIP
    '6 shapes in 90 batches; 81 changes of shape: 76 from the cache, 5 rebinds (8 ms), 0 evicted'
    """

    @public("mxlearn.MutableModule()", **P.MUTABLE_MODULE)
    def __init__(
        self,
        symbol,
        data_names=("data",),
        label_names=("softmax_label",),
        logger=logging,
        context=mx.cpu(),
        work_load_list=None,
        max_data_shapes=None,
        max_label_shapes=None,
        fixed_param_prefix=None,
        cache_size: int = 32,
        state_names=None,
        group2ctxs=None,
        compression_params=None,
    ):
        if isinstance(fixed_param_prefix, str):
            fixed_param_prefix = [fixed_param_prefix]
        prefixes = fixed_param_prefix or []
        fixed = [n for n in symbol.list_arguments() if any(p in n for p in prefixes)]
        super().__init__(
            symbol,
            data_names,
            label_names,
            logger,
            context,
            work_load_list,
            fixed_param_names=fixed or None,
            state_names=state_names,
            group2ctxs=group2ctxs,
            compression_params=compression_params,
        )
        largest = [
            *_max_descs(max_data_shapes, "data", self._data_names),
            *_max_descs(max_label_shapes, "label", self._label_names),
        ]
        self._largest = {d.name: tuple(d.shape) for d in largest}  # as given, by input name
        self._cache_size = cache_size
        self._groups: OrderedDict = OrderedDict()  # shapes key -> executor group, LRU order
        self._max_group = None
        self._current_key: tuple | None = None  # the shapes of the executors in use
        self._max_shapes: dict[str, tuple] = {}
        self._max_labels: list | None = None  # the label shapes bound at the maximum
        self._monitor = None
        self.inspector = ShapeInspector()

    # ------------------------------------------------------------------ bind at the maximum
    def _binding_to_make(self, asked):
        def widened(descs):
            return [
                mx.io.DataDesc(d.name, self._largest.get(d.name, tuple(d.shape)), d.dtype, d.layout)
                for d in descs
            ]

        # the rows as given agree (a RowsDiffer names the student's shapes, not the widened)
        # one device here: the widened shapes are checked for the devices with the binding
        rows.check_slicable(asked.data, asked.label, [1], "mod.bind()")
        data = widened(asked.data)
        labels = asked.label and widened(asked.label)
        if labels:  # labels given no maximum follow the data's
            moved = self._labels_moved(labels, asked.data, data)
            labels = [d if d.name in self._largest else m for d, m in zip(labels, moved)]
        widest = replace(asked, data=data, label=labels)
        self._max_shapes = {d.name: d.shape for d in [*widest.data, *(widest.label or [])]}
        self._check_within_max(asked.data, asked.label, "mod.bind()")
        return widest

    def _after_bind(self) -> None:
        super()._after_bind()
        self._max_group = self._exec_group
        self._max_labels = self._label_shapes
        self._current_key = _key(self._data_shapes, self._label_shapes)
        self._groups = OrderedDict({self._current_key: self._max_group})
        self.inspector = ShapeInspector()

    def _check_within_max(self, data_descs, label_descs, called: str) -> None:
        for desc in [*data_descs, *(label_descs or [])]:
            largest = self._max_shapes.get(desc.name)
            if largest is None:
                continue
            shape = tuple(desc.shape)
            kind = "label" if label_descs and desc in label_descs else "data"
            facts = dict(called=called, name=desc.name, shape=shape, largest=largest, kind=kind)
            if len(shape) != len(largest):
                facts.update(widest=shape, dimensions=len(shape), bound=len(largest))
                raise OtherDimensions(**facts)
            facts["widest"] = tuple(map(max, shape, largest))
            for dim, (size, limit) in enumerate(zip(shape, largest)):
                if size > limit:
                    raise LargerThanMax(**facts, dimension=dim, size=size, limit=limit)

    # ------------------------------------------------------------------ switching shapes
    def forward(self, data_batch, is_train=None):
        if self.binded and self.params_initialized and not isinstance(data_batch, list):
            shapes = new_shapes(data_batch, self._data_shapes, self._label_shapes, self._data_names)
            if shapes is None:
                self._count_batch()
            else:
                self._switch(*shapes, "mod.forward()")
        super().forward(data_batch, is_train)

    def _reshape(self, data, labels, called: str) -> None:
        # mod.reshape() and a second bind to other shapes: a change of shape like a batch's.
        # (MXNet's reshape would rebind the executors at the maximum in place: memory shared
        # no more, and a larger shape allocated silently.)
        self._switch(data, labels, called)

    def _count_batch(self) -> None:
        seen = self.inspector.shapes_seen  # per batch: the key was made when the shape changed
        seen[self._current_key] = seen.get(self._current_key, 0) + 1

    def _switch(self, data_descs, label_descs, called: str) -> None:
        label_descs = label_descs or self._labels_for(data_descs)
        key = _key(data_descs, label_descs)
        group = self._groups.get(key)
        if group is not None:
            self._groups.move_to_end(key)
            self.inspector.hits += 1
        else:  # shapes not seen yet: checked once
            self._check_shapes(data_descs, label_descs, called)
            self._check_within_max(data_descs, label_descs, called)
            group = self._bind_shapes(data_descs, label_descs)
            self._groups[key] = group
            self.inspector.misses += 1
            self._evict()
        self._exec_group, self._current_key = group, key
        self._data_shapes, self._label_shapes = group.data_shapes, group.label_shapes
        self._count_batch()
        self._step_for_batch()  # MXNet's rescale_grad is 1/(the batch the optimizer met first)

    def _labels_for(self, data_descs) -> list | None:
        """Labels for shapes given without them (a prediction, a reshape of the data only).

        Executors bound without labels never load a batch's labels (MXNet's executor group
        reads them only into label arrays it was bound with), and they would serve a labelled
        training batch of the same shape later: it would train on stale labels. So every shape
        has labels when the module has, moved from the largest ones."""
        if not self._max_labels:
            return None
        return self._labels_moved(self._max_labels, self._max_group.data_shapes, data_descs)

    def _labels_moved(self, labels, old_data, new_data) -> list:
        """``labels``, given with ``old_data``, for ``new_data``: the shape the network infers
        from the new data for a label it infers as given from the old (a label per time step
        follows the steps), else the label at the new data's rows (as :class:`mxlearn.Module`
        reshapes)."""
        names = [d.name for d in labels]

        def inferred(descs) -> dict:
            data = {d.name: tuple(d.shape) for d in descs}
            shapes = network.infer_label_shapes(self._symbol, data, names)
            return {n: s for n, s in shapes.items() if 0 not in s}  # MXNet's 0: not known

        before, after = inferred(old_data), inferred(new_data)
        return [
            mx.io.DataDesc(d.name, after[d.name], d.dtype, d.layout)
            if d.name in after and before.get(d.name) == tuple(d.shape)
            else at_rows
            for d, at_rows in zip(labels, rows.labels_at_rows(new_data, labels))
        ]

    def _bind_shapes(self, data_descs, label_descs):
        started = time.perf_counter()
        group = mx.module.executor_group.DataParallelExecutorGroup(
            self._symbol,
            self._context,
            self._work_load_list,
            data_descs,
            label_descs,
            self._param_names,
            self.for_training,
            self.inputs_need_grad,
            shared_group=self._max_group,
            logger=self.logger,
            fixed_param_names=self._fixed_param_names,
            grad_req=self._grad_req,
            state_names=self._state_names,
            group2ctxs=self._group2ctxs,
        )
        if self._monitor is not None:
            group.install_monitor(self._monitor)
        self.inspector.bind_seconds += time.perf_counter() - started
        return group

    def _evict(self) -> None:
        while len(self._groups) > self._cache_size + 1:  # +1: the max group never leaves
            for key, group in self._groups.items():
                if group is not self._max_group and group is not self._exec_group:
                    del self._groups[key]
                    self.inspector.evictions += 1
                    break

    def install_monitor(self, mon):
        self._monitor = mon
        super().install_monitor(mon)

    # ------------------------------------------------------------------ reading
    @property
    def cache_size(self) -> int:
        """How many executor groups it keeps besides the one bound at the maximum."""
        return self._cache_size

    @property
    def max_shapes(self) -> dict[str, tuple]:
        """The shape each input is bound at: no batch may exceed it."""
        return dict(self._max_shapes)

    def _extra_summary_rows(self) -> list[tuple[str, str]]:
        if not self.binded:
            return []
        maximum = ", ".join(f"{n} {s}" for n, s in self._max_shapes.items())
        return [(say("max shapes"), maximum), (say("shape changes"), self.inspector.text())]


guard_methods(MutableModule, "mod", ["forward", "install_monitor"])
