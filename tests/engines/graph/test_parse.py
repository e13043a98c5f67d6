"""Tree-sitter extraction: for each language a small source and the exact imports and definitions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ctxgauge.engines.graph._parse import Parsed, SourceParser, grammar_of, language_of


@pytest.fixture(scope="module")
def parser() -> SourceParser:
    return SourceParser()


def test_languages_and_grammars_follow_the_extension():
    assert [language_of(p) for p in ("a.py", "b.pyi", "c.js", "d.mjs", "e.cjs", "f.jsx", "g.ts", "h.tsx",
                                     "i.go", "J.java", "k.rs", "README.md", "Makefile")] == [
        "python", "python", "javascript", "javascript", "javascript", "javascript", "typescript", "typescript",
        "go", "java", "rust", None, None]
    assert grammar_of("x/App.tsx") == "tsx" and grammar_of("x/app.ts") == "typescript"
    assert grammar_of("X.PY") == "python"  # extensions compare case-insensitively


PYTHON = b'''from __future__ import annotations
import os.path as osp, sys
from . import models, storage as st
from ..pkg.m import (z)
from shelfd.fees import *

def helper():
    import json

@register
class Loan(Base):
    @property
    def due(self):
        pass

    async def renew(self):
        def inner():
            pass

async def main():
    pass
'''


def test_python(parser):
    assert parser.parse("python", PYTHON) == Parsed(
        imports=("os.path", "sys", ".models", ".storage", "..pkg.m.z", "shelfd.fees", "json"),
        definitions=("helper", "Loan", "Loan.due", "Loan.renew", "main"),
    )


JAVASCRIPT = b'''import x, { y } from './a.js'
import * as ns from "lodash"
export { z } from '../z'
export * from './w'
const fs = require('fs')
const handler = () => 1
const limit = 3
export const LIMIT = 4, other = 5
function load() { return import('./lazy') }
function dynamic(name) { return import(`./pages/${name}`) }
export default function start() {}
class Cache { get(k) {} #evict() {} }
module.exports = { load }
'''


def test_javascript(parser):
    assert parser.parse("javascript", JAVASCRIPT) == Parsed(
        imports=("./a.js", "lodash", "../z", "./w", "fs", "./lazy"),
        definitions=("handler", "LIMIT", "other", "load", "dynamic", "start", "Cache", "Cache.get", "Cache.#evict"),
    )


TYPESCRIPT = b'''import type { T } from '@/types'
import q = require('./q')
export interface Options { a: string }
export type Id = string
export enum Mode { A, B }
export abstract class Store { abstract save(): void; load() {} }
export function create(): Store { return null as any }
declare function ambient(): void
const local = 1
'''


def test_typescript(parser):
    assert parser.parse("typescript", TYPESCRIPT) == Parsed(
        imports=("@/types", "./q"),
        definitions=("Options", "Id", "Mode", "Store", "Store.save", "Store.load", "create", "ambient"),
    )


def test_tsx_needs_its_own_grammar(parser):
    src = b'import React from "react"\nexport const App = () => <div>{1}</div>\nexport default function Page<T,>(p: T) { return <App/> }\n'
    assert parser.parse("tsx", src) == Parsed(imports=("react",), definitions=("App", "Page"))


GO = b'''package shelf

import "fmt"
import (
    st "example.com/shelf/storage"
    _ `embed`
)

type Book struct{}
type (
    ID int
    Alias = string
)
func (b *Book) Checkout() {}
func (Book) Title() string { return "" }
func (c *Cache[K]) Get() {}
func New() *Book { return nil }
const Limit = 3
'''


def test_go(parser):
    assert parser.parse("go", GO) == Parsed(
        imports=("fmt", "example.com/shelf/storage", "embed"),
        definitions=("Book", "ID", "Alias", "Book.Checkout", "Book.Title", "Cache.Get", "New"),
    )


JAVA = b'''package org.shelf;

import java.util.List;
import static org.shelf.util.Strings.trim;
import org.shelf.model.*;

public class Library extends Base {
    public Library() {}
    public void lend(Book b) {}
    static class Entry {}
}
interface Catalog { void add(); }
enum Kind { BOOK; int weight() { return 1; } }
record Pair(int a) { int first() { return a; } }
'''


def test_java(parser):
    assert parser.parse("java", JAVA) == Parsed(
        imports=("java.util.List", "org.shelf.util.Strings.trim", "org.shelf.model.*"),
        definitions=("Library", "Library.lend", "Library.Entry", "Catalog", "Catalog.add", "Kind", "Kind.weight",
                     "Pair", "Pair.first"),
    )


RUST = b'''use crate::store::{self, disk::Disk as D, mem::*};
use super::fees;
use std::io;
mod loans;
mod inline { fn hidden() {} }
extern crate serde;

pub struct Library;
pub enum Kind { Book }
impl<T> Display for Wrapper<T> { fn fmt(&self) {} }
impl Library { pub fn lend(&self) { use crate::audit::log; } }
pub trait Catalog { fn add(&self); }
macro_rules! shelf { () => {} }
const LIMIT: u8 = 3;
type Id = u64;
fn main() {}
'''


def test_rust(parser):
    assert parser.parse("rust", RUST) == Parsed(
        imports=("crate::store", "crate::store::disk::Disk", "crate::store::mem", "super::fees", "std::io",
                 "self::loans", "serde", "crate::audit::log"),
        definitions=("Library", "Kind", "Wrapper.fmt", "Library.lend", "Catalog", "Catalog.add", "shelf", "LIMIT",
                     "Id", "main"),
    )


def test_broken_source_still_yields_what_parses(parser):
    got = parser.parse("python", b"import os\ndef ok():\n    pass\ndef broken(:\n")
    assert got.imports == ("os",)
    assert "ok" in got.definitions


def test_empty_and_undecodable_sources(parser):
    assert parser.parse("go", b"") == Parsed((), ())
    assert parser.parse("python", b"import caf\xe9\n").imports  # bytes that are not UTF-8 do not raise


def test_importing_the_engine_loads_no_grammar():
    code = ("import sys, ctxgauge.engines.graph, ctxgauge.engines.graph._parse;"
            "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
