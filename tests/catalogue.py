"""The catalogue of bad inputs: each case is run by tests/test_bad_input_catalogue.py and
rendered into docs/bad-inputs.md by ``python tests/catalogue.py`` (the test checks the doc
is current, so every line of the doc is backed by a test).

A case is (area, what was tried, a callable that must raise ValueError, expected text).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bad-inputs.md"


def _model(**kw):
    from ncld_core.model import ELMNCLD

    return ELMNCLD(n_neighbors=3, random_state=0, **kw)


def _fitted():
    X = np.random.default_rng(0).normal(size=(20, 4))
    Y = (np.random.default_rng(1).random((20, 3)) < 0.4).astype(int)
    return _model().partial_fit(X, Y), X, Y


def _arff(text: str, xml: bytes | None = None):
    from ncld_core.data import load_arff_bytes

    return load_arff_bytes(text.encode(), xml)


GOOD_ARFF = "@relation t\n@attribute f numeric\n@attribute a {0,1}\n@attribute b {0,1}\n@data\n1,0,1\n2,1,0\n"
XML_AB = b'<labels xmlns="http://mulan.sourceforge.net/labels"><label name="a"/><label name="b"/></labels>'


def _checkpoint_case(tmp: Path, damage: str):
    import zipfile

    from ncld_core.checkpoint import load_checkpoint, save_checkpoint
    from ncld_core.model import ELMNCLD

    path = tmp / "m.npz"
    save_checkpoint(_fitted()[0], path)
    if damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif damage in ("nested", "bomb"):
        if damage == "nested":
            header = b'{"format": "ncld-checkpoint", "version": 3, "payload": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
            np.savez(path, __meta__=np.frombuffer(header, dtype=np.uint8))
        else:  # the array's .npy header claims 1 GiB; the member holds 64 bytes
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            with zipfile.ZipFile(path, "w") as out:
                for key, value in arrays.items():
                    with out.open(f"{key}.npy", "w") as member:
                        if key == "a0":
                            np.lib.format.write_array_header_1_0(
                                member, {"descr": "<f8", "fortran_order": False, "shape": (2**27,)})
                            member.write(bytes(64))
                        else:
                            np.lib.format.write_array(member, value)
    else:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(arrays["__meta__"].tobytes())
        if damage == "version":
            meta.update(version=99, ncld="9.9")
        elif damage == "class":
            meta["payload"] = {"__object__": "Popen", "state": {"__dict__": {}}}
        elif damage == "parameter":
            meta["payload"]["state"]["__dict__"]["n_hidden"] = "lots"
        elif damage == "method":
            meta["payload"]["state"]["__dict__"]["decision_function"] = 1
        elif damage == "pickle":
            meta["arrays"]["a0"] = ["|O", [1]]
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        if damage == "pickle":
            arrays["a0"] = np.array([object()], dtype=object)
        np.savez(path, **arrays)
        assert zipfile.is_zipfile(path)
    load_checkpoint(path, expected=ELMNCLD)


def _checkpoint_values_case(tmp: Path, damage: str):
    """A real checkpoint with its arrays rewritten: every float array ``value``, or a member written twice."""
    import warnings
    import zipfile

    from ncld_core.checkpoint import load_checkpoint, save_checkpoint

    path = tmp / "values.npz"
    save_checkpoint(_fitted()[0], path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    if damage == "duplicate":  # the later copy of a member, all zeros, was the one loaded
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name": the point of the case
            with zipfile.ZipFile(path, "a") as out, out.open("a0.npy", "w") as member:
                np.lib.format.write_array(member, np.zeros_like(arrays["a0"]))
    else:
        value = {"nan": np.nan, "huge": 1e308}[damage]
        np.savez(path, **{k: np.full_like(v, value) if k != "__meta__" and v.dtype.kind == "f" else v
                          for k, v in arrays.items()})
    load_checkpoint(path)


def _peer_checkpoint_case(tmp: Path, name: str, damage: str):
    """A peer's checkpoint with one stored part rewritten: the sparse window of a windowed peer (its column
    indices past its columns, its row pointers falling), a River peer's weights (a feature past its features)."""
    from ncld_core.checkpoint import load_checkpoint, save_checkpoint
    from ncld_core.eval.baselines import make_baseline

    X = np.random.default_rng(0).normal(size=(40, 4))
    Y = (np.random.default_rng(1).random((40, 3)) < 0.4).astype(int)
    path = tmp / "peer.npz"
    save_checkpoint(make_baseline(name).partial_fit(X[:20], Y[:20]).partial_fit(X[20:], Y[20:]), path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["__meta__"].tobytes())
    state = meta["payload"]["state"]["__dict__"]
    if damage in ("indices", "indptr"):
        key = state["_X"]["__csr__"][damage]["__array__"]
        a = arrays[key].copy()
        if damage == "indices":
            a[0] = 4  # column 4 of 4
        else:
            a[1] = a[2] + 1
        arrays[key] = a
    elif damage == "river feature":
        key = state["model_"]["__dict__"]["keys"]["__list__"][0]["__array__"]
        arrays[key] = np.full_like(arrays[key], 9)
    np.savez(path, **arrays)
    load_checkpoint(path)


