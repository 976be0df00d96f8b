"""The house rules of the package layout, checked on the source (docs/architecture.md).

Every module under ``src/spectralink`` stays under :data:`MAX_LINES` lines; imports run down
the floors of :data:`FLOORS` (a room may import its own floor and the floors below it); no
module imports another room's private names or private modules; the benchmarks touch no
``sys.path`` and call no private method of the library.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "spectralink"
MAX_LINES = 700

#: Rooms (first component below ``spectralink``) from the top floor down; the package's
#: ``__init__`` re-exports and is not a floor.
FLOORS: list[set[str]] = [
    {"cli", "__main__"},
    {"label"},
    {"auto"},
    {"active"},
    {"model_selection"},
    {"plots"},
    {"experiments"},
    {"distributed"},
    {"catalog", "registry"},
    {"methods"},
    {"similarity", "landmarks", "_landmark_blocks", "_dask"},
    {"solvers"},
    {"spectral", "graph", "neighbors", "metrics"},
    {"constraints"},
    {"io", "tables", "cells", "preprocessing"},
    {"utils", "datasets", "parallel", "progress", "exceptions"},
]
FLOOR_OF = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    base = SRC.parent / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """``(target module, imported name or None, line)`` of every import of the package."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("spectralink"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if _is_module(sub):  # `from . import graph` imports a module
                    out.append((sub, None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out += [
                (a.name, None, node.lineno) for a in node.names if a.name.startswith("spectralink")
            ]
    return out


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


SOURCES = sorted(SRC.rglob("*.py"))


def test_every_room_has_a_floor():
    rooms = {_room(_module_name(p)) for p in SOURCES} - {"__init__"}
    assert rooms <= set(FLOOR_OF), f"rooms without a floor: {sorted(rooms - set(FLOOR_OF))}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_size(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(SRC)} has {n} lines (at most {MAX_LINES})"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_run_downward_and_stay_public(path):
    source = _module_name(path)
    room = _room(source)
    problems = []
    for target, name, line in _imports(path):
        other = _room(target)
        # a private name of a public module, in any room: what two modules share is public
        if (
            name is not None
            and name.startswith("_")
            and not name.startswith("__")
            and not target.rsplit(".", 1)[-1].startswith("_")
        ):
            problems.append(f"line {line}: imports the private name {name} from {target}")
        if other == room or other == "__init__" or room == "__init__":
            continue
        if FLOOR_OF[other] < FLOOR_OF[room]:
            problems.append(f"line {line}: {room} imports {target}, a floor above it")
        # a private module of another room (a private top-level module such as `_dask` is
        # the package's own, shared by the rooms that need it)
        hidden = [p for p in target.split(".")[2:] if p.startswith("_") and p != "__init__"]
        if hidden:
            problems.append(f"line {line}: imports {target}, private to {other}")
    assert not problems, "\n".join(problems)


BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
#: a namedtuple's own methods start with an underscore and are public API
_PUBLIC_UNDERSCORE = {"_replace", "_asdict", "_make", "_fields"}


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmarks_use_public_api(path):
    text = path.read_text(encoding="utf-8")
    assert "sys.path" not in text, f"{path.name} changes sys.path"
    calls = set(re.findall(r"\.(_[a-z]\w*)\(", text)) - _PUBLIC_UNDERSCORE
    assert not calls, f"{path.name} calls private methods: {sorted(calls)}"
    private = re.findall(r"from spectralink[\w.]* import .*\b(_[a-z]\w*)", text)
    private += re.findall(r"spectralink(?:\.\w+)*\.(_[a-z]\w*)", text)
    assert not private, f"{path.name} uses private names of spectralink: {sorted(set(private))}"


def test_registry_imports_nothing_at_load():
    """The name table is text: loading it imports no estimator (so no arrow runs upward)."""
    imports = [t for t, _, _ in _imports(SRC / "registry.py")]
    assert imports == []


#: Private names of other libraries a module may read, with the reason: argparse's type of
#: ``add_subparsers`` (for hints), ``os._exit`` (a worker's hard exit), a namedtuple's
#: ``_replace``, scikit-learn's ``_parameter_constraints`` (its documented convention).
FOREIGN_PRIVATE_OK = {"_SubParsersAction", "_exit", "_replace", "_parameter_constraints"}


def _defined_private_names(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions and methods, class attributes, and
    attributes it assigns (``self._x = ...``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return {name for name in out if name.startswith("_")}


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_attribute_of_another_module_is_read(path):
    # ``obj._name`` where obj is not self or cls is a read of another module's private
    # attribute unless this module defines ``_name`` (its own class's state)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _defined_private_names(tree)
    bad = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
            continue
        if node.attr.startswith("__") or node.attr in own or node.attr in FOREIGN_PRIVATE_OK:
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            continue
        if isinstance(base, ast.Call) and getattr(base.func, "id", None) in ("type", "super"):
            continue
        bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert not bad, bad
