"""Every notebook runs top to bottom, none is committed with outputs, and the course reads as one:
each English notebook has its Chinese twin with the very same code."""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").rglob("*.ipynb"))
NOTEBOOKS = [p for p in NOTEBOOKS if ".ipynb_checkpoints" not in p.parts]
ROOT = Path(__file__).resolve().parents[1] / "notebooks"
ENGLISH = sorted(ROOT.glob("*.ipynb"))
SECTIONS = {  # every notebook opens with what it teaches and ends with a recap and exercises
    "en": ["**What you will learn**", "## Common mistakes", "## Recap", "## Exercises"],
    "zh": ["**你将学到**", "## 常见错误", "## 小结", "## 练习"],
}
ENGLISH_MESSAGES = "mxlearn.set_language('en')"
CHINESE_MESSAGES = "mxlearn.set_language('zh')"
ANSWER_MARKERS = {"### BEGIN SOLUTION", "### END SOLUTION"}


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _cells(path: Path, kind: str) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == kind]


def _tokens(code: str) -> list:
    return list(tokenize.generate_tokens(io.StringIO(code).readline))


def _comments(code: str) -> list[str]:
    return [t.string for t in _tokens(code) if t.type == tokenize.COMMENT]


def _normalised(code: str) -> list[tuple[int, str]]:
    """The code's tokens without comments and line breaks inside brackets, each string literal
    (an f-string too, which Python 3.12 splits into parts) as one STRING token. IPython's
    %%magic lines are kept as they are."""
    lines = code.split("\n")
    magic = [(0, line) for line in lines if line.startswith("%")]
    body = "\n".join(line for line in lines if not line.startswith("%"))
    tokens, fstring, depth = [], [], 0
    for t in _tokens(body):
        kind = tokenize.tok_name[t.type]
        depth += kind == "FSTRING_START"
        if depth:
            fstring.append(t.string)
            depth -= kind == "FSTRING_END"
            if not depth:
                tokens.append((tokenize.STRING, "".join(fstring)))
                fstring = []
        elif t.type not in (tokenize.COMMENT, tokenize.NL):
            tokens.append((t.type, t.string))
    return magic + tokens


def _same_code(english: list, chinese: list) -> bool:
    """The same tokens, but for string literals the Chinese edition says in Chinese."""
    return len(english) == len(chinese) and all(
        en == zh or (en[0] == zh[0] == tokenize.STRING and _chinese(zh[1]))
        for en, zh in zip(english, chinese)
    )


def _chinese(text: str) -> bool:
    """Chinese characters, or the full-width punctuation Chinese is written with."""
    return any(
        "\u4e00" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"
        for ch in text
    )


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_name)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("path", ENGLISH, ids=_name)
def test_the_chinese_edition_has_the_same_code_and_chinese_prose(path):
    twin = ROOT / "zh" / path.name
    assert twin.exists(), f"notebooks/zh/{path.name} is missing"
    # identical cell for cell, apart from the comments (translated in the Chinese edition) and
    # the language each edition asks mxlearn to speak, in its first code cell
    # (a string literal may differ when the Chinese edition says it in Chinese)
    english_cells, chinese_cells = _cells(path, "code"), _cells(twin, "code")
    assert ENGLISH_MESSAGES in english_cells[0] and CHINESE_MESSAGES in chinese_cells[0]
    chinese_cells[0] = chinese_cells[0].replace(CHINESE_MESSAGES, ENGLISH_MESSAGES)
    english = [_normalised(c) for c in english_cells]
    chinese = [_normalised(c) for c in chinese_cells]
    for number, (en, zh) in enumerate(zip(english, chinese)):
        assert _same_code(en, zh), f"code cell {number} differs: {english_cells[number][:80]!r}"
    assert len(chinese) == len(english)
    for code in _cells(twin, "code"):
        for comment in _comments(code):
            if comment.strip() in ANSWER_MARKERS:  # nbgrader's, the same in every language
                continue
            assert any("\u4e00" <= ch <= "\u9fff" for ch in comment), comment
    prose = _cells(twin, "markdown")
    assert len(prose) == len(_cells(path, "markdown"))
    for text in prose:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in text), text[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_name)
def test_each_notebook_teaches_then_recaps_with_exercises_and_checks(path):
    text = "\n".join(_cells(path, "markdown"))
    for heading in SECTIONS["zh" if path.parent.name == "zh" else "en"]:
        assert heading in text, f"{_name(path)} has no {heading!r}"
    code = "\n".join(_cells(path, "code"))
    assert "mxlearn.checks." in code and "auto_context()" in code  # checked, and says its device
    if "letter_" in code:  # the UCI letters: credited where they are used
        assert "UCI Machine Learning Repository" in text and "CC BY 4.0" in text


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    # ipykernel forwards what MXNet's C++ code writes to fd 2 (its log lines) into the notebook,
    # as a student sees it, but not in a kernel that inherits pytest's marker
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    nb = nbformat.read(path, as_version=4)
    # run in tmp_path, so whatever the notebook writes (checkpoints) lands there
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, errors[0]["evalue"]
    # what a notebook writes (checkpoints, scripts, plots) goes under runs/, which git ignores
    own = {"runs", "cache", "jupyter-runtime", "ipython", "matplotlib"}  # conftest's folders
    written = [p.name for p in tmp_path.iterdir() if p.name not in own]
    assert not written, written
    _check_outputs(path, nb, tmp_path)