def _checkpoint_file_case(tmp: Path, kind: str):
    """``ncld resume`` (its reader) on what is not a regular file."""
    import os

    from ncld_core.checkpoint import load_run

    if kind == "fifo":
        path = tmp / "pipe.npz"
        if not path.exists():
            os.mkfifo(path)
    else:
        path = {"directory": tmp, "device": Path("/dev/zero")}[kind]
    load_run(path)


def _only_folder(folder: Path, fn):
    """``fn()`` with the data folders reduced to ``folder`` (the doc must not depend on this machine's datasets)."""
    import os

    from ncld_core.data import ENV_VAR, catalog

    old_env, old_repo = os.environ.get(ENV_VAR), catalog.REPO_DATA_DIR
    os.environ[ENV_VAR], catalog.REPO_DATA_DIR = str(folder), folder / "no-repo-data"
    try:
        fn()
    finally:
        catalog.REPO_DATA_DIR = old_repo
        if old_env is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = old_env


def _stream_from_path(tmp: Path, path: str):
    """A run configuration naming a file (as a link or its pinned run can): refused by the resolver."""
    from ncld_core.config import RunConfig

    folder = tmp / "folders"
    folder.mkdir(exist_ok=True)
    _only_folder(folder, lambda: RunConfig(dataset=path, chunk_size=2, n_neighbors=1).build_stream())


