"""The small networks the tour and the notebooks train."""

from __future__ import annotations

from ._compat import mx


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


def linear_regression(num_outputs: int = 1):
    """One dense layer trained with a squared loss; its label is 'lro_label'."""
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=num_outputs)
    return mx.sym.LinearRegressionOutput(net, name="lro")
