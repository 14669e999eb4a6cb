"""What a reader of d2l-zh stumbles on in mxlearn's Chinese: English words where Chinese has a
term, and half-width punctuation in Chinese prose. Shared by the tests of the catalogue's
texts and of the notebooks' Markdown: :func:`problems` reads one text.

Code is left alone: text in `backticks`, fenced blocks, quoted strings, names with dots,
underscores, calls or indexes, keyword arguments, options, paths, format fields ({name}, %s),
URLs, and tuples ("(32, 16)"). What is left is prose.
"""

from __future__ import annotations

import re

# The English words with a d2l-zh 2.0 term (the term a Chinese text says instead)
TERMS = {
    "worker": "工作节点",
    "server": "服务器",
    "scheduler": "调度器",
    "bind": "绑定",
    "batch": "批量 / 小批量",
    "epoch": "迭代周期",
    "checkpoint": "检查点",
    "overfitting": "过拟合",
    "accuracy": "准确率",
}
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN = f"[{CJK}]"
FULL_WIDTH = {
    ",": "，",
    ".": "。",
    ":": "：",
    ";": "；",
    "?": "？",
    "!": "！",
    "(": "（",
    ")": "）",
}
BLANK = "\u2592"  # what code becomes: neither a letter, nor Chinese, nor punctuation

# Python's \w and \b count Chinese characters as letters: names are spelt out in ASCII
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
ARGUMENTS = r"\((?:[^()\n]|\([^()\n]*\))*\)"  # a call's, one call deep inside
NOT_IN_NAME = r"(?<![A-Za-z0-9_])"
# Code, as the texts write it: each is blanked out (same length, so positions still hold)
CODE = [
    re.compile(r"```.*?(?:```|\Z)", re.S),  # a fenced block
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"https?://\S+|www\.\S+"),  # a URL
    re.compile(r"\{[^{}\s]*\}|%(?:\(\w+\))?[-+ #0]*\d*(?:\.\d+)?[sdrfgexXi%]"),  # fields
    re.compile(r"'[^'\n]*'|\"[^\"\n]*\""),  # a quoted string: a name, a key, a file
    re.compile(f"{NOT_IN_NAME}{NAME}(?:\\.{NAME})+(?:{ARGUMENTS})?"),  # dotted: mx.nd, a.py
    re.compile(f"{NOT_IN_NAME}{NAME}(?:{ARGUMENTS}|\\[[^\\]\\n]*\\])"),  # a call, an index
    re.compile(  # a keyword argument, its value up to a mark that ends it
        f"{NOT_IN_NAME}{NAME}=(?:[^\\s，。；：、（）()\\[\\]]|\\[[^\\]\\n]*\\]|{ARGUMENTS})*(?<![,.:;])"
    ),
    re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]*_[A-Za-z0-9_]*|--?[A-Za-z][A-Za-z0-9-]*)"),
    re.compile(r"(?<![A-Za-z0-9])(?:[\w.-]+/)+[\w.-]*", re.A),  # a path: runs/checkpoints
]
WORD = re.compile(f"(?<![A-Za-z0-9_-])({'|'.join(TERMS)})(?:es|s|ing|ed)?(?![A-Za-z0-9_-])", re.I)
# A gloss: an English word in full-width parentheses right after its Chinese term
GLOSS = re.compile(f"(?<={HAN})（[A-Za-z][A-Za-z -]*）")
# Half-width marks in Chinese prose: one after a Chinese character (before a Chinese one, a
# space and one, or the end of a line); an opening parenthesis before one; a comma, colon or
# semicolon that leads into Chinese whatever it follows (a name, a field, a closing quote)
AFTER_HAN = re.compile(f"(?<={HAN})[,.:;?!)](?= ?{HAN}| *$)", re.M)
OPENS_HAN = re.compile(f"\\((?={HAN})")
INTO_HAN = re.compile(f"(?<!\\s)[,:;](?= ?{HAN})")
# ...and a pair of parentheses beside Chinese or holding it, unless code's: a tuple, a formula
PARENTHESES = re.compile(r"\(((?:[^()\n]|\([^()\n]*\))*)\)")
ITEM = f"[A-Za-z0-9_.'\"()\\[\\]{BLANK} -]+"
TUPLE = re.compile(f"{ITEM}(?:, ?{ITEM})+,?|{ITEM},")
FORMULA = re.compile(
    f"[A-Za-z0-9_. {BLANK}]*[-+*/=<>%][A-Za-z0-9_. {BLANK}+*/=<>%-]*"
)  # (X - mean)


