"""Fingerprint commands: `compare A B`, `sign FP --key KEY`, `verify FP`, `keygen DIR`.

`compare` exits with its verdict's code, one per verdict, so CI scripts can branch on it:
PASS and PASS (UNVERIFIED) 0, FAIL 1, usage error 2, INCONCLUSIVE 3, NOT COMPARABLE 4, REFUSED 5.
A crash (a bug in ctxgauge, not a verdict) exits with CRASH_EXIT (70, sysexits' EX_SOFTWARE, as every command
does: `ctxgauge.cli._Root`), never with a code a verdict owns: Python's own uncaught-exception code, 1,
would read as FAIL.
`verify` exits 0 when the signature holds, 1 when it does not, 2 for a missing or malformed file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from ctxgauge.cli._common import console, err_console, plain, print_json
from ctxgauge.errors import EXIT_INTERNAL

CRASH_EXIT = EXIT_INTERNAL
"""Exit code of an unexpected error inside these commands (distinct from every verdict's code)."""

def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
    app.command("sign")(sign)
    app.command("verify")(verify)
    app.command("keygen")(keygen)


def compare(
    a: Path = typer.Argument(..., help="A fingerprint file (ours or ContextBenchmark's, format 1 or 2)."),
    b: Path = typer.Argument(..., help="The fingerprint to compare it with, from another machine."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON (verdict, exitCode, reasons, queries)."),
) -> None:
    """Cross-machine identity: PASS, FAIL, INCONCLUSIVE, NOT COMPARABLE or REFUSED, each with its exit code."""
    from ctxgauge.fingerprints import compare as compare_fingerprints

    result = compare_fingerprints(a, b)
    if json_out:
        print_json(result.to_json())
    else:
        _render_comparison(result, a, b)
    raise typer.Exit(int(result.exit_code))


def _render_comparison(result: Any, a: Path, b: Path) -> None:
    colour = {"PASS": "green", "PASS (UNVERIFIED)": "yellow", "FAIL": "red"}.get(result.verdict.label, "yellow")
    # File names, reasons, warnings and queries quote the fingerprints' own text (adapter names, queries):
    # user text, through `plain`.
    console.print(f"[bold {colour}]{result.verdict.label}[/]  {plain(a.name)}  vs  {plain(b.name)}", soft_wrap=True)
    for reason in result.reasons:
        console.print(f"  {plain(reason)}", soft_wrap=True)
    for warning in result.warnings:
        console.print(f"  [yellow]warning:[/] {plain(warning)}", soft_wrap=True)
    if result.verdict.label in ("NOT COMPARABLE", "REFUSED"):
        return  # per-query differences between incomparable files mean nothing
    shown = [d for d in result.queries if d.status.value != "match"]
    for detail in shown[:10]:
        console.print(f"  {detail.status.value}: {plain(repr(detail.query))}", soft_wrap=True)
    if len(shown) > 10:
        console.print(f"  ... and {len(shown) - 10} more (--json lists every query)")


def sign(
    fingerprint: Path = typer.Argument(..., help="The fingerprint file to sign (its exact bytes are signed)."),
    key: Path = typer.Option(..., "--key", help="Ed25519 private key, PEM (from `ctxgauge keygen`)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {fingerprint, signature, public_key}."),
) -> None:
    """Sign a fingerprint with an Ed25519 key; writes <file>.sig beside it (the fingerprint is unchanged)."""
    import json

    from ctxgauge.fingerprints import sign as sign_file

    sig = sign_file(fingerprint, key)
    public = json.loads(sig.read_text(encoding="utf-8"))["public_key"]
    if json_out:
        print_json({"fingerprint": str(fingerprint), "signature": str(sig), "public_key": public})
        return
    console.print(plain(f"signed {fingerprint} -> {sig} (key {public[:16]}...)"), soft_wrap=True)


def verify(
    fingerprint: Path = typer.Argument(..., help="The fingerprint file to check."),
    signature: Optional[Path] = typer.Option(None, "--signature", help="Signature file (default <file>.sig)."),
    trusted_key: Optional[Path] = typer.Option(None, "--trusted-key", help="PEM public key the signature must be made with (proves who signed)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {valid, trusted, public_key, signed_sha256, reason}."),
) -> None:
    """Check a fingerprint against its signature: exit 0 valid, 1 invalid, 2 missing or malformed."""
    from ctxgauge.fingerprints import SignatureError
    from ctxgauge.fingerprints import verify as verify_file

    try:
        ok = verify_file(fingerprint, signature, trusted_key=trusted_key)
    except SignatureError as exc:
        if json_out:
            print_json({"fingerprint": str(fingerprint), "valid": False, "trusted": False, "public_key": None,
                        "signed_sha256": None, "reason": str(exc)})
        else:
            err_console.print(f"[bold red]INVALID[/] {plain(exc)}", soft_wrap=True)
        raise typer.Exit(1) from None
    if json_out:
        print_json({"fingerprint": str(ok.fingerprint), "valid": True, "trusted": ok.trusted,
                    "public_key": ok.public_key, "signed_sha256": ok.signed_sha256, "reason": None})
        return
    who = "the trusted key" if ok.trusted else f"key {ok.public_key[:16]}... (not checked against a trusted key)"
    console.print(f"[bold green]VALID[/] {plain(fingerprint)}: unchanged since signed by {plain(who)}", soft_wrap=True)


def keygen(
    directory: Path = typer.Argument(..., help="Folder for the key pair (created if missing)."),
    name: str = typer.Option("ctxgauge-signing", "--name", help="Base name of the key files."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {private_key, public_key}."),
) -> None:
    """Create an Ed25519 key pair (<name>.key.pem, mode 0600, and <name>.pub.pem); never overwrites."""
    from ctxgauge.fingerprints import generate_keypair

    private, public = generate_keypair(directory, name)
    if json_out:
        print_json({"private_key": str(private), "public_key": str(public)})
        return
    console.print(f"private key {plain(private)} (keep it secret)\npublic key  {plain(public)} (publish it)", soft_wrap=True)
