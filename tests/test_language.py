"""mxlearn speaks Chinese when asked: every message has a Chinese text, its code unchanged.

The catalogue tests extract every template from the package with Babel, as ``make translations``
does (the same keywords: the Makefile's ``BABEL_KEYWORDS``): a template added without a Chinese
text, or with a fuzzy one, fails here, listed, until a translator writes it in ``mxlearn.po``.
An entry no code says any more fails too (``make translations`` drops it; ``#~`` obsolete
entries are never written, so only live ones are read). They also walk every string literal
that reads as English words outside a template: a message written as a bare string fails.
"""

from __future__ import annotations

import ast
import contextlib
import gettext
import io
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.pofile import read_po

import mxlearn
from mxlearn import mx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mxlearn"
CATALOGUE_FILE = PACKAGE / "locale" / "zh" / "LC_MESSAGES" / "mxlearn.po"
COMPILED = CATALOGUE_FILE.with_suffix(".mo")
MAKE_TRANSLATIONS = (
    f"run `make translations`, then write their Chinese in {CATALOGUE_FILE.relative_to(ROOT)}"
)


def _makefile_keywords() -> dict:
    """The keywords ``make translations`` gives ``pybabel extract``, parsed as Babel does."""
    line = re.search(r"^BABEL_KEYWORDS\s*:?=(.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert line, "the Makefile's BABEL_KEYWORDS line, which make translations extracts with"
    return parse_keywords(line.group(1).split())


KEYWORDS = _makefile_keywords()
sys.path.insert(0, str(ROOT))  # babel.cfg's extractor of the exercises is tools/, as in make
with open(ROOT / "babel.cfg") as _cfg:
    MAPPING = parse_mapping_cfg(_cfg)  # (method_map, options_map), as make translations reads


def _extracted() -> tuple[dict[str, tuple[str | tuple[str, str], list]], list[str]]:
    """Each template Babel extracts, by its catalogue key (the singular): (msgid, places); and
    the files Babel read."""
    found: dict[str, tuple[str | tuple[str, str], list]] = {}
    read: list[str] = []

    def reading(filename, method, options):
        read.append("mxlearn/" + filename.replace(os.sep, "/"))

    # Babel writes a "Skipping f-string" warning for each f-string given as a field's value
    # (scale=f"{s:g}"): not a template, so not a problem; a template that is one fails below.
    with contextlib.redirect_stderr(io.StringIO()):
        extracted = list(
            extract_from_dir(
                PACKAGE, *MAPPING, keywords=KEYWORDS, comment_tags=(), callback=reading
            )
        )
    for filename, line, msgid, _comments, _context in extracted:
        key = msgid[0] if isinstance(msgid, tuple) else msgid
        _, places = found.setdefault(key, (msgid, []))
        if isinstance(msgid, tuple):  # with a plural somewhere, the entry has one (as in Babel)
            found[key] = (msgid, places)
        places.append(("mxlearn/" + filename.replace(os.sep, "/"), line))
    return found, read


FOUND, READ = _extracted()
with open(CATALOGUE_FILE, "rb") as _f:
    PO = read_po(_f, domain="mxlearn")
CATALOGUE = {(m.id[0] if isinstance(m.id, tuple) else m.id): m for m in PO if m.id}
FILES = sorted({place[0] for _, places in FOUND.values() for place in places})
CJK = re.compile(r"[\u4e00-\u9fff]")
# A call as a student would copy it: name(...) with no space before the parenthesis (but an
# English plural, "GPU(s)", is not a call).
CODE_CALL = re.compile(r"[A-Za-z_][\w.]*\((?!s\))[^()]*\)")
# English words: two words of letters side by side, not part of a name or a path.
PROSE = re.compile(r"(?<![\w.=/'\"-])[A-Za-z][a-z]+ [a-z]{2,}(?![\w(=/])")

# Literals that read as English but are never shown as mxlearn's words: (file, start) -> why.
NOT_SHOWN = {
    ("mxlearn/errors.py", "mxlearn's catalogue for"): "said in English: no catalogue to say it",
    ("mxlearn/errors.py", "make translations (in a checkout)"): "the same: no catalogue",
    (
        "mxlearn/errors.py",
        "{} declares no 'says'",
    ): "a mistake in mxlearn's own code, for its authors",
    ("mxlearn/language.py", "{variable}={value!r} is not"): "said in both languages at once",
    ("mxlearn/language.py", "module {} has no attribute"): "Python's own AttributeError text",
    ("mxlearn/boundary.py", "Error in operator"): "found in MXNet's error text",
    ("mxlearn/boundary.py", "{}: rules for parameters"): "mxlearn's own mistake, at its import",
    ("mxlearn/boundary.py", "Stack trace"): "found in MXNet's error text",
    ("mxlearn/boundary.py", "Traceback (most recent"): "found in MXNet's error text",
    ("mxlearn/boundary.py", "Check failed"): "found in MXNet's error text",
    ("mxlearn/rules.py", " at 0x"): "found in a repr",
    ("mxlearn/guards/arguments.py", "Error in operator"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "should be 4D"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "uniform type"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "data type"): "found in MXNet's error text",
    ("mxlearn/guards/arguments.py", "Failed to allocate"): "found in MXNet's error text",
    ("mxlearn/module/high_level.py", "Train the module: MXNet's"): "fit's docstring",
    ("mxlearn/module/module.py", "Data provided by label_shapes"): "matches MXNet's warning",
    ("mxlearn/module/module.py", "Optimizer created manually"): "matches MXNet's warning",
    ("mxlearn/devices.py", "model name"): "a key of /proc/cpuinfo",
    ("mxlearn/_compat.py", "(lib["): "found in the dynamic loader's error text",
    ("mxlearn/nvidia.py", "=> not found"): "found in ldd's output",
    ("mxlearn/distributed.py", "import mxlearn"): "code a launched process runs",
    ("mxlearn/distributed.py", "python -m mxlearn launch"): "a command, the same in both languages",
    ("mxlearn/commands/student_edition.py", "python -m mxlearn course"): "a command, the same",
    ("mxlearn/commands/grade_inputs.py", "python -m mxlearn grade"): "a command, the same",
    ("mxlearn/commands/grade_inputs.py", "mxlearn grade --out"): "the option a message names",
    ("mxlearn/commands/grading_run.py", "{} -m pip install"): "a command, the same",
    ("mxlearn/commands/exercise_cells.py", "python -m mxlearn mark"): "a command, the same",
    ("mxlearn/commands/grade_exercises.py", "mxlearn seal: builtins"): "a marker the grader reads",
    ("mxlearn/commands/grade_exercises.py", "[n for n in {} if"): "code a check cell runs",
    ("mxlearn/commands/grade_exercises.py", "{} if _mxlearn_seal"): "code a check cell runs",
    (
        "mxlearn/commands/exercise_cells.py",
        "# (?:Check of exercise",
    ): "the first line of a check cell, in either edition, matched",
    (
        "mxlearn/commands/exercise_cells.py",
        "#\\s*(?:check of exercise",
    ): "a first line nearly an exercise's, matched",
    (
        "mxlearn/run_checks.py",
        "mod.fit(train_iter, eval_data",
    ): "a call, the same in both languages",
    ("mxlearn/experiments/comparison.py", "lower center"): "a matplotlib setting",
    ("mxlearn/experiments/rate_finder_plot.py", "outside lower center"): "a matplotlib setting",
    ("mxlearn/live/figure.py", "lower center"): "a matplotlib setting",
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


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _template_positions(spec) -> list[int]:
    """The arguments (from 0) a keyword's Babel spec reads as the template and its plural."""
    if spec is None:
        return [0]
    if isinstance(spec, dict):  # one spec per number of arguments
        return sorted({i for one in spec.values() for i in _template_positions(one)})
    return [number - 1 for number in spec if isinstance(number, int)]


def _keyword_calls(tree: ast.AST):
    """Each call of a keyword (say, say_n, N_, ...) with its template arguments (None where
    the call has none) and whether it sits inside an f-string."""
    in_fstring = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for inner in ast.walk(node)
        if inner is not node
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node.func) in KEYWORDS:
            arguments = []
            for position in _template_positions(KEYWORDS[_called_name(node.func)]):
                before = node.args[: position + 1]
                if any(isinstance(a, ast.Starred) for a in before):
                    break  # say_n(*kind.says, n): templates marked with Nn_ where declared
                arguments.append(node.args[position] if position < len(node.args) else None)
            yield node, arguments, id(node) in in_fstring


def _template_problems(path: str) -> list[str]:
    try:
        tree = ast.parse((ROOT / path).read_text(), filename=path)
    except SyntaxError as error:
        return [f"{path}:{error.lineno}: cannot be read ({error.msg}), so neither can Babel"]
    problems = []
    for call, arguments, in_fstring in _keyword_calls(tree):
        said = f"{path}:{call.lineno}: {_called_name(call.func)}()"
        for argument in arguments:
            if argument is None:
                problems.append(f"{said} is given no template")
            elif isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                places = FOUND.get(argument.value, (None, []))[1]
                if not places:  # a plural form: extracted with its singular, under that key
                    places = [
                        place
                        for msgid, known in FOUND.values()
                        if isinstance(msgid, tuple) and argument.value in msgid
                        for place in known
                    ]
                if path not in {p for p, _ in places}:
                    why = (
                        ", inside an f-string (Babel reads none before Python 3.12): say it "
                        "into a name first"
                        if in_fstring
                        else ""
                    )
                    problems.append(f"{said}: Babel does not extract {argument.value!r}{why}")
            elif isinstance(argument, ast.Call) and _called_name(argument.func) in KEYWORDS:
                continue  # say(N_("...")): the inner call is checked as a call of its own
            elif not isinstance(argument, (ast.Name, ast.Attribute, ast.Subscript)):
                # a name holds a template marked with N_ where it is declared (a kind's says)
                problems.append(
                    f"{said} is given {ast.unparse(argument)[:60]}: a template is one literal "
                    "string (an f-string, a + or a .format() has no catalogue entry)"
                )
    return problems


PY_FILES = sorted(
    p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
)


def test_babel_reads_every_module():
    # Babel passes over folders named _x or .x: their templates would never reach the catalogue
    assert sorted(set(PY_FILES) - set(READ)) == []


def test_every_template_is_one_literal_that_babel_extracts():
    problems = [problem for path in PY_FILES for problem in _template_problems(path)]
    assert problems == [], "\n".join(problems)


def _chinese(entry, msgid) -> tuple[str, ...] | None:
    """The Chinese forms of a template (one per plural form the catalogue declares), or None:
    no entry, an entry for another msgid (make translations not run), empty, or fuzzy (a guess
    not yet checked by a translator, which mxlearn.mo leaves out)."""
    if entry is None or entry.fuzzy or entry.id != msgid:
        return None
    if isinstance(msgid, tuple):
        forms = tuple(entry.string)
        if len(forms) != PO.num_plurals:
            return None
    else:
        forms = (entry.string,)
    return forms if all(forms) else None


@pytest.mark.parametrize("path", FILES)
def test_every_message_has_a_chinese_text_with_the_same_code(path):
    missing, wrong = [], []
    for key, (msgid, places) in FOUND.items():
        if path not in {p for p, _ in places}:
            continue
        forms = _chinese(CATALOGUE.get(key), msgid)
        if forms is None:
            missing.append(msgid)
            continue
        english = list(msgid) if isinstance(msgid, tuple) else [msgid]
        fields = set().union(*map(_fields, english))  # one Chinese form says every count
        calls = {call for text in english for call in CODE_CALL.findall(text)}
        prose = any(CJK.search(_filled(text)) is None and PROSE.search(text) for text in english)
        for chinese in forms:
            if _fields(chinese) != fields:
                wrong.append((msgid, "fields differ", sorted(_fields(chinese))))
            elif not CJK.search(chinese) and prose:
                wrong.append((msgid, "no Chinese in the text", chinese))
            else:
                _filled(chinese), [_filled(text) for text in english]  # all must format
                lost = sorted(call for call in calls if call not in chinese)
                if lost:
                    wrong.append((msgid, "code changed", lost))
    listed = "".join(f"\n  {msgid!r}" for msgid in missing)
    assert missing == [], (
        f"{len(missing)} templates of {path} have no Chinese text (or a fuzzy one): "
        f"{MAKE_TRANSLATIONS}:{listed}"
    )
    assert wrong == []


def test_the_catalogue_holds_only_messages_the_code_says():
    unused = [entry.id for key, entry in CATALOGUE.items() if key not in FOUND]
    changed = [
        (entry.id, FOUND[key][0])  # a plural added or changed since make translations ran
        for key, entry in CATALOGUE.items()
        if key in FOUND and entry.id != FOUND[key][0]
    ]
    listed = "".join(f"\n  {msgid!r}" for msgid in unused)
    assert unused == [], f"no code says these any more: run `make translations`:{listed}"
    assert changed == [], "run `make translations`"


def test_the_compiled_catalogue_is_the_written_one():
    assert not PO.fuzzy, "pybabel compile leaves out a catalogue whose header is fuzzy"
    with open(COMPILED, "rb") as f:
        compiled = gettext.GNUTranslations(f)
    for entry in CATALOGUE.values():
        if isinstance(entry.id, tuple):
            singular, plural = entry.id
            for count in (1, 2, 5):
                shown = compiled.ngettext(singular, plural, count)
                index = compiled.plural(count)
                if entry.fuzzy or not entry.string[index]:
                    assert shown == (singular if count == 1 else plural), entry.id
                else:
                    assert shown == entry.string[index], entry.id
        elif entry.fuzzy or not entry.string:
            assert compiled.gettext(entry.id) == entry.id  # English, not a guess
        else:
            assert compiled.gettext(entry.id) == entry.string, entry.id


def _english_literals(path: Path):
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "fix_code" for t in node.targets
        ):
            skipped.add(id(node.value))  # an error kind's fix that is code: students copy it
    for _, arguments, _ in _keyword_calls(tree):
        skipped.update(id(a) for a in arguments if a is not None)
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


