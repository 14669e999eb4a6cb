"""``show_network(net, data_shapes=...)``: a network's layers drawn as SVG in pure Python
(``mx.viz.plot_network`` needs Graphviz, which a student's machine rarely has), printed as a
text table or given as a DataFrame. Layer and operator names are MXNet's, never translated.
"""

from __future__ import annotations

import os
import re
import unicodedata
from xml.sax.saxutils import escape

from .atomic_write import atomic_write_bytes
from .boundary import public
from .errors import N_, InputError
from .language import say
from .network_layers import BYTES_PER_VALUE, Layer, check_symbol, given_shapes, network_layers

FONT = 12  # px; every text is monospace, so its width can be known without a font file
LINE = 16  # px between two lines of text
PAD = 8  # px inside a box
GAP = 26  # px between two boxes: room for an arrow
MARGIN = 16
LANE = 12  # px between two arrows that go round the boxes (an edge that skips layers)
COLUMNS = ("name", "op", "shape", "inputs", "params", "aux", "output_bytes", "param_bytes")
# characters XML 1.0 cannot hold at all, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class PngNotDrawn(InputError):
    says = N_(
        "view.save({path!r}): a network is drawn as SVG, without any outside program; "
        "turning it into a PNG would need an SVG renderer, which mxlearn does not "
        "install."
    )
    fix_says = N_("{call}; a browser opens it, and a notebook shows the view itself")


class NotSvg(InputError):
    says = N_("view.save({path!r}): a network view is saved as a file with the .svg extension.")
    fix_code = "{call}"


@public("mxlearn.show_network()")
def show_network(symbol, data_shapes=None, label_shapes=None, **shapes) -> NetworkView:
    """Every layer of ``symbol`` with its output shape, parameter count and memory.

    ``data_shapes`` (and ``label_shapes``, usually inferred) are ``[('data', (32, 16))]``,
    ``{'data': (32, 16)}`` or an iterator's ``provide_data``; ``data=(32, 16)`` works too.

    >>> from mxlearn import models
    >>> view = show_network(models.mlp(), data_shapes=[('data', (32, 16))])
    >>> [layer.shape for layer in view.layers][:3]
    [(32, 16), (32, 64), (32, 64)]
    >>> view.total_params  # 16*64 + 64 and 64*26 + 26
    2778
    """
    check_symbol(symbol)
    given, told_inputs = given_shapes(symbol, data_shapes, label_shapes, shapes)
    return NetworkView(network_layers(symbol, given, told_inputs), given)


class NetworkView:
    """The layers of a network for given input shapes: drawn, tabulated or printed."""

    def __init__(self, layers: list[Layer], shapes: dict):
        self.layers = list(layers)
        self.shapes = dict(shapes)  # the shapes it was worked out for, by input name

    @property
    def total_params(self) -> int:
        """Learned parameters: the sizes of a bound module's ``arg_params``, summed."""
        return sum(layer.param_count for layer in self.layers)

    @property
    def total_aux(self) -> int:
        """Auxiliary states (BatchNorm's moving averages): the sizes of ``aux_params``."""
        return sum(layer.aux_count for layer in self.layers)

    @property
    def total_param_bytes(self) -> int:
        return (self.total_params + self.total_aux) * BYTES_PER_VALUE

    @property
    def total_output_bytes(self) -> int:
        """Memory of every layer's output for one batch (what a forward pass keeps)."""
        return sum(layer.output_bytes for layer in self.layers)

    def table(self, total: bool = True):
        """A DataFrame, a row per layer and one of totals; its :data:`COLUMNS` untranslated."""
        import pandas as pd  # only this needs pandas (slow to import)

        rows = [
            (layer.name, layer.op, layer.shape, list(layer.inputs), layer.param_count)
            + (layer.aux_count, layer.output_bytes, layer.param_bytes)
            for layer in self.layers
        ]
        if total:
            rows.append(
                (say("total"), "", None, [], self.total_params, self.total_aux)
                + (self.total_output_bytes, self.total_param_bytes)
            )
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def svg(self) -> str:
        """The drawing: one box per layer, top to bottom, an arrow along each edge."""
        return draw_svg(self)

    _repr_svg_ = svg

    def save(self, path: str | os.PathLike) -> str:
        path = os.fspath(path)
        stem, suffix = os.path.splitext(path)
        call = f"view.save('{os.path.basename(stem) or 'network'}.svg')"
        if suffix.lower() == ".png":
            raise PngNotDrawn(path=path, call=call)
        if suffix.lower() != ".svg":
            raise NotSvg(path=path, call=call)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)  # as compare's save
        atomic_write_bytes(path, self.svg().encode("utf-8"))
        return path

    def total_lines(self) -> list[str]:
        params, aux = self.total_params, self.total_aux
        held = memory_text(params * BYTES_PER_VALUE)
        lines = [say("total: {count:,} parameters ({memory})", count=params, memory=held)]
        if aux:
            held = memory_text(aux * BYTES_PER_VALUE)
            text = N_("and {count:,} auxiliary states ({memory}), in aux_params")
            lines.append(say(text, count=aux, memory=held))
        output = memory_text(self.total_output_bytes)
        return [*lines, say("output memory for one batch: {memory}", memory=output)]

    def __str__(self) -> str:
        return text_table(self)

    __repr__ = __str__


