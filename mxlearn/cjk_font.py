"""A font that draws Chinese, when the machine has one: plots speak Chinese only then.

Matplotlib's default font (DejaVu Sans) has no Chinese glyphs: a Chinese title in it is a row
of empty boxes, worse than English. So a figure's words follow ``set_language('zh')`` only when
a font with the glyphs is found (any font that draws :data:`SAMPLE`; the tests use Debian's
``fonts-wqy-microhei``). Matplotlib keeps its font list in a cache that does not see fonts installed after it
was written, so the system's font files are searched too, and a font found there is added.
"""

from __future__ import annotations

import functools

# Characters of the plot's own Chinese words: a font must draw every one of them.
SAMPLE = "迭代周期训练验证小批量已完成恢复"


def find_cjk_font(fonts) -> str | None:
    """The family name of the first of ``fonts`` (matplotlib FontEntry objects) that draws
    :data:`SAMPLE`, or None."""
    for entry in fonts:
        if _draws_sample(entry.fname):
            return entry.name
    return None


@functools.cache
def cjk_font_name() -> str | None:
    """The family of a font matplotlib can draw Chinese with, else None (looked up once)."""
    from matplotlib import font_manager

    known = find_cjk_font(font_manager.fontManager.ttflist)
    if known:
        return known
    listed = {entry.fname for entry in font_manager.fontManager.ttflist}
    for path in sorted(font_manager.findSystemFonts()):
        if path not in listed and _draws_sample(path):
            font_manager.fontManager.addfont(path)  # installed after matplotlib's cache
            return font_manager.FontProperties(fname=path).get_name()
    return None


def _draws_sample(path: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        font = FT2Font(path)
    except (OSError, RuntimeError, ValueError):  # a font file FreeType cannot read
        return False
    return all(font.get_char_index(ord(character)) for character in SAMPLE)
