"""Phase 1: the backend takes shape: storage, routing, books, members, loans, settings, CLI."""

from .steps import DIEGO, MAYA, TOMASZ, C, R, Step, W

PHASE_1: list[Step] = [
    C("Initial commit", MAYA,
      W("README.md", """
# shelfd

A small lending service for community libraries: a catalogue of books,
registered members, and loans with due dates.

Status: early days. Nothing here is stable yet.
"""),
      W(".gitignore", """
__pycache__/
*.pyc
*.egg-info/
.venv/
*.db
"""),
      W("pyproject.toml", """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "shelfd"
version = "0.1.0.dev0"
description = "Book-lending service for community libraries"
readme = "README.md"
requires-python = ">=3.11"
dependencies = []

[project.optional-dependencies]
test = ["pytest>=7.4"]

[tool.setuptools.packages.find]
include = ["shelfd*"]

[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]
"""),
      W("shelfd/__init__.py", '''
"""shelfd: a small book-lending service for community libraries."""

__version__ = "0.1.0.dev0"
'''),
      ),

    C("Add sqlite storage layer with schema migrations", MAYA,
      W("shelfd/storage/__init__.py", '''
"""Persistence for shelfd, backed by a single sqlite file."""

from .db import Database

__all__ = ["Database"]
'''),
      W("shelfd/storage/migrations.py", r'''
"""Schema migrations.

Each entry is a list of statements; its position + 1 is the schema version
stored in ``PRAGMA user_version``. Never edit a migration that has shipped:
append a new one instead.
"""

MIGRATIONS: list[list[str]] = [
    # 1: initial schema
    [
        """
        CREATE TABLE books (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            author TEXT NOT NULL,
            isbn TEXT,
            copies INTEGER NOT NULL DEFAULT 1
        )
        """,
        """
        CREATE TABLE members (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            email TEXT NOT NULL,
            joined_at TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE loans (
            id INTEGER PRIMARY KEY,
            book_id INTEGER NOT NULL REFERENCES books(id),
            member_id INTEGER NOT NULL REFERENCES members(id),
            borrowed_at TEXT NOT NULL,
            due_at TEXT NOT NULL,
            returned_at TEXT
        )
        """,
    ],
]
'''),
      W("shelfd/storage/db.py", r'''
"""A thin wrapper around sqlite3: one connection, explicit transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .migrations import MIGRATIONS


class Database:
    def __init__(self, path: str) -> None:
        self.path = path
        # wsgiref serves requests from a thread other than the one that
        # built the app, one at a time, so sharing the connection is safe.
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA foreign_keys = ON")

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> int:
        """Apply pending migrations and return the new schema version."""
        version = self.schema_version
        for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction() as cur:
                for sql in statements:
                    cur.execute(sql)
                # PRAGMA does not take bound parameters.
                cur.execute(f"PRAGMA user_version = {number}")
        return self.schema_version

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Cursor]:
        cur = self.conn.cursor()
        try:
            yield cur
            self.conn.commit()
        except Exception:
            self.conn.rollback()
            raise
        finally:
            cur.close()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def close(self) -> None:
        self.conn.close()
'''),
      ),

    C("Add book, member and loan dataclasses", MAYA,
      W("shelfd/models.py", r'''
"""Records shared by the storage layer and the HTTP handlers."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass
class Book:
    id: int | None
    title: str
    author: str
    isbn: str | None = None
    copies: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Member:
    id: int | None
    name: str
    email: str
    joined_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["joined_at"] = _iso(self.joined_at)
        return data


@dataclass
class Loan:
    id: int | None
    book_id: int
    member_id: int
    borrowed_at: datetime
    due_at: datetime
    returned_at: datetime | None = None

    @property
    def is_open(self) -> bool:
        return self.returned_at is None

    def is_overdue(self, now: datetime) -> bool:
        return self.is_open and now > self.due_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "book_id": self.book_id,
            "member_id": self.member_id,
            "borrowed_at": _iso(self.borrowed_at),
            "due_at": _iso(self.due_at),
            "returned_at": _iso(self.returned_at),
        }
'''),
      ),

    C("Add minimal request router with path parameters", MAYA,
      W("shelfd/http.py", r'''
"""Request and response objects over the WSGI environ."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

STATUS_TEXT = {
    200: "OK",
    201: "Created",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    remote_addr: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_environ(cls, environ: dict[str, Any]) -> Request:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        headers = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = environ["CONTENT_TYPE"]
        return cls(
            method=environ["REQUEST_METHOD"].upper(),
            path=environ.get("PATH_INFO") or "/",
            query=parse_qs(environ.get("QUERY_STRING", "")),
            headers=headers,
            body=body,
            remote_addr=environ.get("REMOTE_ADDR", ""),
        )

    def json(self) -> Any:
        if not self.body:
            return {}
        return json.loads(self.body)

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def status_line(self) -> str:
        return f"{self.status} {STATUS_TEXT.get(self.status, 'Unknown')}"


def json_response(data: Any, status: int = 200) -> Response:
    body = json.dumps(data).encode("utf-8")
    return Response(status, body, {"Content-Type": "application/json"})
'''),
      W("shelfd/routing.py", r'''
"""Map (method, path pattern) pairs to handler callables.

Patterns look like ``/books/<book_id:int>``; an ``int`` parameter is
converted before the handler sees it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .http import Request, Response, json_response

Handler = Callable[[Request], Response]

_PARAM = re.compile(r"<(\w+)(?::(int|str))?>")


class Route:
    def __init__(self, method: str, pattern: str, handler: Handler) -> None:
        self.method = method.upper()
        self.pattern = pattern
        self.handler = handler
        self.converters: dict[str, Callable[[str], Any]] = {}
        self.regex = self._compile(pattern)

    def _compile(self, pattern: str) -> re.Pattern[str]:
        def replace(match: re.Match[str]) -> str:
            name, kind = match.group(1), match.group(2) or "str"
            self.converters[name] = int if kind == "int" else str
            expr = r"\d+" if kind == "int" else r"[^/]+"
            return f"(?P<{name}>{expr})"

        return re.compile("^" + _PARAM.sub(replace, pattern) + "$")

    def match(self, path: str) -> dict[str, Any] | None:
        found = self.regex.match(path)
        if found is None:
            return None
        return {name: self.converters[name](value) for name, value in found.groupdict().items()}


class Router:
    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        self.routes.append(Route(method, pattern, handler))

    def dispatch(self, request: Request) -> Response:
        for route in self.routes:
            params = route.match(request.path)
            if params is not None and route.method == request.method:
                request.params = params
                return route.handler(request)
        return json_response({"error": "not found"}, status=404)
'''),
      W("tests/test_routing.py", r'''
from shelfd.http import Request, json_response
from shelfd.routing import Router


def make_router():
    router = Router()
    router.add("GET", "/books", lambda req: json_response({"route": "list"}))
    router.add("GET", "/books/<book_id:int>", lambda req: json_response({"id": req.params["book_id"]}))
    return router


def test_static_route():
    response = make_router().dispatch(Request("GET", "/books"))
    assert response.status == 200
    assert b'"list"' in response.body


def test_int_parameter_is_converted():
    request = Request("GET", "/books/42")
    make_router().dispatch(request)
    assert request.params == {"book_id": 42}


def test_int_parameter_rejects_text():
    response = make_router().dispatch(Request("GET", "/books/abc"))
    assert response.status == 404


def test_unknown_path_is_404():
    response = make_router().dispatch(Request("GET", "/nope"))
    assert response.status == 404
'''),
      ),

    C("Add app factory and WSGI entry point", MAYA,
      W("shelfd/app.py", r'''
"""Application factory: wires storage and handlers into a WSGI app."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .http import Request, Response
from .routing import Router
from .storage import Database


class App:
    """The WSGI application. Holds the state the handlers share."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.router = Router()

    def handle(self, request: Request) -> Response:
        return self.router.dispatch(request)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        response = self.handle(Request.from_environ(environ))
        start_response(response.status_line, list(response.headers.items()))
        return [response.body]


def create_app(database_path: str = "shelfd.db") -> App:
    db = Database(database_path)
    db.migrate()
    return App(db)
'''),
      W("shelfd/__main__.py", r'''
"""Run a development server: ``python -m shelfd``."""

from wsgiref.simple_server import make_server

from .app import create_app

if __name__ == "__main__":
    with make_server("127.0.0.1", 8080, create_app()) as server:
        print("shelfd listening on http://127.0.0.1:8080")
        server.serve_forever()
'''),
      ),

    C("Add book catalogue endpoints", MAYA,
      W("shelfd/storage/books.py", r'''
"""Book catalogue persistence."""

from __future__ import annotations

import sqlite3

from ..models import Book
from .db import Database


def _row_to_book(row: sqlite3.Row) -> Book:
    return Book(
        id=row["id"],
        title=row["title"],
        author=row["author"],
        isbn=row["isbn"],
        copies=row["copies"],
    )


class BookRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, book: Book) -> Book:
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO books (title, author, isbn, copies) VALUES (?, ?, ?, ?)",
                (book.title, book.author, book.isbn, book.copies),
            )
            book.id = cur.lastrowid
        return book

    def get(self, book_id: int) -> Book | None:
        row = self.db.query_one("SELECT * FROM books WHERE id = ?", (book_id,))
        return _row_to_book(row) if row else None

    def list(self, limit: int = 50, offset: int = 0) -> list[Book]:
        rows = self.db.query(
            "SELECT * FROM books ORDER BY title, id LIMIT ? OFFSET ?", (limit, offset)
        )
        return [_row_to_book(row) for row in rows]
'''),
      W("shelfd/handlers/__init__.py", '''
"""HTTP handlers, one module per resource. Each module has ``register``."""
'''),
      W("shelfd/handlers/books.py", r'''
"""Handlers for the book catalogue."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ..http import Request, Response, json_response
from ..models import Book

if TYPE_CHECKING:
    from ..app import App
    from ..routing import Router


def list_books(app: App, request: Request) -> Response:
    books = app.books.list()
    return json_response({"books": [book.to_dict() for book in books]})


def get_book(app: App, request: Request) -> Response:
    book = app.books.get(request.params["book_id"])
    return json_response(book.to_dict())


def create_book(app: App, request: Request) -> Response:
    data = request.json()
    missing = [name for name in ("title", "author") if not data.get(name)]
    if missing:
        return json_response({"error": f"missing fields: {', '.join(missing)}"}, status=400)
    book = Book(
        id=None,
        title=data["title"].strip(),
        author=data["author"].strip(),
        isbn=data.get("isbn"),
        copies=int(data.get("copies", 1)),
    )
    app.books.add(book)
    return json_response(book.to_dict(), status=201)


def register(router: Router, app: App) -> None:
    router.add("GET", "/books", partial(list_books, app))
    router.add("POST", "/books", partial(create_book, app))
    router.add("GET", "/books/<book_id:int>", partial(get_book, app))
'''),
      R("shelfd/app.py", """
from .http import Request, Response
from .routing import Router
from .storage import Database
""", """
from .handlers import books
from .http import Request, Response
from .routing import Router
from .storage import Database
from .storage.books import BookRepository
"""),
      R("shelfd/app.py", """
        self.db = db
        self.router = Router()
""", """
        self.db = db
        self.router = Router()
        self.books = BookRepository(db)
"""),
      R("shelfd/app.py", """
    db.migrate()
    return App(db)
""", """
    db.migrate()
    app = App(db)
    books.register(app.router, app)
    return app
"""),
      ),

    C("Add test client fixture and book handler tests", TOMASZ,
      W("tests/conftest.py", r'''
import io
import json
from dataclasses import dataclass

import pytest

from shelfd.app import create_app


@dataclass
class Result:
    status: int
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


class Client:
    """Calls the WSGI app in-process, the way a server would."""

    def __init__(self, app, headers=None):
        self.app = app
        self.headers = dict(headers or {})

    def request(self, method, path, payload=None, headers=None):
        body = b"" if payload is None else json.dumps(payload).encode()
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_LENGTH": str(len(body)),
            "CONTENT_TYPE": "application/json",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.input": io.BytesIO(body),
        }
        for name, value in {**self.headers, **(headers or {})}.items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        captured = {}

        def start_response(status, response_headers):
            captured["status"] = int(status.split()[0])
            captured["headers"] = dict(response_headers)

        chunks = self.app(environ, start_response)
        return Result(captured["status"], captured["headers"], b"".join(chunks))

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path, payload=None, **kwargs):
        return self.request("POST", path, payload, **kwargs)


@pytest.fixture
def app(tmp_path):
    return create_app(str(tmp_path / "shelfd.db"))


@pytest.fixture
def client(app):
    return Client(app)
'''),
      W("tests/test_books.py", r'''
def test_create_and_fetch_book(client):
    created = client.post("/books", {"title": "Dune", "author": "Frank Herbert"})
    assert created.status == 201
    book_id = created.json()["id"]

    fetched = client.get(f"/books/{book_id}")
    assert fetched.status == 200
    assert fetched.json()["title"] == "Dune"


def test_create_book_requires_title_and_author(client):
    response = client.post("/books", {"title": "Untitled"})
    assert response.status == 400
    assert "author" in response.json()["error"]


def test_list_books_sorted_by_title(client):
    for title in ("Middlemarch", "Beloved", "Kindred"):
        client.post("/books", {"title": title, "author": "Someone"})
    titles = [book["title"] for book in client.get("/books").json()["books"]]
    assert titles == ["Beloved", "Kindred", "Middlemarch"]
'''),
      ),

    C("Add member registration endpoint", MAYA,
      W("shelfd/storage/members.py", r'''
"""Library member persistence."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ..models import Member
from .db import Database


def _row_to_member(row: sqlite3.Row) -> Member:
    return Member(
        id=row["id"],
        name=row["name"],
        email=row["email"],
        joined_at=datetime.fromisoformat(row["joined_at"]),
    )


class MemberRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, member: Member) -> Member:
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO members (name, email, joined_at) VALUES (?, ?, ?)",
                (member.name, member.email, member.joined_at.isoformat()),
            )
            member.id = cur.lastrowid
        return member

    def get(self, member_id: int) -> Member | None:
        row = self.db.query_one("SELECT * FROM members WHERE id = ?", (member_id,))
        return _row_to_member(row) if row else None

    def search(self, text: str) -> list[Member]:
        pattern = f"%{text}%"
        rows = self.db.query(
            "SELECT * FROM members WHERE name LIKE ? OR email LIKE ? ORDER BY name",
            (pattern, pattern),
        )
        return [_row_to_member(row) for row in rows]
'''),
      W("shelfd/handlers/members.py", r'''
"""Handlers for member registration and lookup."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING

from ..http import Request, Response, json_response
from ..models import Member

if TYPE_CHECKING:
    from ..app import App
    from ..routing import Router


def register_member(app: App, request: Request) -> Response:
    data = request.json()
    name = (data.get("name") or "").strip()
    email = (data.get("email") or "").strip()
    if not name or "@" not in email:
        return json_response({"error": "name and a valid email are required"}, status=400)
    member = Member(id=None, name=name, email=email, joined_at=datetime.now(timezone.utc))
    app.members.add(member)
    return json_response(member.to_dict(), status=201)


def get_member(app: App, request: Request) -> Response:
    member = app.members.get(request.params["member_id"])
    if member is None:
        return json_response({"error": "member not found"}, status=404)
    return json_response(member.to_dict())


def search_members(app: App, request: Request) -> Response:
    members = app.members.search(request.arg("q", ""))
    return json_response({"members": [member.to_dict() for member in members]})


def register(router: Router, app: App) -> None:
    router.add("POST", "/members", partial(register_member, app))
    router.add("GET", "/members", partial(search_members, app))
    router.add("GET", "/members/<member_id:int>", partial(get_member, app))
'''),
      R("shelfd/app.py", """
from .handlers import books
""", """
from .handlers import books, members
"""),
      R("shelfd/app.py", """
from .storage.books import BookRepository
""", """
from .storage.books import BookRepository
from .storage.members import MemberRepository
"""),
      R("shelfd/app.py", """
        self.books = BookRepository(db)
""", """
        self.books = BookRepository(db)
        self.members = MemberRepository(db)
"""),
      R("shelfd/app.py", """
    books.register(app.router, app)
""", """
    books.register(app.router, app)
    members.register(app.router, app)
"""),
      W("tests/test_members.py", r'''
def test_register_member(client):
    response = client.post("/members", {"name": "Ada Lovelace", "email": "ada@example.org"})
    assert response.status == 201
    assert response.json()["email"] == "ada@example.org"


def test_register_member_rejects_bad_email(client):
    response = client.post("/members", {"name": "Ada", "email": "not-an-email"})
    assert response.status == 400


def test_search_members_by_name(client):
    client.post("/members", {"name": "Ada Lovelace", "email": "ada@example.org"})
    client.post("/members", {"name": "Grace Hopper", "email": "grace@example.org"})
    names = [m["name"] for m in client.get("/members?q=grace").json()["members"]]
    assert names == ["Grace Hopper"]
'''),
      ),

    C("Add loans: checkout and return", DIEGO,
      W("shelfd/clock.py", r'''
"""Time helpers, so handlers never call datetime.now() directly."""

from datetime import datetime, timezone


def utcnow() -> datetime:
    return datetime.now(timezone.utc)
'''),
      W("shelfd/storage/loans.py", r'''
"""Loan persistence: checkouts, returns and overdue queries."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ..models import Loan
from .db import Database


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _row_to_loan(row: sqlite3.Row) -> Loan:
    return Loan(
        id=row["id"],
        book_id=row["book_id"],
        member_id=row["member_id"],
        borrowed_at=_parse(row["borrowed_at"]),
        due_at=_parse(row["due_at"]),
        returned_at=_parse(row["returned_at"]),
    )


class LoanRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def open(self, book_id: int, member_id: int, borrowed_at: datetime, due_at: datetime) -> Loan:
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO loans (book_id, member_id, borrowed_at, due_at) VALUES (?, ?, ?, ?)",
                (book_id, member_id, borrowed_at.isoformat(), due_at.isoformat()),
            )
            loan_id = cur.lastrowid
        return Loan(loan_id, book_id, member_id, borrowed_at, due_at)

    def get(self, loan_id: int) -> Loan | None:
        row = self.db.query_one("SELECT * FROM loans WHERE id = ?", (loan_id,))
        return _row_to_loan(row) if row else None

    def close(self, loan_id: int, returned_at: datetime) -> None:
        with self.db.transaction() as cur:
            cur.execute(
                "UPDATE loans SET returned_at = ? WHERE id = ? AND returned_at IS NULL",
                (returned_at.isoformat(), loan_id),
            )

    def for_member(self, member_id: int) -> list[Loan]:
        rows = self.db.query(
            "SELECT * FROM loans WHERE member_id = ? ORDER BY borrowed_at DESC", (member_id,)
        )
        return [_row_to_loan(row) for row in rows]

    def overdue(self, now: datetime) -> list[Loan]:
        rows = self.db.query(
            "SELECT * FROM loans WHERE returned_at IS NULL AND due_at < ? ORDER BY due_at",
            (now.isoformat(),),
        )
        return [_row_to_loan(row) for row in rows]
'''),
      W("shelfd/handlers/loans.py", r'''
"""Handlers for borrowing and returning books."""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING

from ..clock import utcnow
from ..http import Request, Response, json_response

if TYPE_CHECKING:
    from ..app import App
    from ..routing import Router

LOAN_DAYS = 21


def checkout(app: App, request: Request) -> Response:
    data = request.json()
    book = app.books.get(int(data.get("book_id", 0)))
    member = app.members.get(int(data.get("member_id", 0)))
    if book is None or member is None:
        return json_response({"error": "unknown book or member"}, status=404)
    now = utcnow()
    loan = app.loans.open(book.id, member.id, now, now + timedelta(days=LOAN_DAYS))
    return json_response(loan.to_dict(), status=201)


def return_book(app: App, request: Request) -> Response:
    loan = app.loans.get(request.params["loan_id"])
    if loan is None:
        return json_response({"error": "loan not found"}, status=404)
    if not loan.is_open:
        return json_response({"error": "loan already returned"}, status=409)
    app.loans.close(loan.id, utcnow())
    return json_response(app.loans.get(loan.id).to_dict())


def member_loans(app: App, request: Request) -> Response:
    loans = app.loans.for_member(request.params["member_id"])
    return json_response({"loans": [loan.to_dict() for loan in loans]})


def register(router: Router, app: App) -> None:
    router.add("POST", "/loans", partial(checkout, app))
    router.add("POST", "/loans/<loan_id:int>/return", partial(return_book, app))
    router.add("GET", "/members/<member_id:int>/loans", partial(member_loans, app))
'''),
      R("shelfd/app.py", """
from .handlers import books, members
""", """
from .handlers import books, loans, members
"""),
      R("shelfd/app.py", """
from .storage.books import BookRepository
""", """
from .storage.books import BookRepository
from .storage.loans import LoanRepository
"""),
      R("shelfd/app.py", """
        self.members = MemberRepository(db)
""", """
        self.members = MemberRepository(db)
        self.loans = LoanRepository(db)
"""),
      R("shelfd/app.py", """
    members.register(app.router, app)
""", """
    members.register(app.router, app)
    loans.register(app.router, app)
"""),
      W("tests/test_loans.py", r'''
import pytest


@pytest.fixture
def book_and_member(client):
    book = client.post("/books", {"title": "Piranesi", "author": "Susanna Clarke"}).json()
    member = client.post("/members", {"name": "Ada Lovelace", "email": "ada@example.org"}).json()
    return book["id"], member["id"]


def test_checkout_and_return(client, book_and_member):
    book_id, member_id = book_and_member
    loan = client.post("/loans", {"book_id": book_id, "member_id": member_id})
    assert loan.status == 201
    assert loan.json()["returned_at"] is None

    returned = client.post(f"/loans/{loan.json()['id']}/return")
    assert returned.status == 200
    assert returned.json()["returned_at"] is not None


def test_returning_twice_is_a_conflict(client, book_and_member):
    book_id, member_id = book_and_member
    loan_id = client.post("/loans", {"book_id": book_id, "member_id": member_id}).json()["id"]
    client.post(f"/loans/{loan_id}/return")
    assert client.post(f"/loans/{loan_id}/return").status == 409


def test_member_loans_lists_checkouts(client, book_and_member):
    book_id, member_id = book_and_member
    client.post("/loans", {"book_id": book_id, "member_id": member_id})
    loans = client.get(f"/members/{member_id}/loans").json()["loans"]
    assert [loan["book_id"] for loan in loans] == [book_id]
'''),
      ),

    C("Load settings from environment and shelfd.toml", MAYA,
      W("shelfd/config.py", r'''
"""Settings, read from ``shelfd.toml`` and overridden by ``SHELFD_*`` variables."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any


@dataclass
class Settings:
    database_path: str = "shelfd.db"
    host: str = "127.0.0.1"
    port: int = 8080
    loan_days: int = 21
    debug: bool = False


def _coerce(raw: str, default: Any) -> Any:
    # Environment values are always strings; follow the type of the default.
    # bool first: it is a subclass of int.
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    return raw


def load_settings(
    path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build settings from the config file, if there is one, and the environment."""
    environ = os.environ if environ is None else environ
    config_path = Path(path or environ.get("SHELFD_CONFIG", "shelfd.toml"))
    values: dict[str, Any] = {}
    if config_path.is_file():
        with config_path.open("rb") as fh:
            values.update(tomllib.load(fh).get("shelfd", {}))
    for field in fields(Settings):
        key = f"SHELFD_{field.name.upper()}"
        if key in environ:
            values[field.name] = _coerce(environ[key], field.default)
    return Settings(**values)
'''),
      R("shelfd/app.py", """
from .handlers import books, loans, members
""", """
from .config import Settings, load_settings
from .handlers import books, loans, members
"""),
      R("shelfd/app.py", """
    def __init__(self, db: Database) -> None:
        self.db = db
""", """
    def __init__(self, settings: Settings, db: Database) -> None:
        self.settings = settings
        self.db = db
"""),
      R("shelfd/app.py", """
def create_app(database_path: str = "shelfd.db") -> App:
    db = Database(database_path)
    db.migrate()
    app = App(db)
""", """
def create_app(settings: Settings | None = None) -> App:
    settings = settings or load_settings()
    db = Database(settings.database_path)
    db.migrate()
    app = App(settings, db)
"""),
      R("shelfd/handlers/loans.py", """
    from ..routing import Router

LOAN_DAYS = 21

""", """
    from ..routing import Router

"""),
      R("shelfd/handlers/loans.py", """
    loan = app.loans.open(book.id, member.id, now, now + timedelta(days=LOAN_DAYS))
""", """
    due_at = now + timedelta(days=app.settings.loan_days)
    loan = app.loans.open(book.id, member.id, now, due_at)
"""),
      R("tests/conftest.py", """
from shelfd.app import create_app
""", """
from shelfd.app import create_app
from shelfd.config import Settings
"""),
      R("tests/conftest.py", """
    return create_app(str(tmp_path / "shelfd.db"))
""", """
    return create_app(Settings(database_path=str(tmp_path / "shelfd.db")))
"""),
      W("tests/test_config.py", r'''
from shelfd.config import Settings, load_settings


def test_defaults_without_file_or_env(tmp_path):
    settings = load_settings(tmp_path / "missing.toml", environ={})
    assert settings == Settings()


def test_file_values_are_read(tmp_path):
    path = tmp_path / "shelfd.toml"
    path.write_text("[shelfd]\nport = 9000\nloan_days = 14\n")
    settings = load_settings(path, environ={})
    assert settings.port == 9000
    assert settings.loan_days == 14


def test_environment_overrides_file(tmp_path):
    path = tmp_path / "shelfd.toml"
    path.write_text("[shelfd]\nport = 9000\n")
    settings = load_settings(path, environ={"SHELFD_PORT": "9100", "SHELFD_DEBUG": "yes"})
    assert settings.port == 9100
    assert settings.debug is True
'''),
      ),

    C("Add health check endpoint", DIEGO,
      W("shelfd/handlers/health.py", r'''
"""Liveness endpoint for the load balancer."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .. import __version__
from ..http import Request, Response, json_response

if TYPE_CHECKING:
    from ..app import App
    from ..routing import Router


def health(app: App, request: Request) -> Response:
    return json_response({"status": "ok", "version": __version__, "schema": app.db.schema_version})


def register(router: Router, app: App) -> None:
    router.add("GET", "/healthz", partial(health, app))
'''),
      R("shelfd/app.py", """
from .handlers import books, loans, members
""", """
from .handlers import books, health, loans, members
"""),
      R("shelfd/app.py", """
    app = App(settings, db)
    books.register(app.router, app)
""", """
    app = App(settings, db)
    health.register(app.router, app)
    books.register(app.router, app)
"""),
      ),

    C("Add shelfd command with serve and init-db subcommands", MAYA,
      W("shelfd/cli.py", r'''
"""The ``shelfd`` command."""

from __future__ import annotations

import argparse
import sys
from wsgiref.simple_server import make_server

from . import __version__
from .app import create_app
from .config import load_settings
from .storage import Database


def cmd_serve(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    port = args.port or settings.port
    app = create_app(settings)
    with make_server(settings.host, port, app) as server:
        print(f"shelfd {__version__} listening on http://{settings.host}:{port}")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


def cmd_init_db(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    db = Database(settings.database_path)
    version = db.migrate()
    db.close()
    print(f"{settings.database_path}: schema version {version}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shelfd", description="Book-lending service")
    parser.add_argument("--config", help="path to shelfd.toml")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--port", type=int)
    serve.set_defaults(func=cmd_serve)

    init_db = sub.add_parser("init-db", help="create or upgrade the database")
    init_db.set_defaults(func=cmd_init_db)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
'''),
      W("shelfd/__main__.py", r'''
"""Allow ``python -m shelfd``."""

import sys

from .cli import main

sys.exit(main())
'''),
      R("pyproject.toml", """
[project.optional-dependencies]
""", """
[project.scripts]
shelfd = "shelfd.cli:main"

[project.optional-dependencies]
"""),
      ),
]
