"""A check of MXNet's NDArray file format, in Python, before MXNet's own parser sees a file."""

from __future__ import annotations

import struct

import numpy as np

from ..errors import DamagedCheckpointError

_LIST_MAGIC = 0x112
_ARRAY_MAGICS = {0xF993FAC9, 0xF993FACA}  # NDArray V2 and V3 (NumPy shape semantics)
# MXNet's type flags and their sizes in bytes
_DTYPE_SIZES = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 12: 2}
_MAX_NDIM = 32


class _Reader:
    """Reads fields of a file's bytes in order, failing with the file's name and the place."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data, self.size, self.position = path, data, len(data), 0

    def fail(self, what: str) -> DamagedCheckpointError:
        return DamagedCheckpointError(
            f"'{self.path}' is not a complete MXNet parameter file: {what}.",
            fix="use an earlier checkpoint (mxlearn.checkpoint.latest(prefix) finds the newest "
            "good one), or save the parameters again",
        )

    def take(self, fmt: str):
        width = struct.calcsize(fmt)
        if self.position + width > self.size:
            raise self.fail(f"it ends at byte {self.size}, inside a field at byte {self.position}")
        values = struct.unpack_from(fmt, self.data, self.position)
        self.position += width
        return values if len(values) > 1 else values[0]

    def skip(self, nbytes: int, what: str) -> bytes:
        if self.position + nbytes > self.size:
            raise self.fail(what)
        self.position += nbytes
        return self.data[self.position - nbytes : self.position]


def _read_array(reader: _Reader, index: int) -> None:
    marker = reader.take("<I")
    if marker not in _ARRAY_MAGICS:
        raise reader.fail(f"array {index} does not start with an NDArray marker")
    if reader.take("<i") != 0:
        raise reader.fail(f"array {index} is sparse, which this check does not read")
    ndim = reader.take("<i")
    numpy_shapes = marker == max(_ARRAY_MAGICS)  # V3: ndim 0 is a scalar, -1 is empty
    if numpy_shapes and ndim == -1 or not numpy_shapes and ndim == 0:
        return  # an empty array: nothing follows its shape
    if not 0 <= ndim <= _MAX_NDIM:
        raise reader.fail(f"array {index} claims {ndim} dimensions")
    shape = [reader.take("<q") for _ in range(ndim)]
    if any(d < 0 for d in shape):
        raise reader.fail(f"array {index} has a negative dimension {shape}")
    _dev_type, _dev_id, dtype = reader.take("<iii")
    if dtype not in _DTYPE_SIZES:
        raise reader.fail(f"array {index} has the unknown type flag {dtype}")
    nbytes = int(np.prod(shape, dtype=np.float64)) * _DTYPE_SIZES[dtype]
    reader.skip(nbytes, f"array {index} {tuple(shape)} needs {nbytes} bytes; the file ends first")


def check_ndarray_file(path: str) -> int:
    """Walk an MXNet NDArray file's structure in Python and return its number of arrays.

    MXNet's own parser trusts the counts and shapes in the file: a damaged one can make it read
    past the end or allocate without bound, and crash the process (a notebook kernel). This
    reads every count, shape and type against the file's length first.
    """
    with open(path, "rb") as f:
        reader = _Reader(path, f.read())
    magic, _reserved = reader.take("<QQ")
    if magic != _LIST_MAGIC:
        raise reader.fail(f"it starts with {magic:#x}, not MXNet's {_LIST_MAGIC:#x}")
    count = reader.take("<Q")
    if count > reader.size // 24:
        raise reader.fail(f"it claims {count} arrays, more than its {reader.size} bytes can hold")
    for index in range(count):
        _read_array(reader, index)
    names = reader.take("<Q")
    if names not in (0, count):
        raise reader.fail(f"it names {names} arrays but holds {count}")
    for index in range(names):
        name = reader.skip(reader.take("<Q"), f"the name of array {index} runs past the end")
        try:
            name.decode("utf-8")
        except UnicodeDecodeError:
            raise reader.fail(f"the name of array {index} is not text") from None
    if reader.position != reader.size:
        raise reader.fail(f"{reader.size - reader.position} bytes follow its last array")
    return count
