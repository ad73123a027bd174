"""Command line: run a dataset / noise / schedule / models configuration and report.

    python -m ncld_core run --dataset enron --noise range --schedule growth \
        --models ELM-O,ELM-I,ELM-II --chunk-size 500 --out runs/enron
    python -m ncld_core run --config run.toml
    python -m ncld_core datasets
    python -m ncld_core download medical

``run`` prints the summary table (the trivial references included), shows a
progress bar on stderr, and with ``--out`` writes ``chunks.csv`` (one row per
chunk and model) and ``summary.json``, each atomically.  Bad input is reported
as ``error: ...`` with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from .config import RunConfig
from .eval.runner import RATE_MODES
from .files import check_writable
from .model.detector import DETECTORS
from .stream.noise_families import NOISE_FAMILIES
from .threads import available_cores, check_n_threads, set_budget

__all__ = ["main", "build_parser", "config_from_args", "capped_threads", "FIELD_FLAGS"]

_SHOWN = ["hamming_loss", "micro_f1", "average_precision", "macro_f1", "example_f1", "ranking_loss"]


def _threads_arg(text: str):
    if text == "auto":
        return text
    try:
        return check_n_threads(int(text), "--threads")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto' or a positive integer, got {text!r}") from None


def _list_arg(text: str) -> list:
    return [m.strip() for m in text.split(",") if m.strip()]


def _rates_arg(text: str) -> list:
    try:
        return [float(v) for v in _list_arg(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated numbers, one per label, got {text!r}") from None


def _alpha_arg(text: str):
    from .model.capacity import ALPHA_MODES

    if text in ALPHA_MODES:
        return text
    try:
        values = [float(v) for v in _list_arg(text)]
    except ValueError:
        values = []
    if not values:
        raise argparse.ArgumentTypeError(f"must be a positive number, one of {', '.join(ALPHA_MODES)} or "
                                         f"comma-separated numbers (a grid), got {text!r}")
    return values[0] if len(values) == 1 and "," not in text else values


def _choices():
    from .model.decision import DECISIONS

    return {"noise": ["none", "range", "table", *NOISE_FAMILIES], "detector": list(DETECTORS),
            "decision": list(DECISIONS), "model_rates": list(RATE_MODES)}


#: Help of the fields' flags (the others are their name and type).
_HELP = {
    "dataset": "'synthetic' or a dataset name (see 'ncld datasets')",
    "noise": "none, a range (--rho-range), a table (--rates-csv) or a noise family",
    "model_rates": "what the ELM-NCLD variants are told about the noise: the true rates (known), nothing "
                   "(estimate: estimated online) or rates 0 (ignore)",
    "trusted_fraction": "a trusted sample: reveal the clean labels of this share of each chunk (e.g. 0.01) to the "
                        "variants that estimate the rates",
    "schedule": "drift points, e.g. 'growth@600, shift@900, reduction@1500', or 'growth' (paper); "
                "'noise@1200x1.5': the flip rates times 1.5 from instance 1200",
    "models": "comma-separated: ELM-O, ELM-I, ELM-II, 'ELM (plain)'",
    "detector": "the drift test the variants act on",
    "monitors": "comma-separated detectors recorded beside it, e.g. 'paper,welch'",
    "decision": "how the variants turn scores into labels (ncld_core.model.decision.DECISIONS)",
    "alpha": "the ridge: a positive number, 'auto' (chosen online) or comma-separated numbers (a grid)",
    "rho_pos": "per-label rates, comma-separated (a table: the noise is 'table' unless --noise says)",
    "rho_neg": "per-label rates, comma-separated (a table: the noise is 'table' unless --noise says)",
    "seed": "model seed",
    "shuffle_seed": "stream order and noise seed",
}
#: The flag of every :class:`~ncld_core.config.RunConfig` field but ``references`` (``--no-references``): its
#: name with dashes, the type of its default, choices from the registries (tests/test_cli.py walks every field).
FIELD_FLAGS = tuple(f.name for f in dataclasses.fields(RunConfig) if f.name != "references")


def _add_field_flags(run):
    default, choices = RunConfig(), _choices()
    for name in FIELD_FLAGS:
        flag, value, kw = f"--{name.replace('_', '-')}", getattr(default, name), {"help": _HELP.get(name)}
        if name in choices:
            kw["choices"] = choices[name]
        elif name == "alpha":
            kw["type"] = _alpha_arg
        elif name in ("rho_pos", "rho_neg"):
            kw["type"] = _rates_arg
        elif isinstance(value, list):
            kw["type"] = _list_arg
        elif isinstance(value, bool):
            raise TypeError(f"{name}: a true/false field needs its flag written out")  # (references has its own)
        elif isinstance(value, int) or value is None:  # (n_instances: None is the whole dataset)
            kw["type"] = int
        elif isinstance(value, float):
            kw["type"] = float
        run.add_argument(flag, **kw)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line naming the help to read (not the whole usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ncld", description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="auto", type=_threads_arg,
                        help="BLAS/OpenMP threads for the models' algebra: a number, or 'auto' (one per run "
                             "below 1500 hidden nodes; see ncld_core/threads.py)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run models prequentially on one stream")
    run.add_argument("--config", type=Path, help="TOML file with RunConfig fields (flags override it)")
    _add_field_flags(run)
    run.add_argument("--rho-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                     help="draw each label's rho_pos and rho_neg from U[LOW, HIGH] (paper: 0.2 0.4)")
    run.add_argument("--rates-csv", type=Path, help="per-label flip rates: CSV with columns rho_pos, rho_neg")
    run.add_argument("--no-references", action="store_true", help="leave out all-negative and noisy-prior")
    run.add_argument("--out", type=Path, help="folder for chunks.csv and summary.json")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--checkpoint", type=Path, help="checkpoint file, rewritten every --checkpoint-every chunks")
    run.add_argument("--checkpoint-every", type=int, default=10)

    resume = sub.add_parser("resume", help="continue a run from its --checkpoint file")
    resume.add_argument("checkpoint", type=Path)
    resume.add_argument("--out", type=Path)
    resume.add_argument("--quiet", action="store_true")
    resume.add_argument("--checkpoint-every", type=int, default=10)

    sub.add_parser("datasets", help="list the datasets found in data/ and $NCLD_DATA_DIR")
    dl = sub.add_parser("download", help="download a registry dataset into data/ (verified by checksum)")
    dl.add_argument("name")
    dl.add_argument("--dest", type=Path)
    dl.add_argument("--base-url")
    sub.add_parser("demo", help="the growth preset on the synthetic stream")
    return parser


def config_from_args(args) -> RunConfig:
    data = {}
    if args.config is not None:
        data = RunConfig.read_toml(args.config, "--config").to_dict()
    data.update({name: getattr(args, name) for name in FIELD_FLAGS if getattr(args, name, None) is not None})
    for key in ("rho_pos", "rho_neg"):  # a rate table given as numbers is the table noise (unless --noise says)
        if getattr(args, key) is not None and args.noise is None:
            data["noise"] = "table"
    if args.no_references:
        data["references"] = False
    if args.rho_range is not None:
        data.update(noise=data.get("noise") if args.noise else "range",
                    rho_low=args.rho_range[0], rho_high=args.rho_range[1])
    if args.rates_csv is not None:
        # The same reader as everywhere else (parse_flip_rates): a label column is matched to the
        # dataset's label names, errors name the label.
        from .stream.noise import parse_flip_rates

        cfg = RunConfig.from_dict(data)
        names = None
        if cfg.dataset != "synthetic":
            from .data import load_dataset

            names = list(load_dataset(cfg.dataset, paths=False).label_names)
        rho_pos, rho_neg = parse_flip_rates(args.rates_csv, len(names) if names else cfg.n_labels, names)
        data.update(noise="table", rho_pos=rho_pos.tolist(), rho_neg=rho_neg.tolist())
    return RunConfig.from_dict(data)


def run_config(config: RunConfig, *, out: Path | None = None, quiet: bool = False, stream=None,
               checkpoint: Path | None = None, checkpoint_every: int = 10, resume_from=None):
    """Run ``config`` (or continue ``resume_from = (state, chunks)``); return the RunResult.

    With ``checkpoint`` the run's state is saved atomically every ``checkpoint_every``
    chunks and at the end, so ``ncld resume`` can continue it bit for bit.
    """
    from .checkpoint import save_run
    from .eval.runner import RunResult

    if checkpoint_every < 1:
        raise ValueError(f"--checkpoint-every must be >= 1, got {checkpoint_every}")
    # where the run writes is checked before any work: never a run computed only to fail at its last step
    if out is not None:
        out = check_writable(out, "--out", folder=True)
    if checkpoint is not None:
        checkpoint = check_writable(checkpoint, "--checkpoint", folder=False)
    config.check()
    # the whole run's memory is checked (RunConfig.check_budget) before the stream's arrays are made
    stream = config.build_stream() if stream is None else stream
    runner = config.runner()
    state, chunks = (None, []) if resume_from is None else resume_from
    n_chunks = -(-stream.n_instances // config.chunk_size)
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=n_chunks, initial=len(chunks), desc=stream.name, unit="chunk", file=sys.stderr)
    try:
        for chunk in runner.iter_run(stream, state=state):
            chunks.append(chunk)
            if bar is not None:
                bar.update(1)
            if checkpoint is not None and (chunk.chunk + 1) % checkpoint_every == 0:
                save_run(checkpoint, runner.state_, chunks, config=config.to_dict(), chunk_size=config.chunk_size)
    finally:
        if bar is not None:
            bar.close()
    if checkpoint is not None:
        save_run(checkpoint, runner.state_, chunks, config=config.to_dict(), chunk_size=config.chunk_size)
    result = RunResult(chunks, stream, config.chunk_size, config=config.to_dict())
    if out is not None:
        try:
            result.to_csv(out / "chunks.csv")
            result.to_json(out / "summary.json")
        except OSError as exc:  # (the folder changed during the run)
            raise ValueError(f"--out {out}: cannot write the results: {exc.strerror or exc}") from None
    return result


def resume(path: Path, **kwargs):
    """Continue the run checkpointed in ``path`` (the stream is rebuilt from its configuration).

    A checkpoint that cannot be read, or whose configuration cannot be run, is a
    :class:`~ncld_core.checkpoint.CheckpointError` (a ValueError: ``error: ...``, exit status 2).
    """
    from .checkpoint import CheckpointError, load_run

    state, chunks, config, _ = load_run(path)
    try:
        cfg = RunConfig.from_dict(config)
        cfg.check()
        stream = cfg.build_stream()
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:  # the file's values, not the user's
        raise CheckpointError(f"checkpoint {path}: its run configuration cannot be run: {exc}") from None
    return run_config(cfg, checkpoint=path, resume_from=(state, chunks), stream=stream, **kwargs)


def format_summary(result) -> str:
    table = result.summary()
    cols = [c for c in _SHOWN if c in table.columns]
    drift = [c for c in ("firings", "detected", "false_alarms", "mean_delay") if c in table.columns]
    lines = [f"stream {result.stream_name}: {len(result.chunks)} chunks of {result.chunk_size}; "
             f"true change points: {result.change_points or 'none'}"]
    if result.coverage_note:
        lines.append(f"note: the stream {result.coverage_note}")
    lines.append(table[cols + drift].to_string(float_format=lambda v: f"{v:.4f}", na_rep="-"))
    return "\n".join(lines)


def format_datasets() -> str:
    """The ``datasets`` command's text: the table, or where to put data when no folder holds any."""
    from .data import data_dirs, list_datasets

    table = list_datasets()
    if table.empty:
        folders = ", ".join(str(d) for d in data_dirs()) or "none"
        return (f"no datasets found (searched: {folders}). Put MULAN .arff + .xml files in data/, or set "
                "NCLD_DATA_DIR to a folder that holds them; the synthetic generator needs none "
                "(ncld run without --dataset).")
    return table.to_string(index=False)


