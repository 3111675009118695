"""The rules a user's names and paths must follow before afr creates anything from them.

An experiment's name becomes a directory, ``results/<name>/``: it must be one plain file name, so
the store cannot land outside ``results/`` (``..``, ``/``), in ``results/`` itself (``.``), or fail
deep inside the file system's calls (a NUL byte, a control character, a name longer than a file
system allows). ``--out`` and ``--root`` are directories: an empty value (an unset shell variable)
or an existing file is refused, not silently read as the current directory.
"""

from __future__ import annotations

from pathlib import Path

MAX_NAME_BYTES = 100  # well below every file system's 255-byte limit, leaving room for suffixes


def name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as an experiment's name, or None when it is a plain file name."""
    if not isinstance(name, str) or not name.strip():
        return "must be a non-empty string"
    if name in (".", ".."):
        return f"{name!r} is not a plain file name"
    if "/" in name or "\\" in name:
        return f"{name!r} contains a path separator"
    bad = next((c for c in name if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return f"{name!r} contains the control character {bad!r}"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"is {len(name.encode('utf-8', 'surrogatepass'))} bytes long; at most {MAX_NAME_BYTES}"
    return None


def name_error(name: object) -> str | None:
    """The one-line message for a bad ``name:`` (without the file), or None when it is fine."""
    problem = name_problem(name)
    if problem is None:
        return None
    return (
        f"name: {problem}; allowed: a plain file name (no '/', '\\\\', '.' or '..', no control "
        f"characters, at most {MAX_NAME_BYTES} bytes)"
    )


def directory_error(option: str, value: str | None) -> str | None:
    """The one-line message for a bad directory option (``--out``, ``--root``), or None: an empty
    value, a NUL byte, or a path naming an existing file."""
    if value is None:
        return None
    if not value.strip():
        return f"{option}: an empty path; give a directory (an unset shell variable?)"
    if "\x00" in value:
        return f"{option}: {value!r} contains a NUL byte"
    path = Path(value)
    try:
        if path.exists() and not path.is_dir():
            return f"{option}: {value}: is a file, not a directory"
        too_long = next((p for p in path.parts if len(p.encode("utf-8", "surrogatepass")) > 255), None)
    except OSError as err:
        return f"{option}: {value}: {err.strerror}"
    if too_long is not None:
        return f"{option}: {value}: a path component is longer than 255 bytes"
    return None
