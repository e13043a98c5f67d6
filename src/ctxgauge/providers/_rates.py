"""Rate tables: USD per million tokens for each of the four token columns, with their basis named.

A cost is always an estimate from a named table (`estimated:<version>`), never presented as a bill.
A model with no row has cost None and never enters a cost mean (a zero would flatter it).
Point `CTXGAUGE_RATES` (or `--rates`) at a JSON file of the same shape to use your own prices:

    {"version": "my-rates-2026-11", "basis": "our contract prices",
     "models": {"gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_read": 0.075, "cache_write": 0.0}}}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ctxgauge._io import read_data
from ctxgauge.errors import UserError
from ctxgauge.providers._base import Usage

RATES_ENV = "CTXGAUGE_RATES"
COLUMNS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class RateTable:
    """Per-model prices. `version` names the table in every cost basis; `basis` says where prices came from."""

    version: str
    basis: str
    models: dict[str, dict[str, float]] = field(default_factory=dict)

    def rate(self, model: str) -> dict[str, float] | None:
        """The row for `model`: an exact name, else the longest listed prefix (dated model ids such as
        `claude-3-5-haiku-20241022` share their family's price)."""
        if model in self.models:
            return self.models[model]
        prefixes = [m for m in self.models if model.startswith(m)]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, usage: Usage) -> float | None:
        """Estimated USD for `usage` at `model`'s rates, or None when the table has no row for it."""
        row = self.rate(model)
        if row is None:
            return None
        tokens = {"input": usage.input, "output": usage.output, "cache_read": usage.cache_read,
                  "cache_write": usage.cache_write}
        return sum(tokens[c] * float(row.get(c, 0.0)) for c in COLUMNS) / 1_000_000

    @property
    def cost_basis(self) -> str:
        return f"estimated:{self.version}"

    def to_dict(self) -> dict:
        return {"version": self.version, "basis": self.basis, "models": self.models}


# Vendors' published list prices (standard tier, no batch discount), entered by hand; the local model
# runs on this machine and costs nothing per token. Check them before quoting a cost: prices change.
DEFAULT_RATES = RateTable(
    version="ctxgauge-list-2025-06",
    basis="vendor list prices per million tokens as published in June 2025, standard tier, entered by hand",
    models={
        "gpt-4o-mini": {"input": 0.15, "output": 0.60, "cache_read": 0.075, "cache_write": 0.0},
        "gpt-4o": {"input": 2.50, "output": 10.00, "cache_read": 1.25, "cache_write": 0.0},
        "gpt-4.1-mini": {"input": 0.40, "output": 1.60, "cache_read": 0.10, "cache_write": 0.0},
        "gpt-4.1": {"input": 2.00, "output": 8.00, "cache_read": 0.50, "cache_write": 0.0},
        "claude-3-5-haiku": {"input": 0.80, "output": 4.00, "cache_read": 0.08, "cache_write": 1.00},
        "claude-3-5-sonnet": {"input": 3.00, "output": 15.00, "cache_read": 0.30, "cache_write": 3.75},
        "claude-sonnet-4": {"input": 3.00, "output": 15.00, "cache_read": 0.30, "cache_write": 3.75},
        "gemma-3-270m": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0},
    },
)


def load_rates(path: str | Path | None = None) -> RateTable:
    """The table at `path`, else at `$CTXGAUGE_RATES`, else the built-in one."""
    path = path or os.environ.get(RATES_ENV)
    if not path:
        return DEFAULT_RATES
    try:
        data = read_data(path, "rate table", fmt="json", expect=dict)
        models = {str(m): {c: float(v) for c, v in row.items() if c in COLUMNS}
                  for m, row in data["models"].items()}
        return RateTable(str(data["version"]), str(data.get("basis", "given by the user")), models)
    except (ValueError, KeyError, AttributeError, TypeError) as exc:
        raise UserError(f"{path}: not a rate table ({type(exc).__name__}: {exc}); "
                        "expected {version, basis, models: {MODEL: {input, output, cache_read, cache_write}}}") from None
