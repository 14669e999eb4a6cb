"""The letter data: checksum, search order, download and its failures explained."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import shutil
import threading

import numpy as np
import pytest

from mxlearn import datasets
from mxlearn.datasets import LETTER_SHA256, DownloadFailed, NotTheLetterFile


def test_letter_data_shapes_and_labels(shared_data):
    X, y = datasets.letter_recognition(shared_data)
    assert X.shape == (20000, 16) and X.dtype == np.float32
    assert y.shape == (20000,) and y.dtype == np.float32
    assert y.min() == 0 and y.max() == 25 and len(np.unique(y)) == 26
    assert y[0] == ord("T") - ord("A")  # the UCI file starts with "T,2,8,3,..."
    assert X[0].tolist() == [2, 8, 3, 5, 1, 8, 13, 0, 6, 6, 10, 8, 0, 8, 0, 8]


def test_letter_iters_follow_the_tutorial(shared_data):
    train, val = datasets.letter_iters(batch_size=32, path=shared_data)
    assert train.provide_data[0].shape == (32, 16)
    assert sum(1 for _ in train) == 500 and sum(1 for _ in val) == 125
    val.reset()
    first = next(iter(val)).data[0].asnumpy()
    X, _ = datasets.letter_recognition(shared_data)
    assert np.array_equal(first, X[16000:16032])


def _plain_copy(shared_data, folder):
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(shared_data / "letter-recognition.data.gz") as src:
        (folder / "letter-recognition.data").write_bytes(src.read())
    return folder / "letter-recognition.data"


def test_search_order_path_then_env_then_cache(shared_data, tmp_path, monkeypatch):
    explicit = _plain_copy(shared_data, tmp_path / "explicit")
    cached = _plain_copy(shared_data, datasets.cache_dir())
    assert datasets.letter_file(explicit.parent) == explicit
    assert datasets.letter_file() == shared_data / "letter-recognition.data.gz"  # $MXLEARN_DATA
    monkeypatch.delenv("MXLEARN_DATA")
    assert datasets.letter_file() == cached


def test_checksum_mismatch_is_explained(shared_data, tmp_path):
    damaged = _plain_copy(shared_data, tmp_path / "damaged")
    data = bytearray(damaged.read_bytes())
    data[100] ^= 1  # one bit
    damaged.write_bytes(bytes(data))
    with pytest.raises(NotTheLetterFile) as info:
        datasets.letter_recognition(damaged.parent)
    assert info.value.fields == {
        "path": damaged,
        "digest": hashlib.sha256(bytes(data)).hexdigest(),
        "expected": LETTER_SHA256,
    }
    assert f"rm '{damaged}'" in info.value.fix and isinstance(info.value, OSError)


def test_failed_download_is_explained(monkeypatch):
    monkeypatch.delenv("MXLEARN_DATA")
    with pytest.raises(DownloadFailed) as info:
        datasets.letter_file(url="http://127.0.0.1:9/letter-recognition.data")
    assert info.value.fields["url"] == "http://127.0.0.1:9/letter-recognition.data"
    assert "export MXLEARN_DATA=" in info.value.fix  # the command the student runs
    assert not any(datasets.cache_dir().glob("*"))  # no half-written file left behind


@pytest.fixture
def local_server(shared_data, tmp_path):
    served = tmp_path / "served"
    _plain_copy(shared_data, served)
    (served / "wrong.data").write_bytes(b"A,1,2\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_goes_to_the_cache_and_is_verified(local_server, monkeypatch):
    monkeypatch.delenv("MXLEARN_DATA")
    got = datasets.letter_file(url=f"{local_server}/letter-recognition.data")
    assert got == datasets.cache_dir() / "letter-recognition.data"
    with pytest.raises(NotTheLetterFile) as info:
        shutil.rmtree(datasets.cache_dir())
        datasets.letter_file(url=f"{local_server}/wrong.data")
    assert info.value.fields["digest"] == hashlib.sha256(b"A,1,2\n").hexdigest()
    assert info.value.fields["expected"] == LETTER_SHA256
    assert not (datasets.cache_dir() / "letter-recognition.data").exists()


def test_synthetic_sets_are_seeded():
    a = datasets.synthetic_classification(seed=3)
    b = datasets.synthetic_classification(seed=3)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    X, y, w = datasets.synthetic_regression(num_samples=500, noise=0.0)
    assert np.allclose(X @ w, y, atol=1e-4)
