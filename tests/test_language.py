"""mxlearn speaks Chinese when asked: every message has a Chinese text, its code unchanged.

The catalogue test walks every ``say()`` template in the package (the English is the gettext
msgid) and every string literal that reads as English words outside ``say()``: a message added
without a Chinese text, or written as a bare string, fails here.
"""

from __future__ import annotations

import ast
import gettext
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

import mxlearn
from mxlearn import mx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402  (tools/translations.py: the catalogue's own maintainer)

FOUND, SAY_PROBLEMS = translations.templates()
CATALOGUE = {m.id: m for m in translations.read_catalogue() if m.id}
FILES = sorted({place[0] for places in FOUND.values() for place in places})
CJK = re.compile(r"[\u4e00-\u9fff]")
# A call as a student would copy it: name(...) with no space before the parenthesis (but an
# English plural, "GPU(s)", is not a call).
CODE_CALL = re.compile(r"[A-Za-z_][\w.]*\((?!s\))[^()]*\)")
# English words: two words of letters side by side, not part of a name or a path.
PROSE = re.compile(r"(?<![\w.=/'\"-])[A-Za-z][a-z]+ [a-z]{2,}(?![\w(=/])")

# Literals that read as English but are never shown as mxlearn's words: (file, start) -> why.
NOT_SHOWN = {
    ("mxlearn/language.py", "mxlearn's catalogue for"): "said in English: no catalogue to say it",
    ("mxlearn/language.py", "{variable}={value!r} is not"): "said in both languages at once",
    ("mxlearn/guards/arguments.py", "Error in operator"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "should be 4D"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "uniform type"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "data type"): "found in MXNet's error text",
    ("mxlearn/module/high_level.py", "Train the module: MXNet's"): "fit's docstring",
    ("mxlearn/module/module.py", "Data provided by label_shapes"): "matches MXNet's warning",
    ("mxlearn/module/module.py", "Optimizer created manually"): "matches MXNet's warning",
    ("mxlearn/devices.py", "model name"): "a key of /proc/cpuinfo",
    ("mxlearn/distributed.py", "import mxlearn"): "code a launched process runs",
    ("mxlearn/distributed.py", "python -m mxlearn launch"): "a command, the same in both languages",
    ("mxlearn/commands/student_edition.py", "python -m mxlearn course"): "a command, the same",
    ("mxlearn/commands/grade_inputs.py", "python -m mxlearn grade"): "a command, the same",
    ("mxlearn/commands/grade_inputs.py", "mxlearn grade --out"): "the option a message names",
    ("mxlearn/commands/grading_run.py", "{} -m pip install"): "a command, the same",
    (
        "mxlearn/run_checks.py",
        "mod.fit(train_iter, eval_data",
    ): "a call, the same in both languages",
    ("mxlearn/experiments/comparison.py", "lower center"): "a matplotlib setting",
    ("mxlearn/experiments/comparison.py", "final "): "a table column, indexed like a metric name",
    ("mxlearn/experiments/comparison.py", "best "): "a table column, indexed like a metric name",
    ("mxlearn/live/figure.py", "offset points"): "a matplotlib setting",
    ("mxlearn/live/figure.py", "axes fraction"): "a matplotlib setting",
}


@pytest.fixture(autouse=True)
def english_after():
    yield
    mxlearn.set_language("en")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


class _AnyValue:
    """Stands for a field's value whatever its format spec (``{x:.4f}``, ``{x!r:>8}``)."""

    def __format__(self, spec: str) -> str:
        return "<value>"


def _filled(template: str) -> str:
    return template.format(**{name: _AnyValue() for name in _fields(template)})


def test_every_say_is_given_one_literal_template():
    assert SAY_PROBLEMS == []


@pytest.mark.parametrize("path", FILES)
def test_every_message_has_a_chinese_text_with_the_same_code(path):
    missing, wrong = [], []
    for template, places in FOUND.items():
        if path not in {p for p, _ in places}:
            continue
        entry = CATALOGUE.get(template)
        if entry is None or not entry.string or entry.fuzzy:
            missing.append(template)
            continue
        chinese = entry.string
        if _fields(chinese) != _fields(template):
            wrong.append((template, "fields differ", sorted(_fields(chinese))))
        elif (
            not CJK.search(chinese)
            and CJK.search(_filled(template)) is None
            and PROSE.search(template)
        ):
            wrong.append((template, "no Chinese in the text", chinese))
        else:
            _filled(template), _filled(chinese)  # both must format
            lost = [c for c in CODE_CALL.findall(template) if c not in chinese]
            if lost:
                wrong.append((template, "code changed", lost))
    assert missing == [], f"{len(missing)} messages of {path} have no Chinese text"
    assert wrong == []


def test_the_catalogue_holds_only_messages_the_code_says():
    unused = [template for template in CATALOGUE if template not in FOUND]
    assert unused == []


def test_the_compiled_catalogue_is_the_written_one():
    with open(translations.COMPILED, "rb") as f:
        compiled = gettext.GNUTranslations(f)
    for template, entry in CATALOGUE.items():
        if entry.string:
            assert compiled.gettext(template) == entry.string, template


def _english_literals(path: Path):
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))  # a docstring
        if (
            isinstance(node, ast.Call)
            and translations._called_name(node.func) in translations.SAYING
        ):
            skipped.update(id(a) for a in node.args[:1])
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        else:
            continue
        if PROSE.search(text):
            yield node.lineno, text


