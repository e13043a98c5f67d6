"""Which corpora a case file names: opened together (the revisions of one git repository listed from one
another), visited repository by repository, and every expected file checked against its corpus."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.corpus import Corpus, is_git_source, open_corpus
from ctxgauge.errors import UserError
from ctxgauge.git import Repo
from ctxgauge.suites.cases._model import CaseFile, split_corpus


def open_corpora(case_file: CaseFile) -> dict[str, Corpus]:
    """Every case's corpus, opened before anything is written (a bad path or revision fails first).

    The revisions of one git repository are listed from one another (`Corpus.at`: the tree diff between
    them, only new blobs sniffed) and share one `git cat-file --batch`, instead of a whole listing, a read
    of every blob and a process of their own each: a SWE-bench file names a hundred base commits of a few
    repositories. The corpora of one repository are opened (and so visited) oldest commit first
    (`visiting_order`), so each listing and each index move is by the changes of the years between them.
    Every corpus is closed on return (the run reads through it again, one repository at a time)."""
    corpora: dict[str, Corpus] = {}
    last: dict[str, Corpus] = {}  # source -> the corpus of it opened last
    binary: dict[str, dict[str, bool]] = {}  # source -> blob id -> is binary, for every revision listed
    first_case = {}
    for c in case_file.cases:
        first_case.setdefault(c.corpus, c)
    order = visiting_order(list(first_case))
    try:
        for n, (key, commit) in enumerate(order):
            c = first_case[key]
            source, rev = split_corpus(c.corpus)
            previous = last.get(source)
            try:
                if previous is not None and previous.kind == "git" and rev is not None:
                    corpus = previous.at(commit or rev, binary_cache=binary.setdefault(source, {}),
                                         known_commit=commit is not None)
                else:
                    corpus = open_corpus(source, rev)
                    if commit is not None:  # the next revisions' tree diffs, read in batches
                        corpus.prefetch(next_commits(order, n, source))
            except UserError as exc:
                raise UserError(f"{case_file.source}: case {c.name!r}: corpus {exc} (a directory, or REPO@REV)") from None
            corpora[c.corpus] = last[source] = corpus
    finally:
        for corpus in corpora.values():
            corpus.close()
    return corpora


def next_commits(order: list[tuple[str, str | None]], n: int, source: str) -> list[str]:
    """The commits of `source` visited after the n-th key of `order`, while they are known."""
    out = []
    for key, commit in order[n + 1:]:
        if split_corpus(key)[0] != source or commit is None:
            break
        out.append(commit)
    return out


def visiting_order(keys: list[str]) -> list[tuple[str, str | None]]:
    """Corpus keys (first-seen order) with those of one source together, in the order of their sources'
    first appearance, and a git repository's revisions by committer time, oldest first (ties by commit id):
    a SWE-bench file names base commits years apart in no order of time, and an index moved between them in
    file order crossed the same years of changes again and again (SWE-bench Lite's 74 sympy revisions:
    97,445 changed files in file order, 15,297 oldest first). A source whose revisions do not all name a
    commit keeps the file's order (its first bad revision then fails as it would have). Each key comes with
    its commit id when its source was ordered (else None)."""
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for key in keys:
        source, rev = split_corpus(key)
        groups.setdefault(source, []).append((key, rev))
    out: list[tuple[str, str | None]] = []
    for source, members in groups.items():
        revs = [rev for _, rev in members]
        if len(members) > 1 and None not in revs and Path(source).is_dir() and is_git_source(Path(source)):
            try:
                with Repo(source) as repo:
                    times = repo.commit_times(revs)
            except UserError:
                times = {}
            if all(times.get(rev) is not None for rev in revs):
                ordered = sorted(members, key=lambda m: (times[m[1]][1], times[m[1]][0]))
                out.extend((key, times[rev][0]) for key, rev in ordered)
                continue
        out.extend((key, None) for key, _ in members)
    return out


def repository_of(key: str, corpus: Corpus) -> str:
    """What the corpora of one repository share: the repository's path (`REPO` of `REPO@REV`), else the key."""
    return split_corpus(key)[0] if corpus.kind == "git" else key


def by_repository(corpora: dict[str, Corpus]) -> list[tuple[str, Corpus]]:
    """The corpora with those of one git repository next to each other (in their first-seen order)."""
    first: dict[str, int] = {}
    for i, (key, c) in enumerate(corpora.items()):
        first.setdefault(repository_of(key, c), i)
    return sorted(corpora.items(), key=lambda kc: first[repository_of(*kc)])


def missing_expected(case_file: CaseFile, corpora: dict[str, Corpus], as_miss: bool) -> dict[str, tuple[str, ...]]:
    """Per case, the expected files its corpus does not have at all (neither indexed nor skipped by a rule).

    A typo such as `src/flask/sesions.py` would otherwise be a silent coverage gap and the suite would pass:
    an error (before anything is written) unless `as_miss`, when they stay in the labels and count as misses."""
    import difflib

    out: dict[str, tuple[str, ...]] = {}
    for case in case_file.cases:
        corpus = corpora[case.corpus]
        known = set(corpus.paths).union(*corpus.skipped.values())
        wanted = list(dict.fromkeys([*case.expected, *(p for g in case.any_of for p in g)]))
        absent = tuple(p for p in wanted if p not in known)
        if not absent:
            continue
        out[case.name] = absent
        if not as_miss:
            problems = []
            for p in absent:
                near = difflib.get_close_matches(p, corpus.paths, n=1)
                problems.append(f"{p!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
            where = f" at {corpus.rev[:10]}" if corpus.rev else ""
            more = f"; {len(problems) - 1} more in this case" if len(problems) > 1 else ""
            raise UserError(f"{case_file.source}: case {case.name!r}: expected file {problems[0]} is not in "
                            f"corpus {corpus.name}{where}{more}; fix the path, or pass --missing-as-miss to count "
                            "it as a miss")
    return out
