"""`.agent/config.toml`, read in one place: one parse into an `AgentConfig` whose sections
are validated and typed, used by every package that needs a setting. A bad value is one
`FormatError` line naming the file, the key and why; a file that is missing reads as the
defaults.

    [executor]                # the executor binding (`git gasp restore --model`)
    model = ""
    provider = ""
    [capture]                 # how much of a tool's input and output the log keeps
    tool_output = "summary"   # "full" (up to field_limit), "summary", "none"
    field_limit = 4096        # bytes of any one stored field of outside text (64..1 MiB)
    file_inputs = "digest"    # Write/Edit contents as size, sha256 and first line; "full"
    transcripts = true        # archive the redacted transcript under transcripts/
    paths = "relative"        # machine paths as project-relative and ~; "absolute"
    [mcp]                     # the MCP server's write tools
    write = false             # gasp_remember, gasp_observe, gasp_decide
    commit = false            # commit the log and the facts after each write
    wait = 10                 # seconds a write waits for the lease (0: refuse at once)
    [policy.nodes]            # node kind -> "allow" | "require_approval" | "deny"
    [policy.relations]        # relation -> verdict
    [policy.promotion]        # min_evals, min_pass_rate, min_score, require_approval

Other tables and keys are kept in `AgentConfig.data` (the parsed document) and read by
no one; `restore --model` rewrites the file from it.
"""

from __future__ import annotations

import enum
import math
import os

from git_gasp.base.errors import FormatError
from git_gasp.base.fileops import NotARegularFile, read_regular_file
from git_gasp.base.record import Record
from git_gasp.base.toml import load_toml

CONFIG_REL = ".agent/config.toml"
MAX_CONFIG_BYTES = 1 << 20  # a config is a few lines; a bigger one is not one
OUTPUTS = ("full", "summary", "none")
FILE_INPUTS = ("digest", "full")
PATHS = ("relative", "absolute")
MIN_FIELD_LIMIT, MAX_FIELD_LIMIT = 64, 1 << 20
DEFAULT_WAIT_S = 10.0


class Verdict(enum.Enum):
    """What a policy gate says of a change."""

    ALLOW = "allow"
    REQUIRE_APPROVAL = "require_approval"
    DENY = "deny"


class Executor(Record):
    """``[executor]``: the model and provider the agent is bound to ("" when unset)."""

    FIELDS = ("model", "provider")

    def __init__(self, model: str = "", provider: str = "") -> None:
        self.model, self.provider = model, provider


class Capture(Record):
    """``[capture]``: how much of a tool's input and output the log keeps."""

    FIELDS = ("tool_output", "field_limit", "file_inputs", "transcripts", "paths")

    def __init__(self, tool_output: str = "summary", field_limit: int = 4096,
                 file_inputs: str = "digest", transcripts: bool = True,
                 paths: str = "relative") -> None:
        self.tool_output, self.field_limit = tool_output, field_limit
        self.file_inputs, self.transcripts = file_inputs, transcripts
        self.paths = paths


class Mcp(Record):
    """``[mcp]``: whether the server's write tools are on, whether a write commits, and
    how long a write waits for a lease another writer holds."""

    FIELDS = ("write", "commit", "wait")

    def __init__(self, write: bool = False, commit: bool = False,
                 wait: float = DEFAULT_WAIT_S) -> None:
        self.write, self.commit, self.wait = write, commit, wait


class Promotion(Record):
    """``[policy.promotion]``: what promoting a patch needs."""

    FIELDS = ("min_evals", "min_pass_rate", "min_score", "require_approval")

    def __init__(self, min_evals: int = 0, min_pass_rate: float = 0.0,
                 min_score: float | None = None, require_approval: bool = False) -> None:
        self.min_evals, self.min_pass_rate = min_evals, min_pass_rate
        self.min_score, self.require_approval = min_score, require_approval


class Policy(Record):
    """``[policy]``: verdicts by node kind and by relation, and the promotion gate."""

    FIELDS = ("nodes", "relations", "promotion")

    def __init__(self, nodes: dict[str, Verdict] | None = None,
                 relations: dict[str, Verdict] | None = None,
                 promotion: Promotion | None = None) -> None:
        self.nodes = {} if nodes is None else nodes
        self.relations = {} if relations is None else relations
        self.promotion = Promotion() if promotion is None else promotion


class AgentConfig(Record):
    """Every section of `.agent/config.toml`, validated; `data` is the parsed document."""

    FIELDS = ("executor", "capture", "mcp", "policy", "data")

    def __init__(self, executor: Executor | None = None, capture: Capture | None = None,
                 mcp: Mcp | None = None, policy: Policy | None = None,
                 data: dict[str, object] | None = None) -> None:
        self.executor = Executor() if executor is None else executor
        self.capture = Capture() if capture is None else capture
        self.mcp = Mcp() if mcp is None else mcp
        self.policy = Policy() if policy is None else policy
        self.data = {} if data is None else data


