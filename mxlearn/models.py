"""The small networks the tour and the notebooks train."""

from __future__ import annotations

from . import rules
from ._compat import mx
from .boundary import public


@public(
    "mxlearn.models.mlp()",
    num_classes=rules.whole(1, "models.mlp(num_classes=26)"),
    num_hidden=rules.whole(1, "models.mlp(num_hidden=64)"),
)
def mlp(num_classes: int = 26, num_hidden: int = 64):
    """The seed tutorial's classifier: data -> FC(64) -> ReLU -> FC(26) -> SoftmaxOutput.

    Examples
    --------
    >>> mlp().list_arguments()
    ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'softmax_label']
    """
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=num_hidden)
    net = mx.sym.Activation(net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(net, name="fc2", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(net, name="softmax")


@public(
    "mxlearn.models.linear_regression()",
    num_outputs=rules.whole(1, "models.linear_regression(num_outputs=1)"),
)
def linear_regression(num_outputs: int = 1):
    """One dense layer trained with a squared loss; its label is 'lro_label'."""
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=num_outputs)
    return mx.sym.LinearRegressionOutput(net, name="lro")


@public(
    "mxlearn.models.conv_net()",
    num_classes=rules.whole(1, "models.conv_net(num_classes=3)"),
    channels=rules.whole(1, "models.conv_net(channels=8)"),
    batch_norm=rules.flag("models.conv_net(batch_norm=True)"),
)
def conv_net(num_classes: int = 3, channels: int = 8, batch_norm: bool = True):
    """A small convolutional classifier for images of any size: two 3x3 convolutions, then
    global average pooling, so the last layer sees ``channels * 2`` numbers whatever the image
    size (what lets a MutableModule feed it images of several sizes).

    Examples
    --------
    >>> conv_net().infer_shape(data=(4, 1, 20, 28))[1][-1]
    (4, 3)
    """
    net = mx.sym.Variable("data")
    net = mx.sym.Convolution(net, name="conv1", num_filter=channels, kernel=(3, 3), pad=(1, 1))
    if batch_norm:
        net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, name="relu1", act_type="relu")
    net = mx.sym.Convolution(net, name="conv2", num_filter=channels * 2, kernel=(3, 3), pad=(1, 1))
    net = mx.sym.Activation(net, name="relu2", act_type="relu")
    net = mx.sym.Pooling(net, name="pool", global_pool=True, pool_type="avg", kernel=(1, 1))
    net = mx.sym.FullyConnected(net, name="fc", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(net, name="softmax")
