"""Ed25519 signatures over fingerprint files, so a published fingerprint can be tied to whoever produced it.

What is signed: **the fingerprint file's exact bytes**, not a canonical re-serialisation. The file is what
people exchange and what `compare` reads; signing its bytes means any edit, including whitespace or key
order, breaks the signature, and no second JSON writer (ours or theirs) has to agree on a canonical form.
ContextBenchmark reads the file unchanged because the signature lives beside it, in `<file>.sig`:

    {"ctxgauge_signature": 1, "algorithm": "ed25519", "public_key": <hex, 32 raw bytes>,
     "signature": <hex, 64 bytes>, "signed_sha256": <hex SHA-256 of the signed bytes>, "signed_file": <base name>}

`signed_sha256` is redundant with the signature; it is there so a tampered file is reported as "modified
after signing" rather than as a bare "invalid signature". A signature proves integrity against the key it
carries; only `verify(..., trusted_key=...)` proves who signed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxgauge.errors import UserError

from ctxgauge._io import InputError, read_input_bytes, write_bytes_atomic

from ._io import read_fingerprint
from ._jsjson import js_json_stringify

__all__ = [
    "SIGNATURE_SUFFIX", "SignatureError", "Verification", "generate_keypair", "sign", "signature_path_for", "verify",
]

SIGNATURE_SUFFIX = ".sig"
"""Appended to the fingerprint's file name to name its signature file."""

_ALGORITHM = "ed25519"
_SIGNATURE_FORMAT = 1


class SignatureError(UserError):
    """A signature does not hold: the file changed after signing, the signature was edited, or the key differs."""


@dataclass(frozen=True)
class Verification:
    """A signature that held."""

    fingerprint: Path
    """The fingerprint file verified."""
    signature_file: Path
    """The signature file used."""
    public_key: str
    """Hex of the 32-byte Ed25519 public key that signed it."""
    signed_sha256: str
    """SHA-256 hex of the fingerprint bytes that were signed (equal to the file's now)."""
    trusted: bool
    """True when the key was checked against a trusted key given by the caller, not only against itself."""


def _crypto() -> Any:
    # Imported on first use: `import ctxgauge.fingerprints` stays fast and works where the wheel is missing.
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:  # pragma: no cover - cryptography is a core dependency
        raise UserError("signing needs the 'cryptography' package: pip install cryptography") from exc
    return serialization, ed25519


def signature_path_for(fingerprint_path: str | os.PathLike[str]) -> Path:
    """`<file>.sig` beside the fingerprint."""
    path = Path(fingerprint_path)
    return path.with_name(path.name + SIGNATURE_SUFFIX)


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return read_input_bytes(path, what)
    except InputError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.problem}") from None


