"""`ctxgauge cache show` and `ctxgauge cache prune`: the content-addressed work cache (per-blob tokens,
parses and embeddings shared by every engine, suite and process). Where it lives: `--cache-dir` before the
sub-command, else `CTXGAUGE_CACHE`, else the user's cache directory; `--no-cache` turns it off."""

from __future__ import annotations

from typing import Optional

import typer

from ctxgauge.cli._common import console, fail, plain, print_json

cache_app = typer.Typer(help="Show and prune the work cache (per-file tokens, parses and embeddings).",
                        no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")


def _store():
    import ctxgauge.cache as cache

    store = cache.current()
    if store is None:
        fail("the work cache is off (--no-cache or CTXGAUGE_CACHE=off); give --cache-dir DIR to inspect one")
    return store


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@cache_app.command("show")
def show(json_out: bool = typer.Option(False, "--json", help="Print JSON: {dir, max_bytes, bytes, entries, stages: [{key, name, entries, bytes}]}.")) -> None:
    """Where the cache is, its bound, and the entries and bytes of each stage that produced them."""
    store = _store()
    usage = store.usage()
    total, entries = sum(u.bytes for u in usage), sum(u.entries for u in usage)
    if json_out:
        print_json({"dir": str(store.root), "max_bytes": store.max_bytes, "bytes": total, "entries": entries,
                    "stages": [u.to_json() for u in usage]})
        return
    from ctxgauge.report._fit import WHOLE, Col, Fitted

    # Wrapped between words at a terminal's width (the directory stays whole), not at all without one.
    console.print(f"work cache {plain(store.root)}: {entries} entries, {_size(total)} of {_size(store.max_bytes)}")
    if usage:
        cols = [Col("stage", WHOLE), Col("key", WHOLE), Col("entries", WHOLE, right=True), Col("size", WHOLE, right=True)]
        console.print(Fitted(cols, [[plain(u.name), plain(u.key[:12]), str(u.entries), _size(u.bytes)] for u in usage]))


@cache_app.command("prune")
def prune(
    max_size: Optional[str] = typer.Option(None, "--max-size", help="Keep at most this much (e.g. 500M, 2G; default: the cache's bound, CTXGAUGE_CACHE_MAX)."),
    all_entries: bool = typer.Option(False, "--all", help="Remove every entry."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {dir, removed, freed_bytes, bytes, stale_temporaries, stale_bytes}."),
) -> None:
    """Remove least recently used entries until the cache fits its bound (or --max-size, or nothing with --all),
    and what an earlier ctxgauge's cache format left (a file per entry, and its killed writers' temporaries)."""
    from ctxgauge.cache import parse_size

    store = _store()
    target = 0 if all_entries else (parse_size(max_size) if max_size is not None else None)
    stale, stale_bytes = store.sweep()
    removed, freed = store.prune(target)
    left = sum(u.bytes for u in store.usage())
    if json_out:
        print_json({"dir": str(store.root), "removed": removed, "freed_bytes": freed, "bytes": left,
                    "stale_temporaries": stale, "stale_bytes": stale_bytes})
        return
    swept = f", and {stale} files of an older format ({_size(stale_bytes)})" if stale else ""
    console.print(f"removed {removed} entries ({_size(freed)}){swept}; {_size(left)} left in {plain(store.root)}",
                  soft_wrap=True)
