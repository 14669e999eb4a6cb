"""A module's summary: what it is bound to, its parameters, and which step comes next."""

from __future__ import annotations

import html

import numpy as np


def next_step(mod) -> str:
    """The call a student makes next, given the module's state."""
    state = mod.state
    if state == "created":
        return (
            "mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)"
        )
    if state == "loaded":
        return (
            "mod.predict(val_iter) (binds for prediction), or mod.fit(train_iter, ...) to train on"
        )
    if state == "bound":
        return "mod.init_params(initializer=mx.init.Uniform(scale=0.1))"
    if state == "initialized" and mod.for_training:
        return "mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))"
    if state == "initialized":
        return "mod.predict(val_iter) or mod.score(val_iter, 'acc')"
    return "mod.forward(batch, is_train=True), or mod.fit(train_iter, num_epoch=5)"


def _shapes(descs) -> str:
    return ", ".join(f"{d.name} {tuple(d.shape)}" for d in descs) if descs else "-"


def batch_split_text(mod) -> str:
    """How data parallelism divides a batch: which rows each device computes."""
    group = mod._exec_group
    parts = [f"rows {s.start}-{s.stop - 1} on {ctx}" for s, ctx in zip(group.slices, mod._context)]
    kvstore = mod._kvstore.type if mod._kvstore is not None else "local"
    return (
        f"each batch of {group.batch_size}: " + ", ".join(parts) + "; every device holds all "
        f"parameters, and their gradients are summed (kvstore '{kvstore}') before each update"
    )


def gradient_scale_text(mod) -> str:
    scale = mod._optimizer.rescale_grad
    expected, why = mod.gradient_scale()
    text = f"rescale_grad={scale:g}"
    if abs(scale - expected) <= 1e-6 * expected:
        return text + f" = {why}: gradients are sums over rows, so a step follows their average"
    return text + f", not {why} = {expected:g} (set by hand)"


def summary_rows(mod) -> list[tuple[str, str]]:
    """(label, value) rows shared by the text and HTML summaries."""
    contexts = ", ".join(str(c) for c in mod._context)
    rows = [("state", mod.state), ("context", contexts)]
    if mod.binded:
        mode = "for training" if mod.for_training else "for prediction"
        rows += [
            ("data", f"{_shapes(mod._data_shapes)} ({mode})"),
            ("label", _shapes(mod._label_shapes)),
            ("output", ", ".join(f"{n} {tuple(s)}" for n, s in mod.output_shapes)),
        ]
    else:
        rows += [
            ("data", ", ".join(mod._data_names) + " (shapes known after bind)"),
            ("label", ", ".join(mod._label_names) or "-"),
        ]
    if mod._arg_params:
        shapes = {n: tuple(a.shape) for n, a in mod._arg_params.items()}
        count = sum(int(np.prod(s)) for s in shapes.values())
        values = "initialized" if mod.params_initialized else "not initialized"
        rows.append(("parameters", f"{len(shapes)} arrays, {count:,} values ({values})"))
        rows += [(f"  {n}", str(s)) for n, s in shapes.items()]
    else:
        rows.append(("parameters", ", ".join(mod._param_names) + " (shapes known after bind)"))
    if mod.binded and len(mod._context) > 1:
        rows.append(("batch split", batch_split_text(mod)))
    if mod.optimizer_initialized and mod._optimizer_settings:
        rows.append(("optimizer", mod._optimizer_settings[1]))
        rows.append(("gradient scale", gradient_scale_text(mod)))
    rows += mod._extra_summary_rows()
    rows.append(("next", next_step(mod)))
    return rows


def module_summary_text(mod) -> str:
    rows = summary_rows(mod)
    width = max(len(label) for label, _ in rows)
    lines = [f"mxlearn.{type(mod).__name__} ({mod.state})"]
    lines += [f"  {label.ljust(width)}  {value}" for label, value in rows[1:]]
    return "\n".join(lines)


def module_summary_html(mod) -> str:
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(label)}</th>"
        f"<td style='text-align:left'><code>{html.escape(value)}</code></td></tr>"
        for label, value in summary_rows(mod)[1:]
    )
    title = f"mxlearn.{type(mod).__name__}"
    return f"<b>{title}</b> ({html.escape(mod.state)})<table>{cells}</table>"
