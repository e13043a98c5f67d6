"""Translation files and the languages a request names ("improve french translation", "da/nn/no/sv ...").

A locale file lives in a folder named like `locales/`, `i18n/` or `translations/` and stands for one
language: its name's stem (`locales/fr.ts`, `i18n/pt-BR.json`, `po/de.po`) or the folder right under the
locale folder (`locales/fr/common.json`). Such files hold every user-facing word of a program, so they
match many requests that are about code; a request about a translation names the language by code
(`(sk)`, `da/nn/no/sv`, `` `pt-BR` ``) or, beside a word about translations, by its English name
(language names from the CLDR data of Babel).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

LOCALE_DIRS = frozenset(("locales", "locale", "i18n", "l10n", "lang", "langs", "translations", "po"))
LOCALE_WORDS = frozenset(
    "translation translations translate translated translator locale locales language languages i18n l10n "
    "localization localisation localize localise".split())
"""Words by which a one-line request is about translations (the fusion engine's `asked` kinds)."""

_CODE = r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?"
# A language code is only taken where it is written as one: a slash list, parentheses, back-ticks, or with
# a region; a bare "no", "it" or "be" is an English word.
_CODES = (re.compile(rf"(?<![\w/])({_CODE}(?:/{_CODE})+)(?![\w/])"), re.compile(rf"\(({_CODE})\)"),
          re.compile(rf"`({_CODE})`"), re.compile(r"(?<![\w-])([a-z]{2}[-_][A-Z]{2})(?![\w-])"))


def locale_dir_index(path: str) -> int | None:
    """Index of the innermost locale folder among the path's folders, None when there is none."""
    parts = path.lower().split("/")[:-1]
    found = [i for i, p in enumerate(parts) if p in LOCALE_DIRS]
    return found[-1] if found else None


def is_locale(path: str) -> bool:
    """A file in a locale folder, or a gettext catalogue (`.po`) anywhere."""
    return locale_dir_index(path) is not None or path.lower().endswith(".po")


def language_of(path: str) -> str | None:
    """The base language code a locale file stands for (`fr` for locales/fr-FR.json), or None."""
    i = locale_dir_index(path)
    if i is None and not path.lower().endswith(".po"):
        return None
    parts = path.split("/")
    stem = parts[i + 1] if i is not None and i + 2 < len(parts) else parts[-1].split(".", 1)[0]
    base = re.split(r"[-_]", stem.lower(), maxsplit=1)[0]
    return base if re.fullmatch(r"[a-z]{2,3}", base) else None


@lru_cache(maxsize=1)
def _languages() -> tuple[dict[str, str], frozenset[str]]:
    """(English one-word language name, lowercased -> base code; every base code), from CLDR via Babel:
    french -> fr."""
    from babel import Locale

    names: dict[str, str] = {}
    codes: set[str] = set()
    for code, name in sorted(Locale("en").languages.items()):
        base = code.split("_", 1)[0].lower()
        if re.fullmatch(r"[a-z]{2,3}", base):
            codes.add(base)
            if " " not in name:
                names.setdefault(name.lower(), base)
    return names, frozenset(codes)


def named_languages(text: str) -> frozenset[str]:
    """Base codes of the languages a request names: codes written as codes, and English names when the
    request has a word about translations (`LOCALE_WORDS`)."""
    codes: set[str] = set()
    names, known = _languages()
    for rx in _CODES:
        for m in rx.finditer(text):
            found = {re.split(r"[-_]", c, maxsplit=1)[0].lower() for c in m.group(1).split("/")}
            if found <= known:  # "and/or" is no list of languages, "da/nn/no/sv" is
                codes |= found
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    if LOCALE_WORDS.intersection(words):
        codes.update(names[w] for w in words if w in names)
    return frozenset(codes)


def locale_files(text: str, paths: Sequence[str]) -> dict[str, float]:
    """Locale files of the languages a request names: path -> 1/n for a language with n files."""
    wanted = named_languages(text)
    if not wanted:
        return {}
    by_language: dict[str, list[str]] = {}
    for p in paths:
        lang = language_of(p)
        if lang in wanted:
            by_language.setdefault(lang, []).append(p)
    return {p: 1.0 / len(files) for files in by_language.values() for p in files}
