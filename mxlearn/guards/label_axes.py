"""The labels a network infers from its data alone: their shapes, and the axis of each that
follows the batch's rows (measured, by inferring again at one row more)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import network
from .._compat import mx
from . import rows


@dataclass(frozen=True)
class InferredLabel:
    name: str
    shape: tuple
    axis: int | None  # the batch axis; None: the label's size does not follow the rows

    def layout(self) -> str | None:
        """A layout with 'N' at the batch axis (None: MXNet's default, 'N' first)."""
        if self.axis == 0:
            return None
        rank = len(self.shape)
        if self.axis is None:
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


def _at_rows(desc, rows: int) -> tuple:
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    shape = list(desc.shape)
    if 0 <= axis < len(shape):
        shape[axis] = rows
    return tuple(shape)


def inferred_labels(symbol, data_descs, names) -> dict[str, InferredLabel]:
    """The labels ``names`` as the network infers them from ``data_descs``; a label whose
    size follows the rows other than along one axis (a flattened one) is left out."""
    rows = batch_rows(data_descs[0])
    now = network.infer_label_shapes(symbol, {d.name: tuple(d.shape) for d in data_descs}, names)
    if rows is None:
        return {}
    more = {d.name: _at_rows(d, rows + 1) for d in data_descs}
    later = network.infer_label_shapes(symbol, more, names)
    found = {}
    for name, shape in now.items():
        grown = later.get(name, ())
        moved = [i for i, (a, b) in enumerate(zip(shape, grown)) if a != b]
        if len(grown) != len(shape):
            continue
        if not moved:
            found[name] = InferredLabel(name, shape, None)
        elif moved == [moved[0]] and (shape[moved[0]], grown[moved[0]]) == (rows, rows + 1):
            found[name] = InferredLabel(name, shape, moved[0])
    return found


def label_descs(symbol, data_descs, names) -> list | None:
    """DataDescs of the labels ``names`` a module bound with its data only still holds as
    arguments, at the shapes the network infers for ``data_descs``: MXNet's reshape needs
    them ("Shape of unspecified arg ... changed" otherwise)."""
    found = inferred_labels(symbol, data_descs, names)
    return [found[n].desc() for n in names if n in found] or None


def as_bound(batch, data_shapes, label_shapes):
    """A batch with labels as the module is bound: without them, the bound labels' shapes at
    its rows (MXNet's reshape needs them); bound without labels, none (MXNet's module reads
    none at the bound shapes, and fails on them at others: "'NoneType' object is not
    iterable")."""
    if label_shapes:
        return rows.with_label_shapes(batch, data_shapes, label_shapes)
    provide_data = getattr(batch, "provide_data", None) or None
    return mx.io.DataBatch(
        batch.data, None, pad=batch.pad, index=batch.index, provide_data=provide_data
    )
