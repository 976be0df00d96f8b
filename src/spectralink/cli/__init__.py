"""The ``spectralink`` command: ``cluster``, ``compare``, ``query``, ``methods``, ``datasets``.

``spectralink cluster DATA -k K --method NAME``  cluster a .csv/.npy/.npz feature file
``spectralink compare``                          the papers' protocol on a dataset or labelled file
``spectralink query DATA -k K -o ASK.csv``       the next pairs to ask a person
``spectralink label DATA -k K -o ANSWERS.csv``   answer pairs in the browser
``spectralink methods [NAME]``                   the methods' capabilities, or NAME's parameters
``spectralink datasets``                         the dataset names and where files are read

User mistakes (missing file, bad CSV, unknown method or dataset, invalid parameter,
inconsistent constraints) end with one ``spectralink: error: ...`` line on stderr and a
non-zero exit status; ``--debug`` shows the full traceback instead.

This module holds the entry point, the dispatch and that error handling. Each command is a
module with ``add_parser(subparsers)`` and ``run(args) -> int``, wiring only; the library
floors a command uses are imported inside its ``run``, so that ``--help`` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from .. import __version__
from ..exceptions import MissingExtraError
from ..io import encode_labels, read_labels, read_matrix
from . import cluster, compare, datasets, label, methods, query

__all__ = ["build_parser", "encode_labels", "main", "read_labels", "read_matrix"]

#: The commands, in the order ``--help`` lists them.
_COMMANDS = (cluster, compare, query, label, methods, datasets)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``spectralink`` command and its subcommands (the documentation's
    command-line reference is generated from it)."""
    parser = _Parser(
        prog="spectralink",
        description="Constrained spectral clustering with must-link and cannot-link pairs.",
    )
    parser.add_argument("--version", action="version", version=f"spectralink {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks instead of one-line errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


# the name docs/_ext/spectralink_docs.py imports
_build_parser = build_parser


def _one_line(exc: BaseException) -> str:
    from ..datasets import DatasetNotFoundError

    if isinstance(exc, OSError) and not isinstance(exc, DatasetNotFoundError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"spectralink: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the ``spectralink`` command line with ``argv`` (default ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 1 for an error in the inputs, 2 for a usage
    error, 130 when interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        print(
            "spectralink: error: choose a command: cluster, compare, query, label, methods or "
            "datasets "
            "(see 'spectralink --help')",
            file=sys.stderr,
        )
        return 2
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the --resume hint
    debug = getattr(args, "debug", False)
    previous = warnings.showwarning
    if not debug:
        warnings.showwarning = _show_warning
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("spectralink: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`spectralink datasets | head`): stop quietly, and point
        # stdout at /dev/null so the interpreter's final flush does not complain either
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer cut off by a pipe
    except (ValueError, TypeError, OSError, OverflowError, MissingExtraError) as exc:
        if debug:
            raise
        print(f"spectralink: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = previous
