"""ContextBenchmark determinism fingerprints: read, write, compare, sign.

A fingerprint records what one engine produced on one machine (an artifact hash and a hash of each query's
ranked results) together with the controlled variables that make two of them comparable (engine identity,
corpus, benchmark version, k). We read ContextBenchmark's formats 1 and 2 and write format 2 exactly as its
Node.js runner lays it out, so each tool reads the other's files; our own fields live under one `"ctxgauge"`
key. Reference: github.com/aabhisrv/contextbenchmark, `contextbenchmark.mjs` (writer), `lib/fingerprint.mjs`
(format history and `compareFingerprints`), `lib/metrics.mjs` (`resultKey`, `hashDir`).

Typical use by the determinism suite::

    fp = make_fingerprint(engine.name, engine.identity(), corpus.name, corpus.hash, k,
                          artifact_hash_of_dir(out_dir, engine.artifact_file), results, extra={})
    write_fingerprint(fp, "bm25.micro-app.linux-x64.fingerprint.json")
    compare("mine.fingerprint.json", "theirs.fingerprint.json").verdict
"""

from ._compare import EXIT_CODES, Comparison, ExitCode, QueryDetail, QueryStatus, Verdict, compare
from ._hashing import EMPTY_QUERY_HASH, SPAN_HASHES, artifact_hash_of_dir, query_hash, sha256_file, span_hash
from ._io import parse_fingerprint, read_fingerprint, write_fingerprint
from ._jsjson import js_json_stringify
from ._make import corpus_base_name, env_info, make_fingerprint, namespace_info
from ._model import (
    BENCHMARK_VERSION,
    FORMAT_VERSION,
    IDENTITY_SOURCES,
    NAMESPACE,
    CorpusRef,
    Fingerprint,
    SystemIdentity,
)
from ._signing import SIGNATURE_SUFFIX, SignatureError, Verification, generate_keypair, sign, signature_path_for, verify

__all__ = [
    "BENCHMARK_VERSION",
    "EMPTY_QUERY_HASH",
    "EXIT_CODES",
    "FORMAT_VERSION",
    "IDENTITY_SOURCES",
    "NAMESPACE",
    "SIGNATURE_SUFFIX",
    "SPAN_HASHES",
    "Comparison",
    "CorpusRef",
    "ExitCode",
    "Fingerprint",
    "QueryDetail",
    "QueryStatus",
    "SignatureError",
    "SystemIdentity",
    "Verdict",
    "Verification",
    "artifact_hash_of_dir",
    "compare",
    "corpus_base_name",
    "env_info",
    "generate_keypair",
    "js_json_stringify",
    "make_fingerprint",
    "namespace_info",
    "parse_fingerprint",
    "query_hash",
    "read_fingerprint",
    "sha256_file",
    "sign",
    "span_hash",
    "signature_path_for",
    "verify",
    "write_fingerprint",
]
