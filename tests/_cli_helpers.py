"""Helpers shared by the command-line tests: run ``main`` in-process, check a clean error."""

from __future__ import annotations

from spectralink.cli import main


def run(capsys, *argv):
    """``main(argv)`` with every argument as a string; its exit code, stdout and stderr."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, needle=None, *, prefix="spectralink", exit_code=None):
    """A failed run printed one error line starting with ``prefix``, and no traceback (the
    notes of what was read, printed before any fitting, aside)."""
    assert code != 0 if exit_code is None else code == exit_code
    lines = [line for line in err.strip().splitlines() if not line.startswith("spectralink: note:")]
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix) and "error:" in lines[0], err
    assert "Traceback" not in err
    if needle is not None:
        assert needle in lines[0]