@pytest.mark.parametrize(
    "path", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "mxlearn").rglob("*.py"))
)
def test_no_english_words_outside_say(path):
    bare = [
        (line, text[:80])
        for line, text in _english_literals(ROOT / path)
        if not any(path == f and text.startswith(s) for f, s in NOT_SHOWN)
    ]
    assert bare == [], "wrap these in say(...) and give them a Chinese text"


def test_a_lifecycle_error_in_chinese_keeps_its_fix_call():
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    batch = mx.io.DataBatch([mx.nd.zeros((2, 16))])
    with pytest.raises(mxlearn.errors.LifecycleError) as english:
        mod.forward(batch)
    mxlearn.set_language("zh")
    with pytest.raises(mxlearn.errors.LifecycleError) as chinese:
        mod.forward(batch)
    assert CJK.search(chinese.value.problem) and "修复" in str(chinese.value)
    assert chinese.value.fix.split("  ")[0] == english.value.fix.split("  ")[0]
    assert "mod.bind(" in chinese.value.fix


def test_the_environment_variable_chooses_the_language_of_a_new_process():
    script = (
        "import mxlearn\n"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(None)\n"
        "except mxlearn.MXLearnError as e:\n"
        "    print(e)\n"
    )
    environment = dict(os.environ, MXLEARN_LANG="zh_CN")
    printed = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True
    ).stdout
    assert CJK.search(printed) and "mod.bind(" in printed


def test_an_unknown_language_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"set_language\('zh'\)"):
        mxlearn.set_language("fr")
    assert mxlearn.current_language() == "en"


def test_an_unknown_language_in_the_environment_is_named_and_english_spoken(monkeypatch):
    # a setting of the words must never stop a run: it is named, in both languages, once
    script = (
        "import warnings, mxlearn\n"
        "warnings.simplefilter('always')\n"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(None)\n"
        "except mxlearn.MXLearnError as e:\n"
        "    print(e)\n"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(None)\n"
        "except mxlearn.MXLearnError as e:\n"
        "    print(e)\n"
    )
    environment = dict(os.environ, MXLEARN_LANG="klingon")
    result = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("was called before the module was bound") == 2  # English
    assert result.stderr.count("MXLEARN_LANG='klingon'") == 2  # both languages, one warning
    assert "MXLEARN_LANG=zh" in result.stderr and CJK.search(result.stderr)


def test_none_gives_the_choice_back_to_the_environment(monkeypatch):
    monkeypatch.setenv("MXLEARN_LANG", "zh")
    mxlearn.set_language("en")
    assert mxlearn.current_language() == "en"
    mxlearn.set_language(None)
    assert mxlearn.current_language() == "zh"


@pytest.mark.parametrize("name", ["zh-TW", "zh_Hant", "zh-HK"])
def test_traditional_chinese_is_not_answered_in_simplified(name):
    with pytest.raises(ValueError, match="Simplified"):
        mxlearn.set_language(name)


def test_an_unknown_language_is_shown_short_in_a_notebook():
    with pytest.raises(ValueError) as refused:
        mxlearn.set_language("fr")
    shown = refused.value._render_traceback_()  # IPython's hook, as for mxlearn's errors
    assert shown[0] == "LanguageError" and any(
        "Fix: mxlearn.set_language('zh')" in s for s in shown
    )
    assert not any("Traceback" in line for line in shown)
    assert "Traceback" in refused.value._render_traceback_()[0]  # %tb: the whole of it


def test_a_missing_catalogue_is_refused_not_answered_in_english(monkeypatch, tmp_path):
    from mxlearn import language

    monkeypatch.setattr(language, "LOCALE_FOLDER", str(tmp_path))
    language._catalogue.cache_clear()
    try:
        with pytest.raises(ValueError, match="catalogue for 'zh' is missing"):
            mxlearn.set_language("zh")
        assert mxlearn.current_language() == "en"
        mxlearn.set_language(None)
        monkeypatch.setenv("MXLEARN_LANG", "zh")  # in the environment: named, English spoken
        with pytest.warns(language.LanguageWarning, match="catalogue for 'zh' is missing"):
            assert mxlearn.current_language() == "en"
    finally:
        monkeypatch.undo()
        language._catalogue.cache_clear()
