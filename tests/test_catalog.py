"""Tests of the method catalogue (``spectralink.catalog``) and ``spectralink methods``."""

from __future__ import annotations

import inspect

import pytest

from _cli_helpers import run
from spectralink.catalog import describe, describe_all, parse_parameters
from spectralink.registry import available_methods, get_method


def test_parse_parameters_reads_numpydoc():
    doc = """Summary.

    Parameters
    ----------
    a, b : int, default=1
        First sentence, e.g. with an example. Second sentence.
    c : {"x", "y"}
        Uses :class:`~spectralink.NCut` and :func:`f`.

    Attributes
    ----------
    labels_ : ndarray
        Not a parameter.
    """
    got = parse_parameters(doc)
    assert set(got) == {"a", "b", "c"}
    assert got["a"] == ("int, default=1", "First sentence, e.g. with an example.")
    assert got["b"] == got["a"]
    assert got["c"][1] == "Uses NCut and f."


def test_every_method_is_described_with_every_parameter():
    infos = describe_all()
    assert [m.name for m in infos] == available_methods()
    for info in infos:
        cls = get_method(info.name)
        assert info.class_name == cls.__name__
        signature = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        assert [p.name for p in info.params] == signature
        assert info.summary
        # every parameter has a one-line meaning from the docstring (the class's or,
        # for what a subclass lists by type only, its parent's)
        assert [p.name for p in info.params if not p.summary] == [], info.name
        for p in info.params:
            assert p.default == getattr(cls(), p.name)


def test_capabilities_come_from_the_classes():
    assert describe("sclc").two_clusters_only
    assert not describe("cosc").two_clusters_only
    assert describe("fcsc").requires_constraints and describe("scacs").requires_constraints
    assert not describe("ncut").uses_constraints and describe("ccsr").uses_constraints
    fcsc = describe("fcsc")
    assert fcsc.max_samples == get_method("fcsc")().max_samples
    assert describe("ncut").max_samples is None
    assert describe("scacs").dask and describe("lscr").dask and not describe("ncut").dask
    assert all(m.predicts for m in describe_all())


def test_declared_requirements_match_fit():
    """A method declared k = 2 only / needing constraints refuses the other case."""
    import numpy as np

    X = np.random.default_rng(0).normal(size=(40, 2))
    for info in describe_all():
        if info.two_clusters_only:
            with pytest.raises(ValueError, match="2 clusters"):
                get_method(info.name)(n_clusters=3).fit(X)
        if info.requires_constraints:
            with pytest.raises(ValueError, match="needs constraints"):
                get_method(info.name)(n_clusters=2).fit(X)


def test_methods_command_lists_every_method(capsys):
    code, out, err = run(capsys, "methods")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["name", "class"]
    rows = {ln.split()[0]: ln for ln in lines[1:] if ln and ln.split()[0] in available_methods()}
    assert set(rows) == set(available_methods())
    assert "2 only" in rows["sclc"] and "2 only" not in rows["ncut"]
    assert "required" in rows["fcsc"] and "5000" in rows["fcsc"]
    assert "ignored" in rows["ncut"]


def test_methods_command_shows_one_methods_parameters(capsys):
    code, out, err = run(capsys, "methods", "NCut")
    assert code == 0
    assert out.startswith("ncut (NCut): ")
    line = next(ln for ln in out.splitlines() if ln.split()[:1] == ["n_neighbors"])
    assert "= 20" in line and "Neighbours of the k-NN graph." in line
    assert "constraints: ignored" in out


def test_methods_command_unknown_name_lists_valid_names(capsys):
    code, out, err = run(capsys, "methods", "nope")
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "unknown method 'nope'" in lines[0]
    assert all(name in lines[0] for name in available_methods())