def cases(tmp: Path):
    """All catalogued bad inputs; ``tmp`` is a scratch folder."""
    from ncld_core.cli import main as cli
    from ncld_core.config import RunConfig
    from ncld_core.data import check_features, load_arff_bytes, load_dataset
    from ncld_core.stream import Stream
    from ncld_core.stream.schedule import DriftSchedule, reorder_for_schedule

    f = _fitted

    def chunk(mutate):
        model, X, Y = f()
        model.partial_fit(*mutate(X, Y))

    def with_string(X):
        X = X.astype(object)
        X[0, 1] = "2.5"
        return X

    def nan_at(X, value):
        X = X.copy()
        X[2, 1] = value
        return X

    def cli_error(argv, tmp=tmp):
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli(argv + ["--quiet"])
        if code == 2:
            raise ValueError(err.getvalue().strip())

    def constant_dataset_run():
        import os

        folder = tmp / "constant"
        folder.mkdir(exist_ok=True)
        rows = "\n".join(f"1,{j % 2},{(j // 2) % 2}" for j in range(40))
        (folder / "flat.arff").write_text(GOOD_ARFF.split("@data")[0] + "@data\n" + rows + "\n")
        (folder / "flat.xml").write_bytes(XML_AB)
        old = os.environ.get("NCLD_DATA_DIR")
        os.environ["NCLD_DATA_DIR"] = str(folder)
        try:
            cli_error(["run", "--dataset", "flat", "--chunk-size", "20", "--n-neighbors", "3"])
        finally:
            if old is None:
                os.environ.pop("NCLD_DATA_DIR", None)
            else:
                os.environ["NCLD_DATA_DIR"] = old

    def reordered_columns():
        import pandas as pd

        model, X, Y = f()
        frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
        model.fit(frame, Y).predict(frame[["d", "c", "b", "a"]])

    def sha_mismatch():
        import hashlib

        folder = tmp / "sums"
        folder.mkdir(exist_ok=True)
        (folder / "toy.arff").write_text(GOOD_ARFF)
        (folder / "toy.xml").write_bytes(XML_AB)
        wrong = hashlib.sha256(b"something else").hexdigest()
        (folder / "SHA256SUMS").write_text(f"{wrong}  toy.arff\n")
        load_dataset("toy", dirs=[folder])

    single_only = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=np.int8)
    return [
        ("model", "X and Y with different numbers of rows", lambda: chunk(lambda X, Y: (X[:10], Y)), "instances but Y has"),
        ("model", "NaN in X", lambda: chunk(lambda X, Y: (nan_at(X, np.nan), Y)), "NaN or infinity (first at row 2, column 1)"),
        ("model", "infinity in X", lambda: chunk(lambda X, Y: (nan_at(X, np.inf), Y)), "NaN or infinity"),
        ("model", "labels outside {0,1} / {-1,+1}", lambda: chunk(lambda X, Y: (X, Y * 2)), "labels in {0, 1} or {-1, +1}; found 2"),
        ("model", "an empty chunk", lambda: chunk(lambda X, Y: (X[:0], Y[:0])), "empty"),
        ("model", "a later chunk with another feature count", lambda: chunk(lambda X, Y: (X[:, :2], Y)), "X has 2 features, but ELMNCLD is expecting 4 features as input"),
        ("model", "a later chunk with another label count", lambda: chunk(lambda X, Y: (X, Y[:, :2])), "has 2 labels but the model was initialised with 3"),
        ("model", "a flip rate of 1 or more", lambda: _model(rho_pos=1.0).partial_fit(*f()[1:]), "rho_pos of label 0 must be in [0, 1)"),
        ("model", "rho_pos + rho_neg >= 1 (Eq. NR)", lambda: _model(rho_pos=0.6, rho_neg=0.5).partial_fit(*f()[1:]), "rho_pos + rho_neg must be < 1"),
        ("model", "one rate per label, wrong count", lambda: _model(rho_pos=[0.1, 0.2]).partial_fit(*f()[1:]), "2 rates but there are 3 labels"),
        ("model", "beta outside [0, 1]", lambda: _model(beta=1.5).partial_fit(*f()[1:]), "beta must be in [0, 1]"),
        ("model", "alpha = 0", lambda: _model(alpha=0.0).partial_fit(*f()[1:]), "alpha must be in (0"),
        ("model", "delta = 1", lambda: _model(delta=1.0).partial_fit(*f()[1:]), "delta must be in (0, 1)"),
        ("model", "an unknown strategy", lambda: _model(strategy="maybe").partial_fit(*f()[1:]), "strategy must be one of"),
        ("model", "an unknown drift detector", lambda: _model(detector="cusum").partial_fit(*f()[1:]), "detector must be one of ['paper', 'welch'"),
        ("model", "an unknown monitored detector", lambda: _model(monitors=("paper", "kswin")).partial_fit(*f()[1:]), "monitors: each must be one of"),
        ("model", "the paper's Hessian at beta <= 1/2", lambda: _model(hessian="paper", beta=0.3).partial_fit(*f()[1:]), "makes K indefinite at beta=0.3"),
        ("model", "a string in X (a numeric one too)", lambda: chunk(lambda X, Y: (with_string(X), Y)), "found the string '2.5' at row 0, column 1"),
        ("model", "labels given as the strings '0'/'1' (bytes, or strings in an object array, too)", lambda: chunk(lambda X, Y: (X, Y.astype(str))), "Y must be numeric: found the string '0' at row 0, column 0"),
        ("model", "labels given as dates or durations (datetime64 / timedelta64)", lambda: chunk(lambda X, Y: (X, Y.astype("timedelta64[s]"))), "Y must be numeric: found durations (dtype timedelta64[s])"),
        ("model", "features given as dates (datetime64, or dates in an object array)", lambda: chunk(lambda X, Y: ((X * 100).astype("datetime64[D]"), Y)), "X must be numeric: found dates (dtype datetime64[D])"),
        ("model", "trusted labels given as strings (Y_trusted)", lambda: _model().partial_fit(*f()[1:], trusted=np.arange(20) < 2, Y_trusted=f()[2][:2].astype(str)), "Y_trusted must be numeric: found the string"),
        ("model", "a feature of 1e308 (finite; its square overflows)", lambda: chunk(lambda X, Y: (nan_at(X, 1e308), Y)), "value 1e+308 at row 2, column 1 is too large"),
        ("model", "a chunk whose features are all constant", lambda: chunk(lambda X, Y: (np.ones_like(X), Y)), "every feature is constant"),
        ("model", "random_state that cannot seed a generator", lambda: _model().set_params(random_state="abc").partial_fit(*f()[1:]), "random_state must be None, an integer"),
        ("model", "a DataFrame with its columns reordered at predict", reordered_columns, "Feature names must be in the same order as they were in fit"),
        ("model", "a chunk of 1 instance (no neighbour for the graph)", lambda: chunk(lambda X, Y: (X[:1], Y[:1])), "X has 1 sample"),
        ("model", "predict before any chunk", lambda: _model().predict(np.zeros((2, 4))), "not fitted yet"),
        ("model", "an unknown probability model", lambda: _model(probability_model="magic").partial_fit(*f()[1:]), "probability_model must be one of"),
        ("data", "an unknown dataset name", lambda: load_dataset("no-such-data", dirs=[tmp]), "unknown dataset 'no-such-data'"),
        ("data", "a malformed ARFF line (five values for three attributes)", lambda: _arff(GOOD_ARFF.replace("2,1,0", "2,1,0,,7"), XML_AB), "line 7: the row has 5 values, the header declares 3 attributes"),
        ("data", "a word where a numeric feature's value goes", lambda: _arff(GOOD_ARFF.replace("2,1,0", "abc,1,0"), XML_AB), "the value of the numeric attribute 'f' (column 1) is not a number"),
        ("data", "an empty file", lambda: _arff("", XML_AB), "the file is empty"),
        ("data", "label XML naming labels the ARFF lacks", lambda: _arff(GOOD_ARFF, XML_AB.replace(b'"b"', b'"zz"')), "zz"),
        ("data", "label XML with a DOCTYPE / ENTITY (billion laughs)", lambda: _arff(GOOD_ARFF, b'<!DOCTYPE l [<!ENTITY x "y">]><labels/>'), "DOCTYPE"),
        ("data", "a label XML in an encoding the parser cannot read (UTF-7)", lambda: _arff(GOOD_ARFF, b'<?xml version="1.0" encoding="UTF-7"?>' + XML_AB), "xml_bytes: the label XML declares the encoding 'UTF-7'"),
        ("data", "label values other than 0/1", lambda: _arff(GOOD_ARFF.replace("{0,1}", "numeric").replace("2,1,0", "2,5,0"), XML_AB), "5"),
        ("data", "a sparse ARFF row naming an attribute twice ({2 1.0,2 5.0})", lambda: load_arff_bytes(b"@relation 'toy: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute x numeric\n@data\n{0 1,2 3.5}\n{2 1.0,2 5.0}\n"), "data row 2 (line 7) gives attribute index 2 twice"),
        ("data", "an upload with a feature of 1e308", lambda: check_features(_arff(GOOD_ARFF.replace("2,1,0", "1e308,1,0"), XML_AB), "arff_bytes"), "feature 'f', data row 2: value 1e+308 is too large"),
        ("data", "an upload whose features are all constant", lambda: check_features(_arff(GOOD_ARFF.replace("2,1,0", "1,1,0"), XML_AB), "arff_bytes"), "every feature is constant"),
        ("data", "an upload that is not UTF-8", lambda: __import__("ncld_core.data", fromlist=["x"]).load_arff_bytes(b"\xff\xfe@\x00r\x00", XML_AB), "UTF-8"),
        ("data", "a dataset file whose checksum does not match SHA256SUMS / the registry", sha_mismatch, "checksum"),
        ("stream", "chunk size below 2", lambda: list(Stream(np.zeros((4, 1)), single_only, single_only).chunk_bounds(1)), "chunk_size must be an integer >= 2"),
        ("stream", "a drift point beyond the stream", lambda: DriftSchedule.parse("growth@500").validate(100), "beyond"),
        ("stream", "growth right after growth", lambda: DriftSchedule.parse("growth@10, growth@20"), "already multi-label"),
        ("stream", "growth on a dataset with no multi-label instances", lambda: reorder_for_schedule(single_only, "growth@2"), "multi-label"),
        ("stream", "a noise change without its factor (noise@3000)", lambda: DriftSchedule.parse("noise@3000"), "a noise change needs its factor, e.g. 'noise@3000x1.5'"),
        ("config", "a noise change the stream's rates cannot take (noise@2500x2 on rates up to 0.4)", lambda: RunConfig(schedule="noise@2500x2").check(), "would give flip rates with rho_pos + rho_neg up to 1.6 (Eq. NR needs < 1)"),
        ("config", "a noise change on a stream without noise", lambda: RunConfig(schedule="noise@2500x2", noise="none").check(), "this stream has no noise"),
        ("config", "a flip-rate table with the wrong number of labels", lambda: RunConfig(noise="table", rho_pos=[0.1, 0.2], rho_neg=[0.1, 0.2]).check(), "2 rates but there are 10 labels"),
        ("config", "n_neighbors not below the chunk size", lambda: RunConfig(chunk_size=10, n_neighbors=10).check(), "n_neighbors must be below the chunk size"),
        ("config", "rho_high >= 0.5 (pairs could reach 1)", lambda: RunConfig(rho_high=0.6).check(), "keep rho_high below 0.5"),
        ("config", "a TOML file that does not parse", lambda: RunConfig.from_toml("beta = = 1"), "not valid TOML"),
        ("config", "an unknown key in the configuration", lambda: RunConfig.from_toml("betta = 1"), "unknown configuration key(s): betta"),
        ("config", "TOML keys beside the [run] table (they would be ignored)", lambda: RunConfig.from_toml("beta = 0.9\nn_hidden = 7\n[run]\nchunk_size = 300\n"), "beta, n_hidden outside the [run] table"),
        ("config", "a TOML 'run' that is not a table (run = 5)", lambda: RunConfig.from_toml("run = 5"), "'run' must be a table ([run])"),
        ("config", "a TOML table nested 5,000 deep ([a.a.a...])", lambda: RunConfig.from_toml("[" + ".".join(["a"] * 5000) + "]"), "nested more than 64 levels deep"),
        ("config", "a stream length past the bound (n_instances = 10^13)", lambda: RunConfig(n_instances=10**13).check(), "n_instances must be in [2, 1000000]"),
        ("config", "a seed past 2^64 (a link's or a flag's 20 digits)", lambda: RunConfig(seed=10**20).check(), "seed must be in [0, 4294967295], got 100000000000000000000"),
        ("config", "a synthetic stream past the memory budget (1,000,000 instances x 100 features)", lambda: RunConfig(n_instances=10**6, n_features=100).check(), "past the budget of 512 MB"),
        ("config", "a compared detector that is the acting one", lambda: RunConfig(monitors=[RunConfig().detector]).check(), "must not repeat the acting detector"),
        ("link", "a dataset named by a server path (?dataset=/etc/passwd, or the pinned run's)", lambda: _stream_from_path(tmp, "/etc/passwd"), "unknown dataset: choose one of the listed datasets"),
        ("link", "a dataset named by a path that does not exist", lambda: _stream_from_path(tmp, "/no/such/file.arff"), "unknown dataset: choose one of the listed datasets"),
        ("link", "a dataset named by the path of a valid ARFF outside the data folders", lambda: (tmp.joinpath("outside.arff").write_text(GOOD_ARFF), _stream_from_path(tmp, str(tmp / "outside.arff"))), "unknown dataset: choose one of the listed datasets"),
        ("config", "a link (URL) with a malformed value", lambda: RunConfig.from_query_params({"chunk_size": "ten"}), "chunk_size: cannot read 'ten' from the link"),
        ("link", "a link value nested 1,200 deep (?dataset=[[[...)", lambda: RunConfig.from_query_params({"dataset": "[" * 1200}), "dataset: nested more than 64 levels deep"),
        ("link", "a link value of more than 64 Ki characters (a 7,100-point schedule)", lambda: RunConfig.from_query_params({"schedule": "growth@10," * 7100}), "schedule: the link's value has 71,000 characters, past the bound of 65,536"),
        ("link", "a drift schedule of 5,000 points (link, TOML or flag)", lambda: RunConfig(schedule=", ".join(f"{'growth' if i % 2 == 0 else 'reduction'}@{i + 1}" for i in range(5000))).check(), "a drift schedule has at most 100 change points, got 5,000"),
        ("cli", "a dataset whose features are all constant", constant_dataset_run, "dataset 'flat': every feature is constant"),
        ("cli", "--out naming a file, not a folder (refused before the run)", lambda: (tmp.joinpath("afile").write_text(""), cli_error(["run", "--n-instances", "200", "--chunk-size", "50", "--out", str(tmp / "afile")])), "is a file, not a folder"),
        ("cli", "--checkpoint under a file (refused before the run)", lambda: (tmp.joinpath("afile").write_text(""), cli_error(["run", "--n-instances", "200", "--chunk-size", "50", "--checkpoint", str(tmp / "afile" / "x.ckpt")])), "is a file, not a folder"),
        ("cli", "--checkpoint naming a device (/dev/null; refused before the run)", lambda: cli_error(["run", "--n-instances", "200", "--chunk-size", "50", "--checkpoint", "/dev/null"]), "--checkpoint /dev/null is a character device, not a regular file"),
        ("cli", "a missing --config file", lambda: cli_error(["run", "--config", str(tmp / "none.toml")]), "--config: no such file"),
        ("cli", "--config naming a device (/dev/zero)", lambda: cli_error(["run", "--config", "/dev/zero"]), "--config: not a regular file: /dev/zero"),
        ("cli", "a --config file past 1 MiB", lambda: (tmp.joinpath("big.toml").write_bytes(b"#" * (2**20 + 1)), cli_error(["run", "--config", str(tmp / "big.toml")])), "past the bound of 1,048,576 bytes"),
        ("cli", "a --config file in latin-1", lambda: (tmp.joinpath("latin1.toml").write_bytes(b'dataset = "caf\xe9"\n'), cli_error(["run", "--config", str(tmp / "latin1.toml")])), "not UTF-8 text: byte 0xe9 at line 1, column 15"),
        ("cli", "a --config table nested 5,000 deep", lambda: (tmp.joinpath("deep.toml").write_text("x = " + "{a = " * 5000 + "1" + "}" * 5000), cli_error(["run", "--config", str(tmp / "deep.toml")])), "nested more than 64 levels deep"),
        ("cli", "--rates-csv naming a folder", lambda: cli_error(["run", "--rates-csv", str(tmp)]), "flip rates file: not a regular file"),
        ("cli", "a rates CSV without rho_pos/rho_neg columns", lambda: (tmp.joinpath("r.csv").write_text("a,b\n1,2\n"), cli_error(["run", "--rates-csv", str(tmp / "r.csv")])), "missing column(s) rho_pos, rho_neg"),
        ("checkpoint", "a truncated checkpoint", lambda: _checkpoint_case(tmp, "truncated"), "corrupt or not an ncld checkpoint"),
        ("checkpoint", "a checkpoint of another format version", lambda: _checkpoint_case(tmp, "version"), "checkpoint format 99 written by ncld 9.9; this ncld"),
        ("checkpoint", "a checkpoint naming a class outside ncld", lambda: _checkpoint_case(tmp, "class"), "unknown class 'Popen'"),
        ("checkpoint", "a checkpoint carrying a pickled object array", lambda: _checkpoint_case(tmp, "pickle"), "holds object values"),
        ("checkpoint", "a checkpoint whose header is nested 10,000 deep", lambda: _checkpoint_case(tmp, "nested"), "nested more than 64 levels deep"),
        ("checkpoint", "a checkpoint array declaring 1 GiB it does not hold", lambda: _checkpoint_case(tmp, "bomb"), "holds 64 bytes of data but its header declares 1073741824"),
        ("checkpoint", "a checkpoint giving a model a parameter of the wrong type", lambda: _checkpoint_case(tmp, "parameter"), "n_hidden must be"),
        ("checkpoint", "a checkpoint setting an attribute named after a method", lambda: _checkpoint_case(tmp, "method"), "would hide ELMNCLD.decision_function"),
        ("checkpoint", "a checkpoint whose float arrays are all NaN", lambda: _checkpoint_values_case(tmp, "nan"), "(member a0.npy) holds nan"),
        ("checkpoint", "a checkpoint whose float arrays are all 1e308", lambda: _checkpoint_values_case(tmp, "huge"), "holds 1e+308 at (0, 0) (1200 of 1200 values refused); its values must be finite and in [-1, 1]"),
        ("checkpoint", "a checkpoint naming one member twice", lambda: _checkpoint_values_case(tmp, "duplicate"), "member a0.npy appears twice"),
        ("checkpoint", "a windowed peer's checkpoint whose sparse window names a column past its columns", lambda: _peer_checkpoint_case(tmp, "ML-kNN (window)", "indices"), "its indices hold 4 at 0, outside its 4 columns"),
        ("checkpoint", "a windowed peer's checkpoint whose sparse window's row pointers fall", lambda: _peer_checkpoint_case(tmp, "MLSAMPkNN", "indptr"), "its indptr must start at 0 and never decrease"),
        ("checkpoint", "a River peer's checkpoint whose weights name a feature past its features", lambda: _peer_checkpoint_case(tmp, "River BR-LR", "river feature"), "model_['keys'][0] holds 9 at 0: a column of the 4 features is in [0, 4)"),
        ("checkpoint", "resuming from /dev/zero", lambda: _checkpoint_file_case(tmp, "device"), "is a character device, not a regular file"),
        ("checkpoint", "resuming from a FIFO (named pipe)", lambda: _checkpoint_file_case(tmp, "fifo"), "is a FIFO (named pipe), not a regular file"),
        ("checkpoint", "resuming from a directory", lambda: _checkpoint_file_case(tmp, "directory"), "is a directory, not a regular file"),
    ]


