"""The errors mxlearn raises: one family, each also the built-in type a Python user expects.

Every message says what was called and what is wrong, then the exact call that fixes it, then
(for a module) its current state, so a student can act on it without reading a traceback:

    mod.forward() was called before the module was bound.
      Fix: mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
      Module state: created (not bound; bind comes next)
"""

from __future__ import annotations

import difflib
import os
import traceback
from collections.abc import Iterable

from .language import say

PACKAGE_FOLDER = os.path.dirname(os.path.abspath(__file__))


class MXLearnError(Exception):
    """Base of every error mxlearn raises (but ``language.LanguageError``, which this module
    needs to say its own words); ``fix`` and ``state`` are also kept as attributes."""

    def __init__(self, problem: str, *, fix: str | None = None, state: str | None = None):
        self.problem = problem
        self.fix = fix
        self.state = state
        lines = [problem]
        if fix:
            lines.append(say("  Fix: {fix}", fix=fix))
        if state:
            lines.append(say("  Module state: {state}", state=state))
        super().__init__("\n".join(lines))

    def _render_traceback_(self) -> list[str]:
        """IPython's hook for showing an exception: in a notebook, a short block with the fix
        instead of 40 lines through mxlearn's and MXNet's insides; ``%tb`` in the next cell
        shows the same error again, then with its whole traceback. Outside IPython, Python's
        own traceback is untouched."""
        if getattr(self, "_shown_short", False):
            return "".join(traceback.format_exception(self)).rstrip("\n").split("\n")
        self._shown_short = True
        where = _student_line(self.__traceback__)
        heading = type(self).__name__
        if where:
            heading = say("{error} at {where}", error=heading, where=where)
        lines = [heading, f"  {self.problem}"]
        if self.fix:
            lines.append(say("  Fix: {fix}", fix=self.fix))
        if self.state:
            lines.append(say("  Module state: {state}", state=self.state))
        return lines + [say("(the full traceback: run %tb in the next cell)")]


def _student_line(tb) -> str | None:
    """The last place of a traceback in the student's own code, not in mxlearn or a library."""
    found = None
    for frame in traceback.extract_tb(tb):
        path = os.path.abspath(frame.filename)
        if not path.startswith(PACKAGE_FOLDER) and "-packages" + os.sep not in path:
            found = frame
    if found is None:
        return None
    if found.line:
        return say("line {number}: {code}", number=found.lineno, code=found.line.strip())
    return say("line {number}", number=found.lineno)


class LifecycleError(MXLearnError, RuntimeError):
    """A step was called before the steps it needs, or in a mode that cannot do it."""


class InputError(MXLearnError, ValueError):
    """Data, labels, names or settings that cannot work with this module."""


class ArgumentTypeError(MXLearnError, TypeError):
    """An argument of the wrong kind, e.g. ``context=mx.gpu`` instead of ``mx.gpu(0)``."""


class UnknownAttributeError(MXLearnError, AttributeError):
    """A misspelled attribute or method name (IPython hides Python's own suggestion)."""


class DeviceError(MXLearnError, RuntimeError):
    """A device MXNet cannot use here (no GPU, or a GPU the installed build has no kernels for)."""


class DatasetError(MXLearnError, OSError):
    """A data file that is missing, damaged or could not be downloaded."""


class CheckpointError(MXLearnError, FileNotFoundError):
    """A checkpoint file that does not exist (or, later, does not verify)."""


class CheckpointExistsError(MXLearnError, FileExistsError):
    """Saving would overwrite an existing checkpoint."""


class DamagedCheckpointError(MXLearnError, OSError):
    """A checkpoint file that is truncated, altered or not what its manifest says."""


class NonFiniteError(MXLearnError, FloatingPointError):
    """Parameters or a loss that are NaN or infinite (training diverged)."""


class DivergenceError(MXLearnError, ArithmeticError):
    """A training loss that kept growing far past where it started."""


class TrainingWarning(UserWarning):
    """Training runs, but not the way a working network does (e.g. it predicts one class)."""


class UntrustedFileError(MXLearnError, PermissionError):
    """A file whose loading could run code (a Python pickle) and that was not marked trusted."""


class CheckFailed(MXLearnError, AssertionError):
    """A student's self-check (mxlearn.checks) found the step did not do what it should."""


class SetupError(MXLearnError, ImportError):
    """The environment cannot run MXNet (missing MXNet, NumPy 2, missing NVIDIA libraries)."""


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates most like ``name`` (case-insensitive), best first."""
    by_lower = {c.lower(): c for c in candidates}
    matches = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.5)
    return [by_lower[m] for m in matches]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """'Did you mean 'x' or 'y'?' text, or a list of the valid names when nothing is close."""
    candidates = sorted(set(candidates))
    near = closest(name, candidates)
    if near:
        return say("Did you mean {names}?", names=say(" or ").join(repr(m) for m in near))
    return say("Valid names: {names}.", names=", ".join(repr(c) for c in candidates))
