"""Per-epoch progress from ``fit`` in a fresh kernel, where MXNet's log lines go nowhere.

MXNet's ``fit`` reports each epoch through ``logger.info``; with logging not set up (a fresh
Jupyter kernel, a plain script) the root logger drops INFO and the student sees nothing for
minutes. While ``fit`` runs, such a module gets a logger that prints to the current stdout.
A logger the user did set up for INFO is left alone.
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


def _printing_logger() -> logging.Logger:
    logger = logging.getLogger("mxlearn.fit")
    if not logger.handlers:
        handler = _CurrentStdoutHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


def _shows_info(logger) -> bool:
    if logger is logging:
        logger = logging.getLogger()
    return logger.isEnabledFor(logging.INFO) and logger.hasHandlers()


@contextlib.contextmanager
def visible_epoch_log(module):
    """Within the block, ``module.logger`` prints INFO lines unless it already shows them."""
    original = module.logger
    if not _shows_info(original):
        module.logger = _printing_logger()
    try:
        yield
    finally:
        module.logger = original
