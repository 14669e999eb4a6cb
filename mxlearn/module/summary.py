"""A module's summary: what it is bound to, its parameters, and which step comes next.

The Module gathers the facts (:class:`ModuleFacts`); this file only lays them out, as text for
``repr`` and as an HTML table for Jupyter.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from ..guards.arguments import shapes_text


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
    parts = [f"rows {s.start}-{s.stop - 1} on {ctx}" for s, ctx in zip(slices, contexts)]
    return (
        f"each batch of {batch_size}: " + ", ".join(parts) + "; every device holds all "
        f"parameters, and their gradients are summed (kvstore '{kvstore_type}') before each "
        "update"
    )


def gradient_scale_text(scale: float, expected: float, why: str) -> str:
    text = f"rescale_grad={scale:g}"
    if abs(scale - expected) <= 1e-6 * expected:
        return text + f" = {why}: gradients are sums over rows, so a step follows their average"
    return text + f", not {why} = {expected:g} (set by hand)"


def summary_rows(facts: ModuleFacts) -> list[tuple[str, str]]:
    """(label, value) rows shared by the text and HTML summaries."""
    rows = [("state", facts.state), ("context", ", ".join(str(c) for c in facts.contexts))]
    if facts.for_training is not None:
        mode = "for training" if facts.for_training else "for prediction"
        rows += [
            ("data", f"{shapes_text(facts.data_shapes, '-')} ({mode})"),
            ("label", shapes_text(facts.label_shapes, "-")),
            ("output", ", ".join(f"{n} {tuple(s)}" for n, s in facts.output_shapes)),
        ]
    else:
        rows += [
            ("data", ", ".join(facts.data_names) + " (shapes known after bind)"),
            ("label", ", ".join(facts.label_names) or "-"),
        ]
    if facts.param_shapes:
        count = sum(int(np.prod(s)) for s in facts.param_shapes.values())
        values = "initialized" if facts.params_initialized else "not initialized"
        rows.append(
            ("parameters", f"{len(facts.param_shapes)} arrays, {count:,} values ({values})")
        )
        rows += [(f"  {n}", str(s)) for n, s in facts.param_shapes.items()]
    else:
        rows.append(("parameters", ", ".join(facts.param_names) + " (shapes known after bind)"))
    if facts.batch_split is not None:
        batch_size, slices, kvstore = facts.batch_split
        rows.append(("batch split", batch_split_text(batch_size, slices, facts.contexts, kvstore)))
    if facts.optimizer is not None:
        rows.append(("optimizer", facts.optimizer))
        rows.append(("gradient scale", gradient_scale_text(*facts.gradient_scale)))
    if facts.step is not None:
        rows.append(("batch step", facts.step))
    rows += facts.extra_rows
    rows.append(("next", facts.next_call))
    return rows


def summary_text(facts: ModuleFacts) -> str:
    rows = summary_rows(facts)
    width = max(len(label) for label, _ in rows)
    lines = [f"mxlearn.{facts.kind} ({facts.state})"]
    lines += [f"  {label.ljust(width)}  {value}" for label, value in rows[1:]]
    return "\n".join(lines)


def summary_html(facts: ModuleFacts) -> str:
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(label)}</th>"
        f"<td style='text-align:left'><code>{html.escape(value)}</code></td></tr>"
        for label, value in summary_rows(facts)[1:]
    )
    return f"<b>mxlearn.{facts.kind}</b> ({html.escape(facts.state)})<table>{cells}</table>"
