"""Images of several sizes for MutableModule: ``ShapeVaryingIter`` never mixes shapes in a
batch, and its own ``provide_data`` is the largest shape (no ``max_data_shapes`` needed).
"""

from __future__ import annotations

import numpy as np

from . import rules
from ._compat import mx
from .boundary import public
from .errors import N_, InputError


class NoGroups(InputError):
    says = N_("ShapeVaryingIter needs at least one group of examples.")
    fix_code = "ShapeVaryingIter(mxlearn.shaped_data.striped_images(), 16)"


class GroupLabelsMismatch(InputError):
    says = N_("ShapeVaryingIter: a group has {examples} examples and {labels} labels.")
    fix_says = N_("give each group as (X, y) with one label per example")


class GroupsDifferInDimensions(InputError):
    says = N_(
        "ShapeVaryingIter: the groups' examples have {dimensions} dimensions; "
        "shapes may vary in size, not in the number of dimensions."
    )
    fix_says = N_("give every group the same layout, e.g. (n, channels, height, width)")


def striped_images(
    sizes=(12, 16, 20, 24, 28, 32),
    per_size: int = 64,
    seed: int = 0,
    directions: int = 3,
    noise: float = 0.3,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(X, y), ...]``, a group of (per_size, 1, size, size) grey images a size, striped
    horizontally (label 0), vertically (1), diagonally (2) or, with ``directions=4``, along the
    other diagonal (3); period and phase vary and ``noise`` (its standard deviation, against
    stripes of amplitude 1) is added, so the class is in the direction only, which convolutions
    see."""
    rng = np.random.default_rng(seed)
    groups = []
    for size in sizes:
        rows, cols = np.mgrid[0:size, 0:size].astype(np.float32)
        labels = rng.integers(0, directions, size=per_size)
        images = np.empty((per_size, 1, size, size), dtype=np.float32)
        for i, label in enumerate(labels):
            coordinate = (rows, cols, rows + cols, rows - cols)[label]
            period, phase = rng.uniform(3.0, 6.0), rng.uniform(0, 2 * np.pi)
            stripes = np.sin(2 * np.pi * coordinate / period + phase)
            images[i, 0] = stripes + noise * rng.normal(size=(size, size))
        groups.append((images, labels.astype(np.float32)))
    return groups


class ShapeVaryingIter(mx.io.DataIter):
    """Batches of ``batch_size`` from each group of equally shaped examples, in a shuffled
    order of batches (seeded) when ``shuffle``; a group's last batch is padded from its start
    (``batch.pad`` says how many rows), like ``NDArrayIter``.

    Each batch carries a ``bucket_key`` for MXNet's ``BucketingModule``: the sizes of the
    dimensions that differ between groups (height and width for images of several sizes);
    ``default_bucket_key`` is the largest group's, the shape ``provide_data`` gives."""

    @public(
        "ShapeVaryingIter()",
        groups=rules.satisfying(
            lambda groups: (
                isinstance(groups, (list, tuple))
                and all(isinstance(g, (list, tuple)) and len(g) == 2 for g in groups)
            ),
            N_("a list of (X, y) pairs, one for each shape"),
            "ShapeVaryingIter([(X12, y12), (X16, y16)], batch_size=16)",
        ),
        batch_size=rules.whole(1, "ShapeVaryingIter(groups, batch_size=16)"),
        shuffle=rules.flag("ShapeVaryingIter(groups, 16, shuffle=True)"),
        seed=rules.whole(0, "ShapeVaryingIter(groups, 16, shuffle=True, seed=0)"),
        data_name=rules.text("ShapeVaryingIter(groups, 16, data_name='data')"),
        label_name=rules.text("ShapeVaryingIter(groups, 16, label_name='softmax_label')"),
    )
    def __init__(
        self,
        groups,
        batch_size: int,
        shuffle: bool = False,
        seed: int = 0,
        data_name: str = "data",
        label_name: str = "softmax_label",
    ):
        super().__init__(batch_size)
        if not groups:
            raise NoGroups()
        for X, y in groups:
            if len(X) != len(y) or len(X) == 0:
                raise GroupLabelsMismatch(examples=len(X), labels=len(y))
        self.groups = [(np.asarray(X, np.float32), np.asarray(y, np.float32)) for X, y in groups]
        dimensions = {X.ndim for X, _ in self.groups}
        if len(dimensions) != 1:
            raise GroupsDifferInDimensions(dimensions=sorted(dimensions))
        self.data_name, self.label_name = data_name, label_name
        shapes = np.array([X.shape[1:] for X, _ in self.groups])
        self._varying = [axis for axis in range(shapes.shape[1]) if len(set(shapes[:, axis])) > 1]
        self.shuffle, self._rng = shuffle, np.random.default_rng(seed)
        self._plan = [
            (g, start)
            for g, (X, _) in enumerate(self.groups)
            for start in range(0, len(X), batch_size)
        ]
        self.reset()

    @property
    def provide_data(self):
        widest = np.max([X.shape[1:] for X, _ in self.groups], axis=0)
        return [mx.io.DataDesc(self.data_name, (self.batch_size, *map(int, widest)))]

    @property
    def default_bucket_key(self) -> tuple:
        return self._key(self.provide_data[0].shape)

    def _key(self, shape) -> tuple:
        return tuple(int(shape[1:][axis]) for axis in self._varying)

    @property
    def provide_label(self):
        return [mx.io.DataDesc(self.label_name, (self.batch_size,))]

    def reset(self):
        self._order = list(range(len(self._plan)))
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._cursor = 0

    def next(self):
        if self._cursor >= len(self._order):
            raise StopIteration
        group, start = self._plan[self._order[self._cursor]]
        self._cursor += 1
        X, y = self.groups[group]
        rows = np.arange(start, start + self.batch_size) % len(X)  # wraps: pads from the start
        pad = max(0, start + self.batch_size - len(X))
        data, label = mx.nd.array(X[rows]), mx.nd.array(y[rows])
        return mx.io.DataBatch(
            [data],
            [label],
            pad=pad,
            bucket_key=self._key(data.shape),
            provide_data=[mx.io.DataDesc(self.data_name, data.shape)],
            provide_label=[mx.io.DataDesc(self.label_name, label.shape)],
        )
