"""What a run imported, read from ``python -X importtime`` (or ``PYTHONPROFILEIMPORTTIME=1``)
on its stderr: the modules in the order they finished loading, and for any of them the
chain of imports that first pulled it in.

importtime prints a module when its import ends, indented two spaces per level of
nesting, so a module's importer is the first line after it that is one level less
indented; a module at the top level was imported by the running code (the script, or
a function that imports when it is called). Which module's code that was, a run that
starts with `IMPORTED_BY` says too (a finder that only writes who asked for each
import): the chain then goes on through the function-local imports of a command, e.g.
``git_gasp.cli.main -> git_gasp.cli.commands.hook_run -> git_gasp.guard.warm``. Only a
module's first import is printed: the chain is the one that loaded it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

_PREFIX = "import time:"
_BY = "import by: "
# Python code to run first (a `-c` prefix): for every import not yet loaded, writes
# "import by: MODULE IMPORTER" to stderr, IMPORTER being the module whose code asked
# (importlib's own frames skipped). It imports nothing and finds nothing.
IMPORTED_BY = """\
import sys as _sys
class _ImportedBy:
    @staticmethod
    def find_spec(name, path=None, target=None):
        frame = _sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(
                ("importlib", "_frozen_importlib")):
            frame = frame.f_back
        who = frame.f_globals.get("__name__") if frame is not None else None
        _sys.stderr.write(f"import by: {name} {who}\\n")
_sys.meta_path.insert(0, _ImportedBy)
"""


class ImportTrace:
    """The imports of one run (`stderr`: the run's stderr, other lines ignored)."""

    def __init__(self, stderr: str | bytes) -> None:
        text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
        self.rows: list[tuple[int, str]] = []  # (nesting depth, module), as printed
        self.importer: dict[str, str] = {}  # module -> the module that asked (IMPORTED_BY)
        for line in text.splitlines():
            if line.startswith(_BY):
                name, _, who = line[len(_BY):].partition(" ")
                self.importer.setdefault(name, who)
                continue
            if not line.startswith(_PREFIX) or line.count("|") != 2:
                continue
            field = line.rsplit("|", 1)[1]
            name = field.strip()
            if name == "imported package":  # the header
                continue
            self.rows.append(((len(field) - len(field.lstrip(" ")) - 1) // 2, name))
        self._at = {name: i for i, (_depth, name) in enumerate(self.rows)}

    @property
    def modules(self) -> list[str]:
        return [name for _depth, name in self.rows]

    def chain(self, name: str) -> list[str]:
        """The imports that loaded `name`, outermost first, ending with `name`: its
        importers while loading, then (with `IMPORTED_BY`) the module whose code
        imported the outermost of them at run time, and so on."""
        out: list[str] = []
        while name in self._at and name not in out:
            i = self._at[name]
            depth = self.rows[i][0]
            out.append(name)
            for j in range(i + 1, len(self.rows)):
                if self.rows[j][0] < depth:
                    depth = self.rows[j][0]
                    out.append(self.rows[j][1])
            name = self.importer.get(out[-1], "")
        return out[::-1]

    def culprits(self, forbidden: Callable[[str], bool] | Iterable[str]) -> list[list[str]]:
        """The chain of each forbidden module loaded that no other forbidden module
        pulled in (``dulwich.repo``, not the dulwich modules it imports in turn), leaving
        out what the interpreter's start-up (``site``: an editable install's finder
        imports contextlib) loaded before any code of ours ran; `forbidden`: a predicate
        on module names, or the names themselves."""
        if not callable(forbidden):
            names = set(forbidden)
            forbidden = names.__contains__
        out = []
        for name in self.modules:
            if forbidden(name):
                chain = self.chain(name)
                if not any(forbidden(m) for m in chain[:-1]) and chain[0] != "site":
                    out.append(chain)
        return out

    def explain(self, forbidden: Callable[[str], bool] | Iterable[str], run: str = "") -> str:
        """One line per forbidden module loaded, ``importer -> ... -> module``, for an
        assertion's message (`run`: what ran, named on the first line)."""
        chains = self.culprits(forbidden)
        head = f"{run} loaded forbidden modules:" if run else "forbidden modules loaded:"
        return "\n".join([head, *("  " + " -> ".join(c) for c in chains)])
