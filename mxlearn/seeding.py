"""One call that makes a notebook reproducible: seeds MXNet, NumPy and Python's random."""

from __future__ import annotations

import random

import numpy as np

from . import rules
from ._compat import mx
from .boundary import public


@public("mxlearn.seed()", n=rules.whole(0, "mxlearn.seed(42)", maximum=2**32 - 1))
def seed(n: int) -> None:
    """Seed every random generator a Module run draws from.

    MXNet's initializers use MXNet's generator; ``NDArrayIter(shuffle=True)`` uses NumPy's.

    Examples
    --------
    >>> seed(42)
    """
    n = int(n)  # a NumPy integer too: Python's random takes only its own
    random.seed(n)
    np.random.seed(n)
    mx.random.seed(n)
