"""The package's structure: no import cycles between its modules, modules small or saying why
not, one folder per format family linked from the registry, and no marker string in Python."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import codec
from codec.engine.grammar import compiled
from codec.registry import FORMATS

PACKAGE = Path(codec.__file__).resolve().parent
LINE_BUDGET = 300  # CONTRIBUTING.md: modules of about 300 lines; a longer one says why in its docstring


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _runtime_imports(path: Path) -> set[str]:
    """Modules of the package that ``path`` imports when it is imported (not inside functions,
    not under ``if TYPE_CHECKING``)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in MODULES else node.module)
    return {name for name in found if name in MODULES and name != "codec"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, if any (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_import_cycles_between_modules() -> None:
    graph = {name: _runtime_imports(path) for name, path in MODULES.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_long_module_says_why_in_its_docstring(name: str) -> None:
    path = MODULES[name]
    source = path.read_text(encoding="utf-8")
    if source.count("\n") <= LINE_BUDGET:
        return
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert "Longer than" in docstring, f"{path}: {source.count(chr(10))} lines and no reason given"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_links_a_family_folder(name: str) -> None:
    spec = FORMATS[name]
    for part in (spec.family.read_prompt, spec.family.rules, spec.family.arguments):
        module = part.__module__
        assert module.startswith(f"codec.formats.{spec.family.name}."), (name, module)
    assert (PACKAGE / "formats" / spec.family.name).is_dir()


def _python_strings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


# Completions written as data (the demo, the examples the tests share) are the model's text in
# its own syntax, not markers the code looks for.
_DATA_MODULES = re.compile(r"codec\.formats\.[a-z]\w*(\.demo)?$|codec\.formats\._demo_scenario$")


def test_no_marker_string_in_code() -> None:
    markers = {marker.strip() for spec in FORMATS.values() for marker in compiled(spec.grammar).markers}
    markers = {marker for marker in markers if len(marker) > 3}  # "<|" pieces are not markers
    offenders = []
    for name, path in MODULES.items():
        if _DATA_MODULES.match(name):
            continue
        for text in _python_strings(path):
            offenders += [(name, marker) for marker in markers if marker in text]
    assert not offenders, offenders
