"""One training step of a small network, in mxlearn and in plain MXNet, for tests that compare
a module's weights with MXNet's after the same step."""

from __future__ import annotations

import numpy as np

from mxlearn import mx

X = np.random.RandomState(0).rand(10, 5).astype("float32")
Y = np.array([0, 1, 2, 1, 2, 0, 0, 1, 2, 2], dtype="float32")


def net():
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax"
    )


def ready(mod, rows=8):
    mod.bind([("data", (rows, 5))], [("softmax_label", (rows,))])
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    return mod


def step(mod, rows):
    mod.forward(mx.io.DataBatch([mx.nd.array(X[:rows])], [mx.nd.array(Y[:rows])]), True)
    mod.backward()
    mod.update()
    return mod.get_params()[0]["fc_weight"].asnumpy()


def plain_step(rows):
    """The same training step in plain MXNet, bound at the batch's rows."""
    return step(ready(mx.mod.Module(net()), rows), rows)
