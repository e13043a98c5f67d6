"""Every prompt ctxgauge sends, in one place, so a change to any of them is one reviewable diff.

The answer prompts are tool-neutral and the same for every arm except for what the arm adds (retrieved
files, or the two tools), so a difference in scores is the arm's. The judge sees ONE question, its key,
the battery's policies, the question's facet guide and exemplars, and ONE candidate answer: never
another candidate, never the arm's name, never a running total.
"""

from __future__ import annotations

import re

from ctxgauge.suites.qa.sources._battery import Exemplar, Gold, Question

PROMPT_VERSION = "qa-prompts-1"


def answer_system(repo_name: str, commit: str | None, *, tools: bool, tool_note: str | None = None) -> str:
    where = f"the repository {repo_name}" + (f" at commit {commit[:12]}" if commit else "")
    text = (f"You answer questions about the source code of {where}. Answer precisely and concisely, in the "
            "requested output structure. Name files by their path from the repository root. If a question "
            "rests on a false premise, say so plainly and state what is true instead. Do not invent code.")
    if tools and tool_note is not None:  # another tool set (mcp-tools: the server's own tools)
        text += tool_note
    elif tools:
        text += (" You may call search(query) to rank the repository's files for a query and read(path) to "
                 "read a file; call them as often as you need, then answer.")
    return text


def question_text(q: Question, *, context: str | None = None) -> str:
    parts = []
    if context is not None:
        parts.append("Files retrieved from the repository for this question:\n\n" + (context or "(none)"))
    parts.append(f"Question: {q.prompt}")
    if q.output_structure:
        parts.append(f"Answer format: {q.output_structure}")
    return "\n\n".join(parts)


def battery_sheet(questions: list[Question], *, context: str | None = None) -> str:
    """Every question in one prompt; answers come back under `### <qid>` headings."""
    parts = []
    if context is not None:
        parts.append("Files retrieved from the repository for these questions:\n\n" + (context or "(none)"))
    parts.append("Answer every question below. Start each answer with a line `### <id>` (for example "
                 f"`### {questions[0].qid}`), then the answer; answer them in order.")
    for q in questions:
        fmt = f"\nAnswer format: {q.output_structure}" if q.output_structure else ""
        parts.append(f"[{q.qid}] {q.prompt}{fmt}")
    return "\n\n".join(parts)


def extract_answers(sheet: str, qids: list[str]) -> dict[str, str]:
    """Answers by label from a whole-battery reply: text after a `### qid` (or `[qid]`, `qid:`) line up
    to the next label. A question whose label is missing gets an empty answer (graded, never skipped)."""
    alts = "|".join(re.escape(q) for q in sorted(qids, key=len, reverse=True))
    label = re.compile(rf"^\s*(?:#+\s*|\*\*)?\[?({alts})\]?(?:\*\*)?\s*[:.)\-]?\s*(?:\*\*)?", re.M | re.I)
    found = list(label.finditer(sheet))
    out = {q: "" for q in qids}
    by_lower = {q.lower(): q for q in qids}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(sheet)
        qid = by_lower[m.group(1).lower()]
        if not out[qid]:
            out[qid] = sheet[m.end():end].strip()
    return out


JUDGE_SYSTEM = (
    "You grade one answer to one question about a codebase against the answer key. Judge facts, not style: "
    "an answer passes when it states what the key requires (or an accepted variant), even in other words or "
    "with extra correct detail; it fails when it misses a required fact, asserts something the key "
    "contradicts, or accepts a false premise the key rejects. Apply the battery policies. Reply with ONE JSON "
    'object and nothing else: {"verdict": "pass" or "fail", "reason": "<at most 15 words>", "facets": '
    '{"extra_correct_info": true/false, "missing_minor": true/false, "erroneous_assertion": true/false}}. '
    "The reason must agree with the verdict."
)

JUDGE_STERN = (
    "Your verdict and your reason disagree (or your reply was not the JSON object asked for). Decide again "
    "from the key alone. If the answer meets the key, the verdict is pass; if it does not, the reason must "
    "name what is missing or wrong. Reply with the one JSON object only."
)


