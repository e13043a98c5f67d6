"""The graph engine: identical bytes on rebuild and update, import spreading, the score's parts by formula."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ctxgauge.engines import check_engine
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.graph._parse import SourceParser
from ctxgauge.engines.graph._rank import Field, bm25, field, personalised_pagerank, postings
from ctxgauge.engines.graph import GraphEngine
from ctxgauge.engines._text.tokens import code_tokens
from ctxgauge.errors import UserError
from ctxgauge.git import Repo

FILES = {
    "billing/__init__.py": "",
    "billing/invoice.py": "from .ledger import post_entry\n\ndef compute_invoice_total(lines):\n    pass\n",
    "billing/ledger.py": "def post_entry(account, amount):\n    pass\n",
    "misc/colours.py": "def parse_colour(text):\n    pass\n",
    "web/src/app.ts": "import { fetchInvoice } from './api'\nexport function renderPage() {}\n",
    "web/src/api.ts": "export async function fetchInvoice(id: string) {}\n",
    "docs/billing.md": "# Billing\nInvoices are totalled per month.\n",
    "go.mod": "module example.com/shop\n",
    "cmd/shop/main.go": 'package main\nimport "example.com/shop/billing/tax"\nfunc main() {}\n',
    "billing/tax/tax.go": "package tax\nfunc Rate() float64 { return 0 }\n",
}


def write(root: Path, files: dict[str, str | None]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = root / rel
        if text is None:
            p.unlink()
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def artifact(out: Path) -> bytes:
    return (out / "graph.json").read_bytes()


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return Corpus.from_directory(write(tmp_path / "src", FILES))


def test_registry_gives_the_graph_engine():
    engine = get_engine("graph(damping=0.7)")
    assert isinstance(engine, GraphEngine)
    assert engine.name == "graph(damping=0.7)"
    assert engine.available() == (True, None)
    assert engine.identity()["source"] == "content-hash"
    assert engine.identity() != GraphEngine().identity()  # parameters enter the identity
    with pytest.raises(UserError, match="no parameter"):
        GraphEngine(alpha=0.2)


def test_two_builds_are_byte_identical(corpus, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    engine = GraphEngine()
    assert engine.build(corpus, a) == GraphEngine().build(corpus, b)
    assert artifact(a) == artifact(b)
    engine.build(corpus, b)  # from this object's per-blob caches
    assert artifact(a) == artifact(b)


def test_artifact_holds_the_graph_and_nothing_of_the_machine(corpus, tmp_path):
    out = tmp_path / "out"
    summary = GraphEngine().build(corpus, out)
    raw = artifact(out).decode()
    assert str(tmp_path) not in raw
    data = json.loads(raw)
    assert raw == json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert data["summary"] == summary
    paths = [f["path"] for f in data["files"]]
    assert paths == corpus.paths
    by_path = {f["path"]: f for f in data["files"]}
    assert by_path["billing/invoice.py"]["resolved"] == ["billing/ledger.py"]
    assert by_path["billing/invoice.py"]["definitions"] == ["compute_invoice_total"]
    assert by_path["docs/billing.md"]["language"] is None
    edges = {(paths[i], paths[j]) for i, j in data["edges"]}
    assert edges == {("billing/invoice.py", "billing/ledger.py"), ("web/src/app.ts", "web/src/api.ts"),
                     ("cmd/shop/main.go", "billing/tax/tax.go")}
    assert summary["files"] == len(FILES) and summary["parsed"] == 8 and summary["edges"] == 3
    assert summary["languages"]["python"] == {"files": 4, "imports": 1, "resolved": 1, "share": 1.0}
    assert summary["languages"]["go"] == {"files": 2, "imports": 1, "resolved": 1, "share": 1.0}


def test_definitions_read_the_artifact_and_stay_one_object_until_it_changes(corpus, tmp_path):
    out = tmp_path / "out"
    engine = GraphEngine()
    engine.build(corpus, out)
    defined = engine.definitions(out)
    assert list(defined) == corpus.paths
    assert defined["billing/invoice.py"] == ("compute_invoice_total",)
    assert defined["docs/billing.md"] == ()
    assert engine.definitions(out) is defined  # callers key derived tables on this object
    assert GraphEngine().definitions(out) == defined  # read from the artifact, not from build state
    with pytest.raises(TypeError):
        defined["billing/invoice.py"] = ()  # type: ignore[index]
    engine.build(corpus, tmp_path / "other")
    assert engine.definitions(tmp_path / "other") is not defined


CHANGES: dict[str, dict[str, str | None]] = {
    "modify": {"billing/ledger.py": "def post_entry(account, amount):\n    pass\n\ndef reverse_entry(e):\n    pass\n"},
    "add": {"billing/refund.py": "from .invoice import compute_invoice_total\ndef refund(): pass\n"},
    "delete": {"billing/ledger.py": None},
    # a body changes and no name does: only the content field moves
    "body": {"billing/ledger.py": "def post_entry(account, amount):\n    return journal.append(amount)\n"},  # invoice.py's import of it becomes unresolved
    "manifest": {"go.mod": "module example.com/store\n"},  # resolution changes with no source file changed
}


@pytest.mark.parametrize("kind", sorted(CHANGES))
@pytest.mark.parametrize("same_object", [True, False])
def test_update_equals_a_fresh_build(tmp_path, kind, same_object):
    old = Corpus.from_directory(write(tmp_path / "src", FILES))
    engine = GraphEngine()
    out = tmp_path / "out"
    engine.build(old, out)
    new = Corpus.from_directory(write(tmp_path / "src", CHANGES[kind]))
    updater = engine if same_object else GraphEngine()  # a new object reuses the parses in the artifact
    updater.update(out, new, old.changes_to(new))
    GraphEngine().build(new, tmp_path / "fresh")
    assert artifact(out) == artifact(tmp_path / "fresh")


def test_update_after_a_rename_equals_a_fresh_build(tmp_path, repo_builder):
    builder = repo_builder()
    builder.commit("start", FILES)
    builder.commit("move the ledger", {"billing/invoice.py": FILES["billing/invoice.py"].replace(".ledger", ".books")},
                   renames={"billing/ledger.py": "billing/books.py"})
    repo = Repo(builder.path)
    old, new = Corpus.from_git(repo, "HEAD~1"), Corpus.from_git(repo, "HEAD")
    changes = [Change(("renamed" if c.status.startswith("R") else "modified"), c.path, old_path=c.old_path)
               for c in repo.changes(old.rev, new.rev)]
    assert any(c.status == "renamed" for c in changes)
    engine = GraphEngine()
    engine.build(old, tmp_path / "out")
    engine.update(tmp_path / "out", new, changes)
    GraphEngine().build(new, tmp_path / "fresh")
    assert artifact(tmp_path / "out") == artifact(tmp_path / "fresh")
    data = json.loads(artifact(tmp_path / "out"))
    assert {f["path"]: f.get("resolved") for f in data["files"]}["billing/invoice.py"] == ["billing/books.py"]
    repo.close()


def test_update_ignores_parses_from_another_parser(tmp_path):
    corpus = Corpus.from_directory(write(tmp_path / "src", FILES))
    out = tmp_path / "out"
    GraphEngine().build(corpus, out)
    data = json.loads(artifact(out))
    for f in data["files"]:
        if f["path"] == "billing/ledger.py":
            f["definitions"] = ["stale_name"]  # what an older extractor might have stored
    data["parser"] = "sha256:older"
    (out / "graph.json").write_text(json.dumps(data, sort_keys=True))
    GraphEngine().update(out, corpus, [])
    GraphEngine().build(corpus, tmp_path / "fresh")
    assert artifact(out) == artifact(tmp_path / "fresh")


def test_update_parses_only_new_blobs(tmp_path):
    old = Corpus.from_directory(write(tmp_path / "src", FILES))
    out = tmp_path / "out"
    GraphEngine().build(old, out)
    new = Corpus.from_directory(write(tmp_path / "src", {**CHANGES["modify"], **CHANGES["add"]}))
    engine = GraphEngine()
    parsed: list[str] = []

    class Counting(SourceParser):
        def parse(self, grammar, data):
            parsed.append(grammar)
            return super().parse(grammar, data)

    engine._parser = Counting()
    engine.update(out, new, old.changes_to(new))
    assert sorted(parsed) == ["python", "python"]  # ledger.py (modified) and refund.py (added)


def test_imports_spread_relevance(corpus, tmp_path):
    out = tmp_path / "out"
    GraphEngine().build(corpus, out)
    hits = GraphEngine().query(out, "invoice total", 10)
    paths = [h.path for h in hits]
    # ledger.py shares no word with the request; invoice.py, the best lexical match, imports it.
    assert paths[0] == "billing/invoice.py"
    assert "billing/ledger.py" in paths
    assert "misc/colours.py" not in paths  # unrelated: no word, no edge
    # Without the graph share the imported file has no score at all.
    lexical = [h.path for h in GraphEngine(graph_weight=0.0).query(out, "invoice total", 10)]
    assert "billing/ledger.py" not in lexical


def test_imported_file_outranks_an_unrelated_weak_match(tmp_path):
    files = {
        "shop/checkout.py": "from .pricing import apply\ndef checkout_basket(): pass\n",
        "shop/pricing.py": "def apply(rules): pass\n",
        "shop/notes.md": "A note that mentions a basket once among many other words " + "filler " * 40 + "\n",
    }
    out = tmp_path / "out"
    GraphEngine().build(Corpus.from_directory(write(tmp_path / "src", files)), out)
    # The spread against prose weighted below code. (At the defaults, tuned on labels where manifests and
    # READMEs are often the answer, text files count 1.5x and this one-word mention ranks second.)
    paths = [h.path for h in GraphEngine(text_weight=0.5).query(out, "checkout basket", 10)]
    assert paths.index("shop/pricing.py") < paths.index("shop/notes.md")
    assert GraphEngine(text_weight=0.5, graph_weight=0.0).query(out, "checkout basket", 10)[-1].path == "shop/notes.md"


def test_stemming_meets_inflections(corpus, tmp_path):
    # "rendering pages" meets renderPage only through the stemmer; without it no word of the request
    # is in any document.
    for stem, expected in ((True, "web/src/app.ts"), (False, None)):
        out = tmp_path / f"stem-{stem}"
        GraphEngine(stem=stem).build(corpus, out)
        hits = GraphEngine(stem=stem).query(out, "rendering pages", 3)
        assert (hits[0].path if hits else None) == expected
    fields = json.loads(artifact(tmp_path / "stem-True"))["fields"]
    assert "render" in fields["names"]["terms"] and "invoic" in fields["names"]["terms"]
    assert "invoice" not in fields["names"]["terms"] and "invoice" not in fields["content"]["terms"]


def test_query_returns_at_most_k_corpus_files(corpus, tmp_path):
    out = tmp_path / "out"
    engine = GraphEngine()
    engine.build(corpus, out)
    for k in (0, 1, 3, 50):
        hits = engine.query(out, "billing invoice fetch page", k)
        assert len(hits) <= k
        assert all(h.path in corpus for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert engine.query(out, "zebra quantum", 5) == []
    assert engine.query(out, "", 5) == []
    again = GraphEngine().query(out, "billing invoice fetch page", 50)
    assert again == engine.query(out, "billing invoice fetch page", 50)  # same bits from a new object


def test_empty_corpus(tmp_path):
    empty = Corpus.from_directory(write(tmp_path / "src", {}))
    summary = GraphEngine().build(empty, tmp_path / "out")
    assert summary == {"files": 0, "parsed": 0, "edges": 0, "languages": {}}
    assert GraphEngine().query(tmp_path / "out", "anything", 5) == []


def test_personalised_pagerank_closed_form():
    # 0 -> 1 only; all restarts at 0. r1 = d r0 and r0 = (1 - d) + d r1 (node 1 returns its mass to the seed),
    # so r0 = 1 / (1 + d) and r1 = d / (1 + d).
    d = 0.6
    r = personalised_pagerank(2, np.array([0]), np.array([1]), np.array([1.0]), np.array([1.0, 0.0]),
                              damping=d, iterations=200, tolerance=1e-15)
    assert r == pytest.approx([1 / (1 + d), d / (1 + d)], abs=1e-12)
    assert math.fsum(r) == pytest.approx(1.0)


def test_bm25_by_formula():
    docs = [{"fee": 2, "loan": 1}, {"loan": 3}, {"book": 1}]
    stored = postings(docs)
    assert stored == {"terms": ["book", "fee", "loan"], "offsets": [0, 1, 2, 4], "docs": [2, 0, 0, 1],
                      "tf": [1, 2, 1, 3]}
    # Term ids are the caller's own numbering: only the terms' order is stored.
    assert field([(np.array([2, 0]), np.array([2, 1])), (np.array([0]), np.array([3])),
                  (np.array([1]), np.array([1]))], ["loan", "book", "fee"]) == stored
    assert field([], []) == field([(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))], []) \
        == {"terms": [], "offsets": [0], "docs": [], "tf": []}
    index = Field(stored)
    assert "loan" in index and "cat" not in index and index.get("cat") is None
    lengths = np.array([3.0, 3.0, 1.0])
    groups = np.array([0, 0, 1])  # the third document is judged against its own group's mean length
    k1, b = 1.2, 0.75
    got = bm25(["fee", "loan", "fee"], index, lengths, groups, k1=k1, b=b)

    def part(tf: float, df: int, length: float, mean: float) -> float:
        return math.log(1 + (3 - df + 0.5) / (df + 0.5)) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean))

    assert got[0] == pytest.approx(part(2, 1, 3, 3) + part(1, 2, 3, 3))
    assert got[1] == pytest.approx(part(3, 2, 3, 3))
    assert got[2] == 0.0


def test_keeps_the_engine_contract(tmp_path, repo_builder):
    builder = repo_builder()
    builder.commit("start", FILES)
    builder.commit("refunds", {**CHANGES["add"], "billing/ledger.py": None})
    repo = Repo(builder.path)
    old, new = Corpus.from_git(repo, "HEAD~1"), Corpus.from_git(repo, "HEAD")
    report = check_engine(GraphEngine(), old, new, ["invoice total", "fetch invoice page", "tax rate"], k=5,
                          watch=[builder.path])
    failed = [c for c in report.checks if c.status == "fail"]
    assert not failed, failed
    repo.close()


def test_content_counts_equal_the_tokens_of_the_decoded_text():
    import Stemmer

    data = "def parseHTTPRequest_v2(x):\n    return fees_total + computeOverdueFee(x)  # caf\u00e9 r\u00e9sum\u00e9\n".encode()
    data += b"\xff\xfe broken bytes_here"
    for stem in (True, False):
        engine = GraphEngine(stem=stem)
        tokens = code_tokens(data.decode("utf-8", "replace"))
        want = Counter(Stemmer.Stemmer("english").stemWords(tokens) if stem else tokens)
        for _ in range(2):  # the second time from the per-word memo
            ids, counts = engine._content_counts(data)
            assert ids.tolist() == sorted(ids.tolist())
            assert dict(zip((engine._terms[i] for i in ids.tolist()), counts.tolist())) == want


def test_words_only_in_a_body_find_the_code_file(tmp_path):
    # No path or definition name holds "journal" or "reconcile": only the content field can find ledger.py.
    # A README holding both words more often ranks above it unless text files are weighted down.
    files = {
        "billing/ledger.py": "def post_entry(account, amount):\n    journal.reconcile(account, amount)\n",
        "billing/invoice.py": "def compute_invoice_total(lines):\n    pass\n",
        "README.md": "# Shop\nThe journal is reconciled nightly: reconcile journal.\n",
    }
    out = tmp_path / "out"
    GraphEngine().build(Corpus.from_directory(write(tmp_path / "src", files)), out)
    paths = [h.path for h in GraphEngine().query(out, "reconcile the journal", 10)]
    assert paths == ["README.md", "billing/ledger.py"]
    demoted = [h.path for h in GraphEngine(text_weight=0.5).query(out, "reconcile the journal", 10)]
    assert demoted == ["billing/ledger.py", "README.md"]
    without = [h.path for h in GraphEngine(content_weight=0.0).query(out, "reconcile the journal", 10)]
    assert without == []  # names and paths alone: no file holds either word there
