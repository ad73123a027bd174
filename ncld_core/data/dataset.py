"""The multi-label dataset type: features, labels, names and figures.

>>> import numpy as np
>>> ds = Dataset("toy", np.eye(3), np.array([[1, 0], [1, 1], [0, 0]]), ("a", "b"))
>>> ds.n_instances, ds.n_labels, ds.cardinality
(3, 2, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..validation import check_dtype


# ---------------------------------------------------------------------------
# The dataset
# ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A multi-label dataset: features, {0, 1} labels and their names.

    Attributes
    ----------
    name : str
        Short name (the file stem for files, ``"upload"`` by default for uploads).
    X : scipy.sparse.csr_matrix or numpy.ndarray, shape (n, d)
        float64 features: CSR for sparse ARFF files, a dense array for dense ones.
        Nominal features hold the index of their value in the declaration.
    Y : numpy.ndarray of int8, shape (n, q)
        Labels in {0, 1}.
    label_names : tuple of str
        One name per column of ``Y`` (default ``label_0``, ``label_1``, ...).
    feature_names : tuple of str
        One name per column of ``X`` (default ``x_0``, ``x_1``, ...).
    source : str
        Path of the ARFF file, or ``"upload"``.

    Notes
    -----
    Instances are compared by identity (``eq=False``): they hold arrays.
    """

    name: str
    X: object
    Y: np.ndarray
    label_names: tuple = ()
    feature_names: tuple = ()
    source: str = "upload"

    def __post_init__(self):
        X = self.X
        if sp.issparse(X):
            if not (isinstance(X, sp.csr_matrix) and X.dtype == np.float64):
                X = sp.csr_matrix(X, dtype=np.float64)
        else:
            try:
                raw = np.asarray(X)
            except (TypeError, ValueError) as exc:  # e.g. ragged rows
                raise ValueError(f"Dataset {self.name!r}: X must be numeric: {exc}") from None
            check_dtype(raw, f"Dataset {self.name!r}: X", X)  # no strings, dates: as the models check
            try:
                X = np.asarray(raw, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"Dataset {self.name!r}: X must be numeric: {exc}") from None
        if X.ndim != 2:
            raise ValueError(f"Dataset {self.name!r}: X must be 2-D (instances x features), got {X.ndim}-D")
        if X.shape[0] == 0:
            raise ValueError(f"Dataset {self.name!r}: X has no instances")
        Y = np.asarray(self.Y)
        check_dtype(Y, f"Dataset {self.name!r}: Y", self.Y)  # labels' values checked as features' are
        if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise ValueError(
                f"Dataset {self.name!r}: Y must have shape (n_instances, n_labels) with "
                f"n_instances={X.shape[0]}, got {Y.shape}"
            )
        if Y.shape[1] == 0:
            raise ValueError(f"Dataset {self.name!r}: Y has no labels")
        if not np.all(np.isin(Y, (0, 1))):
            raise ValueError(f"Dataset {self.name!r}: Y must hold labels in {{0, 1}}")
        Y = Y.astype(np.int8, copy=False)
        labels = tuple(str(s) for s in self.label_names) or tuple(f"label_{j}" for j in range(Y.shape[1]))
        features = tuple(str(s) for s in self.feature_names) or tuple(f"x_{j}" for j in range(X.shape[1]))
        if len(labels) != Y.shape[1]:
            raise ValueError(f"Dataset {self.name!r}: {len(labels)} label_names for {Y.shape[1]} labels")
        if len(features) != X.shape[1]:
            raise ValueError(f"Dataset {self.name!r}: {len(features)} feature_names for {X.shape[1]} features")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "label_names", labels)
        object.__setattr__(self, "feature_names", features)
        object.__setattr__(self, "source", str(self.source))

    @property
    def n_instances(self) -> int:
        """Number of instances (rows)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature attributes."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of labels."""
        return int(self.Y.shape[1])

    @property
    def cardinality(self) -> float:
        """Label cardinality: mean number of relevant labels per instance."""
        return float(self.Y.sum(axis=1, dtype=np.int64).mean())

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy.sparse CSR matrix."""
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n_instances={self.n_instances}, n_features={self.n_features}, "
            f"n_labels={self.n_labels}, cardinality={self.cardinality:.3f}, sparse={self.is_sparse}, "
            f"source={self.source!r})"
        )


def label_problems(ds) -> tuple[str | None, str | None]:
    """``(error, warning)`` about a dataset's labels (the dashboard shows them beside its upload): no positive at all is refused (every metric would
    score predicting nothing: average precision 1.0, no result); labels that are never positive are named
    in a warning (their scores say nothing of the model).

    >>> import numpy as np
    >>> from types import SimpleNamespace as D
    >>> label_problems(D(Y=np.zeros((4, 2)), label_names=("a", "b")))[0]
    'the file has no positive label: every label is 0 in every row, so there is nothing to learn or score'
    >>> label_problems(D(Y=np.array([[1, 0], [0, 0]]), label_names=("a", "b")))[1]
    "1 of 2 labels is never positive in the file ('b'): the model cannot learn them, and their scores say nothing"
    """
    positives = np.asarray(ds.Y).sum(axis=0)
    if not positives.any():
        return ("the file has no positive label: every label is 0 in every row, so there is nothing to learn "
                "or score"), None
    never = [name for name, k in zip(ds.label_names, positives) if k == 0]
    if not never:
        return None, None
    shown = ", ".join(map(repr, never[:5])) + (f" and {len(never) - 5} more" if len(never) > 5 else "")
    verb = "is" if len(never) == 1 else "are"
    return None, (f"{len(never)} of {len(positives)} labels {verb} never positive in the file ({shown}): the model "
                  "cannot learn them, and their scores say nothing")