def code_blanked(text: str) -> str:
    """``text`` with each piece of code replaced by as many :data:`BLANK`: the length (and so
    each position) kept, and no letter, Chinese or punctuation where code was."""
    for pattern in CODE:
        text = pattern.sub(lambda m: BLANK * len(m.group(0)), text)
    return text


def code_names(text: str) -> set[str]:
    """The names the code of ``text`` uses: 'batch' in "mod.forward(batch)" is a variable, so
    the text may name it alone too ("for batch in train_iter")."""
    blanked = code_blanked(text)
    code = "".join(c if b == BLANK else " " for c, b in zip(text, blanked))
    return set(re.findall(NAME, code))


def english_terms(text: str, *, glosses: bool = False) -> list[str]:
    """The words of :data:`TERMS` in the prose of ``text`` ("batch", "Epochs"), but for a name
    its code uses; ``glosses``: allow one in full-width parentheses right after its Chinese
    term ("检查点（checkpoint）")."""
    prose = code_blanked(text)
    if glosses:
        prose = GLOSS.sub(lambda m: BLANK * len(m.group(0)), prose)
    names = code_names(text)
    return [m.group(0) for m in WORD.finditer(prose) if m.group(0) not in names]


def _beside_han(prose: str, start: int, end: int) -> bool:
    """Whether prose[start:end] has Chinese beside it: a character, or a full-width mark."""
    before, after = prose[max(0, start - 2) : start], prose[end : end + 2]
    chinese = f"(?:{HAN}|[，。；：、！？（）])"
    return bool(re.search(f"{chinese} ?$", before) or re.match(f" ?{chinese}", after))


def half_width_parentheses(text: str) -> list[tuple[int, int]]:
    """(start, end) of each half-width pair of parentheses in Chinese prose: beside a Chinese
    character, or holding one; not a tuple ("(32, 16)", "(X, y)"), which is code."""
    prose = code_blanked(text)
    found = []
    for m in PARENTHESES.finditer(prose):
        inside = m.group(1)
        if TUPLE.fullmatch(inside) or FORMULA.fullmatch(inside):
            continue
        if m.start() and prose[m.start() - 1] == BLANK:  # "{called}(...)": a call
            continue
        if re.search(HAN, inside) or _beside_han(prose, m.start(), m.end()):
            found.append((m.start(), m.end()))
    return found


def half_width_positions(text: str) -> list[int]:
    """Where ``text`` has a half-width mark in Chinese prose."""
    prose = code_blanked(text)
    found = set()
    for pattern in (AFTER_HAN, OPENS_HAN, INTO_HAN):
        found.update(m.start() for m in pattern.finditer(prose))
    for start, end in half_width_parentheses(text):
        found.update((start, end - 1))
    return sorted(found)


def half_width_marks(text: str) -> list[str]:
    """Each half-width mark in Chinese prose, with a few characters around it to find it by."""
    return [text[max(0, i - 6) : i + 7] for i in half_width_positions(text)]


def problems(text: str, *, glosses: bool = False) -> list[str]:
    """What to fix in ``text``: each English term and each half-width mark, said."""
    said = [f"English {word!r} in Chinese prose" for word in english_terms(text, glosses=glosses)]
    return said + [f"half-width mark in Chinese prose: {near!r}" for near in half_width_marks(text)]
