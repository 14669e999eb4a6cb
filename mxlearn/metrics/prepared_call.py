"""``operator(array, **params) -> slots[index]``, with the operator call's arguments built once.

MXNet's Python wrapper builds every argument again at each call (about 10 us here, while the
argmax of a batch's outputs takes about 1 us on the device); the deferred metric makes these
calls every batch, so it makes the wrapper's own ``MXImperativeInvokeEx`` call, prepared.
"""

from __future__ import annotations

import ctypes

from mxnet.base import _LIB, NDArrayHandle, c_str_array, check_call


class PreparedCall:
    """Writes ``operator(array, **params)`` into ``slots[index]``; the slots must stay alive.

    >>> from mxlearn import mx
    >>> slots = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    >>> argmax = PreparedCall("argmax", {"axis": 1}, slots)
    >>> argmax(mx.nd.array([[0, 1], [1, 0]]), 1).asnumpy()
    array([1., 0.], dtype=float32)
    """

    def __init__(self, operator: str, params: dict, slots: list) -> None:
        self._operator = ctypes.c_void_p()
        name = ctypes.c_char_p(operator.encode())
        check_call(_LIB.NNGetOpHandle(name, ctypes.byref(self._operator)))
        self._input = (NDArrayHandle * 1)()
        self._keys = c_str_array(list(params))
        self._values = c_str_array([str(v) for v in params.values()])
        self._count = len(params)
        self._slots = slots  # the handles below point into these arrays
        self._outputs = [
            ctypes.cast((NDArrayHandle * 1)(slot.handle), ctypes.POINTER(NDArrayHandle))
            for slot in slots
        ]
        self._output_count = ctypes.c_int(1)
        self._output_types = ctypes.POINTER(ctypes.c_int)()

    def __call__(self, array, index: int):
        self._input[0] = array.handle
        self._output_count.value = 1
        check_call(
            _LIB.MXImperativeInvokeEx(
                self._operator,
                1,
                self._input,
                ctypes.byref(self._output_count),
                ctypes.byref(self._outputs[index]),
                self._count,
                self._keys,
                self._values,
                ctypes.byref(self._output_types),
            )
        )
        return self._slots[index]
