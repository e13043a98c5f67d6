"""Phase 4: rate limiting, reminders, pagination, client polish, a rename and a deletion."""

from .phase3_web import WEB_DEV_DEPS, WEB_RESOLVED
from .steps import (
    DEPENDABOT, DIEGO, GITHUB, MAYA, PRIYA, TOMASZ,
    A, C, Delete, Move, R, Step, W, package_json, package_lock,
)

VITEST_131_DEPS = {**WEB_DEV_DEPS, "vitest": "^1.3.1"}
VITEST_131_RESOLVED = {
    **WEB_RESOLVED,
    "vitest": "1.3.1",
    "@vitest/expect": "1.3.1",
    "@vitest/runner": "1.3.1",
    "@vitest/spy": "1.3.1",
    "vite": "5.1.4",
    "esbuild": "0.19.12",
}

PHASE_4: list[Step] = [
    C("Add rate limiting for the public API", TOMASZ,
      W("shelfd/ratelimit.py", r'''
"""Token-bucket rate limiting, keyed by client address.

Each client has a bucket of ``burst`` tokens that refills at ``per_minute``
tokens a minute. A request takes a token, or is refused when there is none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .http import Request


@dataclass
class Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(self, per_minute: int, burst: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(burst or per_minute)
        self.clock = clock
        self.buckets: dict[str, Bucket] = {}

    def _refill(self, key: str) -> Bucket:
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket(self.capacity, now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        return bucket

    def allow(self, key: str) -> bool:
        bucket = self._refill(key)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return True
        return False


def client_key(request: Request) -> str:
    # Behind the reverse proxy every request comes from the proxy's address;
    # the first X-Forwarded-For hop is the real client.
    forwarded = request.headers.get("x-forwarded-for", "")
    return forwarded.split(",")[0].strip() or request.remote_addr
'''),
      R("shelfd/app.py", """
from .http import Request, Response
from .middleware import apply_cors
""", """
from .http import Request, Response, json_response
from .middleware import apply_cors
from .ratelimit import RateLimiter, client_key
"""),
      R("shelfd/app.py", """
        self.loans = LoanRepository(db)
""", """
        self.loans = LoanRepository(db)
        self.limiter = (
            RateLimiter(settings.rate_limit_per_minute) if settings.rate_limit_per_minute else None
        )
"""),
      R("shelfd/app.py", """
            response = Response(204)
        else:
""", """
            response = Response(204)
        elif self.limiter and not self.limiter.allow(client_key(request)):
            response = json_response({"error": "too many requests"}, status=429)
            response.headers["Retry-After"] = "60"
        else:
"""),
      R("shelfd/config.py", """
    cors_origins: str = ""
""", """
    cors_origins: str = ""
    # Requests per minute per client address; 0 turns the limit off.
    rate_limit_per_minute: int = 120
"""),
      W("tests/test_ratelimit.py", r'''
import time

from shelfd.app import create_app
from shelfd.config import Settings
from shelfd.ratelimit import RateLimiter

from conftest import Client


def test_allows_burst_then_refuses():
    limiter = RateLimiter(per_minute=60, burst=3)
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]


def test_refills_over_time():
    limiter = RateLimiter(per_minute=60, burst=1)
    assert limiter.allow("a")
    assert not limiter.allow("a")
    time.sleep(1.05)
    assert limiter.allow("a")


def test_clients_have_separate_buckets():
    limiter = RateLimiter(per_minute=60, burst=1)
    assert limiter.allow("a")
    assert limiter.allow("b")


def test_app_answers_429(tmp_path):
    settings = Settings(database_path=str(tmp_path / "shelfd.db"), rate_limit_per_minute=2)
    client = Client(create_app(settings))
    statuses = [client.get("/healthz").status for _ in range(3)]
    assert statuses == [200, 200, 429]
'''),
      ),

    C("fix(loans): refuse checkout when every copy is already on loan", DIEGO,
      R("shelfd/storage/loans.py", """
    def for_member(self, member_id: int) -> list[Loan]:
""", """
    def count_open_for_book(self, book_id: int) -> int:
        row = self.db.query_one(
            "SELECT COUNT(*) FROM loans WHERE book_id = ? AND returned_at IS NULL", (book_id,)
        )
        return row[0]

    def for_member(self, member_id: int) -> list[Loan]:
"""),
      R("shelfd/handlers/loans.py", """
        raise NotFound("unknown book or member")
    now = utcnow()
""", """
        raise NotFound("unknown book or member")
    if app.loans.count_open_for_book(book.id) >= book.copies:
        raise Conflict("every copy of this book is on loan")
    now = utcnow()
"""),
      A("tests/test_loans.py", r'''


def test_cannot_borrow_more_copies_than_the_library_has(client, book_and_member):
    book_id, member_id = book_and_member
    assert client.post("/loans", {"book_id": book_id, "member_id": member_id}).status == 201
    second = client.post("/loans", {"book_id": book_id, "member_id": member_id})
    assert second.status == 409
    assert "on loan" in second.json()["error"]
'''),
      R("CHANGELOG.md", """
## [Unreleased]
""", """
## [Unreleased]

### Fixed

- Checking out a book when every copy is already on loan is refused with 409.
"""),
      body="""
Nothing compared open loans with the number of copies, so a single copy
could be lent to any number of members.
"""),

    C("Fix overdue fee rounding for partial days", TOMASZ,
      R("shelfd/fees.py", """
from datetime import datetime
""", """
import math
from datetime import datetime
"""),
      R("shelfd/fees.py", """
    return min(round(overdue_days(loan, now) * per_day), cap)
""", """
    # Every day started counts in full: a book three hours late pays a day.
    days = math.ceil(overdue_days(loan, now))
    return min(days * per_day, cap)
"""),
      A("tests/test_fees.py", r'''


def test_partial_day_counts_as_a_full_day():
    assert fee_cents(make_loan(), DUE + timedelta(hours=3)) == 25
    assert fee_cents(make_loan(), DUE + timedelta(days=2, minutes=1)) == 75
'''),
      R("CHANGELOG.md", """
- Checking out a book when every copy is already on loan is refused with 409.
""", """
- Checking out a book when every copy is already on loan is refused with 409.
- Late fees charge every started day in full. A partial day used to cost a
  fraction of the daily rate, rounded to the cent.
"""),
      ),

    C("Add overdue loans report for staff", DIEGO,
      R("shelfd/handlers/loans.py", """
from ..clock import utcnow
""", """
from ..auth import require_staff
from ..clock import utcnow
"""),
      R("shelfd/handlers/loans.py", """
def member_loans(app: App, request: Request) -> Response:
""", """
def overdue_report(app: App, request: Request) -> Response:
    require_staff(app, request)
    now = utcnow()
    report = []
    for loan in app.loans.overdue(now):
        entry = loan.to_dict()
        entry["fee_cents"] = fee_cents(loan, now)
        report.append(entry)
    return json_response({"loans": report})


def member_loans(app: App, request: Request) -> Response:
"""),
      R("shelfd/handlers/loans.py", """
    router.add("POST", "/loans", partial(checkout, app))
""", """
    router.add("POST", "/loans", partial(checkout, app))
    router.add("GET", "/loans/overdue", partial(overdue_report, app))
"""),
      R("tests/test_loans.py", """
import pytest
""", """
from datetime import datetime, timedelta, timezone

import pytest
"""),
      A("tests/test_loans.py", r'''


def test_overdue_report_lists_late_loans_with_fees(app, staff, book_and_member):
    book_id, member_id = book_and_member
    long_ago = datetime(2024, 1, 1, tzinfo=timezone.utc)
    app.loans.open(book_id, member_id, long_ago, long_ago + timedelta(days=21))
    loans = staff.get("/loans/overdue").json()["loans"]
    assert [loan["book_id"] for loan in loans] == [book_id]
    assert loans[0]["fee_cents"] == 1000


def test_overdue_report_is_staff_only(client):
    assert client.get("/loans/overdue").status == 401
'''),
      R("docs/api.md", """
| POST | `/loans/{id}/return` |""", """
| GET | `/loans/overdue` | Staff. Open loans past their due date, each with `fee_cents` so far. |
| POST | `/loans/{id}/return` |"""),
      ),

    C("Add email notifications module", MAYA,
      W("shelfd/notify/__init__.py", '''
"""Outgoing notifications to members."""

from .email import ConsoleMailer, Email, Mailer, SmtpMailer, mailer_from_settings

__all__ = ["ConsoleMailer", "Email", "Mailer", "SmtpMailer", "mailer_from_settings"]
'''),
      W("shelfd/notify/email.py", r'''
"""Outgoing email: SMTP in production, printed to the console in development."""

from __future__ import annotations

import smtplib
import sys
from dataclasses import dataclass
from email.message import EmailMessage
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from ..config import Settings


@dataclass(frozen=True)
class Email:
    to: str
    subject: str
    body: str


class Mailer(Protocol):
    def send(self, email: Email) -> None: ...


class ConsoleMailer:
    """Prints messages instead of sending them, and keeps them for tests."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.sent: list[Email] = []

    def send(self, email: Email) -> None:
        self.sent.append(email)
        print(f"To: {email.to}\nSubject: {email.subject}\n\n{email.body}\n", file=self.stream)


class SmtpMailer:
    def __init__(self, host: str, port: int, sender: str) -> None:
        self.host = host
        self.port = port
        self.sender = sender

    def build(self, email: Email) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = email.to
        message["Subject"] = email.subject
        message.set_content(email.body)
        return message

    def send(self, email: Email) -> None:
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            smtp.send_message(self.build(email))


def mailer_from_settings(settings: Settings) -> Mailer:
    if settings.smtp_host:
        return SmtpMailer(settings.smtp_host, settings.smtp_port, settings.mail_from)
    return ConsoleMailer()
'''),
      R("shelfd/config.py", """
    rate_limit_per_minute: int = 120
""", """
    rate_limit_per_minute: int = 120
    # No smtp_host means mail is printed instead of sent.
    smtp_host: str = ""
    smtp_port: int = 25
    mail_from: str = "library@localhost"
"""),
      ),

    C("Send overdue reminder emails from the CLI", MAYA,
      W("shelfd/notify/reminders.py", r'''
"""Overdue reminders: find late loans and email the borrowers."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..fees import fee_cents
from .email import Email, Mailer

if TYPE_CHECKING:
    from ..app import App
    from ..models import Book, Loan, Member


def overdue_email(member: Member, book: Book, loan: Loan, now: datetime) -> Email:
    days = (now - loan.due_at).days
    fee = fee_cents(loan, now)
    body = (
        f"Hello {member.name},\n\n"
        f'"{book.title}" was due back on {loan.due_at:%d %B %Y}, {days} days ago.\n'
        f"The late fee so far is ${fee / 100:.2f}.\n\n"
        "Please bring it back on your next visit.\n"
    )
    return Email(to=member.email, subject=f"Overdue: {book.title}", body=body)


def send_overdue_reminders(app: App, mailer: Mailer, now: datetime) -> int:
    """Email every borrower with an overdue loan. Returns how many were sent."""
    sent = 0
    for loan in app.loans.overdue(now):
        member = app.members.get(loan.member_id)
        book = app.books.get(loan.book_id)
        mailer.send(overdue_email(member, book, loan, now))
        sent += 1
    return sent
'''),
      R("shelfd/cli.py", """
from .auth import issue_token
from .config import load_settings
from .storage import Database
""", """
from .auth import issue_token
from .clock import utcnow
from .config import load_settings
from .notify import mailer_from_settings
from .notify.reminders import send_overdue_reminders
from .storage import Database
"""),
      R("shelfd/cli.py", """
def cmd_issue_token(args: argparse.Namespace) -> int:
""", """
def cmd_send_reminders(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    app = create_app(settings)
    sent = send_overdue_reminders(app, mailer_from_settings(settings), utcnow())
    print(f"sent {sent} reminder(s)")
    return 0


def cmd_issue_token(args: argparse.Namespace) -> int:
"""),
      R("shelfd/cli.py", """
    token = sub.add_parser("issue-token", help="print a staff token")
""", """
    reminders = sub.add_parser("send-reminders", help="email members about overdue loans")
    reminders.set_defaults(func=cmd_send_reminders)

    token = sub.add_parser("issue-token", help="print a staff token")
"""),
      W("tests/test_reminders.py", r'''
import io
from datetime import datetime, timedelta, timezone

from shelfd.models import Book, Member
from shelfd.notify import ConsoleMailer
from shelfd.notify.reminders import send_overdue_reminders

NOW = datetime(2024, 4, 1, 9, 0, tzinfo=timezone.utc)


def add_loan(app, title, email, due_in_days):
    book = app.books.add(Book(None, title, "Some Author"))
    member = app.members.add(Member(None, email.split("@")[0], email, joined_at=NOW))
    borrowed = NOW - timedelta(days=30)
    return app.loans.open(book.id, member.id, borrowed, NOW + timedelta(days=due_in_days))


def test_only_overdue_loans_get_reminders(app):
    add_loan(app, "Late Book", "late@example.org", due_in_days=-3)
    add_loan(app, "On Time", "fine@example.org", due_in_days=5)
    mailer = ConsoleMailer(stream=io.StringIO())
    assert send_overdue_reminders(app, mailer, NOW) == 1
    assert [email.to for email in mailer.sent] == ["late@example.org"]
    assert "Late Book" in mailer.sent[0].body
    assert "$0.75" in mailer.sent[0].body
'''),
      ),

    C("Fix flaky rate limiter test", TOMASZ,
      R("tests/test_ratelimit.py", """
import time

from shelfd.app import create_app
""", """
from shelfd.app import create_app
"""),
      R("tests/test_ratelimit.py", """
from conftest import Client


def test_allows_burst_then_refuses():
    limiter = RateLimiter(per_minute=60, burst=3)
""", """
from conftest import Client


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_allows_burst_then_refuses():
    limiter = RateLimiter(per_minute=60, burst=3, clock=FakeClock())
"""),
      R("tests/test_ratelimit.py", """
def test_refills_over_time():
    limiter = RateLimiter(per_minute=60, burst=1)
    assert limiter.allow("a")
    assert not limiter.allow("a")
    time.sleep(1.05)
    assert limiter.allow("a")
""", """
def test_refills_over_time():
    clock = FakeClock()
    limiter = RateLimiter(per_minute=60, burst=1, clock=clock)
    assert limiter.allow("a")
    assert not limiter.allow("a")
    clock.now += 1.0
    assert limiter.allow("a")
"""),
      R("tests/test_ratelimit.py", """
    limiter = RateLimiter(per_minute=60, burst=1)
    assert limiter.allow("a")
    assert limiter.allow("b")
""", """
    limiter = RateLimiter(per_minute=60, burst=1, clock=FakeClock())
    assert limiter.allow("a")
    assert limiter.allow("b")
"""),
      body="""
On a loaded CI runner a pause of more than a second between two calls
refilled the bucket, and the assertion that the second call is refused
failed now and then. Drive the limiter with a fake clock instead of the
real one and sleep().
"""),

    C("Add pagination to member search", DIEGO,
      W("shelfd/pagination.py", r'''
"""``page``/``per_page`` pagination shared by the list endpoints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import BadRequest

if TYPE_CHECKING:
    from .http import Request

DEFAULT_PER_PAGE = 20


@dataclass(frozen=True)
class Page:
    number: int
    size: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


def page_from_request(request: Request) -> Page:
    try:
        number = int(request.arg("page", "1"))
        size = int(request.arg("per_page", str(DEFAULT_PER_PAGE)))
    except ValueError:
        raise BadRequest("page and per_page must be integers") from None
    return Page(max(number, 1), max(size, 1))


def paginated(items: list[Any], page: Page, total: int) -> dict[str, Any]:
    return {
        "items": items,
        "page": page.number,
        "per_page": page.size,
        "total": total,
        "pages": total // page.size,
    }
'''),
      R("shelfd/storage/members.py", """
    def search(self, text: str) -> list[Member]:
        pattern = f"%{text}%"
        rows = self.db.query(
            "SELECT * FROM members WHERE name LIKE ? OR email LIKE ? ORDER BY name",
            (pattern, pattern),
        )
        return [_row_to_member(row) for row in rows]
""", """
    def search(self, text: str, limit: int = 20, offset: int = 0) -> list[Member]:
        pattern = f"%{text}%"
        rows = self.db.query(
            "SELECT * FROM members WHERE name LIKE ? OR email LIKE ? ORDER BY name, id"
            " LIMIT ? OFFSET ?",
            (pattern, pattern, limit, offset),
        )
        return [_row_to_member(row) for row in rows]

    def count_matching(self, text: str) -> int:
        pattern = f"%{text}%"
        row = self.db.query_one(
            "SELECT COUNT(*) FROM members WHERE name LIKE ? OR email LIKE ?", (pattern, pattern)
        )
        return row[0]
"""),
      R("shelfd/handlers/members.py", """
from ..models import Member
""", """
from ..models import Member
from ..pagination import page_from_request, paginated
"""),
      R("shelfd/handlers/members.py", """
    require_staff(app, request)
    members = app.members.search(request.arg("q", ""))
    return json_response({"members": [member.to_dict() for member in members]})
""", """
    require_staff(app, request)
    text = request.arg("q", "")
    page = page_from_request(request)
    members = app.members.search(text, limit=page.size, offset=page.offset)
    total = app.members.count_matching(text)
    return json_response(paginated([member.to_dict() for member in members], page, total))
"""),
      R("tests/test_members.py", """
    names = [m["name"] for m in staff.get("/members?q=grace").json()["members"]]
""", """
    names = [m["name"] for m in staff.get("/members?q=grace").json()["items"]]
"""),
      A("tests/test_members.py", r'''


def test_member_search_is_paginated(client, staff):
    for i in range(5):
        client.post("/members", {"name": f"Reader {i}", "email": f"reader{i}@example.org"})
    body = staff.get("/members?q=reader&per_page=2&page=2").json()
    assert [m["name"] for m in body["items"]] == ["Reader 2", "Reader 3"]
    assert body["total"] == 5


def test_bad_page_number_is_400(staff):
    assert staff.get("/members?page=two").status == 400
'''),
      ),

    C("Paginate the book list too", DIEGO,
      R("shelfd/storage/books.py", """
    def list(self, limit: int = 50, offset: int = 0) -> list[Book]:
""", """
    def count(self) -> int:
        return self.db.query_one("SELECT COUNT(*) FROM books")[0]

    def list(self, limit: int = 50, offset: int = 0) -> list[Book]:
"""),
      R("shelfd/handlers/books.py", """
from ..models import Book
""", """
from ..models import Book
from ..pagination import page_from_request, paginated
"""),
      R("shelfd/handlers/books.py", """
def list_books(app: App, request: Request) -> Response:
    books = app.books.list()
    return json_response({"books": [book.to_dict() for book in books]})
""", """
def list_books(app: App, request: Request) -> Response:
    page = page_from_request(request)
    books = app.books.list(limit=page.size, offset=page.offset)
    return json_response(paginated([book.to_dict() for book in books], page, app.books.count()))
"""),
      R("tests/test_books.py", """
    titles = [book["title"] for book in client.get("/books").json()["books"]]
""", """
    titles = [book["title"] for book in client.get("/books").json()["items"]]
"""),
      R("web/src/types.ts", """
export interface ApiErrorBody {
""", """
export interface Page<T> {
  items: T[];
  page: number;
  per_page: number;
  total: number;
  pages: number;
}

export interface ApiErrorBody {
"""),
      R("web/src/api/books.ts", """
import type { Book } from '../types';
import type { ApiClient } from './client';

export async function listBooks(client: ApiClient): Promise<Book[]> {
  const body = await client.get<{ books: Book[] }>('/books');
  return body.books;
}
""", """
import type { Book, Page } from '../types';
import type { ApiClient } from './client';

export function listBooks(client: ApiClient, page = 1): Promise<Page<Book>> {
  return client.get<Page<Book>>('/books', { page });
}
"""),
      R("web/src/main.ts", """
  renderBookList(list, await listBooks(client));
""", """
  renderBookList(list, (await listBooks(client)).items);
"""),
      R("docs/api.md", """
Some endpoints are for staff only.""", """
List endpoints are paginated: pass `page` (from 1) and `per_page` (default
20). They answer `{"items": [...], "page", "per_page", "total", "pages"}`.

Some endpoints are for staff only."""),
      R("docs/api.md", """
| GET | `/books` | The catalogue, sorted by title. |
""", """
| GET | `/books` | The catalogue, sorted by title. Paginated. |
"""),
      R("docs/api.md", """
| GET | `/members?q=text` | Staff. Search by name or email. |
""", """
| GET | `/members?q=text` | Staff. Search by name or email. Paginated. |
"""),
      body="""
Same shape as member search, so the web client can share one Page<T>
type. GET /books now answers {"items": [...]} instead of {"books": [...]}.
"""),

    C("docs: describe configuration options", MAYA,
      W("docs/configuration.md", """
# Configuration

shelfd reads `shelfd.toml` from the working directory (or the file named by
`SHELFD_CONFIG`), section `[shelfd]`. Every setting can be overridden by an
environment variable: the name in upper case with a `SHELFD_` prefix, e.g.
`SHELFD_PORT=9000`.

```toml
[shelfd]
database_path = "/var/lib/shelfd/shelfd.db"
port = 8080
secret_key = "a long random string"
cors_origins = "https://library.example"
```

| Setting | Default | Meaning |
| --- | --- | --- |
| `database_path` | `shelfd.db` | The sqlite file. Created on first start. |
| `host` | `127.0.0.1` | Address `shelfd serve` binds to. |
| `port` | `8080` | Port `shelfd serve` listens on. |
| `loan_days` | `21` | How long a loan lasts. |
| `debug` | `false` | More logging. |
| `secret_key` | (empty) | Signs staff tokens. Required for any staff endpoint. |
| `token_ttl_seconds` | `28800` | Lifetime of tokens from `shelfd issue-token`. |
| `cors_origins` | (empty) | Comma-separated origins allowed to call the API from a browser. |
| `rate_limit_per_minute` | `120` | Requests per minute per client; `0` turns limiting off. |
| `smtp_host` | (empty) | Mail server. Empty prints mail to the console instead. |
| `smtp_port` | `25` | Mail server port. |
| `mail_from` | `library@localhost` | Sender address of reminders. |

Changing `secret_key` invalidates every token already issued.
"""),
      R("README.md", """
The API listens on http://127.0.0.1:8080; see [docs/api.md](docs/api.md).
""", """
The API listens on http://127.0.0.1:8080; see [docs/api.md](docs/api.md).
Settings are described in [docs/configuration.md](docs/configuration.md).
"""),
      ),

    C("Add search box with debounced queries", PRIYA,
      W("web/src/utils/debounce.ts", """
/** Call `fn` only once `waitMs` have passed without another call. */
export function debounce<A extends unknown[]>(
  fn: (...args: A) => void,
  waitMs: number,
): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...args);
    }, waitMs);
  };
}
"""),
      W("web/src/utils/debounce.test.ts", """
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { debounce } from './debounce';

describe('debounce', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs once after the calls stop', () => {
    const fn = vi.fn();
    const debounced = debounce(fn, 200);
    debounced('a');
    vi.advanceTimersByTime(100);
    debounced('ab');
    vi.advanceTimersByTime(199);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledOnce();
    expect(fn).toHaveBeenCalledWith('ab');
  });
});
"""),
      W("web/src/components/SearchBox.ts", """
import { debounce } from '../utils/debounce';

export interface SearchBoxOptions {
  minLength?: number;
  waitMs?: number;
}

/** Wire a text input so that `onSearch` runs once typing pauses. */
export function mountSearchBox(
  input: HTMLInputElement,
  onSearch: (query: string) => void,
  { minLength = 2, waitMs = 250 }: SearchBoxOptions = {},
): void {
  const run = debounce((query: string) => {
    // An empty box means "show everything again"; one letter is too broad.
    if (query.length === 0 || query.length >= minLength) onSearch(query);
  }, waitMs);
  input.addEventListener('input', () => run(input.value.trim()));
}
"""),
      R("web/src/main.ts", """
import { listBooks } from './api/books';
import { ApiClient } from './api/client';
import { renderBookList } from './components/BookList';
""", """
import { listBooks, searchBooks } from './api/books';
import { ApiClient } from './api/client';
import { renderBookList } from './components/BookList';
import { mountSearchBox } from './components/SearchBox';
"""),
      R("web/src/main.ts", """
  const list = document.querySelector<HTMLElement>('#books');
  if (!list) return;
  renderBookList(list, (await listBooks(client)).items);
}
""", """
  const list = document.querySelector<HTMLElement>('#books');
  const search = document.querySelector<HTMLInputElement>('#search');
  if (!list) return;
  renderBookList(list, (await listBooks(client)).items);
  if (search) {
    mountSearchBox(search, async (query) => {
      const books = query ? await searchBooks(client, query) : (await listBooks(client)).items;
      renderBookList(list, books);
    });
  }
}
"""),
      R("web/index.html", """
      <section id="books"></section>
""", """
      <input id="search" type="search" placeholder="Search by title or author" />
      <section id="books"></section>
"""),
      ),

    C("Handle network errors in the API client", PRIYA,
      R("web/src/api/client.ts", """
    const response = await this.fetchImpl(this.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      const payload = (await response.json()) as ApiErrorBody;
      throw new ApiError(response.status, payload.error);
    }
    return (await response.json()) as T;
  }
}
""", """
    let response: Response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, `network error: ${(err as Error).message}`);
    }
    if (!response.ok) {
      throw new ApiError(response.status, await errorMessage(response));
    }
    return (await response.json()) as T;
  }
}

async function errorMessage(response: Response): Promise<string> {
  // A proxy in front of the API answers 502/504 with HTML, not our JSON.
  try {
    const payload = (await response.json()) as ApiErrorBody;
    return payload.error ?? response.statusText;
  } catch {
    return response.statusText || `HTTP ${response.status}`;
  }
}
"""),
      W("web/src/api/client.test.ts", """
import { describe, expect, it, vi } from 'vitest';
import { ApiClient, ApiError } from './client';

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

describe('ApiClient', () => {
  it('sends the bearer token', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(jsonResponse(200, { ok: true }));
    const client = new ApiClient('http://api', 'tok', fetchImpl);
    await client.get('/books');
    expect(fetchImpl.mock.calls[0][1].headers.Authorization).toBe('Bearer tok');
  });

  it('turns error bodies into ApiError', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(jsonResponse(404, { error: 'book not found' }));
    const client = new ApiClient('http://api', null, fetchImpl);
    await expect(client.get('/books/9')).rejects.toMatchObject({
      status: 404,
      message: 'book not found',
    });
  });

  it('reports network failures with status 0', async () => {
    const fetchImpl = vi.fn().mockRejectedValue(new TypeError('Failed to fetch'));
    const client = new ApiClient('http://api', null, fetchImpl);
    const error = await client.get('/books').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 0 });
  });

  it('copes with HTML error pages', async () => {
    const page = new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' });
    const client = new ApiClient('http://api', null, vi.fn().mockResolvedValue(page));
    await expect(client.get('/books')).rejects.toMatchObject({ status: 502, message: 'Bad Gateway' });
  });
});
"""),
      ),

    C("fix(web): encode query parameters in API requests", PRIYA,
      R("web/src/api/client.ts", """
function buildQuery(query?: Query): string {
  if (!query) return '';
  const parts = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${value}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
""", """
function buildQuery(query?: Query): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
"""),
      R("web/src/api/client.test.ts", """
  it('turns error bodies into ApiError', async () => {
""", """
  it('encodes query parameters', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(jsonResponse(200, { books: [] }));
    const client = new ApiClient('http://api', null, fetchImpl);
    await client.get('/books/search', { q: 'war & peace', page: undefined });
    expect(fetchImpl.mock.calls[0][0]).toBe('http://api/books/search?q=war+%26+peace');
  });

  it('turns error bodies into ApiError', async () => {
"""),
      body="""
Searching for "war & peace" sent `?q=war & peace`, so the API saw
q="war " plus a stray parameter and found nothing useful.
"""),

    C("chore: bump pytest to 8.0", DIEGO,
      R("pyproject.toml", 'test = ["pytest>=7.4"]', 'test = ["pytest>=8.0"]'),
      ),

    C("Bump vitest from 1.2.0 to 1.3.1 in /web", DEPENDABOT,
      W("web/package.json", package_json("0.1.0", VITEST_131_DEPS)),
      W("web/package-lock.json", package_lock("0.1.0", VITEST_131_DEPS, VITEST_131_RESOLVED)),
      committer=GITHUB,
      body="""
Bumps [vitest](https://github.com/vitest-dev/vitest/tree/HEAD/packages/vitest) from 1.2.0 to 1.3.1.
- [Release notes](https://github.com/vitest-dev/vitest/releases)
- [Commits](https://github.com/vitest-dev/vitest/commits/v1.3.1/packages/vitest)

---
updated-dependencies:
- dependency-name: vitest
  dependency-type: direct:development
  update-type: version-update:semver-minor
...

Signed-off-by: dependabot[bot] <support@github.com>
"""),

    C("Rename notify.email to notify.mailer", MAYA,
      Move("shelfd/notify/email.py", "shelfd/notify/mailer.py"),
      R("shelfd/notify/mailer.py", '''
"""Outgoing email: SMTP in production, printed to the console in development."""
''', '''
"""Mailers: SMTP in production, printed to the console in development.

Not called ``email``: a module of that name inside the package shadowed the
standard library's ``email`` for tools that put this directory on sys.path.
"""
'''),
      R("shelfd/notify/__init__.py", """
from .email import ConsoleMailer""", """
from .mailer import ConsoleMailer"""),
      R("shelfd/notify/reminders.py", """
from .email import Email, Mailer
""", """
from .mailer import Email, Mailer
"""),
      ),

    C("Pass the current time explicitly and drop shelfd.clock", TOMASZ,
      Delete("shelfd/clock.py"),
      R("shelfd/app.py", """
from collections.abc import Callable, Iterable
from typing import Any
""", """
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any
"""),
      R("shelfd/app.py", """
    def __init__(self, settings: Settings, db: Database) -> None:
        self.settings = settings
""", """
    def __init__(self, settings: Settings, db: Database,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.settings = settings
        # Injected so that tests can move time; handlers call app.now().
        self.clock = clock or (lambda: datetime.now(timezone.utc))
"""),
      R("shelfd/app.py", """
    def handle(self, request: Request) -> Response:
""", """
    def now(self) -> datetime:
        return self.clock()

    def handle(self, request: Request) -> Response:
"""),
      R("shelfd/app.py", """
def create_app(settings: Settings | None = None) -> App:
    settings = settings or load_settings()
    db = Database(settings.database_path)
    db.migrate()
    app = App(settings, db)
""", """
def create_app(settings: Settings | None = None,
               clock: Callable[[], datetime] | None = None) -> App:
    settings = settings or load_settings()
    db = Database(settings.database_path)
    db.migrate()
    app = App(settings, db, clock)
"""),
      R("shelfd/handlers/loans.py", """
from ..clock import utcnow
""", ""),
      R("shelfd/handlers/loans.py", """
        raise Conflict("every copy of this book is on loan")
    now = utcnow()
""", """
        raise Conflict("every copy of this book is on loan")
    now = app.now()
"""),
      R("shelfd/handlers/loans.py", """
    app.loans.close(loan.id, utcnow())
""", """
    app.loans.close(loan.id, app.now())
"""),
      R("shelfd/handlers/loans.py", """
    require_staff(app, request)
    now = utcnow()
""", """
    require_staff(app, request)
    now = app.now()
"""),
      R("shelfd/cli.py", """
from .clock import utcnow
""", ""),
      R("shelfd/cli.py", """
    sent = send_overdue_reminders(app, mailer_from_settings(settings), utcnow())
""", """
    sent = send_overdue_reminders(app, mailer_from_settings(settings), app.now())
"""),
      R("tests/conftest.py", """
    return create_app(settings)
""", """
    return create_app(settings, clock=lambda: NOW)
"""),
      R("tests/conftest.py", """
import io
import json
from dataclasses import dataclass
""", """
import io
import json
from dataclasses import dataclass
from datetime import datetime, timezone
"""),
      R("tests/conftest.py", """
from shelfd.config import Settings
""", """
from shelfd.config import Settings

# Every app in the tests lives at this moment, so dates in assertions are fixed.
NOW = datetime(2024, 4, 1, 9, 0, tzinfo=timezone.utc)
"""),
      R("tests/test_loans.py", """
    long_ago = datetime(2024, 1, 1, tzinfo=timezone.utc)
    app.loans.open(book_id, member_id, long_ago, long_ago + timedelta(days=21))
    loans = staff.get("/loans/overdue").json()["loans"]
    assert [loan["book_id"] for loan in loans] == [book_id]
    assert loans[0]["fee_cents"] == 1000
""", """
    due = NOW - timedelta(days=2, hours=1)
    app.loans.open(book_id, member_id, due - timedelta(days=21), due)
    loans = staff.get("/loans/overdue").json()["loans"]
    assert [loan["book_id"] for loan in loans] == [book_id]
    assert loans[0]["fee_cents"] == 75
"""),
      R("tests/test_loans.py", """
from datetime import datetime, timedelta, timezone

import pytest
""", """
from datetime import timedelta

import pytest

from conftest import NOW
"""),
      R("tests/test_loans.py", """
    assert loan.status == 201
    assert loan.json()["returned_at"] is None
""", """
    assert loan.status == 201
    assert loan.json()["returned_at"] is None
    assert loan.json()["due_at"] == "2024-04-22T09:00:00+00:00"
"""),
      body="""
A module-level utcnow() could only be faked by monkeypatching. The app
now carries a clock, handlers ask app.now(), and tests pin the time.
"""),

    C("Return 400 for malformed JSON bodies", DIEGO,
      R("shelfd/http.py", """
from urllib.parse import parse_qs
""", """
from urllib.parse import parse_qs

from .errors import BadRequest
"""),
      R("shelfd/http.py", """
    def json(self) -> Any:
        if not self.body:
            return {}
        return json.loads(self.body)
""", """
    def json(self) -> dict[str, Any]:
        if not self.body:
            return {}
        try:
            data = json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise BadRequest("request body is not valid JSON") from None
        # Handlers call data.get(...); a list or a string would crash them.
        if not isinstance(data, dict):
            raise BadRequest("request body must be a JSON object")
        return data
"""),
      A("tests/test_routing.py", r'''


def test_malformed_json_body_is_400():
    router = Router()
    router.add("POST", "/echo", lambda req: json_response(req.json()))
    assert router.dispatch(Request("POST", "/echo", body=b"{not json")).status == 400
    assert router.dispatch(Request("POST", "/echo", body=b"[1, 2]")).status == 400
'''),
      ),

    C("Update CHANGELOG", MAYA,
      R("CHANGELOG.md", """
## [Unreleased]

### Fixed
""", """
## [Unreleased]

### Added

- Per-client rate limiting (`rate_limit_per_minute`, default 120).
- `GET /loans/overdue`: late loans with the fee so far, for staff.
- `shelfd send-reminders` emails members about overdue loans.
- Pagination (`page`, `per_page`) on `GET /books` and `GET /members`.
- Search box in the web client.

### Changed

- `GET /books` and `GET /members` answer `{"items": [...], "total", ...}`
  instead of `{"books": [...]}` / `{"members": [...]}`.
- Malformed JSON bodies get a 400 instead of a 500.

### Fixed
"""),
      ),

    C("Use WAL journal mode for sqlite", TOMASZ,
      R("shelfd/storage/db.py", """
        self.conn.execute("PRAGMA foreign_keys = ON")
""", """
        self.conn.execute("PRAGMA foreign_keys = ON")
        # WAL lets the reminder job read while the server writes, instead of
        # one of them failing with "database is locked".
        self.conn.execute("PRAGMA journal_mode = WAL")
"""),
      ),

    C("Add indexes for loan lookups by member and book", TOMASZ,
      R("shelfd/storage/migrations.py", """
    ],
]
""", """
    ],
    # 2: loans are listed per member, and counted per book on every checkout
    [
        "CREATE INDEX loans_member_id ON loans(member_id)",
        "CREATE INDEX loans_open_by_book ON loans(book_id) WHERE returned_at IS NULL",
    ],
]
"""),
      ),

    C("Show due dates in the loan table", PRIYA,
      R("web/src/utils/format.ts", """
export function daysBetween(fromIso: string, to: Date): number {
  return Math.floor((to.getTime() - new Date(fromIso).getTime()) / DAY_MS);
}
""", """
export function daysBetween(fromIso: string, to: Date): number {
  return Math.floor((to.getTime() - new Date(fromIso).getTime()) / DAY_MS);
}

/** "due in 3 days", "due today", "2 days overdue". */
export function dueLabel(dueIso: string, now: Date): string {
  const late = daysBetween(dueIso, now);
  if (late > 0) return `${late} day${late === 1 ? '' : 's'} overdue`;
  if (late === 0) return 'due today';
  if (late === -1) return 'due tomorrow';
  return `due in ${-late} days`;
}
"""),
      W("web/src/components/LoanTable.ts", """
import type { Book, Loan } from '../types';
import { dueLabel, formatDate } from '../utils/format';
import { escapeHtml } from '../utils/html';

export function loanRowHtml(loan: Loan, book: Book | undefined, now: Date): string {
  const title = book ? escapeHtml(book.title) : `#${loan.book_id}`;
  const status = loan.returned_at
    ? `returned ${formatDate(loan.returned_at)}`
    : `on loan, ${dueLabel(loan.due_at, now)}`;
  return (
    `<tr data-loan="${loan.id}">` +
    `<td>${title}</td><td>${formatDate(loan.borrowed_at)}</td>` +
    `<td>${formatDate(loan.due_at)}</td><td>${status}</td>` +
    '</tr>'
  );
}

export function loanTableHtml(loans: Loan[], books: Map<number, Book>, now = new Date()): string {
  const rows = loans.map((loan) => loanRowHtml(loan, books.get(loan.book_id), now));
  return (
    '<table class="loans"><thead><tr>' +
    '<th>Book</th><th>Borrowed</th><th>Due</th><th>Status</th>' +
    '</tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

export function renderLoanTable(
  container: HTMLElement,
  loans: Loan[],
  books: Map<number, Book>,
): void {
  container.innerHTML = loanTableHtml(loans, books);
}
"""),
      R("web/src/components/LoanTable.test.ts", """
const book: Book = { id: 1, title: 'Piranesi', author: 'Susanna Clarke', isbn: null, copies: 1 };
""", """
const book: Book = { id: 1, title: 'Piranesi', author: 'Susanna Clarke', isbn: null, copies: 1 };
const now = new Date('2024-03-20T12:00:00Z');
"""),
      R("web/src/components/LoanTable.test.ts", """
    const html = loanTableHtml([loan()], new Map([[1, book]]));
    expect(html).toContain('Piranesi');
    expect(html).toContain('on loan');
  });
""", """
    const html = loanTableHtml([loan()], new Map([[1, book]]), now);
    expect(html).toContain('Piranesi');
    expect(html).toContain('on loan, due in 2 days');
  });

  it('shows the due date', () => {
    expect(loanTableHtml([loan()], new Map(), now)).toContain('<td>22 Mar 2024</td>');
  });
"""),
      ),

    C("Highlight overdue loans in the loan table (#27)", PRIYA,
      R("web/src/components/LoanTable.ts", """
    : `on loan, ${dueLabel(loan.due_at, now)}`;
  return (
    `<tr data-loan="${loan.id}">` +
""", """
    : `on loan, ${dueLabel(loan.due_at, now)}`;
  const overdue = loan.returned_at === null && new Date(loan.due_at) < now;
  return (
    `<tr data-loan="${loan.id}"${overdue ? ' class="overdue"' : ''}>` +
"""),
      R("web/src/components/LoanTable.test.ts", """
  it('shows the due date', () => {
""", """
  it('marks open loans past their due date', () => {
    const late = loanTableHtml([loan({ due_at: '2024-03-18T10:00:00+00:00' })], new Map(), now);
    expect(late).toContain('class="overdue"');
    expect(late).toContain('2 days overdue');
    expect(loanTableHtml([loan()], new Map(), now)).not.toContain('overdue');
  });

  it('does not mark returned loans', () => {
    const returned = loan({
      due_at: '2024-03-18T10:00:00+00:00',
      returned_at: '2024-03-19T10:00:00+00:00',
    });
    expect(loanTableHtml([returned], new Map(), now)).not.toContain('class="overdue"');
  });

  it('shows the due date', () => {
"""),
      ),

    C("Add member card component (#29)", PRIYA,
      W("web/src/api/members.ts", """
import type { Member, Page } from '../types';
import type { ApiClient } from './client';

export function getMember(client: ApiClient, id: number): Promise<Member> {
  return client.get<Member>(`/members/${id}`);
}

export function searchMembers(client: ApiClient, query: string, page = 1): Promise<Page<Member>> {
  return client.get<Page<Member>>('/members', { q: query, page });
}

export function registerMember(client: ApiClient, name: string, email: string): Promise<Member> {
  return client.post<Member>('/members', { name, email });
}
"""),
      W("web/src/components/MemberCard.ts", """
import type { Loan, Member } from '../types';
import { formatDate } from '../utils/format';
import { escapeHtml } from '../utils/html';

export function memberCardHtml(member: Member, loans: Loan[]): string {
  const open = loans.filter((loan) => loan.returned_at === null).length;
  return (
    `<article class="member-card" data-member="${member.id}">` +
    `<h2>${escapeHtml(member.name)}</h2>` +
    `<p class="email">${escapeHtml(member.email)}</p>` +
    `<p>Member since ${formatDate(member.joined_at)} · ` +
    `${open} book${open === 1 ? '' : 's'} on loan</p>` +
    '</article>'
  );
}

export function renderMemberCard(container: HTMLElement, member: Member, loans: Loan[]): void {
  container.innerHTML = memberCardHtml(member, loans);
}
"""),
      W("web/src/components/MemberCard.test.ts", """
import { describe, expect, it } from 'vitest';
import type { Loan, Member } from '../types';
import { memberCardHtml } from './MemberCard';

const member: Member = {
  id: 3,
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  joined_at: '2024-01-15T10:00:00+00:00',
};

function loan(returned_at: string | null): Loan {
  return {
    id: 1,
    book_id: 1,
    member_id: 3,
    borrowed_at: '2024-03-01T10:00:00+00:00',
    due_at: '2024-03-22T10:00:00+00:00',
    returned_at,
  };
}

describe('memberCardHtml', () => {
  it('counts only open loans', () => {
    const html = memberCardHtml(member, [loan(null), loan('2024-03-05T10:00:00+00:00')]);
    expect(html).toContain('1 book on loan');
    expect(html).toContain('Member since 15 Jan 2024');
  });
});
"""),
      ),

    C("docs: add deployment guide", DIEGO,
      W("docs/deployment.md", """
# Deploying shelfd

shelfd is a WSGI application with a single sqlite file for state. One
small virtual machine is plenty for a branch library.

## Application server

`shelfd serve` uses the standard library's reference server, which handles
one request at a time. In production run the app under a real WSGI server:

```sh
pip install gunicorn
gunicorn --workers 2 --bind 127.0.0.1:8080 'shelfd.app:create_app()'
```

Keep the worker count low: every worker opens the same sqlite file, and
writes are serialised anyway.

## Reverse proxy

Put nginx (or any proxy) in front to terminate TLS and serve `web/`:

```nginx
location /api/ {
    proxy_pass http://127.0.0.1:8080/;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
}
```

The rate limiter keys on the first `X-Forwarded-For` address, so the proxy
must set it; otherwise every client shares one bucket and they will all
recieve 429s at once.

## Configuration

Put the settings in `/etc/shelfd/shelfd.toml` and point `SHELFD_CONFIG` at
it from the service's enviroment. Generate the secret key once:

```sh
python -c 'import secrets; print(secrets.token_urlsafe(32))'
```

## Reminders

Overdue reminders are a seperate job. Run it daily from cron or a systemd
timer:

```cron
0 9 * * * SHELFD_CONFIG=/etc/shelfd/shelfd.toml shelfd send-reminders
```

## Backups

Copy the database with sqlite's online backup rather than `cp`, which can
catch the file mid-write:

```sh
sqlite3 /var/lib/shelfd/shelfd.db ".backup '/var/backups/shelfd-$(date +%F).db'"
```
"""),
      R("README.md", """
Settings are described in [docs/configuration.md](docs/configuration.md).
""", """
Settings are described in [docs/configuration.md](docs/configuration.md),
running it for real in [docs/deployment.md](docs/deployment.md).
"""),
      ),

    C("Fix typos in deployment guide [skip ci]", MAYA,
      R("docs/deployment.md", "recieve 429s", "receive 429s"),
      R("docs/deployment.md", "service's enviroment", "service's environment"),
      R("docs/deployment.md", "are a seperate job", "are a separate job"),
      ),
]
