"""The seed tutorial's data (UCI Letter Recognition, dataset 59, D. J. Slate, 1991,
doi:10.24432/C5ZP40, CC BY 4.0) and small seeded synthetic sets. The letter file is looked for
at ``path``, in ``$MXLEARN_DATA``, in the user cache, then downloaded into it; whatever is found
is checked against the SHA-256 of UCI's file, so a damaged copy is never trained on.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from ._compat import mx
from .atomic_write import atomic_write
from .boundary import public
from .errors import N_, DatasetError
from .language import say

LETTER_URL = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/letter-recognition/"
    "letter-recognition.data"
)
LETTER_SHA256 = "2b89f3602cf768d3c8355267d2f13f2417809e101fc2b5ceee10db19a60de6e2"
LETTER_FILES = ("letter-recognition.data", "letter-recognition.data.gz")
NUM_TRAIN = 16000  # the tutorial trains on the first 16,000 rows and validates on the last 4,000


class DamagedGzip(DatasetError):
    says = N_("'{path}' is a damaged gzip file ({error}).")
    fix_says = N_("delete it; mxlearn downloads a fresh copy: rm '{path}'")


class NotTheLetterFile(DatasetError):
    says = N_(
        "'{path}' is not the UCI letter-recognition file: its SHA-256 is {digest}, "
        "expected {expected} (a damaged or different file)."
    )
    fix_says = N_("delete it so that mxlearn downloads a fresh copy: rm '{path}'")


class DownloadFailed(DatasetError):
    says = N_("Could not download the letter-recognition data from {url}: {reason}.")


def letter_attribution() -> str:
    """The letter data's source and licence, to show wherever it is used."""
    return say(
        'UCI Machine Learning Repository, "Letter Recognition" (dataset 59), D. J. Slate '
        "(1991), doi:10.24432/C5ZP40, licensed CC BY 4.0"
    )


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mxlearn"


def _verified_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    try:
        content = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, EOFError) as err:
        raise DamagedGzip(path=path, error=err) from None
    digest = hashlib.sha256(content).hexdigest()
    if digest != LETTER_SHA256:
        raise NotTheLetterFile(path=path, digest=digest, expected=LETTER_SHA256)
    return content


def _download(url: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / LETTER_FILES[0]

    def fetch(tmp: str) -> None:
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                Path(tmp).write_bytes(response.read())
        except (urllib.error.URLError, OSError, ValueError) as err:
            fix = say(  # the file's own address, whichever one was tried
                "download {url} by hand, then either put it in {folder} or point mxlearn at "
                "its folder: letter_recognition(path='/that/folder') or "
                "export MXLEARN_DATA=/that/folder",
                url=LETTER_URL,
                folder=folder,
            )
            raise DownloadFailed(url=url, reason=getattr(err, "reason", err), fix=fix) from None
        _verified_bytes(Path(tmp))  # only a verified file ever gets the final name

    atomic_write(str(target), fetch)
    return target


def letter_file(path: str | os.PathLike | None = None, url: str = LETTER_URL) -> Path:
    """Where the verified letter-recognition file is, downloading it into the cache if needed."""
    return found_letter_file(path) or _download(url, cache_dir())


def found_letter_file(path: str | os.PathLike | None = None) -> Path | None:
    """The verified letter-recognition file at ``path``, in ``$MXLEARN_DATA`` or in the cache;
    None when there is none (nothing is downloaded)."""
    places = [Path(p) for p in (path, os.environ.get("MXLEARN_DATA") or None) if p is not None]
    for place in [*places, cache_dir()]:
        # a folder holds the file under one of its names; anything else is the file itself
        for candidate in [place / n for n in LETTER_FILES] if place.is_dir() else [place]:
            if candidate.is_file():
                _verified_bytes(candidate)
                return candidate
    return None


def letter_recognition(path: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The UCI letter data: ``X`` float32 (20000, 16) and ``y`` float32 in 0..25 (A=0).

    Examples
    --------
    >>> X, y = letter_recognition()
    >>> X.shape, int(y.max())
    ((20000, 16), 25)
    """
    rows = _verified_bytes(letter_file(path)).decode("ascii").split()
    y = np.array([ord(row[0]) - ord("A") for row in rows], dtype=np.float32)
    X = np.array([row[2:].split(",") for row in rows], dtype=np.float32)
    return X, y


@public("mxlearn.datasets.letter_iters()")
def letter_iters(batch_size: int = 32, path: str | os.PathLike | None = None):
    """The tutorial's iterators: training on the first 16,000 rows (shuffled), validation on
    the last 4,000, so ``mod.predict(val_iter)`` has shape (4000, 26).

    Examples
    --------
    >>> train_iter, val_iter = letter_iters(batch_size=32)
    >>> train_iter.provide_data
    [DataDesc[data,(32, 16),<class 'numpy.float32'>,NCHW]]
    """
    X, y = letter_recognition(path)
    train = mx.io.NDArrayIter(X[:NUM_TRAIN], y[:NUM_TRAIN], batch_size, shuffle=True)
    val = mx.io.NDArrayIter(X[NUM_TRAIN:], y[NUM_TRAIN:], batch_size)
    return train, val


def synthetic_classification(
    num_samples: int = 1000, num_features: int = 16, num_classes: int = 4, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs, one per class: ``X`` float32 (num_samples, num_features), ``y`` float32."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 3.0, size=(num_classes, num_features))
    y = rng.integers(0, num_classes, size=num_samples)
    X = centers[y] + rng.normal(size=(num_samples, num_features))
    return X.astype(np.float32), y.astype(np.float32)


def synthetic_regression(
    num_samples: int = 1000, num_features: int = 4, noise: float = 0.1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A noisy linear relation: ``X``, ``y`` (float32) and the true weights it was made from."""
    rng = np.random.default_rng(seed)
    weights = rng.normal(size=num_features)
    X = rng.normal(size=(num_samples, num_features))
    y = X @ weights + noise * rng.normal(size=num_samples)
    return X.astype(np.float32), y.astype(np.float32), weights.astype(np.float32)