def capped_threads(n_threads):
    """``--threads`` at most the cores this process may use (more threads only oversubscribe them), with a note
    on stderr when it is lowered; ``"auto"`` as it is."""
    cores = available_cores()
    if n_threads != "auto" and n_threads > cores:
        print(f"note: --threads {n_threads} is more than the {cores} core{'s' if cores > 1 else ''} this process "
              f"may use: using {cores}", file=sys.stderr)
        return cores
    return n_threads


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    threads = capped_threads(args.threads)
    set_budget(None if threads == "auto" else threads)
    try:
        if args.command == "datasets":
            print(format_datasets())
        elif args.command == "download":
            from .data import download

            print(download(args.name, args.dest, base_url=args.base_url))
        elif args.command == "demo":
            from .config import PRESETS

            print(format_summary(run_config(PRESETS["concept growth"])))
        elif args.command == "resume":
            result = resume(args.checkpoint, out=args.out, quiet=args.quiet, checkpoint_every=args.checkpoint_every)
            print(format_summary(result))
        else:
            config = config_from_args(args)
            result = run_config(config, out=args.out, quiet=args.quiet, checkpoint=args.checkpoint,
                                checkpoint_every=args.checkpoint_every)
            print(format_summary(result))
            if args.out is not None:
                print(f"wrote {args.out / 'chunks.csv'} and {args.out / 'summary.json'}")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return 130
    return 0
