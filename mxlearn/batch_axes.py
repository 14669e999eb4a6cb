"""The batch axis of a network's labels and outputs, where the data alone decides them:
measured by inferring their shapes again at one row more (a 'TN' label of 'TNC' data, the
(T, N, K) output of SoftmaxOutput(preserve_shape=True))."""

from __future__ import annotations

from dataclasses import dataclass

from ._compat import mx

NO_AXIS = -1  # MXNet's batch axis of a layout without 'N': the array is not sliced


@dataclass(frozen=True)
class InferredLabel:
    name: str
    shape: tuple
    axis: int  # the batch axis, or NO_AXIS: the label's size does not follow the rows

    def layout(self) -> str | None:
        """A layout with 'N' at the batch axis (None: MXNet's default, 'N' first)."""
        if self.axis == 0:
            return None
        rank = len(self.shape)
        if self.axis == NO_AXIS:
            return "C" * rank  # no 'N': MXNet gives every device the whole label
        return "T" * self.axis + "N" + "C" * (rank - self.axis - 1)

    def desc(self) -> mx.io.DataDesc:
        layout = self.layout()
        extra = {} if layout is None else {"layout": layout}
        return mx.io.DataDesc(self.name, self.shape, **extra)


def batch_rows(desc) -> int | None:
    """The rows of a batch: ``desc``'s size along its layout's batch axis."""
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    return desc.shape[axis] if 0 <= axis < len(desc.shape) else None


def at_rows(desc, rows: int) -> tuple:
    """``desc``'s shape with ``rows`` on its layout's batch axis."""
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    shape = list(desc.shape)
    if 0 <= axis < len(shape):
        shape[axis] = rows
    return tuple(shape)


def _inferred(symbol, data_descs, rows: int):
    """(argument shapes by name, output shapes) for the data at ``rows`` rows, or None."""
    given = {d.name: at_rows(d, rows) for d in data_descs}
    try:
        args, outputs, _ = symbol.infer_shape_partial(**given)
    except mx.base.MXNetError:
        return None
    return dict(zip(symbol.list_arguments(), map(tuple, args))), list(map(tuple, outputs))


def _measured(symbol, data_descs):
    """The rows, and the shapes inferred at them and at one row more (None if unknown)."""
    rows = batch_rows(data_descs[0])
    if rows is None:
        return None
    now, grown = _inferred(symbol, data_descs, rows), _inferred(symbol, data_descs, rows + 1)
    return None if now is None or grown is None else (rows, now, grown)


def _axis(now: tuple, grown: tuple, rows: int) -> int | None:
    """The axis of ``now`` that follows the rows (``grown``: at one row more); NO_AXIS if none
    does; None if its size follows them otherwise (a batch flattened into another axis)."""
    if len(now) != len(grown) or 0 in now:
        return None
    moved = [i for i, (a, b) in enumerate(zip(now, grown)) if a != b]
    if not moved:
        return NO_AXIS
    if len(moved) == 1 and (now[moved[0]], grown[moved[0]]) == (rows, rows + 1):
        return moved[0]
    return None


def inferred_labels(symbol, data_descs, names) -> dict[str, InferredLabel]:
    """The labels ``names`` as the network infers them from ``data_descs``, each with its
    batch axis; a label the data does not decide, or not along one axis, is left out."""
    measured = _measured(symbol, data_descs)
    if measured is None:
        return {}
    rows, (args, _), (grown, _) = measured
    found = {}
    for name in names:
        shape = args.get(name)
        axis = _axis(shape, grown.get(name, ()), rows) if shape else None
        if axis is not None:
            found[name] = InferredLabel(name, shape, axis)
    return found


def output_axes(symbol, data_descs) -> list[int | None]:
    """Each output's batch axis (NO_AXIS: none; None: not known from the data alone)."""
    measured = _measured(symbol, data_descs)
    if measured is None:
        return [None] * len(symbol.list_outputs())
    rows, (_, now), (_, grown) = measured
    return [_axis(a, b, rows) for a, b in zip(now, grown)]


def label_descs(symbol, data_descs, names) -> list | None:
    """DataDescs of the labels ``names`` a module bound with its data only still holds as
    arguments, at the shapes the network infers for ``data_descs``: MXNet's reshape needs
    them ("Shape of unspecified arg ... changed" otherwise)."""
    found = inferred_labels(symbol, data_descs, names)
    return [found[n].desc() for n in names if n in found] or None
