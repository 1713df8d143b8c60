"""The package's import graph: no circle, and no module importing a layer above its own.

Every import counts, including the ones inside functions (a circle hidden by a lazy import
is still a circle). The layers are the concept packages, lowest first; a module may import
its own layer or lower ones:

0. the records and the plumbing: ``dialogs``, ``errors``, ``_util/``
1. how a judge is asked and its answer read: ``judge/``
2. dialogs and datasets: ``dataset/``
3. the statistics of agreement: ``stats/``
4. what Inspect runs, and the comparison of its logs: ``tasks``, ``solver``, ``scorer``,
   ``reducer``; ``compare/``; ``notebook`` (`score_dialogs`: the task run, its log as a frame)
5. the command line: ``cli/``
6. entry points: ``_registry``, the package ``__init__`` and the old paths (``_moved``)
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "inspect_empathy"

LAYERS: dict[str, int] = {
    "dialogs": 0, "errors": 0, "_util": 0,
    "judge": 1,
    "dataset": 2,
    "stats": 3,
    "tasks": 4, "solver": 4, "scorer": 4, "reducer": 4, "compare": 4, "notebook": 4,
    "cli": 5,
    "_registry": 6, "_moved": 6, "": 6,
}  # fmt: skip


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported_from(package: Sequence[str], node: ast.ImportFrom) -> str | None:
    """The package module (dotted, below ``inspect_empathy``; ``""`` for the package) that
    ``from ... import`` names, in a module of ``package`` (its folders below the package);
    None for an import from outside the package."""
    if node.level:
        base = list(package[: len(package) - node.level + 1])
    elif node.module and node.module.split(".")[0] == "inspect_empathy":
        base = []
    else:
        return None
    module = ".".join([*base, *(node.module or "").split(".")]).strip(".")
    return module.removeprefix("inspect_empathy").strip(".")


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules that ``name`` imports anywhere in its file."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = imported_from(package, node)
            if module is None:
                continue
            for alias in node.names:
                child = f"{module}.{alias.name}".strip(".")
                found.add(child if child in known else module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("inspect_empathy"):
                    found.add(alias.name.removeprefix("inspect_empathy").strip("."))
    found.discard(name)
    return {module for module in found if module in known}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(name: str) -> int:
    top = name.split(".")[0]
    if top not in LAYERS:
        raise AssertionError(f"module {name!r} has no layer: add it to LAYERS in {__file__}")
    return LAYERS[top]


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer(name)


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{name} (layer {layer(name)}) imports {other} (layer {layer(other)})"
        for name, targets in graph().items()
        for other in targets
        if layer(other) > layer(name)
    ]
    assert upward == []


def test_no_import_circle() -> None:
    edges = graph()
    circles: list[list[str]] = []

    def visit(node: str, path: list[str], done: set[str]) -> None:
        for target in sorted(edges[node]):
            if target in path:
                circles.append(path[path.index(target) :] + [target])
            elif target not in done:
                visit(target, [*path, target], done)
        done.add(node)

    done: set[str] = set()
    for start in sorted(edges):
        if start not in done:
            visit(start, [start], done)
    assert circles == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from .a import b\n", {"a"}),
        ("from . import a\n", {"a"}),
        ("def f():\n    from .a import b\n", {"a"}),
        ("import inspect_empathy.a\n", {"a"}),
    ],
)
def test_the_reader_sees_every_import_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, expected: set[str]
) -> None:
    package = tmp_path / "inspect_empathy"
    package.mkdir()
    (package / "a.py").write_text("b = 1\n", encoding="utf-8")
    (package / "c.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.PACKAGE", package)
    assert imports("c", package / "c.py", {"a", "c"}) == expected


def test_the_test_folders_are_the_packages() -> None:
    """``tests/`` mirrors the layout: a folder per package (``util/`` for ``_util/``)."""
    tests = Path(__file__).resolve().parent
    skip = {"fixtures", "__pycache__"}
    folders = {
        path.relative_to(tests).as_posix()
        for path in tests.rglob("*")
        if path.is_dir()
        and not skip & set(path.relative_to(tests).parts)
        and not any(part.startswith(".") for part in path.relative_to(tests).parts)
    }
    packages = {
        path.parent.relative_to(PACKAGE).as_posix().removeprefix("_")
        for path in PACKAGE.rglob("__init__.py")
        if path.parent != PACKAGE
    }
    assert folders == packages
