"""The package map, stated once as a graph: each package names the packages it builds
on (DEPENDS) and may import those and, transitively, what they build on; nothing else.

The graph must be acyclic, name every package of the tree and only those, and agree
line for line with the package map in CONTRIBUTING.md. Relative imports and ``from
git_gasp import X`` (which hides the package it takes X from) are refused everywhere in
the package.

And the structure inside the packages: no import cycle between modules (every import
counts, function-local and TYPE_CHECKING ones too), at most 20 modules in a package
folder (``cli/commands/``, one module per command, aside), at most 500 lines a module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "git_gasp"
CONTRIBUTING = PACKAGE.parent / "CONTRIBUTING.md"

# package -> the packages it builds on (a new package adds its line here and in
# CONTRIBUTING.md's package map)
DEPENDS: dict[str, set[str]] = {
    "base": set(),  # shared mechanics: errors, git, files, ids
    "redact": {"base"},  # pure text work: secrets out of what is stored
    "protocol": {"redact"},  # the format, no I/O
    "odb": {"protocol"},  # git objects (dulwich)
    "store": {"odb"},  # the agent repo on disk and in git
    "conformance": {"store"},  # the seven checks
    "guard": {"conformance"},  # pre-commit and pre-receive rules
    "runtime": {"guard"},  # AgentState
    "merge": {"protocol"},  # the union merge driver
    "sync": {"merge", "runtime"},  # git gasp sync, recovery
    "githooks": {"guard"},  # installing git hooks and the driver
    "adapters": {"sync"},  # coding agents: sessions, agent hooks, wiring
    "doctor": {"adapters", "githooks"},  # diagnoses all of the above
    "bridges": {"runtime"},  # LangChain, OpenAI Agents SDK
    "otel": {"runtime"},  # OpenTelemetry in and out
    "attribution": {"runtime"},  # line attribution
    "recap": {"runtime"},  # a run's account; resume's first prompt
    "stats": {"attribution", "view"},  # git gasp stats and report
    "kg": {"base"},  # the knowledge graph, standalone
    "view": {"runtime", "kg"},  # the HTML pages
    "mcp": {"adapters", "kg"},  # the MCP server
    "proxy": {"adapters"},  # the model-API proxy
    "cli": {"doctor", "mcp", "proxy", "view", "attribution", "otel", "bridges",
            "recap", "stats"},
}
TOP_LEVEL = {"__init__"}  # git_gasp/__init__.py: the lazy re-export of the runtime


def closure(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """package -> every package it may import: what it builds on, transitively."""
    out: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        out[start] = seen
    return out


ALLOWED = closure(DEPENDS)


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """The git_gasp layers `path` imports, and the imports this test refuses outright."""
    tree = ast.parse(path.read_bytes(), str(path))
    layers: set[str] = set()
    refused: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                refused.append(f"line {node.lineno}: relative import")
                continue
            names = [node.module or ""]
            hidden = [a.name for a in node.names if not a.name.startswith("__")]
            if node.module == "git_gasp" and hidden:  # __version__ belongs to no layer
                refused.append(f"line {node.lineno}: from git_gasp import " + ", ".join(hidden))
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "git_gasp" and len(parts) >= 2:
                layers.add(parts[1])
    return layers, refused


def test_every_package_is_in_the_map():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(DEPENDS), (
        f"packages missing from DEPENDS: {sorted(packages - set(DEPENDS))}; "
        f"in DEPENDS but not in the tree: {sorted(set(DEPENDS) - packages)}")
    unknown = {p: sorted(d - set(DEPENDS)) for p, d in DEPENDS.items() if d - set(DEPENDS)}
    assert not unknown, f"DEPENDS names packages that are not in it: {unknown}"
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == TOP_LEVEL, f"modules outside every package: {sorted(modules - TOP_LEVEL)}"


def test_the_package_graph_is_acyclic():
    looped = [p for p, may in ALLOWED.items() if p in may]
    cycles = strongly_connected(DEPENDS)
    assert not looped and not cycles, "the package graph has a cycle:\n" + "\n".join(
        "  " + " -> ".join(one_cycle(DEPENDS, c)) for c in cycles) + f" {looped}"


@pytest.mark.parametrize("layer", sorted(DEPENDS))
def test_layer_imports_only_what_it_builds_on(layer):
    bad = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        layers, refused = _imports(path)
        extra = layers - ALLOWED[layer] - {layer}
        if extra or refused:
            bad[str(path.relative_to(PACKAGE))] = sorted(extra) + refused
    assert not bad, f"{layer} breaks the package map (it builds on " \
        f"{sorted(DEPENDS[layer])}): {bad}"


def contributing_map(text: str) -> dict[str, set[str]]:
    """The package map of CONTRIBUTING.md: the fenced block after the line that says
    "Package map", one ``package  → what it builds on`` a line (``—`` for nothing)."""
    block = re.search(r"Package map.*?\n[ \t]*```text\n(.*?)[ \t]*```", text, re.S)
    assert block, "CONTRIBUTING.md has no ```text block after 'Package map'"
    found: dict[str, set[str]] = {}
    for line in block.group(1).splitlines():
        name, _, rest = line.partition("→")
        if not name.strip():
            continue
        deps = rest.split("#", 1)[0].replace("—", " ").replace(",", " ").split()
        found[name.strip()] = set(deps)
    return found


def test_contributing_states_the_same_map():
    stated = contributing_map(CONTRIBUTING.read_text(encoding="utf-8"))
    differ = {p: (sorted(stated.get(p, {"(absent)"})), sorted(DEPENDS.get(p, {"(absent)"})))
              for p in set(stated) | set(DEPENDS) if stated.get(p) != DEPENDS.get(p)}
    assert not differ, f"CONTRIBUTING.md's package map differs (stated, DEPENDS): {differ}"


def test_the_graph_checks_can_fail():
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}
    assert closure(graph) == {"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"a", "b", "c"}}
    graph["c"] = {"a"}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    text = "Package map:\n\n```text\nbase   → —\nstore  → odb, base  # on disk\n```\n"
    assert contributing_map(text) == {"base": set(), "store": {"odb", "base"}}


def test_the_checker_catches_what_it_should(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from . import x\nfrom git_gasp import AgentState\nimport git_gasp.cli.main\n")
    layers, refused = _imports(probe)
    assert layers == {"cli"}
    assert [r.split(":")[1].strip() for r in refused] == [
        "relative import", "from git_gasp import AgentState"]


# --- structure: no import cycle, package folders and modules of a bounded size ---------

MAX_MODULES = 20  # per package folder
MAX_LINES = 500  # per module
MANY_MODULES = {"cli/commands"}  # one module per command


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the modules of `package` it imports: every import in its AST, at module
    level or inside a function, under TYPE_CHECKING too (`from P import m` names module
    P.m when that is a module, else P)."""
    modules = {module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    if sub in modules:
                        found.add(sub)
                    elif node.module in modules:
                        found.add(node.module)
        found.discard(name)
        graph[name] = found
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The import cycles of `graph`: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """An import cycle through the modules of `component`, its first module repeated at
    the end: the shortest way back to the first (in name order) of them."""
    first = min(component)
    paths = {first: [first]}
    todo = [first]
    while todo:
        node = todo.pop(0)
        for child in sorted(graph[node] & component):
            if child == first:
                return paths[node] + [first]
            if child not in paths:
                paths[child] = paths[node] + [child]
                todo.append(child)
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def test_no_import_cycle():
    graph = import_graph()
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles (each wants a small shared module or one direction):\n" \
        + "\n".join("  " + " -> ".join(one_cycle(graph, c)) for c in cycles)


def test_package_folders_hold_at_most_20_modules():
    counts = {str(d.relative_to(PACKAGE)): len(list(d.glob("*.py")))
              for d in (p.parent for p in PACKAGE.rglob("__init__.py"))}
    big = {d: n for d, n in sorted(counts.items()) if n > MAX_MODULES
           and d not in MANY_MODULES}
    assert not big, f"package folders over {MAX_MODULES} modules (split them): {big}"


def test_modules_hold_at_most_500_lines():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_bytes().splitlines())
             for p in sorted(PACKAGE.rglob("*.py"))}
    long = {m: n for m, n in lines.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split along a seam): {long}"


def test_the_cycle_finder_counts_every_import(tmp_path):
    """Function-local and TYPE_CHECKING imports are edges too; the cycle is printed
    as a path back to its first module."""
    pkg = tmp_path / "probe"
    (pkg / "sub").mkdir(parents=True)
    for name, text in {
        "__init__.py": "",
        "a.py": "import probe.b\n",
        "b.py": "def f():\n    from probe.sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from probe.a import X\n",
        "d.py": "from probe import a\nimport os\n",
    }.items():
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    assert graph["probe.a"] == {"probe.b"} and graph["probe.b"] == {"probe.sub.c"}
    assert graph["probe.sub.c"] == {"probe.a"} and graph["probe.d"] == {"probe.a"}
    (cycle,) = strongly_connected(graph)
    assert cycle == {"probe.a", "probe.b", "probe.sub.c"}
    assert one_cycle(graph, cycle) == ["probe.a", "probe.b", "probe.sub.c", "probe.a"]
    (pkg / "b.py").write_text("")
    assert strongly_connected(import_graph(pkg)) == []