def read_config(root: str | os.PathLike[str]) -> AgentConfig:
    """The config of the agent at `root` (the defaults when the file is missing). A link,
    a device, a file past MAX_CONFIG_BYTES, bad TOML or a bad value is a FormatError."""
    path = os.path.join(root, CONFIG_REL)
    try:  # no following a link, no waiting on a FIFO, no reading past the bound
        data = read_regular_file(path, limit=MAX_CONFIG_BYTES, root=root)
    except NotARegularFile as exc:
        raise FormatError(f"{CONFIG_REL} cannot be read: {exc}") from None
    except OSError as exc:
        raise FormatError(f"{CONFIG_REL} cannot be read: {exc.strerror or exc}") from None
    return AgentConfig() if data is None else parse_config(data)


def parse_config(data: bytes, what: str = CONFIG_REL) -> AgentConfig:
    """The config whose bytes are `data`; FormatError ``WHAT does not parse: …`` or
    ``.agent/config.toml: KEY = VALUE is not …``."""
    doc = load_toml(data, what)
    return AgentConfig(_executor(_table(doc, "executor")), _capture(_table(doc, "capture")),
                       _mcp(_table(doc, "mcp")), _policy(_table(doc, "policy")), doc)


def _bad(key: str, value: object, why: str) -> FormatError:
    return FormatError(f"{CONFIG_REL}: {key} = {value!r} is not {why}")


def _table(doc: dict[str, object], key: str, within: str = "") -> dict[str, object]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise FormatError(f"{CONFIG_REL}: [{within}{key}] must be a table")
    return value


def _known(table: dict[str, object], section: str, keys: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise FormatError(f"{CONFIG_REL}: [{section}] has unknown key {unknown[0]!r} "
                          f"(known: {', '.join(keys)})")


def _executor(table: dict[str, object]) -> Executor:
    for key in ("model", "provider"):
        if not isinstance(table.get(key, ""), str):
            raise _bad(f"executor.{key}", table[key], "a string")
    return Executor(table.get("model", ""), table.get("provider", ""))


def _capture(table: dict[str, object]) -> Capture:
    _known(table, "capture", ("tool_output", "field_limit", "file_inputs", "transcripts",
                              "paths"))
    got = Capture(**table)
    if got.tool_output not in OUTPUTS:
        raise _bad("capture.tool_output", got.tool_output, "one of " + ", ".join(OUTPUTS))
    if got.file_inputs not in FILE_INPUTS:
        raise _bad("capture.file_inputs", got.file_inputs, "one of " + ", ".join(FILE_INPUTS))
    if type(got.field_limit) is not int or not (
            MIN_FIELD_LIMIT <= got.field_limit <= MAX_FIELD_LIMIT):
        raise _bad("capture.field_limit", got.field_limit,
                   f"an integer from {MIN_FIELD_LIMIT} to {MAX_FIELD_LIMIT}")
    if type(got.transcripts) is not bool:
        raise _bad("capture.transcripts", got.transcripts, "true or false")
    if got.paths not in PATHS:
        raise _bad("capture.paths", got.paths, "one of " + ", ".join(PATHS))
    return got


def _mcp(table: dict[str, object]) -> Mcp:
    _known(table, "mcp", ("write", "commit", "wait"))
    for key in ("write", "commit"):
        if type(table.get(key, False)) is not bool:
            raise _bad(f"mcp.{key}", table[key], "true or false")
    wait = table.get("wait", DEFAULT_WAIT_S)
    if type(wait) not in (int, float) or not math.isfinite(wait) or wait < 0:
        raise _bad("mcp.wait", wait, "a number of seconds (0 or more)")
    return Mcp(table.get("write", False), table.get("commit", False), float(wait))


def _verdicts(table: dict[str, object], key: str) -> dict[str, Verdict]:
    out = {}
    for name, value in table.items():
        try:
            out[name] = Verdict(str(value).lower().replace("-", "_"))
        except ValueError:
            raise _bad(f"policy.{key}.{name}", value,
                       "allow, require_approval or deny") from None
    return out


def _promotion(table: dict[str, object]) -> Promotion:
    for key, value in table.items():
        ok = (type(value) is bool if key == "require_approval" else
              type(value) is int if key == "min_evals" else
              type(value) in (int, float) and math.isfinite(value))
        if key in ("min_evals", "min_pass_rate", "min_score", "require_approval") and not ok:
            raise _bad(f"policy.promotion.{key}", value,
                       "true or false" if key == "require_approval" else
                       "an integer" if key == "min_evals" else "a finite number")
    score = table.get("min_score")
    return Promotion(table.get("min_evals", 0), float(table.get("min_pass_rate", 0.0)),
                     None if score is None else float(score),
                     table.get("require_approval", False))


def _policy(table: dict[str, object]) -> Policy:
    return Policy(_verdicts(_table(table, "nodes", "policy."), "nodes"),
                  _verdicts(_table(table, "relations", "policy."), "relations"),
                  _promotion(_table(table, "promotion", "policy.")))