def run_case(fn) -> str:
    """The ValueError message of a case (AssertionError if it does not raise one)."""
    try:
        fn()
    except ValueError as exc:
        return str(exc)
    raise AssertionError("no ValueError raised")


def render(tmp: Path) -> str:
    lines = [
        "# Bad inputs and what the user sees",
        "",
        "Generated by `python tests/catalogue.py`; `tests/test_bad_input_catalogue.py` runs every case and",
        "fails when this file is out of date. In the API each is a `ValueError` (the text below; a checkpoint's is",
        "`ncld_core.checkpoint.CheckpointError`, a `ValueError` too); the command",
        "line prints it as `error: ...` with exit status 2; the dashboard shows the same text next to the",
        "control it concerns, and Run stays disabled until it is fixed.",
        "",
        "| # | area | what was tried | what the user sees |",
        "|---|---|---|---|",
    ]
    for i, (area, what, fn, _expected) in enumerate(cases(tmp), 1):
        message = run_case(fn).replace(str(tmp), "<tmp>").replace(str(REPO), "<repo>")
        message = message.replace("|", "\\|").replace("\n", " ")
        if len(message) > 220:
            message = message[:217] + "..."
        lines.append(f"| {i} | {area} | {what} | {message} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(render(Path(tmp)), encoding="utf-8")
    print(f"wrote {DOC}")