@pytest.mark.parametrize("path", PY_FILES)
def test_no_english_words_outside_say(path):
    bare = [
        (line, text[:80])
        for line, text in _english_literals(ROOT / path)
        if not any(path == f and text.startswith(s) for f, s in NOT_SHOWN)
    ]
    listed = "".join(f"\n  {line}: {text!r}" for line, text in bare)
    assert bare == [], f"wrap these in say(...) and give them a Chinese text:{listed}"


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


# A batch, so what forward refuses is the unbound module (its fix: mod.bind(...)).
MAKE_BATCH = "BATCH = mxlearn.mx.io.DataBatch([mxlearn.mx.nd.zeros((2, 16))])\n"


def test_the_environment_variable_chooses_the_language_of_a_new_process():
    script = (
        "import mxlearn\n"
        f"{MAKE_BATCH}"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(BATCH)\n"
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
        f"{MAKE_BATCH}"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(BATCH)\n"
        "except mxlearn.MXLearnError as e:\n"
        "    print(e)\n"
        "try:\n"
        "    mxlearn.Module(mxlearn.models.mlp()).forward(BATCH)\n"
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
    assert isinstance(refused.value, mxlearn.errors.LanguageError)
    assert isinstance(refused.value, ValueError)
    shown = refused.value._render_traceback_()  # IPython's hook, as for mxlearn's errors
    assert shown[0].startswith("NotALanguage") and any(
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


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_count_chooses_the_plural_the_language_uses(language):
    from mxlearn.checkpoint.resume_state import _epochs_done

    mxlearn.set_language(language)
    try:
        one, three = _epochs_done(1), _epochs_done(3)
    finally:
        mxlearn.set_language("en")
    assert "1" in one and "3" in three
    if language == "en":
        assert (one, three) == ("1 epoch is done", "3 epochs are done")
    else:
        assert CJK.search(one) and CJK.search(three)