def memory_text(count: int) -> str:
    """Bytes as a person reads them: 512 B, 4.3 KiB, 1.2 MiB."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024


def shape_text(layer: Layer) -> str:
    return ", ".join(str(s) for s in layer.shapes)


def columns(text: str) -> int:
    """Width of ``text`` in a terminal's columns: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def text_width(text: str, size: float = FONT) -> float:
    # a monospace column is about 0.6 em
    return columns(text) * 0.6 * size


def padded(text: str, width: int, right: bool = False) -> str:
    room = " " * max(0, width - columns(text))
    return room + text if right else text + room


def text_table(view: NetworkView) -> str:
    has_aux = view.total_aux > 0
    headings = [say("layer"), say("operator"), say("output"), say("parameters")]
    headings += [say("auxiliary")] if has_aux else []
    headings += [say("output memory"), say("parameter memory")]
    rows = []
    for layer in view.layers:
        row = [layer.name, layer.op, shape_text(layer), f"{layer.param_count:,}"]
        row += [f"{layer.aux_count:,}"] if has_aux else []
        rows.append(row + [memory_text(layer.output_bytes), memory_text(layer.param_bytes)])
    total = [say("total"), "", "", f"{view.total_params:,}"]
    total += [f"{view.total_aux:,}"] if has_aux else []
    total += [memory_text(view.total_output_bytes), memory_text(view.total_param_bytes)]
    widths = [max(columns(r[i]) for r in [headings, *rows, total]) for i in range(len(headings))]
    right = [i >= 3 for i in range(len(headings))]  # numbers line up on the right

    def line(row):
        return "  ".join(padded(t, w, r) for t, w, r in zip(row, widths, right)).rstrip()

    rule = "-" * columns(line(headings))
    lines = [line(headings), rule, *map(line, rows), rule, line(total)]
    lines.append(say("memory: float32 values; output memory is for one batch of these shapes"))
    return "\n".join(lines)


def box_lines(layer: Layer) -> list[tuple[str, str]]:
    """The text of a layer's box, each line with its style."""
    lines = [(layer.name, "name"), (layer.op, "op")]
    lines.append((say("output {shape}", shape=shape_text(layer)), "fact"))
    if layer.param_count:
        lines.append((say("parameters {count:,}", count=layer.param_count), "fact"))
    if layer.aux_count:
        lines.append((say("auxiliary states {count:,}", count=layer.aux_count), "fact"))
    return lines


def _xml(text: str) -> str:
    return escape(_NOT_XML.sub("?", text))


