"""The Chinese notebooks read as d2l-zh does: its terms (工作节点, 小批量, 迭代周期, 检查点...),
not English words, and full-width punctuation in Chinese prose, in every Markdown cell, every
comment of their code and every Chinese string their code prints. The rules are
chinese_prose.py's, shared with the catalogue's test; a gloss in full-width parentheses after its
Chinese term is allowed ("检查点（checkpoint）")."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest
from chinese_prose import problems

CHINESE_NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks/zh").glob("*.ipynb"))
KINDS = ["markdown", "comment", "string"]
HAN = re.compile("[\u4e00-\u9fff]")
QUOTES = re.compile(r"""^[A-Za-z]*('''|\"\"\"|'|")|('''|\"\"\"|'|")$""")  # 'x', f"x", """x"""
# Python 3.12 splits an f-string into parts: its text is in FSTRING_MIDDLE
STRINGS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _code_texts(number: int, source: str, kind: str) -> list[tuple[int, str]]:
    lines = [line for line in source.split("\n") if not line.startswith("%")]  # %%magic
    texts = []
    for t in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
        if kind == "comment" and t.type == tokenize.COMMENT:
            texts.append((number, t.string))
        elif kind == "string" and t.type in STRINGS and HAN.search(t.string):
            texts.append((number, QUOTES.sub("", t.string)))
    return texts


def _texts(notebook, kind: str) -> list[tuple[int, str]]:
    """(cell number, text) of each Markdown cell, of each comment of the code cells, or of each
    of their string literals that holds Chinese (its quotes taken off)."""
    texts = []
    for number, cell in enumerate(notebook.cells):
        if kind == "markdown" and cell.cell_type == "markdown":
            texts.append((number, cell.source))
        elif kind != "markdown" and cell.cell_type == "code":
            texts += _code_texts(number, cell.source, kind)
    return texts


def _problems(notebook, kind: str) -> list[tuple[int, str]]:
    return [
        (n, said) for n, text in _texts(notebook, kind) for said in problems(text, glosses=True)
    ]


def test_there_are_seven_chinese_notebooks():
    assert len(CHINESE_NOTEBOOKS) == 7, CHINESE_NOTEBOOKS


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("path", CHINESE_NOTEBOOKS, ids=lambda p: p.name)
def test_chinese_notebook_reads_as_chinese_prose(path, kind):
    found = _problems(nbformat.read(path, as_version=4), kind)
    listed = "".join(f"\n  cell {number}: {said}" for number, said in found)
    assert found == [], f"{len(found)} to fix in the {kind}s of zh/{path.name}:{listed}"


def test_each_kind_of_text_is_read_and_code_is_not():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("每个 epoch 之后保存"),
        nbformat.v4.new_code_cell(
            "mod.bind(data_shapes=shapes)   # 先 bind 再训练\n"
            "print('迭代周期 %d, 准确率 %.3f' % (epoch, accuracy))\n"
            "print('batch, epoch')   # an English string: MXNet's words, not prose"
        ),
    ]
    found = {kind: [said for _, said in _problems(notebook, kind)] for kind in KINDS}
    assert found == {
        "markdown": ["English 'epoch' in Chinese prose"],
        "comment": ["English 'bind' in Chinese prose"],
        "string": ["half-width mark in Chinese prose: '代周期 %d, 准确率 %'"],
    }
