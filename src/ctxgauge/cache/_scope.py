"""Which work cache the current code uses: the environment's, a block's override, or none.

Resolution, first match wins:
1. inside `disabled()` or `using(cache)`: that (None for disabled). The determinism suite wraps every build
   that must be independent in `disabled()`, so a cached build can never pass for an independent rebuild;
2. `CTXGAUGE_CACHE`: a directory, or `off` (also `0`, `no`, `none`, `false`) for no cache. The command line's
   `--cache-dir` and `--no-cache` set this variable, so worker processes a run starts inherit the choice;
3. the user's cache directory (platformdirs; `$XDG_CACHE_HOME/ctxgauge` or `~/.cache/ctxgauge` without it),
   subdirectory `work`.
`CTXGAUGE_CACHE_MAX` bounds the size (bytes, or with a K, M, G suffix: `500M`, `4G`; default 2G).
"""

from __future__ import annotations

import contextvars
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ctxgauge.errors import UserError

from ._store import DEFAULT_MAX_BYTES, WorkCache

ENV_DIR = "CTXGAUGE_CACHE"
ENV_MAX = "CTXGAUGE_CACHE_MAX"
OFF_VALUES = frozenset({"off", "0", "no", "none", "false"})

_UNSET = object()
_override: contextvars.ContextVar = contextvars.ContextVar("ctxgauge_work_cache", default=_UNSET)
_open: dict[tuple[str, int], WorkCache] = {}


def parse_size(text: str) -> int:
    """`2G`, `500M`, `64K` or a plain byte count -> bytes; a user error otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", str(text), re.IGNORECASE)
    if not m:
        raise UserError(f"cache size {text!r} is not a size: give bytes or a number with K, M, G or T (e.g. 2G)")
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " "))


def default_dir() -> Path:
    """The user's cache directory for ctxgauge's work (before any override)."""
    try:
        import platformdirs

        base = Path(platformdirs.user_cache_dir("ctxgauge", appauthor=False))
    except ImportError:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "ctxgauge"
    return base / "work"


def configured_dir() -> Path | None:
    """The directory the environment asks for (None: the cache is off)."""
    value = os.environ.get(ENV_DIR, "").strip()
    if value.lower() in OFF_VALUES:
        return None
    return Path(value).expanduser() if value else default_dir()


def max_bytes() -> int:
    value = os.environ.get(ENV_MAX, "").strip()
    return parse_size(value) if value else DEFAULT_MAX_BYTES


def open_cache(root: Path, limit: int | None = None) -> WorkCache:
    """The WorkCache at `root` (one object per root and bound in a process, so write accounting is shared)."""
    key = (str(Path(root).absolute()), limit if limit is not None else max_bytes())
    if key not in _open:
        _open[key] = WorkCache(Path(key[0]), key[1])
    return _open[key]


def current() -> WorkCache | None:
    """The work cache to use here and now, or None when caching is off."""
    value = _override.get()
    if value is not _UNSET:
        return value
    root = configured_dir()
    return None if root is None else open_cache(root)


@contextmanager
def using(cache: WorkCache | None) -> Iterator[WorkCache | None]:
    """Within the block, `current()` is `cache` (None: no cache)."""
    token = _override.set(cache)
    try:
        yield cache
    finally:
        _override.reset(token)


@contextmanager
def disabled() -> Iterator[None]:
    """Within the block no work cache is read or written: for builds that must be independent."""
    with using(None):
        yield
