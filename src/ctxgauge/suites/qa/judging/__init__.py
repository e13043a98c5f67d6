"""How an answer is judged: the two scoring tiers, rubric mode, the judge panel, grounding, every prompt
ctxgauge sends, and a human's adjudication."""
