"""ctxgauge: measure AI context engines.

Is it right (replay, cases), is it the same every time (determinism), does it help a model answer (qa).

Layers, top to bottom. A package imports only from rows below its own, never from its own row or above,
and no circle exists between the modules of one package either; `tests/test_layers.py` reads this table
and checks every import, those inside functions included (`docs/architecture.md` says why each row sits
where it does):

    __main__                                `python -m ctxgauge`
    cli                                     the command line: one module per sub-command, thin over the API
    demo                                    the bundled end-to-end run (`ctxgauge demo`)
    suites · export                         replay, cases, determinism, qa; publishing a results tree
    executors                               where units of work run (a local pool, or Dask)
    report                                  terminal, Markdown and HTML renderings of run records
    results                                 typed suite results: each suite's settings, unit and results
    records                                 run records: the typed record, writing, reading, discovering
    engines                                 the contract and its checker, call guards, registry, engines
    cache                                   content-addressed work shared by engines and suites
    fingerprints · metrics · providers      fingerprint format; ranking metrics and scoring; LLM clients
    corpus · sample · trec · syntax         files of a directory or git tree; the sample; TREC files; definitions
    git                                     read-only history of a repository
    _output · _lifeline                     the one output rule (targets, overwrites, environment errors); no orphans
    _io · _redact                           atomic writes, safe names, THE JSON/YAML reader; split-key redaction
    _untrusted                              opening files ctxgauge did not write (no link, no FIFO, size limits)
    _killpoints                             the kill/resume tests' hook in every record writer
    ctxgauge · errors                       the version; the error types

`ctxgauge` in the last row is this module (it holds only `__version__`).
"""

__version__ = "0.1.0"
