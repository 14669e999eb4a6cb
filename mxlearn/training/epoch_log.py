"""Per-epoch progress from ``fit`` in a fresh kernel, where MXNet's log lines go nowhere.

MXNet's ``fit`` reports each epoch through ``logger.info``; with logging not set up (a fresh
Jupyter kernel, a plain script) the root logger drops INFO and the student sees nothing for
minutes. While ``fit`` runs, such a module gets a logger that prints to the current stdout.
With a live plot the plot carries the numbers (and the console plot prints one line per
epoch), so MXNet's ``Epoch[N] Train-...`` and ``Time cost`` lines are left out; its warnings
still print. A logger the user passed to the Module is left alone.
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


def _needs_printing(logger) -> bool:
    # Only MXNet's default (the logging module itself, i.e. the root logger) is replaced, and only
    # while the root logger would drop INFO; a logger the user passed is theirs to configure.
    if logger is not logging:
        return False
    root = logging.getLogger()
    return not (root.isEnabledFor(logging.INFO) and root.hasHandlers())


@contextlib.contextmanager
def visible_epoch_log(module, plotted: bool = False):
    """Within the block, ``module.logger`` prints INFO lines if it would otherwise drop them;
    under a live plot (``plotted``) MXNet's default logger prints warnings only."""
    original = module.logger
    if plotted and original is logging:
        module.logger = _printing_logger("mxlearn.fit.plotted", logging.WARNING)
    elif _needs_printing(original):
        module.logger = _printing_logger()
    try:
        yield
    finally:
        module.logger = original
