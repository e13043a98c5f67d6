"""Phase 2: CI, API docs, fees, error handling, staff tokens and search."""

from .steps import DIEGO, MAYA, TOMASZ, A, C, R, Step, W

PHASE_2: list[Step] = [
    C("ci: run pytest on GitHub Actions", DIEGO,
      W(".github/workflows/ci.yml", """
name: CI

on:
  push:
    branches: [main]
  pull_request:

jobs:
  python:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v3
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install
        run: pip install -e '.[test]'
      - name: Test
        run: pytest -q
"""),
      ),

    C("Document the HTTP API", MAYA,
      W("docs/api.md", """
# HTTP API

All bodies are JSON. Errors come back as `{"error": "<message>"}` with a
4xx status.

## Books

| Method | Path | Notes |
| --- | --- | --- |
| GET | `/books` | The catalogue, sorted by title. |
| POST | `/books` | Body: `title`, `author`, optional `isbn`, `copies` (default 1). |
| GET | `/books/{id}` | One book. |

## Members

| Method | Path | Notes |
| --- | --- | --- |
| POST | `/members` | Register: `name`, `email`. |
| GET | `/members?q=text` | Search by name or email. |
| GET | `/members/{id}` | One member. |
| GET | `/members/{id}/loans` | That member's loans, newest first. |

## Loans

| Method | Path | Notes |
| --- | --- | --- |
| POST | `/loans` | Check out: `book_id`, `member_id`. Due after `loan_days`. |
| POST | `/loans/{id}/return` | Return a book. 409 if it was already returned. |

## Health

`GET /healthz` answers `{"status": "ok", "version": ..., "schema": ...}`.
"""),
      ),

    C("Charge overdue fees when a book is returned", TOMASZ,
      W("shelfd/fees.py", r'''
"""Overdue fee policy.

Fees are kept in integer cents so that sums never drift.
"""

from __future__ import annotations

from datetime import datetime

from .models import Loan

FEE_PER_DAY_CENTS = 25
MAX_FEE_CENTS = 1000


def overdue_days(loan: Loan, now: datetime) -> float:
    end = loan.returned_at or now
    seconds = (end - loan.due_at).total_seconds()
    return max(0.0, seconds / 86400)


def fee_cents(loan: Loan, now: datetime, per_day: int = FEE_PER_DAY_CENTS,
              cap: int = MAX_FEE_CENTS) -> int:
    return min(round(overdue_days(loan, now) * per_day), cap)
'''),
      R("shelfd/handlers/loans.py", """
from ..clock import utcnow
""", """
from ..clock import utcnow
from ..fees import fee_cents
"""),
      R("shelfd/handlers/loans.py", """
    app.loans.close(loan.id, utcnow())
    return json_response(app.loans.get(loan.id).to_dict())
""", """
    app.loans.close(loan.id, utcnow())
    returned = app.loans.get(loan.id)
    body = returned.to_dict()
    body["fee_cents"] = fee_cents(returned, returned.returned_at)
    return json_response(body)
"""),
      W("tests/test_fees.py", r'''
from datetime import datetime, timedelta, timezone

from shelfd.fees import fee_cents, overdue_days
from shelfd.models import Loan

DUE = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def make_loan(returned_at=None):
    return Loan(1, 1, 1, DUE - timedelta(days=21), DUE, returned_at)


def test_no_fee_before_due_date():
    assert fee_cents(make_loan(), DUE - timedelta(hours=1)) == 0


def test_fee_per_full_day():
    assert fee_cents(make_loan(), DUE + timedelta(days=3)) == 75


def test_fee_is_capped():
    assert fee_cents(make_loan(), DUE + timedelta(days=365)) == 1000


def test_returned_loan_stops_accruing():
    loan = make_loan(returned_at=DUE + timedelta(days=2))
    assert overdue_days(loan, DUE + timedelta(days=30)) == 2
'''),
      R("docs/api.md", """
| POST | `/loans/{id}/return` | Return a book. 409 if it was already returned. |
""", """
| POST | `/loans/{id}/return` | Return a book. 409 if it was already returned. The answer includes `fee_cents` for late returns. |
"""),
      ),

    C("refactor: raise HTTP errors from handlers instead of building responses", MAYA,
      W("shelfd/errors.py", r'''
"""Exceptions that turn into HTTP error responses.

Handlers raise them; the router catches them and answers
``{"error": message}`` with the matching status.
"""


class HTTPError(Exception):
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(HTTPError):
    status = 400


class Unauthorized(HTTPError):
    status = 401


class NotFound(HTTPError):
    status = 404


class MethodNotAllowed(HTTPError):
    status = 405


class Conflict(HTTPError):
    status = 409


class TooManyRequests(HTTPError):
    status = 429
'''),
      R("shelfd/routing.py", """
from .http import Request, Response, json_response
""", """
from .errors import HTTPError, NotFound
from .http import Request, Response, json_response
"""),
      R("shelfd/routing.py", """
    def dispatch(self, request: Request) -> Response:
        for route in self.routes:
            params = route.match(request.path)
            if params is not None and route.method == request.method:
                request.params = params
                return route.handler(request)
        return json_response({"error": "not found"}, status=404)
""", """
    def dispatch(self, request: Request) -> Response:
        try:
            return self._dispatch(request)
        except HTTPError as exc:
            return json_response({"error": exc.message}, status=exc.status)

    def _dispatch(self, request: Request) -> Response:
        for route in self.routes:
            params = route.match(request.path)
            if params is not None and route.method == request.method:
                request.params = params
                return route.handler(request)
        raise NotFound("not found")
"""),
      R("shelfd/handlers/books.py", """
from ..http import Request, Response, json_response
""", """
from ..errors import BadRequest
from ..http import Request, Response, json_response
"""),
      R("shelfd/handlers/books.py", """
        return json_response({"error": f"missing fields: {', '.join(missing)}"}, status=400)
""", """
        raise BadRequest(f"missing fields: {', '.join(missing)}")
"""),
      R("shelfd/handlers/members.py", """
from ..http import Request, Response, json_response
""", """
from ..errors import BadRequest, NotFound
from ..http import Request, Response, json_response
"""),
      R("shelfd/handlers/members.py", """
        return json_response({"error": "name and a valid email are required"}, status=400)
""", """
        raise BadRequest("name and a valid email are required")
"""),
      R("shelfd/handlers/members.py", """
        return json_response({"error": "member not found"}, status=404)
""", """
        raise NotFound("member not found")
"""),
      R("shelfd/handlers/loans.py", """
from ..clock import utcnow
""", """
from ..clock import utcnow
from ..errors import Conflict, NotFound
"""),
      R("shelfd/handlers/loans.py", """
        return json_response({"error": "unknown book or member"}, status=404)
""", """
        raise NotFound("unknown book or member")
"""),
      R("shelfd/handlers/loans.py", """
    if loan is None:
        return json_response({"error": "loan not found"}, status=404)
    if not loan.is_open:
        return json_response({"error": "loan already returned"}, status=409)
""", """
    if loan is None:
        raise NotFound("loan not found")
    if not loan.is_open:
        raise Conflict("loan already returned")
"""),
      ),

    C("fix(routing): return 405 when the path exists but the method does not", DIEGO,
      R("shelfd/routing.py", """
from .errors import HTTPError, NotFound
""", """
from .errors import HTTPError, MethodNotAllowed, NotFound
"""),
      R("shelfd/routing.py", """
    def _dispatch(self, request: Request) -> Response:
        for route in self.routes:
            params = route.match(request.path)
            if params is not None and route.method == request.method:
                request.params = params
                return route.handler(request)
        raise NotFound("not found")
""", """
    def _dispatch(self, request: Request) -> Response:
        allowed: set[str] = set()
        for route in self.routes:
            params = route.match(request.path)
            if params is None:
                continue
            if route.method != request.method:
                allowed.add(route.method)
                continue
            request.params = params
            return route.handler(request)
        if allowed:
            raise MethodNotAllowed(f"method not allowed, use {', '.join(sorted(allowed))}")
        raise NotFound("not found")
"""),
      A("tests/test_routing.py", r'''


def test_wrong_method_is_405():
    response = make_router().dispatch(Request("DELETE", "/books/1"))
    assert response.status == 405
    assert b"GET" in response.body
'''),
      ),

    C("Add signed staff tokens", TOMASZ,
      W("shelfd/auth.py", r'''
"""Signed bearer tokens for library staff.

A token is ``<payload>.<signature>``: the payload is base64url JSON with the
subject and expiry, the signature an HMAC-SHA256 over it with the server's
secret key. Stateless, so any worker can check it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING

from .errors import Unauthorized

if TYPE_CHECKING:
    from .app import App
    from .http import Request


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: str, payload: str) -> str:
    digest = hmac.new(secret.encode(), payload.encode(), hashlib.sha256).digest()
    return _b64encode(digest)


def issue_token(secret: str, subject: str, ttl: int = 3600, now: float | None = None) -> str:
    now = time.time() if now is None else now
    claims = {"sub": subject, "exp": int(now + ttl)}
    payload = _b64encode(json.dumps(claims, sort_keys=True).encode())
    return f"{payload}.{_sign(secret, payload)}"


def verify_token(secret: str, token: str, now: float | None = None) -> str:
    """Return the token's subject, or raise Unauthorized."""
    try:
        payload, signature = token.split(".")
    except ValueError:
        raise Unauthorized("malformed token") from None
    if signature != _sign(secret, payload):
        raise Unauthorized("bad token signature")
    claims = json.loads(_b64decode(payload))
    if claims["exp"] < (time.time() if now is None else now):
        raise Unauthorized("token expired")
    return claims["sub"]


def require_staff(app: App, request: Request) -> str:
    header = request.headers.get("authorization", "")
    if not header.startswith("Bearer "):
        raise Unauthorized("staff token required")
    return verify_token(app.settings.secret_key, header.removeprefix("Bearer "))
'''),
      R("shelfd/config.py", """
    loan_days: int = 21
    debug: bool = False
""", """
    loan_days: int = 21
    debug: bool = False
    secret_key: str = ""
    token_ttl_seconds: int = 8 * 3600
"""),
      W("tests/test_auth.py", r'''
import pytest

from shelfd.auth import issue_token, verify_token
from shelfd.errors import Unauthorized

SECRET = "correct horse battery staple"


def test_round_trip():
    token = issue_token(SECRET, "librarian", now=1000)
    assert verify_token(SECRET, token, now=1001) == "librarian"


def test_expired_token_is_rejected():
    token = issue_token(SECRET, "librarian", ttl=60, now=1000)
    with pytest.raises(Unauthorized, match="expired"):
        verify_token(SECRET, token, now=2000)


def test_wrong_secret_is_rejected():
    token = issue_token(SECRET, "librarian")
    with pytest.raises(Unauthorized, match="signature"):
        verify_token("another secret", token)


def test_garbage_is_rejected():
    with pytest.raises(Unauthorized, match="malformed"):
        verify_token(SECRET, "not-a-token")
'''),
      ),

    C("Require a staff token to add books and search members", TOMASZ,
      R("shelfd/handlers/books.py", """
from ..errors import BadRequest
""", """
from ..auth import require_staff
from ..errors import BadRequest
"""),
      R("shelfd/handlers/books.py", """
def create_book(app: App, request: Request) -> Response:
    data = request.json()
""", """
def create_book(app: App, request: Request) -> Response:
    require_staff(app, request)
    data = request.json()
"""),
      R("shelfd/handlers/members.py", """
from ..errors import BadRequest, NotFound
""", """
from ..auth import require_staff
from ..errors import BadRequest, NotFound
"""),
      R("shelfd/handlers/members.py", """
def search_members(app: App, request: Request) -> Response:
    members = app.members.search(request.arg("q", ""))
""", """
def search_members(app: App, request: Request) -> Response:
    # Member lists carry email addresses: staff only.
    require_staff(app, request)
    members = app.members.search(request.arg("q", ""))
"""),
      R("tests/conftest.py", """
from shelfd.app import create_app
""", """
from shelfd.app import create_app
from shelfd.auth import issue_token
"""),
      R("tests/conftest.py", """
    return create_app(Settings(database_path=str(tmp_path / "shelfd.db")))


@pytest.fixture
def client(app):
    return Client(app)
""", """
    settings = Settings(database_path=str(tmp_path / "shelfd.db"), secret_key="test-secret")
    return create_app(settings)


@pytest.fixture
def client(app):
    return Client(app)


@pytest.fixture
def staff(app):
    token = issue_token(app.settings.secret_key, "librarian")
    return Client(app, {"Authorization": f"Bearer {token}"})
"""),
      W("tests/test_books.py", r'''
def test_create_and_fetch_book(staff, client):
    created = staff.post("/books", {"title": "Dune", "author": "Frank Herbert"})
    assert created.status == 201
    book_id = created.json()["id"]

    fetched = client.get(f"/books/{book_id}")
    assert fetched.status == 200
    assert fetched.json()["title"] == "Dune"


def test_creating_books_needs_a_staff_token(client):
    response = client.post("/books", {"title": "Dune", "author": "Frank Herbert"})
    assert response.status == 401


def test_create_book_requires_title_and_author(staff):
    response = staff.post("/books", {"title": "Untitled"})
    assert response.status == 400
    assert "author" in response.json()["error"]


def test_list_books_sorted_by_title(staff, client):
    for title in ("Middlemarch", "Beloved", "Kindred"):
        staff.post("/books", {"title": title, "author": "Someone"})
    titles = [book["title"] for book in client.get("/books").json()["books"]]
    assert titles == ["Beloved", "Kindred", "Middlemarch"]
'''),
      R("tests/test_members.py", """
def test_search_members_by_name(client):
    client.post("/members", {"name": "Ada Lovelace", "email": "ada@example.org"})
    client.post("/members", {"name": "Grace Hopper", "email": "grace@example.org"})
    names = [m["name"] for m in client.get("/members?q=grace").json()["members"]]
    assert names == ["Grace Hopper"]
""", """
def test_search_members_by_name(client, staff):
    client.post("/members", {"name": "Ada Lovelace", "email": "ada@example.org"})
    client.post("/members", {"name": "Grace Hopper", "email": "grace@example.org"})
    names = [m["name"] for m in staff.get("/members?q=grace").json()["members"]]
    assert names == ["Grace Hopper"]


def test_member_search_is_staff_only(client):
    assert client.get("/members?q=ada").status == 401
"""),
      R("tests/test_loans.py", """
def book_and_member(client):
    book = client.post("/books", {"title": "Piranesi", "author": "Susanna Clarke"}).json()
""", """
def book_and_member(client, staff):
    book = staff.post("/books", {"title": "Piranesi", "author": "Susanna Clarke"}).json()
"""),
      ),

    C("Add issue-token command for librarians", TOMASZ,
      R("shelfd/cli.py", """
from . import __version__
from .app import create_app
""", """
from . import __version__
from .app import create_app
from .auth import issue_token
"""),
      R("shelfd/cli.py", """
def build_parser() -> argparse.ArgumentParser:
""", """
def cmd_issue_token(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    if not settings.secret_key:
        print("error: set secret_key (or SHELFD_SECRET_KEY) first", file=sys.stderr)
        return 2
    ttl = args.ttl or settings.token_ttl_seconds
    print(issue_token(settings.secret_key, args.subject, ttl=ttl))
    return 0


def build_parser() -> argparse.ArgumentParser:
"""),
      R("shelfd/cli.py", """
    init_db.set_defaults(func=cmd_init_db)
    return parser
""", """
    init_db.set_defaults(func=cmd_init_db)

    token = sub.add_parser("issue-token", help="print a staff token")
    token.add_argument("subject", help="who the token is for, e.g. a librarian's login")
    token.add_argument("--ttl", type=int, help="lifetime in seconds")
    token.set_defaults(func=cmd_issue_token)
    return parser
"""),
      R("docs/api.md", """
All bodies are JSON. Errors come back as `{"error": "<message>"}` with a
4xx status.
""", """
All bodies are JSON. Errors come back as `{"error": "<message>"}` with a
4xx status.

Some endpoints are for staff only. They need an `Authorization: Bearer
<token>` header; mint a token with `shelfd issue-token <login>`.
"""),
      R("docs/api.md", """
| POST | `/books` | Body: `title`, `author`, optional `isbn`, `copies` (default 1). |
""", """
| POST | `/books` | Staff. Body: `title`, `author`, optional `isbn`, `copies` (default 1). |
"""),
      R("docs/api.md", """
| GET | `/members?q=text` | Search by name or email. |
""", """
| GET | `/members?q=text` | Staff. Search by name or email. |
"""),
      ),

    C("Add catalogue search by title and author", MAYA,
      W("shelfd/search.py", r'''
"""Catalogue search: split the query into terms, fetch candidates, rank them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .models import Book

if TYPE_CHECKING:
    from .storage.books import BookRepository

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def score(book: Book, terms: list[str]) -> int:
    title = tokenize(book.title)
    author = tokenize(book.author)
    # A hit in the title counts double: people mostly search by title.
    return sum(2 for term in terms if term in title) + sum(1 for term in terms if term in author)


def search_books(repo: BookRepository, query: str, limit: int = 20) -> list[Book]:
    terms = tokenize(query)
    if not terms:
        return []
    candidates = repo.find_by_terms(terms)
    ranked = sorted(candidates, key=lambda book: (-score(book, terms), book.title))
    return ranked[:limit]
'''),
      R("shelfd/storage/books.py", """
    def list(self, limit: int = 50, offset: int = 0) -> list[Book]:
""", """
    def find_by_terms(self, terms: list[str]) -> list[Book]:
        \"\"\"Books whose title or author contains any of the terms.\"\"\"
        clauses = " OR ".join("title LIKE ? OR author LIKE ?" for _ in terms)
        params = tuple(value for term in terms for value in (f"%{term}%", f"%{term}%"))
        rows = self.db.query(f"SELECT * FROM books WHERE {clauses}", params)
        return [_row_to_book(row) for row in rows]

    def list(self, limit: int = 50, offset: int = 0) -> list[Book]:
"""),
      R("shelfd/handlers/books.py", """
from ..models import Book
""", """
from ..models import Book
from ..search import search_books
"""),
      R("shelfd/handlers/books.py", """
def get_book(app: App, request: Request) -> Response:
""", """
def search(app: App, request: Request) -> Response:
    books = search_books(app.books, request.arg("q", ""))
    return json_response({"books": [book.to_dict() for book in books]})


def get_book(app: App, request: Request) -> Response:
"""),
      R("shelfd/handlers/books.py", """
    router.add("POST", "/books", partial(create_book, app))
""", """
    router.add("POST", "/books", partial(create_book, app))
    router.add("GET", "/books/search", partial(search, app))
"""),
      W("tests/test_search.py", r'''
import pytest

from shelfd.models import Book
from shelfd.search import score, tokenize


def test_tokenize_lowercases_and_drops_punctuation():
    assert tokenize("The Left Hand of Darkness!") == ["the", "left", "hand", "of", "darkness"]


def test_title_hits_outrank_author_hits():
    terms = ["morrison"]
    by_title = Book(None, "Morrison Hotel", "Jim Ladd")
    by_author = Book(None, "Beloved", "Toni Morrison")
    assert score(by_title, terms) > score(by_author, terms)


@pytest.fixture
def catalogue(staff):
    for title, author in [
        ("Beloved", "Toni Morrison"),
        ("Song of Solomon", "Toni Morrison"),
        ("The Song of Achilles", "Madeline Miller"),
    ]:
        staff.post("/books", {"title": title, "author": author})


def test_search_endpoint(client, catalogue):
    titles = [b["title"] for b in client.get("/books/search?q=song").json()["books"]]
    assert titles == ["Song of Solomon", "The Song of Achilles"]


def test_empty_query_finds_nothing(client, catalogue):
    assert client.get("/books/search?q=").json()["books"] == []
'''),
      R("docs/api.md", """
| GET | `/books/{id}` | One book. |
""", """
| GET | `/books/search?q=text` | Search titles and authors; title matches rank first. |
| GET | `/books/{id}` | One book. |
"""),
      ),

    C("Return 404 for unknown book ids instead of 500", DIEGO,
      R("shelfd/handlers/books.py", """
from ..errors import BadRequest
""", """
from ..errors import BadRequest, NotFound
"""),
      R("shelfd/handlers/books.py", """
    book = app.books.get(request.params["book_id"])
    return json_response(book.to_dict())
""", """
    book = app.books.get(request.params["book_id"])
    if book is None:
        raise NotFound("book not found")
    return json_response(book.to_dict())
"""),
      A("tests/test_books.py", r'''


def test_unknown_book_is_404(client):
    response = client.get("/books/999")
    assert response.status == 404
    assert response.json() == {"error": "book not found"}
'''),
      body="""
GET /books/<id> for a missing id crashed on None.to_dict() and the
server answered with an HTML 500 page.
"""),
]
