"""Writing a generated file only when its bytes change: ``afr report`` with nothing changed then
writes no file (no modification time moves, no diff to look at) and can say so in one line."""

from __future__ import annotations

from pathlib import Path


def write_if_changed(path: Path, content: str | bytes) -> bool:
    """Write ``content`` (text as UTF-8) to ``path`` unless the file already holds exactly those
    bytes; True when it wrote. The parent folder is made when missing."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    path = Path(path)
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True