# What a cell of each notebook must show: the MXNet behaviour it corrects a claim about, asserted
# on the executed output (numbers and MXNet's own words, the same in both editions).
SHOWN = {
    "02_fit.ipynb": ["eval_end_callback"],  # MXNet's callback, after validation: its value
    "03_predict_and_score.ipynb": ["MXNet", "4032", "4000"],  # plain MXNet counts the padding
    "05_variable_shapes.ipynb": ["10240", "16384", "25600", "Need to re-allocate"],  # totals
    "06_devices_and_distributed.ipynb": ["kv.rank", "0.015625", "is not normalized"],
}
MXNET_EPOCH_LINE = re.compile(r"Epoch\[\d+\] (Train-|Validation-|Time cost)")
SOURCE_LINE = re.compile(r"\.py:\d+")  # a warning's file and line


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
        parts.append(output.get("evalue", ""))
    return "".join(parts)


def _check_outputs(path: Path, nb, folder: Path) -> None:
    """MXNet's epoch log only in the cells that teach it (tagged mxnet-log), no warning's source
    line, no absolute path of the machine; the cells that show a corrected claim show it."""
    where = {str(folder), str(ROOT.parent), sys.prefix, "/tmp/", "/home/", "/root/"}
    for number, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        text = _text(cell)
        if "mxnet-log" not in cell.metadata.get("tags", []):
            assert not MXNET_EPOCH_LINE.search(text), (number, text[:300])
        assert not SOURCE_LINE.search(text), (number, SOURCE_LINE.search(text).group())
        assert not [w for w in where if w in text], (number, text[:300])
    shown = "".join(_text(c) for c in nb.cells)
    for needle in SHOWN.get(path.name, []):
        assert needle in shown, needle


def _run_cell(code: str) -> list:
    """The outputs of one cell run in a fresh kernel, after mxlearn and mx are imported."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import mxlearn\nfrom mxlearn import mx\n" + code)]
    )
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    return nb.cells[0].outputs


def _stream_text(outputs: list) -> str:
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


@pytest.mark.slow
def test_fit_shows_epochs_in_a_fresh_kernel_without_logging_setup():
    text = _stream_text(
        _run_cell(
            "X, y = mxlearn.datasets.synthetic_classification(num_samples=64)\n"
            "it = mx.io.NDArrayIter(X, y, 32)\n"
            "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(it, eval_data=it, num_epoch=2)"
        )
    )
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[1] Validation-accuracy=" in text


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["widget", "display"])
def test_live_plot_leaves_a_final_png_in_the_notebook(backend):
    """In place updates end with the final figure as a PNG in the cell's output, so a saved or
    exported notebook shows the curves without a live kernel."""
    outputs = _run_cell(
        "X, y = mxlearn.datasets.synthetic_classification(num_samples=256)\n"
        "it = mx.io.NDArrayIter(X, y, 32)\n"
        f"live = mxlearn.LivePlot(backend={backend!r})\n"
        "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(it, num_epoch=3, live=live)"
    )
    bundles = [o.get("data", {}) for o in outputs if o.output_type == "display_data"]
    pngs = [b for b in bundles if "image/png" in b]
    assert len(pngs) == 1, [list(b) for b in bundles]
    if backend == "widget":
        assert "application/vnd.jupyter.widget-view+json" in pngs[0]
    assert not any("image/jpeg" in b for b in bundles)  # live frames were replaced in place


@pytest.mark.slow
@pytest.mark.parametrize("given", ["live=live", "callbacks=[live]"])
def test_a_live_plot_carries_the_numbers_without_mxnets_epoch_lines(given):
    text = _stream_text(
        _run_cell(
            "X, y = mxlearn.datasets.synthetic_classification(num_samples=64)\n"
            "it = mx.io.NDArrayIter(X, y, 32)\n"
            "live = mxlearn.LivePlot(backend='console', png_path=None)\n"
            "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(\n"
            f"    it, eval_data=it, num_epoch=3, {given})"
        )
    )
    assert "Train-accuracy=" not in text and "Time cost" not in text, text  # MXNet's log
    epochs = [line for line in text.splitlines() if line.startswith("Epoch[")]
    assert len(epochs) == 3, text  # the plot's one line per epoch


@pytest.mark.slow
def test_a_live_plot_in_a_notebook_shows_what_the_curves_show_under_it():
    outputs = _run_cell(
        "X, y = mxlearn.datasets.synthetic_classification(num_samples=512)\n"
        "it = mx.io.NDArrayIter(X, y, 32)\n"
        "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(\n"
        "    it, eval_data=it, num_epoch=3, optimizer_params={'learning_rate': 1e-6}, live=True)"
    )
    bundles = [o.get("data", {}) for o in outputs if o.output_type == "display_data"]
    texts = [b["text/plain"] for b in bundles if list(b) == ["text/plain"]]
    assert any(t.startswith("What the curves show:") and "Not learning" in t for t in texts)
    widget = [i for i, b in enumerate(bundles) if "application/vnd.jupyter.widget-view+json" in b]
    notes = [i for i, b in enumerate(bundles) if b.get("text/plain", "").startswith("What")]
    assert widget and notes and widget[0] < notes[0]  # under the plot
