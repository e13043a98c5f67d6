"""Finding a secret value however the text around it was wrapped or escaped.

A provider's error message may wrap a long API key across lines, and once that message is stored as JSON the
break is the two characters `\\n`. A plain substring test then misses the key, it lands in `run.json`, and a
scan line by line misses it too. So a secret is matched by a pattern that allows, between any two of its
characters, a line break (`\\n`, `\\r\\n`, `\\r`), its JSON escape (`\\\\n`, `\\\\r\\\\n`, `\\\\r`) or the single space
a whitespace-collapsing formatter leaves of one. Provider redaction and the export's secret scan both use it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

_BREAK = r"(?:\r\n|\n|\r|\\r\\n|\\n|\\r| )?"
"""What may sit between two characters of a secret: one raw or JSON-escaped line break, or one space."""


@lru_cache(maxsize=256)
def secret_pattern(value: str) -> re.Pattern[str]:
    """A pattern matching `value` with at most one line break (raw or JSON-escaped) between its characters."""
    return re.compile(_BREAK.join(re.escape(c) for c in value))


def redact(text: str, secrets: Iterable[str], replacement: str = "[redacted]") -> str:
    """`text` with every occurrence of each secret, split or not (see the module docstring), replaced."""
    for secret in sorted(set(s for s in secrets if s), key=lambda s: (-len(s), s)):
        if len(secret) >= 4:
            text = secret_pattern(secret).sub(replacement, text)
        else:
            text = text.replace(secret, replacement)
    return text
