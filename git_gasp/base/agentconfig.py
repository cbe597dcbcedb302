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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.files import NotARegularFile, read_regular_file
from git_gasp.base.toml import load_toml

CONFIG_REL = ".agent/config.toml"
MAX_CONFIG_BYTES = 1 << 20  # a config is a few lines; a bigger one is not one
OUTPUTS = ("full", "summary", "none")
FILE_INPUTS = ("digest", "full")
MIN_FIELD_LIMIT, MAX_FIELD_LIMIT = 64, 1 << 20
DEFAULT_WAIT_S = 10.0


class Verdict(enum.Enum):
    """What a policy gate says of a change."""

    ALLOW = "allow"
    REQUIRE_APPROVAL = "require_approval"
    DENY = "deny"


@dataclass(frozen=True)
class Executor:
    """``[executor]``: the model and provider the agent is bound to ("" when unset)."""

    model: str = ""
    provider: str = ""


@dataclass(frozen=True)
class Capture:
    """``[capture]``: how much of a tool's input and output the log keeps."""

    tool_output: str = "summary"
    field_limit: int = 4096
    file_inputs: str = "digest"
    transcripts: bool = True


@dataclass(frozen=True)
class Mcp:
    """``[mcp]``: whether the server's write tools are on, whether a write commits, and
    how long a write waits for a lease another writer holds."""

    write: bool = False
    commit: bool = False
    wait: float = DEFAULT_WAIT_S


@dataclass(frozen=True)
class Promotion:
    """``[policy.promotion]``: what promoting a patch needs."""

    min_evals: int = 0
    min_pass_rate: float = 0.0
    min_score: float | None = None
    require_approval: bool = False


@dataclass(frozen=True)
class Policy:
    """``[policy]``: verdicts by node kind and by relation, and the promotion gate."""

    nodes: dict[str, Verdict] = field(default_factory=dict)
    relations: dict[str, Verdict] = field(default_factory=dict)
    promotion: Promotion = Promotion()


@dataclass(frozen=True)
class AgentConfig:
    """Every section of `.agent/config.toml`, validated; `data` is the parsed document."""

    executor: Executor = Executor()
    capture: Capture = Capture()
    mcp: Mcp = Mcp()
    policy: Policy = Policy()
    data: dict[str, Any] = field(default_factory=dict)


def read_config(root: Path | str) -> AgentConfig:
    """The config of the agent at `root` (the defaults when the file is missing). A link,
    a device, a file past MAX_CONFIG_BYTES, bad TOML or a bad value is a FormatError."""
    path = Path(root, CONFIG_REL)
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


def _bad(key: str, value: Any, why: str) -> FormatError:
    return FormatError(f"{CONFIG_REL}: {key} = {value!r} is not {why}")


def _table(doc: dict[str, Any], key: str, within: str = "") -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise FormatError(f"{CONFIG_REL}: [{within}{key}] must be a table")
    return value


def _known(table: dict[str, Any], section: str, keys: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise FormatError(f"{CONFIG_REL}: [{section}] has unknown key {unknown[0]!r} "
                          f"(known: {', '.join(keys)})")


def _executor(table: dict[str, Any]) -> Executor:
    for key in ("model", "provider"):
        if not isinstance(table.get(key, ""), str):
            raise _bad(f"executor.{key}", table[key], "a string")
    return Executor(table.get("model", ""), table.get("provider", ""))


def _capture(table: dict[str, Any]) -> Capture:
    _known(table, "capture", ("tool_output", "field_limit", "file_inputs", "transcripts"))
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
    return got


def _mcp(table: dict[str, Any]) -> Mcp:
    _known(table, "mcp", ("write", "commit", "wait"))
    for key in ("write", "commit"):
        if type(table.get(key, False)) is not bool:
            raise _bad(f"mcp.{key}", table[key], "true or false")
    wait = table.get("wait", DEFAULT_WAIT_S)
    if type(wait) not in (int, float) or not math.isfinite(wait) or wait < 0:
        raise _bad("mcp.wait", wait, "a number of seconds (0 or more)")
    return Mcp(table.get("write", False), table.get("commit", False), float(wait))


def _verdicts(table: dict[str, Any], key: str) -> dict[str, Verdict]:
    out = {}
    for name, value in table.items():
        try:
            out[name] = Verdict(str(value).lower().replace("-", "_"))
        except ValueError:
            raise _bad(f"policy.{key}.{name}", value,
                       "allow, require_approval or deny") from None
    return out


def _promotion(table: dict[str, Any]) -> Promotion:
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


def _policy(table: dict[str, Any]) -> Policy:
    return Policy(_verdicts(_table(table, "nodes", "policy."), "nodes"),
                  _verdicts(_table(table, "relations", "policy."), "relations"),
                  _promotion(_table(table, "promotion", "policy.")))
