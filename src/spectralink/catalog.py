"""What each registered method can do, and its parameters, read from the classes.

:func:`describe` gathers a method's capabilities from the declarations on its estimator
class (``_two_clusters_only``, ``_uses_constraints``, ``_requires_constraints``,
``_max_samples_param``, ``_scale``, ``_supports_dask``, see
:class:`~spectralink.methods.ConstrainedClusteringMixin`) and its parameters from
the signature (defaults) and the numpydoc ``Parameters`` section of the class docstring
(meanings), so that ``spectralink methods`` never keeps a second copy of either.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["MethodInfo", "ParamInfo", "describe", "describe_all", "parse_parameters"]


@dataclass
class ParamInfo:
    """One constructor parameter.

    Attributes
    ----------
    name : str
    default : object
        The default of ``__init__`` (``inspect.Parameter.empty`` when there is none).
    type : str
        The type line of the docstring (``""`` when undocumented).
    summary : str
        The first sentence of the docstring's description (``""`` when undocumented).
    """

    name: str
    default: object
    type: str = ""
    summary: str = ""


@dataclass
class MethodInfo:
    """Capabilities and parameters of one registered method.

    Attributes
    ----------
    name : str
        Registry name (``--method``).
    class_name : str
    summary : str
        First line of the class docstring.
    two_clusters_only : bool
        Whether the method partitions into k = 2 clusters only.
    uses_constraints : bool
        Whether the constraints change the result (NCut and LSC-R ignore them).
    requires_constraints : bool
        Whether ``fit`` refuses to run without constraints.
    max_samples : int or None
        Largest ``n`` accepted at the defaults (a parameter raises it); ``None``: no cap.
    max_samples_param : str or None
        The parameter that sets that cap.
    scale : str
        What limits the size of the data, in a few words.
    predicts : bool
        Whether fitted models label new points (``predict``).
    dask : bool
        Whether ``fit`` accepts a Dask array (out-of-core).
    precomputed : bool
        Whether ``affinity="precomputed"`` is accepted.
    params : list of ParamInfo
    """

    name: str
    class_name: str
    summary: str
    two_clusters_only: bool
    uses_constraints: bool
    requires_constraints: bool
    max_samples: int | None
    scale: str
    predicts: bool
    dask: bool
    max_samples_param: str | None = None
    precomputed: bool = True
    params: list[ParamInfo] = field(default_factory=list)

    @property
    def constraint_use(self) -> str:
        """``"required"``, ``"used"`` or ``"ignored"``."""
        if self.requires_constraints:
            return "required"
        return "used" if self.uses_constraints else "ignored"


_SECTION = re.compile(r"^\s*-{3,}\s*$")
_ENTRY = re.compile(r"^(?P<names>[*\w][\w, *]*?)\s*(?::\s*(?P<type>.*))?$")


def parse_parameters(doc: str | None) -> dict[str, tuple[str, str]]:
    """``{name: (type, first sentence)}`` from the numpydoc ``Parameters`` section.

    Entries naming several parameters (``a, b : int``) give each the same text.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    start = None
    for t in range(len(lines) - 1):
        if lines[t].strip() == "Parameters" and _SECTION.match(lines[t + 1]):
            start = t + 2
            break
    if start is None:
        return {}
    out: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    type_ = ""
    desc: list[str] = []

    def flush():
        text = " ".join(desc).strip()
        for nm in names:
            out[nm] = (type_, _first_sentence(text))

    for t in range(start, len(lines)):
        line = lines[t]
        if t + 1 < len(lines) and _SECTION.match(lines[t + 1]) and line.strip():
            break  # the next section's title
        if not line.strip():
            continue
        if not line[0].isspace():
            flush()
            m = _ENTRY.match(line.strip())
            names = [s.strip().lstrip("*") for s in m.group("names").split(",")] if m else []
            type_ = (m.group("type") or "").strip() if m else ""
            desc = []
        else:
            desc.append(line.strip())
    flush()
    return out


def _first_sentence(text: str) -> str:
    """Up to the first full stop followed by a space (``e.g.`` and ``i.e.`` do not end it)."""
    text = text.replace("``", "")
    # Sphinx roles: :class:`~spectralink.NCut` -> NCut, :func:`f` -> f
    text = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"\1", text)
    text = re.sub(r":\w+:`([^`]*)`", r"\1", text)
    for m in re.finditer(r"\.(\s+(?=[A-Z`\"(])|$)", text):
        head = text[: m.start()]
        if head.endswith(("e.g", "i.e", "cf", "etc", "vs")):
            continue
        return head + "."
    return text


def describe(name: str) -> MethodInfo:
    """Capabilities and parameters of the method registered under ``name``.

    Raises
    ------
    ValueError
        When ``name`` is not a registered method; the message lists the valid names.
    """
    from .registry import get_method

    cls = get_method(name)
    docs: dict[str, tuple[str, str]] = {}
    # a subclass may list a parameter by type only and leave its meaning to the parent
    for klass in reversed(cls.__mro__):
        for key, (type_, text) in parse_parameters(klass.__dict__.get("__doc__")).items():
            docs[key] = (type_ or docs.get(key, ("", ""))[0], text or docs.get(key, ("", ""))[1])
    params = []
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        type_, summary = docs.get(p.name, ("", ""))
        params.append(ParamInfo(p.name, p.default, type_, summary))
    cap = getattr(cls, "_max_samples_param", None)
    max_samples = next((p.default for p in params if p.name == cap), None) if cap else None
    doc = inspect.cleandoc(cls.__doc__ or "")
    return MethodInfo(
        name=name.lower(),
        class_name=cls.__name__,
        summary=doc.splitlines()[0] if doc else "",
        two_clusters_only=bool(getattr(cls, "_two_clusters_only", False)),
        uses_constraints=bool(getattr(cls, "_uses_constraints", True)),
        requires_constraints=bool(getattr(cls, "_requires_constraints", False)),
        max_samples=max_samples,
        scale=str(getattr(cls, "_scale", "")),
        predicts=callable(getattr(cls, "predict", None)),
        dask=bool(getattr(cls, "_supports_dask", False)),
        max_samples_param=cap,
        precomputed=bool(getattr(cls, "_supports_precomputed", True)),
        params=params,
    )


def describe_all() -> list[MethodInfo]:
    """:func:`describe` of every registered method whose module is present."""
    from .registry import available_methods

    return [describe(name) for name in available_methods()]
