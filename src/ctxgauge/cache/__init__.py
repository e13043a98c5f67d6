"""The content-addressed work cache: per-blob and per-chunk work shared by every engine, suite and process.

An entry is keyed by the identity of the stage that produced it (`stage_identity`: its code, configuration
and library versions; for embeddings also the weights' hash and the backend) and the content id it was
computed from (a git blob id, or a hash of a chunk's inputs). Only such work is cached, never an index or a
ranking, so every query is really run. See `_scope` for where the cache lives and how it is turned off, and
`_store` for the on-disk format.
"""

from ._identity import (
    IDENTITY_SCHEME, code_hashes, code_identity, computing_modules, distribution_version, module_hash, normalized_source,
    source_hash, stage_identity,
)
from ._scope import (
    ENV_DIR, ENV_MAX, configured_dir, current, default_dir, disabled, max_bytes, open_cache, parse_size, using,
)
from ._store import DEFAULT_MAX_BYTES, Stage, StageUsage, WorkCache

__all__ = [
    "DEFAULT_MAX_BYTES", "IDENTITY_SCHEME", "code_hashes", "code_identity", "computing_modules", "module_hash",
    "normalized_source", "source_hash", "ENV_DIR", "ENV_MAX", "Stage", "StageUsage", "WorkCache", "configured_dir", "current",
    "default_dir", "disabled", "distribution_version", "max_bytes", "open_cache", "parse_size", "stage_identity", "using",
]
