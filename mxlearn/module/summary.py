"""A module's summary: what it is bound to, its parameters, and which step comes next.

The Module gathers the facts (:class:`ModuleFacts`); this file only lays them out, as text for
``repr`` and as an HTML table for Jupyter.
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..guards.arguments import shapes_text
from ..guards.lifecycle import stage_words
from ..language import say


@dataclass
class ModuleFacts:
    kind: str  # the class name, e.g. 'Module'
    state: str  # created, loaded, bound, initialized or ready
    contexts: list
    data_names: list
    label_names: list
    param_names: list
    next_call: str
    for_training: bool | None = None  # None: not bound
    data_shapes: list | None = None
    label_shapes: list | None = None
    output_shapes: list | None = None
    param_shapes: dict | None = None  # name -> shape, once the module has parameter arrays
    params_initialized: bool = False
    step: str | None = None  # where the batch cycle is (bound modules)
    # several devices: (batch size, row slices, kvstore type)
    batch_split: tuple | None = None
    optimizer: str | None = None
    # (rescale_grad, the one MXNet would set, why)
    gradient_scale: tuple | None = None
    extra_rows: list = field(default_factory=list)  # a subclass's own rows


def batch_split_text(batch_size: int, slices, contexts, kvstore_type: str) -> str:
    """How data parallelism divides a batch: which rows each device computes."""
    parts = [
        say("rows {first}-{last} on {context}", first=s.start, last=s.stop - 1, context=ctx)
        for s, ctx in zip(slices, contexts)
    ]
    return say(
        "each batch of {batch_size}: {parts}; every device holds all parameters, and their "
        "gradients are summed (kvstore '{kvstore}') before each update",
        batch_size=batch_size,
        parts=say(", ").join(parts),
        kvstore=kvstore_type,
    )


def gradient_scale_text(scale: float, expected: float, why: str) -> str:
    if abs(scale - expected) <= 1e-6 * expected:
        return say(
            "rescale_grad={scale} = {why}: gradients are sums over rows, so a step follows "
            "their average",
            scale=f"{scale:g}",
            why=why,
        )
    return say(
        "rescale_grad={scale}, not {why} = {expected} (set by hand)",
        scale=f"{scale:g}",
        why=why,
        expected=f"{expected:g}",
    )


def _input_rows(facts: ModuleFacts) -> list[tuple[str, str]]:
    if facts.for_training is None:
        return [
            (
                say("data"),
                say("{names} (shapes known after bind)", names=", ".join(facts.data_names)),
            ),
            (say("label"), ", ".join(facts.label_names) or "-"),
        ]
    shapes = shapes_text(facts.data_shapes, "-")
    if facts.for_training:
        data = say("{shapes} (for training)", shapes=shapes)
    else:
        data = say("{shapes} (for prediction)", shapes=shapes)
    return [
        (say("data"), data),
        (say("label"), shapes_text(facts.label_shapes, "-")),
        (say("output"), ", ".join(f"{n} {tuple(s)}" for n, s in facts.output_shapes)),
    ]


def _parameter_rows(facts: ModuleFacts) -> list[tuple[str, str]]:
    if not facts.param_shapes:
        names = ", ".join(facts.param_names)
        return [(say("parameters"), say("{names} (shapes known after bind)", names=names))]
    count = sum(int(np.prod(s)) for s in facts.param_shapes.values())
    arrays, count = len(facts.param_shapes), f"{count:,}"
    if facts.params_initialized:
        values = say("{arrays} arrays, {count} values (initialized)", arrays=arrays, count=count)
    else:
        values = say(
            "{arrays} arrays, {count} values (not initialized)", arrays=arrays, count=count
        )
    return [(say("parameters"), values)] + [
        (f"  {n}", str(s)) for n, s in facts.param_shapes.items()
    ]


def summary_rows(facts: ModuleFacts) -> list[tuple[str, str]]:
    rows = [
        (say("state"), stage_words(facts.state)),
        (say("context"), ", ".join(str(c) for c in facts.contexts)),
    ]
    rows += _input_rows(facts)
    rows += _parameter_rows(facts)
    if facts.batch_split is not None:
        batch_size, slices, kvstore = facts.batch_split
        split = batch_split_text(batch_size, slices, facts.contexts, kvstore)
        rows.append((say("batch split"), split))
    if facts.optimizer is not None:
        rows.append((say("optimizer"), facts.optimizer))
        rows.append((say("gradient scale"), gradient_scale_text(*facts.gradient_scale)))
    if facts.step is not None:
        rows.append((say("batch step"), facts.step))
    rows += facts.extra_rows
    rows.append((say("next"), facts.next_call))
    return rows


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def summary_text(facts: ModuleFacts) -> str:
    rows = summary_rows(facts)
    width = max(_width(label) for label, _ in rows)
    lines = [f"mxlearn.{facts.kind} ({stage_words(facts.state)})"]
    lines += [f"  {label}{' ' * (width - _width(label))}  {value}" for label, value in rows[1:]]
    return "\n".join(lines)


def summary_html(facts: ModuleFacts) -> str:
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(label)}</th>"
        f"<td style='text-align:left'><code>{html.escape(value)}</code></td></tr>"
        for label, value in summary_rows(facts)[1:]
    )
    state = html.escape(stage_words(facts.state))
    return f"<b>mxlearn.{facts.kind}</b> ({state})<table>{cells}</table>"
