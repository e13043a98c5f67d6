"""Ed25519 signing of a fingerprint file's bytes: round trip, tampering, keys."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.fingerprints import (
    SignatureError,
    generate_keypair,
    read_fingerprint,
    sign,
    signature_path_for,
    verify,
    write_fingerprint,
)

from .conftest import BM25_LINUX, make


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return generate_keypair(tmp_path / "keys")


@pytest.fixture
def signed(tmp_path: Path, keys: tuple[Path, Path]) -> Path:
    path = write_fingerprint(make(), tmp_path / "bm25.fingerprint.json")
    sign(path, keys[0])
    return path


def test_keypair_files(keys: tuple[Path, Path]) -> None:
    private, public = keys
    assert private.name == "ctxgauge-signing.key.pem" and public.name == "ctxgauge-signing.pub.pem"
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    if os.name == "posix":
        assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_keypair_refuses_to_overwrite(keys: tuple[Path, Path]) -> None:
    before = keys[0].read_bytes()
    with pytest.raises(UserError, match="refusing to overwrite"):
        generate_keypair(keys[0].parent)
    assert keys[0].read_bytes() == before


def test_signature_file(signed: Path, keys: tuple[Path, Path]) -> None:
    sig_path = signature_path_for(signed)
    assert sig_path.name == "bm25.fingerprint.json.sig"
    doc = json.loads(sig_path.read_text(encoding="utf-8"))
    assert list(doc) == ["ctxgauge_signature", "algorithm", "public_key", "signature", "signed_sha256", "signed_file"]
    assert doc["algorithm"] == "ed25519" and len(doc["public_key"]) == 64 and len(doc["signature"]) == 128
    assert doc["signed_file"] == signed.name


def test_round_trip(signed: Path, keys: tuple[Path, Path]) -> None:
    result = verify(signed)
    assert result.fingerprint == signed and not result.trusted
    assert verify(signed, trusted_key=keys[1]).trusted


def test_signing_leaves_the_fingerprint_untouched(signed: Path, tmp_path: Path) -> None:
    assert signed.read_bytes() == write_fingerprint(make(), tmp_path / "fresh.json").read_bytes()
    assert read_fingerprint(signed) == make()


def test_signs_a_reference_file(interop: Path, tmp_path: Path, keys: tuple[Path, Path]) -> None:
    copy = Path(shutil.copy(interop / BM25_LINUX, tmp_path / BM25_LINUX))
    sign(copy, keys[0])
    assert verify(copy, trusted_key=keys[1]).signed_sha256 == read_fingerprint(copy).file_sha256


@pytest.mark.parametrize("edit", [
    lambda b: b.replace(b'"art1"', b'"art2"'),  # a value
    lambda b: b + b"\n",  # only whitespace: the bytes are what is signed
    lambda b: b.replace(b' "k": 10', b' "k": 5'),
])
def test_tampered_fingerprint_is_detected(signed: Path, edit) -> None:  # type: ignore[no-untyped-def]
    signed.write_bytes(edit(signed.read_bytes()))
    with pytest.raises(SignatureError, match="was modified after signing"):
        verify(signed)


def test_tampered_file_with_forged_digest_is_detected(signed: Path) -> None:
    # Editing the file and fixing signed_sha256 to match still fails: the signature covers the bytes.
    import hashlib

    signed.write_bytes(signed.read_bytes().replace(b'"art1"', b'"art2"'))
    sig_path = signature_path_for(signed)
    doc = json.loads(sig_path.read_text(encoding="utf-8"))
    doc["signed_sha256"] = hashlib.sha256(signed.read_bytes()).hexdigest()
    sig_path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SignatureError, match="invalid signature"):
        verify(signed)


def test_edited_signature_is_detected(signed: Path) -> None:
    sig_path = signature_path_for(signed)
    doc = json.loads(sig_path.read_text(encoding="utf-8"))
    doc["signature"] = ("0" if doc["signature"][0] != "0" else "1") + doc["signature"][1:]
    sig_path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SignatureError, match="invalid signature"):
        verify(signed)


def test_resigned_by_another_key_fails_against_the_trusted_key(signed: Path, tmp_path: Path,
                                                                 keys: tuple[Path, Path]) -> None:
    other_private, _ = generate_keypair(tmp_path / "mallory")
    sign(signed, other_private)
    assert verify(signed)  # self-consistent ...
    with pytest.raises(SignatureError, match="not the trusted key"):
        verify(signed, trusted_key=keys[1])  # ... but not by the key we trust


def test_missing_signature(tmp_path: Path) -> None:
    path = write_fingerprint(make(), tmp_path / "a.json")
    with pytest.raises(UserError, match=r"cannot read signature file .*a\.json\.sig"):
        verify(path)


@pytest.mark.parametrize(("doc", "message"), [
    ("not json", "malformed signature file"),
    ([], "top level must be a JSON object"),
    ({"ctxgauge_signature": 2, "algorithm": "ed25519"}, "unsupported signature format 2"),
    ({"ctxgauge_signature": 1, "algorithm": "rsa"}, "unsupported algorithm 'rsa'"),
    ({"ctxgauge_signature": 1, "algorithm": "ed25519", "public_key": "zz"}, "'public_key' must be 32 bytes"),
])
def test_malformed_signature_file(signed: Path, doc: object, message: str) -> None:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    signature_path_for(signed).write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        verify(signed)


def test_refuses_to_sign_a_malformed_fingerprint(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(UserError, match="not a ContextBenchmark fingerprint"):
        sign(bad, keys[0])
    assert not signature_path_for(bad).exists()


def test_refuses_a_non_ed25519_or_unreadable_key(tmp_path: Path, signed: Path, keys: tuple[Path, Path]) -> None:
    with pytest.raises(UserError, match="cannot load private key"):
        sign(signed, keys[1])  # a public key is not a private key
    with pytest.raises(UserError, match="cannot read private key"):
        sign(signed, tmp_path / "nope.pem")


def test_refuses_a_key_of_another_algorithm(tmp_path: Path, signed: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "ec.pem").write_bytes(pem)
    with pytest.raises(UserError, match="is not an Ed25519 key"):
        sign(signed, tmp_path / "ec.pem")
