"""One call that makes a notebook reproducible: seeds MXNet, NumPy and Python's random."""

from __future__ import annotations

import random

import numpy as np

from ._compat import mx


def seed(n: int) -> None:
    """Seed every random generator a Module run draws from.

    MXNet's initializers use MXNet's generator; ``NDArrayIter(shuffle=True)`` uses NumPy's.

    Examples
    --------
    >>> seed(42)
    """
    random.seed(n)
    np.random.seed(n)
    mx.random.seed(n)
