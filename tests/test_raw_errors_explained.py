"""The remaining raw errors, explained with the call that fixes them (issue 13, family 7)."""

from __future__ import annotations

import json
import os

import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import DamagedCheckpointError, InputError, LifecycleError, MXLearnError


def test_iter_predict_before_bind(small_net, small_iter):
    with pytest.raises(LifecycleError, match="before the module was bound"):
        list(mxlearn.Module(small_net).iter_predict(small_iter))


def test_borrow_optimizer_from_a_module_without_one(ready_module, small_net):
    with pytest.raises(LifecycleError, match="borrow_optimizer") as info:
        ready_module.borrow_optimizer(mxlearn.Module(small_net))
    assert "init_optimizer(" in info.value.fix


def test_a_params_path_that_is_a_folder(ready_module, tmp_path):
    (tmp_path / "m-0001.params").mkdir()
    with pytest.raises(MXLearnError, match="is a folder"):
        ready_module.load_params(str(tmp_path / "m-0001.params"))


def test_a_hand_edited_manifest(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    manifest = json.loads((tmp_path / "m-0001.json").read_text())
    del manifest["files"]
    (tmp_path / "m-0001.json").write_text(json.dumps(manifest))
    with pytest.raises(DamagedCheckpointError, match="'files'"):
        mxlearn.checkpoint.read_manifest(prefix, 1)


@pytest.mark.parametrize("kind", ["column", "one-hot"])
def test_badly_shaped_labels_in_score_and_validation(ready_module, small_data, small_iter, kind):
    X, y = small_data
    labels = y.reshape(-1, 1) if kind == "column" else mx.nd.one_hot(mx.nd.array(y), 4).asnumpy()
    fix = "y.ravel()" if kind == "column" else "y.argmax(axis=1)"
    with pytest.raises(InputError, match="mod.score()") as info:
        ready_module.score(mx.io.NDArrayIter(X, labels, 32), "acc")
    assert fix in info.value.fix
    with pytest.raises(InputError, match="eval_data") as info:
        mxlearn.Module(ready_module.symbol).fit(
            small_iter, eval_data=mx.io.NDArrayIter(X, labels, 32), num_epoch=1
        )
    assert fix in info.value.fix


def test_a_distributed_kvstore_outside_a_launcher(small_iter, small_net, monkeypatch):
    for name in [n for n in os.environ if n.startswith("DMLC_")]:
        monkeypatch.delenv(name)
    mod = mxlearn.Module(small_net)
    with pytest.raises(InputError, match="python -m mxlearn launch"):
        mod.fit(small_iter, num_epoch=1, kvstore="dist_sync")
    assert mod.state == "created"


def test_shapes_a_layer_cannot_take_are_explained_at_bind():
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    pooled = mx.sym.Pooling(mx.sym.Variable("data"), kernel=(9, 9), pool_type="max")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(pooled, num_hidden=4), name="softmax")
    mod = mxlearn.Module(net)
    with pytest.raises(InputError) as caught:
        mod.bind(data_shapes=[("data", (32, 1, 4, 4))], label_shapes=[("softmax_label", (32,))])
    text = str(caught.value)
    assert "operator pooling0" in text and "kernel size (9) exceeds input" in text
    assert "convolution.cc" not in text and "pooling.cc" not in text
    assert "mod.symbol.infer_shape(data=(32, 1, 4, 4))" in text


def test_a_convolution_fed_flat_rows_is_told_the_image_layout():
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    conv = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), num_filter=4, name="conv1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(conv, num_hidden=4), name="softmax")
    with pytest.raises(InputError, match=r"(?s)Input data should be 4D.*\(batch, channels, height"):
        mxlearn.Module(net).bind(
            data_shapes=[("data", (32, 16))], label_shapes=[("softmax_label", (32,))]
        )


def test_integer_labels_from_a_custom_iterator_are_told_the_type_not_the_shape():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    labels = mx.io.DataDesc("softmax_label", (8,), np.int32)
    with pytest.raises(InputError) as caught:
        mod.bind(data_shapes=[("data", (8, 16))], label_shapes=[labels])
    assert "y.astype('float32')" in str(caught.value)
    assert "infer_shape" not in str(caught.value)
