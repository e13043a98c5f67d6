"""Translation files: which a request names by language, and their own path kind in the fusion engine."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.corpus import Corpus
import ctxgauge.engines._text.locales as lc
import ctxgauge.engines._text.path_kinds as pk
import ctxgauge.engines.fusion._request as rq
from ctxgauge.engines import get_engine
from ctxgauge.git import Repo


def test_language_of_a_locale_file() -> None:
    assert [lc.language_of(p) for p in ("src/locales/fr.ts", "web/src/locales/zh-Hans.json", "locales/index.ts",
                                        "public/locales/pt/common.json", "po/de.po", "lib/translations/pt_BR.yml",
                                        "src/form.ts", "src/tests/locales/fr.test.ts")] == [
        "fr", "zh", None, "pt", "de", "pt", None, "fr"]
    assert pk.path_kind("web/src/locales/en.json") == "locale"
    assert pk.path_kind("src/tests/locales/fr.test.ts") == "test"  # a locale's test is a test


def test_named_languages_by_code_or_by_name_beside_a_translation_word() -> None:
    assert lc.named_languages("added Slovak (sk) language") == {"sk"}
    assert lc.named_languages("da/nn/no/sv called an IP address a range") == {"da", "nn", "no", "sv"}
    assert lc.named_languages("improve french translation") == {"fr"}
    assert lc.named_languages("update `pt-BR` strings") == {"pt"}
    assert lc.named_languages("french fries are served") == frozenset()  # a name needs a translation word
    assert lc.named_languages("handle and/or in filters") == frozenset()  # `and` is no language code
    assert lc.named_languages("no locale set: fall back to it") == frozenset()  # bare codes are words
    assert rq.asked_kinds("da/nn/no/sv called an IP address a range") == {"locale"}


def _repo(builder):
    b = builder("locales")
    words = "export default { invalid_email: 'invalid email address', too_small: 'value too small' }\n"
    b.commit("initial import", {
        "src/locales/fr.ts": words.replace("invalid email address", "adresse e-mail invalide"),
        "src/locales/sk.ts": words,
        "src/locales/en.ts": words,
        "src/validators/email.ts": "export function isValid(value: string) { return value.includes('@') }\n",
    })
    return b


def test_a_translation_request_finds_its_locale_and_others_are_pushed_down(repo_builder, tmp_path: Path) -> None:
    corpus = Corpus.from_git(Repo(_repo(repo_builder).path), "HEAD")
    eng = get_engine("fusion(locales=0.3)")
    eng.build(corpus, tmp_path / "f")
    assert eng.query(tmp_path / "f", "improve french translation", 1)[0].path == "src/locales/fr.ts"
    assert eng.query(tmp_path / "f", "added Slovak (sk) language", 1)[0].path == "src/locales/sk.ts"
    # a code request: every locale holds the words, the multiplier puts the validator first
    plain = get_engine("fusion(locales=1)")
    text = "invalid email address"
    assert plain.query(tmp_path / "f", text, 1)[0].path.startswith("src/locales/")
    assert eng.query(tmp_path / "f", text, 1)[0].path == "src/validators/email.ts"
    # ... unless the subject is about translations
    assert eng.query(tmp_path / "f", "translation of the invalid email address message", 1)[0].path.startswith(
        "src/locales/")
