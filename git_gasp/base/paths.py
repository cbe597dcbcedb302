"""str paths as pathlib shows them, and pathlib's predicates on them: the check and
the hooks never import pathlib (`base.files` re-exports these)."""

from __future__ import annotations

import errno
import os
import stat


def path_str(path: str | os.PathLike) -> str:
    """``str(pathlib.PurePosixPath(path))``: empty and ``.`` parts and trailing slashes
    dropped, ``..`` kept, a leading ``//`` kept (as POSIX allows)."""
    text = os.fspath(path)
    anchor = ""
    if text.startswith("/"):
        anchor = "//" if text.startswith("//") and not text.startswith("///") else "/"
    return anchor + "/".join(p for p in text.split("/") if p and p != ".") or "."


def join(root: str | os.PathLike, *parts: str | os.PathLike) -> str:
    """``str(pathlib.Path(root, *parts))`` (an absolute part starts afresh)."""
    return path_str(os.path.join(root, *parts))


def _parts(text: str) -> list[str]:
    """``PurePosixPath(text).parts`` for a `path_str` form."""
    anchor = "//" if text.startswith("//") else "/" if text.startswith("/") else ""
    names = [p for p in text[len(anchor):].split("/") if p and p != "."]
    return [anchor, *names] if anchor else names


def parents(path: str | os.PathLike) -> list[str]:
    """``pathlib.PurePosixPath(path).parents`` as strs, nearest first."""
    parts = _parts(path_str(path))
    anchored = bool(parts) and parts[0].startswith("/")
    names = parts[1:] if anchored else parts
    anchor = parts[0] if anchored else ""
    if not names:
        return []
    return [anchor + "/".join(names[:i]) for i in range(len(names) - 1, 0, -1)] \
        + [anchor or "."]


def _relative(path: str, root: str) -> list[str] | None:
    """``PurePosixPath(path).relative_to(root).parts`` for two `path_str` forms; None
    where relative_to raises ValueError (`path` is not under `root`)."""
    inner, outer = _parts(path), _parts(root)
    if not outer:
        return None if path.startswith("/") else inner
    return inner[len(outer):] if inner[:len(outer)] == outer else None


def relative_to(path: str | os.PathLike, root: str | os.PathLike) -> str:
    """``pathlib.Path(path).relative_to(root).as_posix()`` (ValueError when `path` is not
    under `root`)."""
    text, base = path_str(path), path_str(root)
    rel = _relative(text, base)
    if rel is None:
        raise ValueError(f"{text!r} is not in the subpath of {base!r} OR one path is "
                         "relative and the other is absolute.")
    return "/".join(rel) or "."


def is_within(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """``pathlib.Path(path).is_relative_to(root)``: `root`'s parts begin `path`'s."""
    return _relative(path_str(path), path_str(root)) is not None


_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _mode(path: str | os.PathLike, follow: bool) -> int | None:
    """The st_mode of `path` as pathlib names it (no trailing slash: a link is a link;
    lstat unless `follow`); None where pathlib's predicates answer False (missing, a
    file on the way, a loop, an unencodable name); any other OSError is raised, as
    they raise it."""
    path = path_str(path)
    try:
        return (os.stat(path) if follow else os.lstat(path)).st_mode
    except OSError as exc:
        if exc.errno in _MISSING:
            return None
        raise
    except ValueError:
        return None


def exists(path: str | os.PathLike) -> bool:
    """``pathlib.Path(path).exists()`` (a link is followed)."""
    return _mode(path, True) is not None


def is_dir(path: str | os.PathLike) -> bool:
    """``pathlib.Path(path).is_dir()`` (a link is followed)."""
    mode = _mode(path, True)
    return mode is not None and stat.S_ISDIR(mode)


def is_file(path: str | os.PathLike) -> bool:
    """``pathlib.Path(path).is_file()`` (a link is followed)."""
    mode = _mode(path, True)
    return mode is not None and stat.S_ISREG(mode)


def is_link(path: str | os.PathLike) -> bool:
    """``pathlib.Path(path).is_symlink()``."""
    mode = _mode(path, False)
    return mode is not None and stat.S_ISLNK(mode)
