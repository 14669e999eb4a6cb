"""A module's state word and its summary (text and HTML) at every step."""

from __future__ import annotations

import mxlearn
from mxlearn import mx


def test_state_and_summary_follow_the_steps(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    seen = [(mod.state, repr(mod))]
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    seen.append((mod.state, repr(mod)))
    mod.init_params()
    seen.append((mod.state, repr(mod)))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    seen.append((mod.state, repr(mod)))
    assert [s for s, _ in seen] == ["created", "bound", "initialized", "ready"]
    assert "next" in seen[0][1] and "mod.bind(" in seen[0][1]
    assert "mod.init_params(" in seen[1][1]
    assert "mod.init_optimizer(" in seen[2][1]
    ready = seen[3][1]
    for text in (
        "cpu(0)",
        "data (32, 16)",
        "softmax_label (32,)",
        "softmax_output (32, 4)",
        "fc1_weight",
        "(8, 16)",
        "4 arrays, 172 values",
        "'sgd'",
        "mod.fit(",
    ):
        assert text in ready, text
    assert "\033[" not in ready


def test_html_summary_escapes_and_shows_the_table(ready_module):
    html = ready_module._repr_html_()
    assert html.startswith("<b>mxlearn.Module</b> (ready)")
    assert "<table>" in html and "fc2_bias" in html


def test_inference_module_points_to_predict(small_net, small_iter):
    mod = mxlearn.Module(small_net, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)
    mod.init_params()
    text = repr(mod)
    assert "cpu(0), cpu(1)" in text and "for prediction" in text and "mod.predict(" in text
