"""Datasets: the :class:`Dataset` type, ARFF/XML reading, the registry with checksums, downloads.

* :mod:`~ncld_core.data.dataset` -- the dataset type;
* :mod:`~ncld_core.data.arff` -- MULAN / MEKA ARFF and label XML reading (uploads included);
* :mod:`~ncld_core.data.paths` -- path arguments and file reads, with messages naming the parameter;
* :mod:`~ncld_core.data.catalog` -- the known benchmarks, their folders and checksums;
  :func:`list_datasets`, :func:`load_dataset`, :func:`resolve_dataset`;
* :mod:`~ncld_core.data.download` -- checksum-verified downloads.
"""

from .arff import MAX_FEATURE, check_features, load_arff, load_arff_bytes, parse_arff
from .catalog import (
    CHECKSUM_FILE,
    ENV_VAR,
    REGISTRY_PATH,
    REPO_DATA_DIR,
    DatasetFiles,
    data_dirs,
    list_datasets,
    load_dataset,
    registry,
    resolve_dataset,
)
from .dataset import Dataset, label_problems
from .download import download

__all__ = [
    "Dataset", "label_problems", "load_arff", "load_arff_bytes", "parse_arff", "check_features", "MAX_FEATURE",
    "load_dataset", "resolve_dataset", "DatasetFiles", "list_datasets", "data_dirs", "registry", "download",
    "ENV_VAR", "REPO_DATA_DIR", "REGISTRY_PATH", "CHECKSUM_FILE",
]