def _raw_public(public_key: Any) -> bytes:
    serialization, _ = _crypto()
    raw: bytes = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def _load_private(path: Path, password: bytes | None) -> Any:
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(_read_bytes(path, "private key"), password=password)
    except (ValueError, TypeError) as exc:
        raise UserError(f"cannot load private key {path}: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise UserError(f"private key {path} is not an Ed25519 key ({type(key).__name__})")
    return key


def _load_public(path: Path) -> bytes:
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(_read_bytes(path, "public key"))
    except (ValueError, TypeError) as exc:
        raise UserError(f"cannot load public key {path}: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise UserError(f"public key {path} is not an Ed25519 key ({type(key).__name__})")
    return _raw_public(key)


def sign(
    fingerprint_path: str | os.PathLike[str],
    private_key_path: str | os.PathLike[str],
    *,
    password: bytes | None = None,
) -> Path:
    """Sign a fingerprint file's exact bytes with an Ed25519 PEM private key; write and return `<file>.sig`.

    The file is read as a fingerprint first, so a malformed one is refused (UserError) instead of signed.
    The signature file is written atomically and replaces an older one.
    """
    path = Path(fingerprint_path)
    read_fingerprint(path)
    key = _load_private(Path(private_key_path), password)
    data = _read_bytes(path, "fingerprint")
    document = {
        "ctxgauge_signature": _SIGNATURE_FORMAT,
        "algorithm": _ALGORITHM,
        "public_key": _raw_public(key.public_key()).hex(),
        "signature": key.sign(data).hex(),
        "signed_sha256": hashlib.sha256(data).hexdigest(),
        "signed_file": path.name,
    }
    return write_bytes_atomic(signature_path_for(path), (js_json_stringify(document, indent=1) + "\n").encode())


def _hex_field(document: dict[str, Any], key: str, size: int, where: Path) -> bytes:
    value = document.get(key)
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else None
    except ValueError:
        raw = None
    if raw is None or len(raw) != size:
        raise UserError(f"malformed signature file {where}: {key!r} must be {size} bytes as hex")
    return raw


def _read_signature(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(_read_bytes(path, "signature file").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"malformed signature file {path}: {exc}") from None
    if not isinstance(document, dict):
        raise UserError(f"malformed signature file {path}: top level must be a JSON object")
    version = document.get("ctxgauge_signature")
    if not isinstance(version, int) or version > _SIGNATURE_FORMAT:
        raise UserError(f"signature file {path}: unsupported signature format {version!r}")
    if document.get("algorithm") != _ALGORITHM:
        raise UserError(f"signature file {path}: unsupported algorithm {document.get('algorithm')!r}")
    return document


def verify(
    fingerprint_path: str | os.PathLike[str],
    signature_path: str | os.PathLike[str] | None = None,
    *,
    trusted_key: str | os.PathLike[str] | None = None,
) -> Verification:
    """Check a fingerprint file against its signature (default `<file>.sig`).

    `trusted_key`: a PEM public key file; when given, the signature must also be by that key, which is what
    proves who produced the file. Without it, verification proves only that the file is unchanged since
    someone holding the embedded key signed it.

    Raises SignatureError (a UserError) when the file was modified after signing, the signature does not
    match, or the key is not the trusted one; UserError when a file is missing or malformed.
    """
    path = Path(fingerprint_path)
    sig_path = Path(signature_path) if signature_path is not None else signature_path_for(path)
    document = _read_signature(sig_path)
    public = _hex_field(document, "public_key", 32, sig_path)
    signature = _hex_field(document, "signature", 64, sig_path)
    signed_sha256 = _hex_field(document, "signed_sha256", 32, sig_path).hex()

    if trusted_key is not None and _load_public(Path(trusted_key)) != public:
        raise SignatureError(f"{sig_path} was made with key {public.hex()[:16]}..., not the trusted key {trusted_key}")

    data = _read_bytes(path, "fingerprint")
    actual = hashlib.sha256(data).hexdigest()
    if actual != signed_sha256:
        raise SignatureError(f"{path} was modified after signing: its sha256 is {actual}, the signature covers "
                             f"{signed_sha256}")
    _, ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    try:
        ed25519.Ed25519PublicKey.from_public_bytes(public).verify(signature, data)
    except InvalidSignature:
        raise SignatureError(f"invalid signature in {sig_path}: it does not match {path} under its public key "
                             "(the signature file was edited or made for other bytes)") from None
    return Verification(path, sig_path, public.hex(), signed_sha256, trusted=trusted_key is not None)


def generate_keypair(directory: str | os.PathLike[str], name: str = "ctxgauge-signing") -> tuple[Path, Path]:
    """Create an Ed25519 key pair as PEM files in `directory`; return (private_key_path, public_key_path).

    Files: `<name>.key.pem` (PKCS#8, unencrypted, mode 0600) and `<name>.pub.pem` (SubjectPublicKeyInfo).
    Refuses (UserError) to overwrite an existing key: a lost private key cannot be recovered.
    """
    serialization, ed25519 = _crypto()
    folder = Path(directory)
    made = [p for p in (folder, *folder.parents) if not os.path.lexists(p)]  # removed again if writing fails
    folder.mkdir(parents=True, exist_ok=True)
    private_path, public_path = folder / f"{name}.key.pem", folder / f"{name}.pub.pem"
    for target in (private_path, public_path):
        if target.exists():
            raise UserError(f"refusing to overwrite existing key file {target}")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # Created 0600 from the first byte (O_EXCL, mode given to open): no moment where another user can read it.
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), 0o600)  # a umask cannot add bits, but be explicit about the result
            handle.write(private_pem)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk fails here, not after the key was reported written
        write_bytes_atomic(public_path, public_pem)
    except OSError as exc:
        # Half a key pair is no key pair (a full disk, a file size limit): nothing is left behind.
        private_path.unlink(missing_ok=True)
        for p in made:
            try:
                p.rmdir()
            except OSError:
                break
        if exc.filename is None:
            exc.filename = str(private_path)
        raise
    return private_path, public_path
