"""A check of MXNet's NDArray file format, in Python, before MXNet's own parser sees a file."""

from __future__ import annotations

import struct

import numpy as np

from ..errors import N_, DamagedCheckpointError
from ..language import say

_LIST_MAGIC = 0x112
_ARRAY_MAGICS = {0xF993FAC9, 0xF993FACA}  # NDArray V2 and V3 (NumPy shape semantics)
# MXNet's type flags and their sizes in bytes
_DTYPE_SIZES = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 12: 2}
_MAX_NDIM = 32


class IncompleteParamsFile(DamagedCheckpointError):
    says = N_("'{path}' is not a complete MXNet parameter file: {what}.")
    fix_says = N_(
        "use an earlier checkpoint (mxlearn.checkpoint.latest(prefix) finds the newest "
        "good one), or save the parameters again"
    )


class _Reader:
    """Reads fields of a file's bytes in order, failing with the file's name and the place."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data, self.size, self.position = path, data, len(data), 0

    def fail(self, what: str) -> IncompleteParamsFile:
        return IncompleteParamsFile(path=self.path, what=what)

    def take(self, fmt: str):
        width = struct.calcsize(fmt)
        if self.position + width > self.size:
            where = {"size": self.size, "position": self.position}
            raise self.fail(
                say("it ends at byte {size}, inside a field at byte {position}", **where)
            )
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
        raise reader.fail(say("array {index} does not start with an NDArray marker", index=index))
    if reader.take("<i") != 0:
        what = say("array {index} is sparse, which this check does not read", index=index)
        raise reader.fail(what)
    ndim = reader.take("<i")
    numpy_shapes = marker == max(_ARRAY_MAGICS)  # V3: ndim 0 is a scalar, -1 is empty
    if numpy_shapes and ndim == -1 or not numpy_shapes and ndim == 0:
        return  # an empty array: nothing follows its shape
    if not 0 <= ndim <= _MAX_NDIM:
        raise reader.fail(say("array {index} claims {ndim} dimensions", index=index, ndim=ndim))
    shape = [reader.take("<q") for _ in range(ndim)]
    if any(d < 0 for d in shape):
        what = say("array {index} has a negative dimension {shape}", index=index, shape=shape)
        raise reader.fail(what)
    _dev_type, _dev_id, dtype = reader.take("<iii")
    if dtype not in _DTYPE_SIZES:
        what = say("array {index} has the unknown type flag {dtype}", index=index, dtype=dtype)
        raise reader.fail(what)
    nbytes = int(np.prod(shape, dtype=np.float64)) * _DTYPE_SIZES[dtype]
    short = say(
        "array {index} {shape} needs {nbytes} bytes; the file ends first",
        index=index,
        shape=tuple(shape),
        nbytes=nbytes,
    )
    reader.skip(nbytes, short)


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
        found = {"magic": hex(magic), "expected": hex(_LIST_MAGIC)}  # hex: as {:#x} writes it
        raise reader.fail(say("it starts with {magic}, not MXNet's {expected}", **found))
    count = reader.take("<Q")
    if count > reader.size // 24:
        claims = {"count": count, "size": reader.size}
        raise reader.fail(
            say("it claims {count} arrays, more than its {size} bytes can hold", **claims)
        )
    for index in range(count):
        _read_array(reader, index)
    names = reader.take("<Q")
    if names not in (0, count):
        raise reader.fail(
            say("it names {names} arrays but holds {count}", names=names, count=count)
        )
    for index in range(names):
        past_end = say("the name of array {index} runs past the end", index=index)
        name = reader.skip(reader.take("<Q"), past_end)
        try:
            name.decode("utf-8")
        except UnicodeDecodeError:
            raise reader.fail(say("the name of array {index} is not text", index=index)) from None
    if reader.position != reader.size:
        after = reader.size - reader.position
        raise reader.fail(say("{count} bytes follow its last array", count=after))
    return count
