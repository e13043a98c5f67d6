"""Input checks shared by the ranking and stability metrics.

A ranking is a sequence of unique file paths, best first; a relevant set is a collection of paths. Both
checks exist to turn the two most likely caller mistakes into loud errors instead of quietly wrong scores.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def check_ranking(ranking: Sequence[str], *, what: str = "ranking") -> tuple[str, ...]:
    """Return `ranking` as a tuple after checking it is a sequence of unique str paths.

    Raises:
        TypeError: `ranking` is a bare string (iterating it would score single characters) or holds a
            non-str item (typically an engine's `(path, score)` pair passed without unpacking).
        ValueError: a path occurs twice. Every metric assumes unique paths; a duplicate would be counted
            twice by precision and hit twice by recall, so it is refused rather than guessed away.
    """
    if isinstance(ranking, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of paths, not a single {type(ranking).__name__}")
    items = tuple(ranking)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{what} items must be str paths, got {type(item).__name__} {item!r}; "
                "for (path, score) hits pass [path for path, _ in hits]"
            )
    if len(set(items)) != len(items):
        seen: set[str] = set()
        for item in items:
            if item in seen:
                raise ValueError(f"{what} lists {item!r} more than once; paths in a ranking must be unique")
            seen.add(item)
    return items


def as_path_set(relevant: Collection[str]) -> frozenset[str]:
    """Return the relevant paths as a frozenset.

    Raises:
        TypeError: `relevant` is a bare string (a set of its characters would be silently scored), or
            holds a non-str item.
    """
    if isinstance(relevant, (str, bytes)):
        raise TypeError(f"relevant must be a collection of paths, not a single {type(relevant).__name__}")
    paths = frozenset(relevant)
    for item in paths:
        if not isinstance(item, str):
            raise TypeError(f"relevant items must be str paths, got {type(item).__name__} {item!r}")
    return paths
