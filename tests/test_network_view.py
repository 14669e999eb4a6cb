"""show_network: every layer's output shape and parameter count, checked against what MXNet
itself allocates when a module is bound, drawn as SVG without Graphviz."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.network_layers import (
    ImageShapesNotInferred,
    ModuleForNetwork,
    NoSuchShownInput,
    NotANetwork,
    NotAShape,
    NotShapePairs,
    ShapesMissing,
    ShapesNotInferred,
)
from mxlearn.network_view import PngNotDrawn, show_network

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[1]


def _bound_params(net, data_shape, label_names=("softmax_label",)):
    """The arg_params and aux_params MXNet makes for ``net`` bound to ``data_shape``."""
    mod = mxlearn.Module(net, label_names=list(label_names), context=mx.cpu())
    labels = [(name, data_shape[:1]) for name in label_names]
    mod.bind(data_shapes=[("data", data_shape)], label_shapes=labels or None)
    mod.init_params(initializer=mx.init.Xavier())
    return mod.get_params()


def _size(params: dict) -> int:
    return sum(int(np.prod(a.shape)) for a in params.values())


def _branches(first: str = "left", second: str = "right", widths=(8, 8)):
    """data -> two dense branches -> their sum -> softmax."""
    data = mx.sym.Variable("data")
    left = mx.sym.FullyConnected(data, num_hidden=widths[0], name=first)
    right = mx.sym.FullyConnected(data, num_hidden=widths[1], name=second)
    return mx.sym.SoftmaxOutput(left + right, name="softmax")


def _svg_tree(view):
    return ET.fromstring(view.svg())


def _texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_the_course_mlp_layer_by_layer_matches_a_bound_module():
    view = show_network(mxlearn.models.mlp(), data_shapes=[("data", (32, 16))])
    layers = {layer.name: layer for layer in view.layers}
    assert [layer.name for layer in view.layers] == [
        "data",
        "fc1",
        "relu1",
        "fc2",
        "softmax_label",
        "softmax",
    ]  # parameters are not layers; the data and the label are
    assert layers["fc1"].shape == (32, 64) and layers["fc1"].op == "FullyConnected"
    assert layers["relu1"].shape == (32, 64)
    assert layers["softmax"].shape == (32, 26) and layers["softmax_label"].shape == (32,)
    assert layers["fc1"].param_count == 16 * 64 + 64
    assert layers["fc2"].param_count == 64 * 26 + 26
    assert layers["relu1"].param_count == 0 and layers["data"].param_count == 0
    arg_params, aux_params = _bound_params(mxlearn.models.mlp(), (32, 16))
    assert view.total_params == _size(arg_params) == 2778 and view.total_aux == 0
    assert layers["fc1"].output_bytes == 32 * 64 * 4  # float32, one batch
    assert layers["fc2"].param_bytes == (64 * 26 + 26) * 4


def test_batch_norm_moving_averages_are_counted_apart_as_aux_params():
    view = show_network(mxlearn.models.conv_net(), data_shapes=[("data", (16, 1, 32, 32))])
    layers = {layer.name: layer for layer in view.layers}
    assert layers["conv1"].shape == (16, 8, 32, 32)
    assert layers["conv1"].param_count == 8 * 1 * 3 * 3 + 8
    assert layers["bn1"].param_count == 8 + 8  # gamma, beta: learned
    assert layers["bn1"].aux_count == 8 + 8  # moving mean, moving variance: not learned
    assert layers["pool"].shape == (16, 16, 1, 1) and layers["fc"].shape == (16, 3)
    arg_params, aux_params = _bound_params(mxlearn.models.conv_net(), (16, 1, 32, 32))
    assert view.total_params == _size(arg_params) == 1315
    assert view.total_aux == _size(aux_params) == 16
    assert view.total_param_bytes == (1315 + 16) * 4
    table = view.table()
    assert table["aux"].iloc[-1] == 16 and table["params"].iloc[:-1].sum() == 1315
    assert "and 16 auxiliary states" in "".join(_texts(_svg_tree(view)))


def test_a_branching_network_draws_an_arrow_from_each_input():
    view = show_network(_branches(), data_shapes={"data": (4, 5)})
    summed = [layer for layer in view.layers if layer.op == "elemwise_add"][0]
    assert summed.inputs == ("left", "right") and summed.shape == (4, 8)
    assert {layer.name: layer.inputs for layer in view.layers}["left"] == ("data",)
    edges = sum(len(layer.inputs) for layer in view.layers)
    assert edges == 6  # data->left, data->right, left->+, right->+, +->softmax, label->softmax
    root = _svg_tree(view)
    drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert len(drawn) == edges
    assert all(g.find(f"{SVG}polygon") is not None for g in drawn)  # each has its arrowhead
    arg_params, _ = _bound_params(_branches(), (4, 5))
    assert view.total_params == _size(arg_params) == 2 * (5 * 8 + 8)


def test_a_shared_weight_is_counted_once():
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("shared_weight")
    first = mx.sym.FullyConnected(data, weight=weight, num_hidden=5, no_bias=True, name="a")
    second = mx.sym.FullyConnected(first, weight=weight, num_hidden=5, no_bias=True, name="b")
    net = mx.sym.SoftmaxOutput(second, name="softmax")
    view = show_network(net, data=(2, 5))
    arg_params, _ = _bound_params(net, (2, 5))
    assert view.total_params == _size(arg_params) == 25


def test_the_svg_holds_one_box_per_layer_and_the_total():
    view = show_network(mxlearn.models.mlp(), data_shapes=[("data", (32, 16))])
    root = _svg_tree(view)
    boxes = [r for r in root.iter(f"{SVG}rect") if "layer" in (r.get("class") or "")]
    assert len(boxes) == len(view.layers) == 6
    texts = _texts(root)
    for layer in view.layers:
        assert layer.name in texts and layer.op in texts
    assert "output (32, 26)" in texts and "parameters 1,088" in texts
    totals = [t for t in root.iter(f"{SVG}text") if t.get("class") == "total"]
    assert "total: 2,778 parameters" in totals[0].text
    tops = [float(b.get("y")) for b in boxes]
    assert tops == sorted(tops)  # top to bottom, in the network's order
    width, height = float(root.get("width")), float(root.get("height"))
    assert all(float(b.get("x")) + float(b.get("width")) <= width for b in boxes)
    assert tops[-1] < height and root.find(f"{SVG}script") is None
    assert view._repr_svg_() == view.svg()


def test_text_is_escaped():
    view = show_network(_branches(first="a<b&c"), data_shapes=[("data", (4, 5))])
    raw = view.svg()
    assert "a&lt;b&amp;c" in raw and "a<b&c" not in raw
    assert "a<b&c" in _texts(ET.fromstring(raw))  # the parsed text is the name itself
    assert "a<b&c" in str(view) and "a<b&c" in list(view.table()["name"])


def test_table_text_and_save(tmp_path):
    view = show_network(mxlearn.models.mlp(), data_shapes=[("data", (32, 16))])
    table = view.table()
    assert list(table.columns) == list(mxlearn.network_view.COLUMNS)
    assert list(table["name"]) == [layer.name for layer in view.layers] + ["total"]
    assert table["params"].iloc[-1] == 2778 and table["output_bytes"].iloc[1] == 32 * 64 * 4
    assert len(view.table(total=False)) == 6
    lines = str(view).splitlines()
    assert lines[0].split()[:4] == ["layer", "operator", "output", "parameters"]
    assert lines[-2].split()[:2] == ["total", "2,778"]
    path = view.save(tmp_path / "mlp.svg")
    assert ET.parse(path).getroot().tag == f"{SVG}svg"
    with pytest.raises(PngNotDrawn) as refused:
        view.save(tmp_path / "mlp.png")
    assert refused.value.fields["path"] == str(tmp_path / "mlp.png")
    assert refused.value.fields["call"] == "view.save('mlp.svg')"
    assert refused.value.fields["call"] in refused.value.fix
    assert not (tmp_path / "mlp.png").exists()


def test_every_way_of_giving_shapes_gives_the_same_layers():
    train_iter = mx.io.NDArrayIter(np.zeros((64, 16)), np.zeros(64), batch_size=32)
    net = mxlearn.models.mlp()
    views = [
        show_network(net, data_shapes=[("data", (32, 16))]),
        show_network(net, data_shapes={"data": (32, 16)}),
        show_network(net, data_shapes=train_iter.provide_data),
        show_network(net, train_iter.provide_data, train_iter.provide_label),
        show_network(net, data=(32, 16)),
    ]
    assert len({str(v.table().to_dict()) for v in views}) == 1


def test_missing_shapes_name_the_inputs_and_the_call():
    call = "mxlearn.show_network(net, data_shapes=[('data', (32, 16))])"
    with pytest.raises(ShapesMissing) as refused:
        show_network(mxlearn.models.mlp())
    assert refused.value.fields["unknown"] == "'data'"
    assert "softmax_label" in refused.value.fields["inputs"]
    assert refused.value.fields["call"] == call and call in refused.value.fix
    with pytest.raises(NoSuchShownInput) as unknown:
        show_network(mxlearn.models.mlp(), data_shapes=[("x", (32, 16))])
    assert unknown.value.fields["name"] == "x" and "'data'" in unknown.value.fields["hint"]
    with pytest.raises(NotShapePairs) as unnamed:
        show_network(mxlearn.models.mlp(), data_shapes=(32, 16))  # a shape without its name
    assert unnamed.value.fields["argument"] == "data_shapes"
    assert unnamed.value.fields["given"] == (32, 16)
    with pytest.raises(NotAShape) as empty:
        show_network(mxlearn.models.mlp(), data=(32, 0))
    assert empty.value.fields["name"] == "data" and empty.value.fields["shape"] == (32, 0)


def test_shapes_mxnet_cannot_infer_are_refused_with_its_reason_in_one_line():
    with pytest.raises(ShapesNotInferred) as refused:
        show_network(_branches(widths=(8, 6)), data_shapes=[("data", (4, 5))])
    assert type(refused.value) is ShapesNotInferred
    reason = refused.value.fields["reason"]  # MXNet's own words, without its C++ stack
    assert "\n" not in reason and "Stack trace" not in reason
    assert "_plus" in reason and "[4,8]" in reason and "[4,6]" in reason
    assert refused.value.fields["shapes"] == "data (4, 5)"
    problem = refused.value.problem
    assert "\n" not in problem and "Stack trace" not in problem and reason in problem
    assert refused.value.__suppress_context__  # no MXNet traceback chained to it
    with pytest.raises(ImageShapesNotInferred) as images:
        show_network(mxlearn.models.conv_net(), data_shapes=[("data", (16, 1024))])
    assert "4D" in images.value.fields["reason"]  # MXNet's reason: images are 4D
    assert images.value.fields["shapes"] == "data (16, 1024)"


def test_something_not_a_symbol_is_refused():
    with pytest.raises(NotANetwork) as refused:
        show_network("mlp", data_shapes=[("data", (32, 16))])
    assert type(refused.value) is NotANetwork and refused.value.fields["kind"] == "str"
    module = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    with pytest.raises(ModuleForNetwork) as refused:
        show_network(module, data_shapes=[("data", (32, 16))])
    assert refused.value.fields["kind"] == "Module"
    assert "mod.symbol" in refused.value.fix


@pytest.mark.slow
def test_it_draws_without_graphviz(tmp_path):
    script = (
        "import sys\n"
        "sys.modules['graphviz'] = None  # as if the Python package were not installed\n"
        "import shutil, xml.etree.ElementTree as ET, mxlearn\n"
        "from mxlearn.network_view import show_network\n"
        "assert shutil.which('dot') is None\n"
        "try:\n"
        "    import graphviz\n"
        "    raise SystemExit('graphviz is still importable')\n"
        "except ImportError:\n"
        "    pass\n"
        "view = show_network(mxlearn.models.conv_net(), data_shapes=[('data', (2, 1, 8, 8))])\n"
        "ET.fromstring(view.svg())\n"
        "view.save(sys.argv[1])\n"
        "print(view.total_params)\n"
    )
    folders = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(f for f in folders if not os.path.exists(os.path.join(f, "dot")))
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "net.svg")],
        env=dict(os.environ, PATH=path),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "1315" and (tmp_path / "net.svg").stat().st_size > 1000


def test_parameters_are_every_argument_not_fed_whatever_their_names():
    data = mx.sym.Variable("data")
    w1 = mx.sym.Variable("w1", init=mx.init.Xavier())
    b1 = mx.sym.Variable("b1", init=mx.init.Zero())
    net = mx.sym.FullyConnected(data, weight=w1, bias=b1, num_hidden=8, name="hidden")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name="out"), name="softmax")
    view = mxlearn.show_network(net, data_shapes=[("data", (4, 5))])
    mod = mxlearn.Module(net, context=mx.cpu())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    assert view.total_params == sum(a.size for a in mod.get_params()[0].values()) == 5 * 8 + 8 + 27


def test_save_makes_its_folder(tmp_path):
    view = mxlearn.show_network(mxlearn.models.mlp(), data_shapes=[("data", (32, 16))])
    path = view.save(tmp_path / "plots" / "mlp.svg")
    assert open(path).read().startswith("<svg")
