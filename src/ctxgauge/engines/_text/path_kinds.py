"""What kind of file a path is, from the path alone: test, generated, docs, ci, locale, manifest or None.

The fusion engine weighs each kind by request (`_request.asked_kinds`), minilm caps the chunks of test
files, and the call signal looks for no callee in tests, docs or generated files: all read this module,
which holds nothing else, so an edit to how requests are read never changes the identity of work that
depends only on path kinds (minilm's embedded chunks).
"""

from __future__ import annotations

import re

from ctxgauge.engines._text.locales import is_locale

MANIFESTS = frozenset(("package.json", "go.mod", "cargo.toml", "pyproject.toml", "setup.py", "setup.cfg",
                       "requirements.txt", "pom.xml", "build.gradle", "build.gradle.kts", "gemfile",
                       "composer.json", "deno.json", "pipfile"))
LOCKFILES = frozenset(("package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock", "go.sum",
                       "cargo.lock", "poetry.lock", "uv.lock", "pipfile.lock", "gemfile.lock", "composer.lock",
                       "deno.lock", "npm-shrinkwrap.json"))


def base_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def is_manifest(path: str) -> bool:
    name = base_name(path)
    # requirements*.in: pip-tools' input, compiled into a lockfile
    return name in MANIFESTS or (name.startswith("requirements") and name.endswith((".txt", ".in")))


def is_lockfile(path: str) -> bool:
    name = base_name(path)
    # pylock.toml and pylock.<name>.toml: the standard Python lockfile (PEP 751)
    return name in LOCKFILES or (name.startswith("pylock.") and name.endswith(".toml"))


_GENERATED_DIRS = frozenset(("dist", "vendor", "node_modules", "__snapshots__", "third_party", "_vendor"))
_GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", ".snap", ".pb.go", "_pb2.py", ".generated.ts")
_TEST_DIRS = frozenset(("test", "tests", "__tests__", "spec", "specs", "testing", "testdata", "e2e"))
_TEST_FILE = re.compile(r"(^test_.*\.py$|.*_test\.(py|go|rs)$|.*\.(test|spec)\.[cm]?[jt]sx?$|.*Tests?\.(java|kt)$)")
_DOC_SUFFIXES = (".md", ".mdx", ".rst", ".txt", ".adoc")
_CI_DIRS = frozenset((".github", ".gitlab", ".circleci", ".buildkite", ".azure-pipelines", "ci"))
_CI_FILES = frozenset((".gitlab-ci.yml", ".travis.yml", "appveyor.yml", ".appveyor.yml", "azure-pipelines.yml",
                       "jenkinsfile", ".cirrus.yml", "codecov.yml", ".codecov.yml"))
_CHANGELOG = re.compile(r"^(changelog|changes|history|news|release[-_ ]?notes)([.\-_].*)?$", re.I)


def path_kind(path: str) -> str | None:
    """`test`, `generated` (bundles, maps, snapshots, vendored code, lockfiles, changelogs: files nobody
    edits by hand for a request), `docs` (prose), `ci` (continuous-integration and repository-host
    configuration: `.github/` workflows, templates and bots, other CI services' files; they change with
    many commits and hold every tool's name), `locale` (translations, `locales`: they hold every
    user-facing word), `manifest` (`MANIFESTS`: they name every dependency, so
    their words match many requests that are about code) or None, from the path alone."""
    parts = path.lower().split("/")
    name = path.rsplit("/", 1)[-1]
    if _CHANGELOG.match(name):
        return "generated"
    if is_lockfile(path) or any(p in _GENERATED_DIRS for p in parts[:-1]) or name.lower().endswith(_GENERATED_SUFFIXES):
        return "generated"
    if any(p in _TEST_DIRS for p in parts[:-1]) or _TEST_FILE.match(name):
        return "test"
    if is_locale(path):
        return "locale"
    if name.lower().endswith(_DOC_SUFFIXES) and not is_manifest(path):
        return "docs"
    if is_manifest(path):
        return "manifest"
    if (len(parts) > 1 and parts[0] in _CI_DIRS) or parts[-1] in _CI_FILES:
        return "ci"
    return None
