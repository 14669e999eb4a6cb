"""mxlearn's warnings print as one line, ``StepScaledOnServers: message``: the file and line
Python shows by default point into mxlearn or the student's script (an absolute path), which
says nothing a reader of the message needs. Other warnings keep Python's format."""

from __future__ import annotations

import sys
import warnings

from .errors import TrainingWarning

_python_shows = warnings.showwarning


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if not issubclass(category, TrainingWarning):
        _python_shows(message, category, filename, lineno, file, line)
        return
    stream = sys.stderr if file is None else file
    if stream is None:  # no console (pythonw): nowhere to say it
        return
    try:
        stream.write(f"{category.__name__}: {message}\n")
    except OSError:  # a closed stream must not stop training
        pass


def install() -> None:
    """Once, at import: a showwarning someone installed since is theirs and kept."""
    if warnings.showwarning is _python_shows:
        warnings.showwarning = show_warning
