"""Per-epoch progress from ``fit`` in a fresh kernel, whose root logger drops MXNet's INFO lines:
while ``fit`` runs, such a module's logger prints to the current stdout. Under a live plot, which
carries the numbers, MXNet's ``Epoch[N] Train-...`` lines are left out; its warnings still print.
"""

from __future__ import annotations

import contextlib
import logging
import sys


class _CurrentStdoutHandler(logging.Handler):
    # Looks sys.stdout up at each line: Jupyter swaps it per cell.
    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stdout.write(self.format(record) + "\n")
            sys.stdout.flush()
        except Exception:  # a closed stream must not stop training
            self.handleError(record)


def _printing_logger(name: str = "mxlearn.fit", level: int = logging.INFO) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = _CurrentStdoutHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    return logger


@contextlib.contextmanager
def visible_epoch_log(module, plotted: bool = False):
    """Within the block, ``module.logger`` prints INFO lines if it would otherwise drop them;
    under a live plot (``plotted``) MXNet's default logger prints warnings only."""
    # Only MXNet's default (the logging module itself, i.e. the root logger) is replaced, and only
    # while the root logger would drop INFO; a logger the user passed is theirs to configure.
    original, root = module.logger, logging.getLogger()
    if plotted and original is logging:
        module.logger = _printing_logger("mxlearn.fit.plotted", logging.WARNING)
    elif original is logging and not (root.isEnabledFor(logging.INFO) and root.hasHandlers()):
        module.logger = _printing_logger()
    try:
        yield
    finally:
        module.logger = original