def _lanes(edges: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """A lane (a column right of the boxes) for each edge that skips layers, so that two
    arrows never run down the same column at the same height."""
    lane_ends: list[int] = []
    lanes = {}
    for start, end in sorted(set(edges)):
        lane = next((k for k, last in enumerate(lane_ends) if last <= start), len(lane_ends))
        lane_ends[lane : lane + 1] = [end]  # a free lane taken again, or a new one
        lanes[(start, end)] = lane
    return lanes


def _edges(layers: list[Layer]) -> list[tuple[int, int]]:
    index = {layer.name: i for i, layer in enumerate(layers)}
    return [
        (index[source], j)
        for j, layer in enumerate(layers)
        for source in layer.inputs
        if source in index
    ]


def _box_svg(layer: Layer, x: float, top: float, width: float, height: float) -> list[str]:
    kind = "input" if layer.is_input else "operator"
    details = [layer.name, layer.op, shape_text(layer)]
    details += [t for t, _ in box_lines(layer)[3:]]
    details.append(say("output memory {memory}", memory=memory_text(layer.output_bytes)))
    parts = [
        f'<g class="layer {kind}">',
        f"<title>{_xml(' | '.join(details))}</title>",
        f'<rect class="layer {kind}" x="{x:.0f}" y="{top:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" rx="5" {BOX_LOOK[kind]}/>',
    ]
    for k, (text, style) in enumerate(box_lines(layer)):
        baseline = top + PAD + (k + 1) * LINE - 4
        parts.append(
            f'<text class="{style}" x="{x + PAD:.0f}" y="{baseline:.0f}"{TEXT_LOOK[style]}>'
            f"{_xml(text)}</text>"
        )
    return parts + ["</g>"]


def _arrow(start: int, end: int, centre, right, lanes, entries, tops, bottoms) -> str:
    """An arrow straight down into the next box, or out of a box's right side, down a lane,
    into a later box's right side."""
    if end == start + 1:
        x, tip = centre, tops[end]
        path = f"M{x:.0f},{bottoms[start]:.0f} V{tip - 6:.0f}"
        head = f"{x:.0f},{tip:.0f} {x - 4:.0f},{tip - 7:.0f} {x + 4:.0f},{tip - 7:.0f}"
    else:
        column, enter = right + 10 + lanes[(start, end)] * LANE, entries[(start, end)]
        path = f"M{right:.0f},{bottoms[start] - 6:.0f} H{column:.0f} V{enter:.0f} H{right + 6:.0f}"
        tail = right + 7
        head = f"{right:.0f},{enter:.0f} {tail:.0f},{enter - 4:.0f} {tail:.0f},{enter + 4:.0f}"
    return (
        f'<g class="edge"><path d="{path}" {EDGE_LOOK}/><polygon points="{head}" fill="#555"/></g>'
    )


def _entries(lanes: dict, tops: list, bottoms: list) -> dict[tuple[int, int], float]:
    """Where each arrow that goes round enters its box: several into one box one below the
    other, the inner lane highest, so that no arrow crosses another on its way in."""
    into: dict[int, list] = {}
    for edge, lane in lanes.items():
        into.setdefault(edge[1], []).append((lane, edge))
    entries = {}
    for end, arriving in into.items():
        step = min(9.0, (bottoms[end] - tops[end] - 14) / len(arriving))
        for k, (_, edge) in enumerate(sorted(arriving)):
            entries[edge] = tops[end] + 8 + k * step
    return entries


# Presentation attributes, not a <style> sheet: a notebook puts the SVG inline in its page,
# where a sheet's rules would restyle every other SVG there (matplotlib figures too).
TEXT_LOOK = {"name": ' font-weight="bold"', "op": ' fill="#555"', "fact": ""}
BOX_LOOK = {"operator": 'fill="#eaf2fb" stroke="#4a78b0"', "input": 'fill="#f2f2f2" stroke="#888"'}
EDGE_LOOK = 'fill="none" stroke="#555" stroke-width="1.2"'


def draw_svg(view: NetworkView) -> str:
    """The SVG text of ``view``: sizes worked out from the text each box holds."""
    boxes = [box_lines(layer) for layer in view.layers]
    totals = view.total_lines()
    box_width = PAD * 3 + max(text_width(t) for lines in boxes for t, _ in lines)
    tops, bottoms, y = [], [], MARGIN
    for lines in boxes:
        tops.append(y)
        bottoms.append(y + len(lines) * LINE + PAD * 2 - 4)
        y = bottoms[-1] + GAP
    edges = _edges(view.layers)
    lanes = _lanes([(s, e) for s, e in edges if e != s + 1])
    used = max(lanes.values(), default=-1) + 1
    width = max(
        MARGIN * 2 + box_width + (used * LANE + 10 if used else 0),
        MARGIN * 2 + max(text_width(t) for t in totals),
    )
    height = y - GAP + LINE + len(totals) * LINE + MARGIN
    right, centre = MARGIN + box_width, MARGIN + box_width / 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="{FONT}" '
        'fill="#222">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    entries = _entries(lanes, tops, bottoms)
    parts += [_arrow(s, e, centre, right, lanes, entries, tops, bottoms) for s, e in edges]
    for layer, top, bottom in zip(view.layers, tops, bottoms):
        parts += _box_svg(layer, MARGIN, top, box_width, bottom - top)
    rule = y - GAP + LINE / 2
    parts.append(
        f'<line class="rule" x1="{MARGIN}" y1="{rule:.0f}" x2="{width - MARGIN:.0f}" '
        f'y2="{rule:.0f}" stroke="#bbb"/>'
    )
    for k, text in enumerate(totals):
        baseline = rule + (k + 1) * LINE
        parts.append(
            f'<text class="total" x="{MARGIN}" y="{baseline:.0f}" font-weight="bold">'
            f"{_xml(text)}</text>"
        )
    return "\n".join(parts + ["</svg>"])
