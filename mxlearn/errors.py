"""The errors mxlearn raises: one family of kinds, each also the built-in type a Python user
expects, each declared once with its template, its fix and (through the template) its fields.

A kind is a class; its English texts are the gettext catalogue's keys, marked with ``N_`` so
``make translations`` (Babel) finds them, and rendered in the current language when raised:

    class NoSuchInput(InputError):
        says = N_("{called}: the network has no input '{name}'. The network reads: {reads}.")
        fix_code = "Module(net, data_names={expected})"

    raise NoSuchInput(called="Module()", name="x", reads="data (32, 16)", expected=["data"])

``says`` is the problem, ``fix_says`` a fix in words (translated), ``fix_code`` a fix that is
code (the same in every language: students copy it); ``says`` may be ``Nn_(one, many)`` with
``plural_by`` naming the count field, for ngettext. Tests read ``error.fields``, not wording.

Every message says what was called and what is wrong, then the exact call that fixes it, then
(for a module) its current state, so a student can act on it without reading a traceback:

    mod.forward() was called before the module was bound.
      Fix: mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
      Module state: created (not bound; bind comes next)
"""

from __future__ import annotations

import difflib
import os
import string
import traceback
from collections.abc import Iterable
from typing import ClassVar

from . import language
from .language import N_, Nn_, say, say_n

PACKAGE_FOLDER = os.path.dirname(os.path.abspath(__file__))
__all__ = ["N_", "Nn_"]  # re-exported: a kind's module imports its markers from here


class MXLearnError(Exception):
    """Base of every error mxlearn raises; ``fields``, ``fix`` and ``state`` are attributes.

    A kind declares ``says`` (and ``fix_says`` or ``fix_code``) and is raised with its fields
    as keywords; the older form, a problem already said plus ``fix=``, is kept for the call
    sites not yet declared as kinds."""

    says: ClassVar[str | tuple[str, str] | None] = None
    plural_by: ClassVar[str | None] = None
    fix_says: ClassVar[str | None] = None
    fix_code: ClassVar[str | None] = None

    def __init__(
        self,
        problem: str | None = None,
        /,
        *,
        fix: str | None = None,
        state: str | None = None,
        **fields: object,
    ):
        self.fields = fields
        self.problem = self.render_problem(fields) if problem is None else problem
        self.fix = self.render_fix(fields) if fix is None else fix
        self.state = state
        lines = [self.problem]
        if self.fix:
            lines.append(say("  Fix: {fix}", fix=self.fix))
        if state:
            lines.append(say("  Module state: {state}", state=state))
        super().__init__("\n".join(lines))

    def __reduce__(self):
        """Pickled by what was said (a sweep's worker process sends its errors back)."""
        saved = (str(self), self.problem, self.fix, self.state, self.fields)
        rebuild = getattr(type(self), "rebuild_family", None)  # a CallFailed of the boundary
        if rebuild is not None:
            return rebuild, (*type(self).family_of, *saved)
        return rebuilt, (type(self), *saved)

    def __str__(self) -> str:  # the message, also for a KeyError (whose own str is a repr)
        return str(self.args[0]) if self.args else ""

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        if cls.says is None:
            raise TypeError(f"{cls.__name__} declares no 'says' template; pass the problem")
        if isinstance(cls.says, tuple):
            return say_n(*cls.says, fields[cls.plural_by], **fields)
        return say(cls.says, **fields)

    @classmethod
    def render_fix(cls, fields: dict) -> str | None:
        if cls.fix_says is not None:
            return say(cls.fix_says, **fields)
        if cls.fix_code is not None:
            return cls.fix_code.format(**fields)
        return None

    @classmethod
    def field_names(cls) -> set[str]:
        """The placeholders a kind's templates read: the fields it must be raised with."""
        texts = [cls.fix_says, cls.fix_code]
        texts += list(cls.says) if isinstance(cls.says, tuple) else [cls.says]
        return {
            name.split(".")[0].split("[")[0]
            for text in texts
            if text
            for _, name, _, _ in string.Formatter().parse(text)
            if name
        }

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


def rebuilt(cls, message: str, problem: str, fix, state, fields: dict) -> MXLearnError:
    """An error of ``cls`` as it was said, without saying it again (an unpickled one)."""
    error = cls.__new__(cls)
    error.problem, error.fix, error.state, error.fields = problem, fix, state, fields
    Exception.__init__(error, message)
    return error


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


class Signal(Exception):
    """Not an error: a signal to mxlearn (``StopTraining``), which every boundary passes on."""


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


class LanguageError(MXLearnError, ValueError):
    """A language mxlearn does not speak, or a catalogue missing from the installation."""


class NotALanguage(LanguageError):
    says = N_("mxlearn.set_language({name!r}): mxlearn speaks {languages} (Simplified Chinese).")
    fix_code = "mxlearn.set_language('zh') or mxlearn.set_language('en')"


class MissingCatalogue(LanguageError):
    # In English only, and without say(): the catalogue that would say it is what is missing.
    def __init__(self, *, language: str, folder: str):
        self.fields = {"language": language, "folder": folder}
        self.problem = (
            f"mxlearn's catalogue for '{language}' is missing from {folder} (mxlearn.mo): "
            "this installation of mxlearn is incomplete."
        )
        self.fix = "make translations (in a checkout), or reinstall mxlearn"
        self.state = None
        Exception.__init__(self, f"{self.problem}\n  Fix: {self.fix}")


language.refusals.update(
    family=LanguageError, not_a_language=NotALanguage, missing_catalogue=MissingCatalogue
)


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
