"""The package map, stated once: each layer imports only the layers to its left.

    base → redact → protocol → odb → store → conformance → guard → runtime → merge →
    githooks → adapters

redact (pure text work) sits low, for everything that stores outside text; the
framework bridges, OpenTelemetry, line attribution and the history page sit on
runtime beside the rest (bridges, otel, attribution and view: the layers up to
runtime, nothing above them uses them); kg uses only base; mcp (the MCP server) sits
on every layer and kg, beside cli; proxy (rung 3, the model-API proxy) sits on every
layer; cli may use anything. Relative imports and ``from
git_gasp import X`` (which hides the layer it takes X from) are refused everywhere in
the package.

And the structure inside the layers: no import cycle between modules (every import
counts, function-local and TYPE_CHECKING ones too), at most 20 modules in a package
folder (``cli/commands/``, one module per command, aside), at most 500 lines a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "git_gasp"

ORDER = ["base", "redact", "protocol", "odb", "store", "conformance", "guard", "runtime",
         "merge", "githooks", "adapters"]
ALLOWED = {layer: set(ORDER[:i]) for i, layer in enumerate(ORDER)}
ALLOWED["bridges"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["otel"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["attribution"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["kg"] = {"base"}
ALLOWED["stats"] = ALLOWED["attribution"] | {"attribution", "view"}
ALLOWED["view"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["mcp"] = set(ORDER) | {"kg"}
ALLOWED["proxy"] = set(ORDER)
ALLOWED["cli"] = set(ORDER) | {"bridges", "otel", "kg", "mcp", "attribution", "view", "proxy",
                               "stats"}
TOP_LEVEL = {"__init__"}  # git_gasp/__init__.py: the lazy re-export of the runtime


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
    assert packages == set(ALLOWED), "a package is missing from the map (or the map is stale)"
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == TOP_LEVEL, f"modules outside every layer: {sorted(modules - TOP_LEVEL)}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_layers_to_its_left(layer):
    bad = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        layers, refused = _imports(path)
        extra = layers - ALLOWED[layer] - {layer}
        if extra or refused:
            bad[str(path.relative_to(PACKAGE))] = sorted(extra) + refused
    assert not bad, f"{layer} breaks the package map: {bad}"


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
