"""The language of mxlearn's own words: English, or Chinese with ``set_language('zh')``.

Every explanation, "Fix:" line, check message, warning and progress line is written once in
English, as a template passed to :func:`say`; the Chinese texts live in a GNU gettext catalogue
(``locale/zh/LC_MESSAGES/mxlearn.po``, compiled to ``mxlearn.mo`` by ``make translations``),
the format translators and their tools know. Code in a message (the call in a fix, names,
numbers) is the same in both languages: students copy it. A Chinese text puts a space around
a field, as Chinese does beside a Latin name; where the value is Chinese too (a metric's
Chinese name), the space is left out (:func:`_formatted`).

The language is read when a message is made, so switching takes effect at once:

>>> import mxlearn
>>> mxlearn.set_language("zh")
>>> print(mxlearn.errors.did_you_mean("acc", ["accuracy", "ce"]))
你是想写 'accuracy' 吗？
>>> mxlearn.set_language("en")
>>> print(mxlearn.errors.did_you_mean("acc", ["accuracy", "ce"]))
Did you mean 'accuracy'?
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import os
import re
import string
import threading
import warnings

LANGUAGES = ("en", "zh")
ENVIRONMENT_VARIABLE = "MXLEARN_LANG"
LOCALE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")

_chosen: str | None = None  # set_language's choice; None: the environment variable decides
_thread = threading.local()  # spoken()'s language, for one thread only


# The refusals of this module are error kinds declared in mxlearn.errors, which says its words
# through this module: errors.py puts them here when it is imported (as ``import mxlearn``
# always does first), so neither module imports the other in a circle.
refusals: dict[str, type] = {}


def __getattr__(name: str):
    if name == "LanguageError":
        return refusals["family"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def N_(template: str, /) -> str:
    """Marks an English template for the catalogue (Babel's keyword) where it is declared, to
    be said later: an error kind's ``says``, a table's text."""
    return template


def Nn_(singular: str, plural: str, /) -> tuple[str, str]:
    """Marks a template with its plural for the catalogue, to be said with :func:`say_n`."""
    return singular, plural


class LanguageWarning(UserWarning):
    """``MXLEARN_LANG`` names a language mxlearn does not speak; it speaks English instead."""


def set_language(name: str | None) -> None:
    """Make mxlearn speak ``'en'`` (English) or ``'zh'`` (Simplified Chinese) from now on in
    this process; ``None`` lets ``MXLEARN_LANG`` decide again.

    ``MXLEARN_LANG=zh`` in the environment does the same for a process that does not call this
    (a launched worker, ``python -m mxlearn``)."""
    global _chosen
    if name is None:
        _chosen = None
        return
    language = _parsed(name)
    if language is None:
        languages = say(" and ").join(repr(language) for language in LANGUAGES)
        raise refusals["not_a_language"](name=name, languages=languages)
    if language != "en":
        _catalogue(language)  # a missing catalogue is said now, not at the first message
    _chosen = language


def current_language() -> str:
    """The language mxlearn speaks now: spoken()'s in this thread, else set_language's choice,
    else ``MXLEARN_LANG``, else en."""
    if getattr(_thread, "language", None) is not None:
        return _thread.language
    if _chosen is not None:
        return _chosen
    from_environment = os.environ.get(ENVIRONMENT_VARIABLE, "")
    if not from_environment.strip():
        return "en"
    language = _parsed(from_environment)
    if language is None:
        # A setting of the words must not stop a run (it is read by every message, in the
        # middle of fit too): it is named once, in both languages, and English is spoken.
        _warn_once(NOT_A_LANGUAGE.format(variable=ENVIRONMENT_VARIABLE, value=from_environment))
        return "en"
    if language != "en":
        try:
            _catalogue(language)
        except refusals["family"] as missing:  # the same: named once, and English spoken
            _warn_once(str(missing))
            return "en"
    return language


@contextlib.contextmanager
def spoken(language: str | None):
    """Speak ``language`` ('en', 'zh') in this thread inside the block; None: as before. The
    grader's threads each say a submission's grades in the language of its edition, at once."""
    if language is not None and language not in LANGUAGES:
        languages = say(" and ").join(repr(known) for known in LANGUAGES)
        raise refusals["not_a_language"](name=language, languages=languages)
    before = getattr(_thread, "language", None)
    _thread.language = language if language is not None else before
    try:
        yield
    finally:
        _thread.language = before


NOT_A_LANGUAGE = (
    "{variable}={value!r} is not a language mxlearn speaks (en, zh: Simplified Chinese), so it "
    "speaks English. / {variable}={value!r} 不是 mxlearn 支持的语言（en、zh：简体中文），"
    "所以它说英文。\n"
    "  Fix / 修复: {variable}=zh, {variable}=en, or unset {variable}"
)
_warned: set[str] = set()


def _warn_once(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        warnings.warn(text, LanguageWarning, stacklevel=4)


def say(template: str, /, **values: object) -> str:
    """``template`` in the current language, with ``values`` put in (``str.format`` fields;
    a literal brace is written twice). The English template is the catalogue's key."""
    return say_in(current_language(), template, **values)


def say_n(singular: str, plural: str, count: int, /, **values: object) -> str:
    """Like :func:`say`, with the plural form the language uses for ``count`` (ngettext)."""
    language = current_language()
    if language == "en":
        text = singular if count == 1 else plural
    else:
        text = _catalogue(language).ngettext(singular, plural, count)
    return _formatted(language, text, values if "count" in values else dict(values, count=count))


def say_in(language: str, template: str, /, **values: object) -> str:
    """``template`` in ``language`` (for a test that every kind renders in both)."""
    text = template if language == "en" else _catalogue(language).gettext(template)
    return _formatted(language, text, values)


HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FORMATTER = string.Formatter()


def _formatted(language: str, text: str, values: dict) -> str:
    """``text.format(**values)``; in Chinese, without a space of the text's between a Chinese
    character and a field whose value is Chinese on that side. A Chinese text keeps a space
    around a field ("训练集上的 {metric}"), as Chinese does beside a Latin name ('my_score');
    a Chinese value ('准确率') needs none: "训练集上的准确率". The values' own spaces stay."""
    if language != "zh":
        return text.format(**values)
    said = [""]  # the text's own pieces (even places) and the fields' values (odd places)
    for literal, name, spec, conversion in _FORMATTER.parse(text):
        said[-1] += literal  # a brace written twice parses as a piece of its own
        if name is not None:
            value = _FORMATTER.convert_field(_FORMATTER.get_field(name, (), values)[0], conversion)
            said += [_FORMATTER.format_field(value, _FORMATTER.vformat(spec, (), values)), ""]
    for i in range(0, len(said), 2):
        piece = said[i]
        before = said[i - 1][-1:] if i else ""  # the end of the value before it
        after = said[i + 1][:1] if i + 1 < len(said) else ""  # the start of the one after
        if piece == " ":
            piece = "" if _han(before, after) else piece
        else:
            piece = piece[1:] if piece[:1] == " " and _han(before, piece[1:2]) else piece
            piece = piece[:-1] if piece[-1:] == " " and _han(piece[-2:-1], after) else piece
        said[i] = piece
    return "".join(said)


def _han(*characters: str) -> bool:
    return all(HAN.fullmatch(c) for c in characters)


def sentences(*said: str) -> str:
    """Sentences already said, as one text: a space between them in English, none in Chinese
    (a Chinese full stop needs no space after it)."""
    return ("" if current_language() == "zh" else " ").join(part for part in said if part)


def drawn_language() -> str:
    """The language of words drawn in a figure: Chinese only when a font can draw it."""
    if current_language() == "zh":
        from .cjk_font import cjk_font_name

        if cjk_font_name() is None:
            return "en"  # empty boxes would say nothing; English at least says something
    return current_language()


def say_drawn(template: str, /, **values: object) -> str:
    """Like :func:`say`, for words drawn in a figure: in :func:`drawn_language`."""
    return say_in(drawn_language(), template, **values)


TRADITIONAL = ("zh-tw", "zh-hk", "zh-mo", "zh-hant")  # the catalogue is Simplified Chinese


def _parsed(name: object) -> str | None:
    normalised = str(name).strip().lower().replace("_", "-")
    if normalised.startswith(TRADITIONAL):
        return None
    for language in LANGUAGES:  # 'zh-CN', 'zh-hans', 'en-US' are the same language here
        if normalised == language or normalised.startswith(language + "-"):
            return language
    return None


@functools.cache
def _catalogue(language: str) -> gettext.NullTranslations:
    try:
        return gettext.translation("mxlearn", LOCALE_FOLDER, languages=[language])
    except OSError:  # never English while Chinese was asked for, without a word
        raise refusals["missing_catalogue"](language=language, folder=LOCALE_FOLDER) from None