def judge_user(q: Question, gold: Gold, policies: list[dict], exemplars: list[Exemplar], answer: str) -> str:
    parts = [f"QUESTION [{q.qid}]\n{q.prompt}"]
    if q.output_structure:
        parts.append(f"EXPECTED OUTPUT STRUCTURE\n{q.output_structure}")
    key = f"ANSWER KEY (gold revision {gold.gold_rev})\n{gold.answer_gold}"
    if gold.answer_gold_variants:
        key += "\nAccepted variants:\n" + "\n".join(f"- {v}" for v in gold.answer_gold_variants)
    parts.append(key)
    if gold.scoring_rubric:
        parts.append(f"SCORING RUBRIC\n{gold.scoring_rubric}")
    if gold.honesty_trap:
        parts.append(f"HONESTY TRAP\n{gold.honesty_trap}")
    if gold.facet_guide:
        parts.append(f"FACET GUIDE\n{gold.facet_guide}")
    if policies:
        parts.append("BATTERY POLICIES\n" + "\n".join(f"{p['id']}: {p['rule']}" for p in policies))
    if exemplars:
        parts.append("GRADED EXEMPLARS\n" + "\n\n".join(
            f"({e.kind}) {e.answer}\nwhy: {e.why}" for e in exemplars))
    parts.append(f"CANDIDATE ANSWER\n{answer.strip() or '(empty answer)'}")
    return "\n\n".join(parts)


RUBRIC_DIMENSIONS = ("correctness", "completeness", "specificity", "code_quality", "actionability")


def rubric_system(grounded: bool, *, claims: bool = False) -> str:
    dims = list(RUBRIC_DIMENSIONS) + (["factual_grounding"] if grounded else [])
    keys = ", ".join(f'"{d}": 0-100' for d in dims)
    text = ("You score one answer to one developer question about a codebase. Score each dimension from 0 "
            "(worst) to 100 (best) on its own: correctness (are its claims true), completeness (does it cover "
            "what was asked), specificity (concrete names, paths, values), code_quality (any code shown is "
            "sound and idiomatic; 100 when no code is needed and none is shown), actionability (can a "
            "developer act on it).")
    if grounded:
        text += " factual_grounding: does it agree with the ground truth given."
    if claims:
        text += (" For each numbered NUMERIC CLAIM, say whether the answer states that number correctly, "
                 "wrongly, or not at all.")
        keys += ', "numeric_claims": ["correct" or "wrong" or "absent", one per claim, in order]'
    return text + f' Reply with ONE JSON object and nothing else: {{{keys}, "reason": "<at most 15 words>"}}.'


def panel_system(title: str, brief: str, dims: tuple[str, ...], *, claims: bool = False) -> str:
    """One panel role's instructions: the same question and answer as the rubric, seen by one role."""
    keys = ", ".join(f'"{d}": 0-100' for d in dims)
    text = (f"You are a {title} on a panel reviewing one answer to one developer question about a codebase. "
            f"Score from 0 (worst) to 100 (best), each on its own: {brief}.")
    if claims:
        text += (" For each numbered NUMERIC CLAIM, say whether the answer states that number correctly, "
                 "wrongly, or not at all.")
        keys += ', "numeric_claims": ["correct" or "wrong" or "absent", one per claim, in order]'
    return text + f' Reply with ONE JSON object and nothing else: {{{keys}, "reason": "<at most 15 words>"}}.'


def rubric_user(q: Question, answer: str, ground_truth: str | None, numeric_claims: tuple[str, ...] = ()) -> str:
    parts = [f"QUESTION\n{q.prompt}"]
    if ground_truth:
        parts.append(f"GROUND TRUTH\n{ground_truth}")
    if numeric_claims:
        parts.append("NUMERIC CLAIMS\n" + "\n".join(f"{i}. {c}" for i, c in enumerate(numeric_claims, 1)))
    parts.append(f"ANSWER\n{answer.strip() or '(empty answer)'}")
    return "\n\n".join(parts)
