"""Phase 6: renewals, fixes from real use, the 0.2.0 release and what came after."""

from .phase4_features import VITEST_131_DEPS, VITEST_131_RESOLVED
from .steps import (
    DEPENDABOT, DIEGO, GITHUB, MAYA, PRIYA, TOMASZ,
    A, C, R, Step, Tag, W, package_json, package_lock,
)

TS_54_DEPS = {**VITEST_131_DEPS, "typescript": "^5.4.2"}
TS_54_RESOLVED = {**VITEST_131_RESOLVED, "typescript": "5.4.2"}

PHASE_6: list[Step] = [
    C("Add loan renewal endpoint", DIEGO,
      R("shelfd/storage/migrations.py", """
    ],
]
""", """
    ],
    # 4: renewals
    [
        "ALTER TABLE loans ADD COLUMN renewals INTEGER NOT NULL DEFAULT 0",
    ],
]
"""),
      R("shelfd/models.py", """
    returned_at: datetime | None = None

    @property
    def is_open(self) -> bool:
""", """
    returned_at: datetime | None = None
    renewals: int = 0

    @property
    def is_open(self) -> bool:
"""),
      R("shelfd/models.py", """
            "returned_at": _iso(self.returned_at),
        }
""", """
            "returned_at": _iso(self.returned_at),
            "renewals": self.renewals,
        }
"""),
      R("shelfd/storage/loans.py", """
        returned_at=_parse(row["returned_at"]),
    )
""", """
        returned_at=_parse(row["returned_at"]),
        renewals=row["renewals"],
    )
"""),
      R("shelfd/storage/loans.py", """
    def count_open_for_book(self, book_id: int) -> int:
""", """
    def extend(self, loan_id: int, due_at: datetime) -> None:
        with self.db.transaction() as cur:
            cur.execute(
                "UPDATE loans SET due_at = ?, renewals = renewals + 1 WHERE id = ?",
                (due_at.isoformat(), loan_id),
            )

    def count_open_for_book(self, book_id: int) -> int:
"""),
      R("shelfd/handlers/loans.py", """
def overdue_report(app: App, request: Request) -> Response:
""", """
def renew(app: App, request: Request) -> Response:
    loan = app.loans.get(request.params["loan_id"])
    if loan is None:
        raise NotFound("loan not found")
    if not loan.is_open:
        raise Conflict("loan already returned")
    if loan.is_overdue(app.now()):
        raise Conflict("overdue loans cannot be renewed, return the book first")
    # From the old due date, so renewing early does not shorten the loan.
    app.loans.extend(loan.id, loan.due_at + timedelta(days=app.settings.loan_days))
    return json_response(app.loans.get(loan.id).to_dict())


def overdue_report(app: App, request: Request) -> Response:
"""),
      R("shelfd/handlers/loans.py", """
    router.add("POST", "/loans/<loan_id:int>/return", partial(return_book, app))
""", """
    router.add("POST", "/loans/<loan_id:int>/return", partial(return_book, app))
    router.add("POST", "/loans/<loan_id:int>/renew", partial(renew, app))
"""),
      A("tests/test_loans.py", r'''


def test_renew_extends_from_the_old_due_date(client, book_and_member):
    book_id, member_id = book_and_member
    loan = client.post("/loans", {"book_id": book_id, "member_id": member_id}).json()
    renewed = client.post(f"/loans/{loan['id']}/renew")
    assert renewed.status == 200
    assert renewed.json()["due_at"] == "2024-05-13T09:00:00+00:00"
    assert renewed.json()["renewals"] == 1


def test_overdue_loans_cannot_be_renewed(app, client, book_and_member):
    book_id, member_id = book_and_member
    due = NOW - timedelta(days=1)
    loan = app.loans.open(book_id, member_id, due - timedelta(days=21), due)
    assert client.post(f"/loans/{loan.id}/renew").status == 409
'''),
      R("docs/api.md", """
| POST | `/loans/{id}/return` |""", """
| POST | `/loans/{id}/renew` | Extend an open loan by `loan_days` from its due date. 409 once overdue. |
| POST | `/loans/{id}/return` |"""),
      ),

    C("Limit renewals to two per loan", DIEGO,
      R("shelfd/config.py", """
    loan_days: int = 21
""", """
    loan_days: int = 21
    max_renewals: int = 2
"""),
      R("shelfd/handlers/loans.py", """
        raise Conflict("overdue loans cannot be renewed, return the book first")
""", """
        raise Conflict("overdue loans cannot be renewed, return the book first")
    if loan.renewals >= app.settings.max_renewals:
        raise Conflict(f"a loan can be renewed at most {app.settings.max_renewals} times")
"""),
      A("tests/test_loans.py", r'''


def test_renewals_are_limited(client, book_and_member):
    book_id, member_id = book_and_member
    loan_id = client.post("/loans", {"book_id": book_id, "member_id": member_id}).json()["id"]
    statuses = [client.post(f"/loans/{loan_id}/renew").status for _ in range(3)]
    assert statuses == [200, 200, 409]
'''),
      R("docs/configuration.md", """
| `loan_days` | `21` | How long a loan lasts. |
""", """
| `loan_days` | `21` | How long a loan lasts, and how much a renewal adds. |
| `max_renewals` | `2` | Renewals allowed per loan. |
"""),
      ),

    C("Don't renew books that another member has on hold", TOMASZ,
      R("shelfd/storage/holds.py", """
    def active_for_member(self, book_id: int, member_id: int) -> Hold | None:
""", """
    def others_waiting(self, book_id: int, member_id: int) -> int:
        \"\"\"How many other members have an active hold on the book.\"\"\"
        row = self.db.query_one(
            "SELECT COUNT(*) FROM holds"
            " WHERE book_id = ? AND member_id != ? AND cancelled_at IS NULL",
            (book_id, member_id),
        )
        return row[0]

    def active_for_member(self, book_id: int, member_id: int) -> Hold | None:
"""),
      R("shelfd/handlers/loans.py", """
        raise Conflict(f"a loan can be renewed at most {app.settings.max_renewals} times")
""", """
        raise Conflict(f"a loan can be renewed at most {app.settings.max_renewals} times")
    if app.holds.others_waiting(loan.book_id, loan.member_id):
        raise Conflict("another member is waiting for this book")
"""),
      A("tests/test_holds.py", r'''


def test_cannot_renew_a_book_someone_is_waiting_for(client, book_and_members):
    book_id, ada, grace = book_and_members
    loan = client.post("/loans", {"book_id": book_id, "member_id": ada}).json()
    client.post("/holds", {"book_id": book_id, "member_id": grace})
    response = client.post(f"/loans/{loan['id']}/renew")
    assert response.status == 409
    assert "waiting" in response.json()["error"]
'''),
      body="""
Renewals let one member keep a popular book forever while the hold queue
never moved.
"""),

    C("fix(auth): compare token signatures in constant time", TOMASZ,
      R("shelfd/auth.py", """
    if signature != _sign(secret, payload):
""", """
    # compare_digest: != returns at the first differing byte, which leaks
    # how much of a forged signature is right through response timing.
    if not hmac.compare_digest(signature, _sign(secret, payload)):
"""),
      ),

    C("Add X-RateLimit headers to responses", TOMASZ,
      R("shelfd/ratelimit.py", """
    def allow(self, key: str) -> bool:
""", """
    def remaining(self, key: str) -> int:
        return int(self._refill(key).tokens)

    def allow(self, key: str) -> bool:
"""),
      R("shelfd/app.py", """
        else:
            response = self.router.dispatch(request)
        return apply_cors(request, response, self.settings.cors_origin_list)
""", """
        else:
            response = self.router.dispatch(request)
        if self.limiter:
            remaining = self.limiter.remaining(client_key(request))
            response.headers["X-RateLimit-Limit"] = str(self.settings.rate_limit_per_minute)
            response.headers["X-RateLimit-Remaining"] = str(remaining)
        return apply_cors(request, response, self.settings.cors_origin_list)
"""),
      R("shelfd/middleware.py", """
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS"
""", """
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS"
    # Without this the browser hides the rate-limit headers from scripts.
    response.headers["Access-Control-Expose-Headers"] = "X-RateLimit-Limit, X-RateLimit-Remaining"
"""),
      A("tests/test_ratelimit.py", r'''


def test_remaining_requests_are_reported(tmp_path):
    settings = Settings(database_path=str(tmp_path / "shelfd.db"), rate_limit_per_minute=5)
    client = Client(create_app(settings))
    first, second = client.get("/healthz"), client.get("/healthz")
    assert first.headers["X-RateLimit-Limit"] == "5"
    assert [first.headers["X-RateLimit-Remaining"], second.headers["X-RateLimit-Remaining"]] == ["4", "3"]
'''),
      ),

    C("Escape LIKE wildcards in catalogue search", MAYA,
      R("shelfd/storage/books.py", r'''
def _row_to_book(row: sqlite3.Row) -> Book:
''', r'''
def _like_pattern(term: str) -> str:
    # "_" and "%" are LIKE wildcards, and "_" survives tokenizing (it is a
    # word character), so "snake_case" also matched "snake case".
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _row_to_book(row: sqlite3.Row) -> Book:
'''),
      R("shelfd/storage/books.py", r'''
        clauses = " OR ".join("title LIKE ? OR author LIKE ?" for _ in terms)
        params = tuple(value for term in terms for value in (f"%{term}%", f"%{term}%"))
''', r'''
        clauses = " OR ".join(
            "title LIKE ? ESCAPE '\\' OR author LIKE ? ESCAPE '\\'" for _ in terms
        )
        params = tuple(value for term in terms for value in (_like_pattern(term),) * 2)
'''),
      A("tests/test_search.py", r'''


def test_underscore_is_not_a_wildcard(client, staff):
    staff.post("/books", {"title": "snake_case for Beginners", "author": "A. Dev"})
    staff.post("/books", {"title": "Snake Case Studies", "author": "B. Herpetologist"})
    titles = [b["title"] for b in client.get("/books/search?q=snake_case").json()["books"]]
    assert titles == ["snake_case for Beginners"]
'''),
      ),

    C("Rank exact title matches above partial matches", MAYA,
      R("shelfd/search.py", """
    # A hit in the title counts double: people mostly search by title.
    return sum(2 for term in terms if term in title) + sum(1 for term in terms if term in author)
""", """
    # A hit in the title counts double: people mostly search by title.
    points = sum(2 for term in terms if term in title) + sum(1 for term in terms if term in author)
    # Typing the whole title ("dune") should find that book before its sequels.
    if title == terms:
        points += 10
    return points
"""),
      A("tests/test_search.py", r'''


def test_exact_title_comes_first(client, staff):
    for title in ("Dune Messiah", "Children of Dune", "Dune"):
        staff.post("/books", {"title": title, "author": "Frank Herbert"})
    titles = [b["title"] for b in client.get("/books/search?q=dune").json()["books"]]
    assert titles == ["Dune", "Children of Dune", "Dune Messiah"]
'''),
      ),

    C("fix(members): store emails in lower case", DIEGO,
      R("shelfd/handlers/members.py", """
    email = (data.get("email") or "").strip()
""", """
    # Addresses are case-insensitive in practice; store one spelling so
    # lookups and the uniqueness check agree.
    email = (data.get("email") or "").strip().lower()
"""),
      R("tests/test_members.py", """
def test_register_member_rejects_bad_email(client):
""", """
def test_email_is_stored_in_lower_case(client):
    response = client.post("/members", {"name": "Ada", "email": "Ada.Lovelace@Example.org"})
    assert response.json()["email"] == "ada.lovelace@example.org"


def test_register_member_rejects_bad_email(client):
"""),
      ),

    C("Reject duplicate member emails", DIEGO,
      R("shelfd/storage/migrations.py", """
    ],
]
""", """
    ],
    # 5: one member per email address. Fails if duplicates exist: merge
    # them by hand first (see CHANGELOG).
    [
        "CREATE UNIQUE INDEX members_email ON members(lower(email))",
    ],
]
"""),
      R("shelfd/storage/members.py", """
    def search(self, text: str, limit: int = 20, offset: int = 0) -> list[Member]:
""", """
    def find_by_email(self, email: str) -> Member | None:
        row = self.db.query_one("SELECT * FROM members WHERE lower(email) = lower(?)", (email,))
        return _row_to_member(row) if row else None

    def search(self, text: str, limit: int = 20, offset: int = 0) -> list[Member]:
"""),
      R("shelfd/handlers/members.py", """
from ..errors import BadRequest, NotFound
""", """
from ..errors import BadRequest, Conflict, NotFound
"""),
      R("shelfd/handlers/members.py", """
        raise BadRequest("name and a valid email are required")
""", """
        raise BadRequest("name and a valid email are required")
    if app.members.find_by_email(email):
        raise Conflict("a member with this email is already registered")
"""),
      A("tests/test_members.py", r'''


def test_duplicate_email_is_rejected(client):
    client.post("/members", {"name": "Ada", "email": "ada@example.org"})
    response = client.post("/members", {"name": "Ada L.", "email": "ADA@example.org"})
    assert response.status == 409
'''),
      R("CHANGELOG.md", """
### Fixed
""", """
### Fixed

- Member emails are stored in lower case and must be unique. Upgrading
  fails on a database with duplicate addresses; merge those members first.
"""),
      ),

    C("Log each request with its duration", MAYA,
      R("shelfd/middleware.py", """
\"\"\"Cross-cutting response handling: CORS for the browser client.\"\"\"

from __future__ import annotations

from .http import Request, Response
""", """
\"\"\"Cross-cutting request handling: CORS for the browser client, access log.\"\"\"

from __future__ import annotations

import logging
import time

from .http import Request, Response

access_log = logging.getLogger("shelfd.access")
"""),
      A("shelfd/middleware.py", r'''


def log_request(request: Request, response: Response, started: float) -> None:
    elapsed_ms = (time.perf_counter() - started) * 1000
    access_log.info(
        "%s %s %s %d %.1fms",
        request.remote_addr or "-", request.method, request.path, response.status, elapsed_ms,
    )
'''),
      R("shelfd/app.py", """
from collections.abc import Callable, Iterable
""", """
import time
from collections.abc import Callable, Iterable
"""),
      R("shelfd/app.py", """
from .middleware import apply_cors
""", """
from .middleware import apply_cors, log_request
"""),
      R("shelfd/app.py", """
    def handle(self, request: Request) -> Response:
        if request.method == "OPTIONS":
""", """
    def handle(self, request: Request) -> Response:
        started = time.perf_counter()
        if request.method == "OPTIONS":
"""),
      R("shelfd/app.py", """
        return apply_cors(request, response, self.settings.cors_origin_list)
""", """
        response = apply_cors(request, response, self.settings.cors_origin_list)
        log_request(request, response, started)
        return response
"""),
      R("shelfd/cli.py", """
import argparse
import sys
""", """
import argparse
import logging
import sys
"""),
      R("shelfd/cli.py", """
    port = args.port or settings.port
    app = create_app(settings)
""", """
    port = args.port or settings.port
    logging.basicConfig(
        level=logging.DEBUG if settings.debug else logging.INFO,
        format="%(asctime)s %(name)s %(message)s",
    )
    app = create_app(settings)
"""),
      ),

    C("Close the database when the server shuts down", MAYA,
      R("shelfd/app.py", """
    def now(self) -> datetime:
        return self.clock()
""", """
    def now(self) -> datetime:
        return self.clock()

    def close(self) -> None:
        self.db.close()
"""),
      R("shelfd/cli.py", """
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0
""", """
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            # Closing checkpoints the WAL, so the .db file is whole on its own.
            app.close()
    return 0
"""),
      R("shelfd/cli.py", """
    sent = send_overdue_reminders(app, mailer_from_settings(settings), app.now())
    print(f"sent {sent} reminder(s)")
""", """
    sent = send_overdue_reminders(app, mailer_from_settings(settings), app.now())
    app.close()
    print(f"sent {sent} reminder(s)")
"""),
      ),

    C("Batch overdue reminders into one email per member", MAYA,
      R("shelfd/notify/reminders.py", """
from datetime import datetime
from typing import TYPE_CHECKING
""", """
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING
"""),
      R("shelfd/notify/reminders.py", """
def overdue_email(member: Member, book: Book, loan: Loan, now: datetime) -> Email:
    days = (now - loan.due_at).days
    fee = fee_cents(loan, now)
    body = (
        f"Hello {member.name},\\n\\n"
        f'"{book.title}" was due back on {loan.due_at:%d %B %Y}, {days} days ago.\\n'
        f"The late fee so far is ${fee / 100:.2f}.\\n\\n"
        "Please bring it back on your next visit.\\n"
    )
    return Email(to=member.email, subject=f"Overdue: {book.title}", body=body)


def send_overdue_reminders(app: App, mailer: Mailer, now: datetime) -> int:
    \"\"\"Email every borrower with an overdue loan. Returns how many were sent.\"\"\"
    sent = 0
    for loan in app.loans.overdue(now):
        member = app.members.get(loan.member_id)
        book = app.books.get(loan.book_id)
        mailer.send(overdue_email(member, book, loan, now))
        sent += 1
    return sent
""", """
def overdue_email(member: Member, items: list[tuple[Book, Loan]], now: datetime) -> Email:
    lines = []
    total = 0
    for book, loan in items:
        fee = fee_cents(loan, now)
        total += fee
        lines.append(f'- "{book.title}", due {loan.due_at:%d %B %Y} (${fee / 100:.2f} so far)')
    subject = f"Overdue: {items[0][0].title}" if len(items) == 1 else f"{len(items)} overdue books"
    body = (
        f"Hello {member.name},\\n\\n"
        "These books are overdue:\\n\\n"
        + "\\n".join(lines)
        + f"\\n\\nLate fees so far: ${total / 100:.2f}.\\n"
        "Please bring them back on your next visit.\\n"
    )
    return Email(to=member.email, subject=subject, body=body)


def send_overdue_reminders(app: App, mailer: Mailer, now: datetime) -> int:
    \"\"\"Email each borrower with overdue loans once, listing all of them.

    Returns the number of emails sent.
    \"\"\"
    by_member: dict[int, list[Loan]] = defaultdict(list)
    for loan in app.loans.overdue(now):
        by_member[loan.member_id].append(loan)
    for member_id, loans in by_member.items():
        member = app.members.get(member_id)
        items = [(app.books.get(loan.book_id), loan) for loan in loans]
        mailer.send(overdue_email(member, items, now))
    return len(by_member)
"""),
      A("tests/test_reminders.py", r'''


def test_one_email_per_member_listing_every_late_book(app):
    first = add_loan(app, "First", "reader@example.org", due_in_days=-2)
    second = app.books.add(Book(None, "Second", "Some Author"))
    app.loans.open(second.id, first.member_id, NOW - timedelta(days=30), NOW - timedelta(days=1))
    mailer = ConsoleMailer(stream=io.StringIO())
    assert send_overdue_reminders(app, mailer, NOW) == 1
    email = mailer.sent[0]
    assert email.subject == "2 overdue books"
    assert '"First"' in email.body and '"Second"' in email.body
    assert "Late fees so far: $0.75" in email.body
'''),
      R("CHANGELOG.md", """
### Changed
""", """
### Changed

- Overdue reminders come as one email per member listing every late book,
  instead of one email per loan.
"""),
      body="""
A member with five late books got five emails every morning, and a few
replied asking us to stop.
"""),

    C("Add --dry-run to send-reminders", DIEGO,
      R("shelfd/cli.py", """
from .notify import mailer_from_settings
""", """
from .notify import ConsoleMailer, mailer_from_settings
"""),
      R("shelfd/cli.py", """
    app = create_app(settings)
    sent = send_overdue_reminders(app, mailer_from_settings(settings), app.now())
""", """
    app = create_app(settings)
    # A dry run prints the emails whatever smtp_host says.
    mailer = ConsoleMailer() if args.dry_run else mailer_from_settings(settings)
    sent = send_overdue_reminders(app, mailer, app.now())
"""),
      R("shelfd/cli.py", """
    reminders.set_defaults(func=cmd_send_reminders)
""", """
    reminders.add_argument(
        "--dry-run", action="store_true", help="print the emails instead of sending them"
    )
    reminders.set_defaults(func=cmd_send_reminders)
"""),
      R("docs/deployment.md", """
Overdue reminders are a separate job. Run it daily from cron or a systemd
timer:
""", """
Overdue reminders are a separate job. Check what it would send with
`shelfd send-reminders --dry-run`, then run it daily from cron or a
systemd timer:
"""),
      ),

    C("Make the SMTP timeout configurable", DIEGO,
      R("shelfd/config.py", """
    smtp_port: int = 25
""", """
    smtp_port: int = 25
    smtp_timeout_seconds: int = 10
"""),
      R("shelfd/notify/mailer.py", """
    def __init__(self, host: str, port: int, sender: str) -> None:
        self.host = host
        self.port = port
        self.sender = sender
""", """
    def __init__(self, host: str, port: int, sender: str, timeout: float = 10) -> None:
        self.host = host
        self.port = port
        self.sender = sender
        self.timeout = timeout
"""),
      R("shelfd/notify/mailer.py", """
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
""", """
        with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
"""),
      R("shelfd/notify/mailer.py", """
        return SmtpMailer(settings.smtp_host, settings.smtp_port, settings.mail_from)
""", """
        return SmtpMailer(
            settings.smtp_host,
            settings.smtp_port,
            settings.mail_from,
            timeout=settings.smtp_timeout_seconds,
        )
"""),
      R("docs/configuration.md", """
| `smtp_port` | `25` | Mail server port. |
""", """
| `smtp_port` | `25` | Mail server port. |
| `smtp_timeout_seconds` | `10` | Give up on the mail server after this long. |
"""),
      ),

    C("Fix page count when total is not a multiple of per_page", DIEGO,
      R("shelfd/pagination.py", """
        "pages": total // page.size,
""", """
        "pages": -(-total // page.size),  # ceiling division
"""),
      W("tests/test_pagination.py", r'''
from shelfd.pagination import Page, paginated


def test_partial_last_page_is_counted():
    assert paginated([], Page(1, 20), total=41)["pages"] == 3


def test_exact_multiple():
    assert paginated([], Page(1, 20), total=40)["pages"] == 2


def test_no_items_means_no_pages():
    assert paginated([], Page(1, 20), total=0)["pages"] == 0


def test_offset():
    assert Page(3, 10).offset == 20
'''),
      body="""
41 books at 20 per page reported 2 pages, so the web client never
offered the third.
"""),

    C("Cap per_page at 100", TOMASZ,
      R("shelfd/pagination.py", """
DEFAULT_PER_PAGE = 20
""", """
DEFAULT_PER_PAGE = 20
# Bounds the work one request can ask of the database.
MAX_PER_PAGE = 100
"""),
      R("shelfd/pagination.py", """
    return Page(max(number, 1), max(size, 1))
""", """
    return Page(max(number, 1), min(max(size, 1), MAX_PER_PAGE))
"""),
      R("tests/test_pagination.py", """
from shelfd.pagination import Page, paginated
""", """
from shelfd.http import Request
from shelfd.pagination import MAX_PER_PAGE, Page, page_from_request, paginated


def test_per_page_is_capped():
    request = Request("GET", "/books", query={"per_page": ["5000"]})
    assert page_from_request(request).size == MAX_PER_PAGE
"""),
      R("docs/api.md", """
List endpoints are paginated: pass `page` (from 1) and `per_page` (default
20).""", """
List endpoints are paginated: pass `page` (from 1) and `per_page` (default
20, at most 100)."""),
      ),

    C("chore: bump typescript to 5.4", PRIYA,
      W("web/package.json", package_json("0.1.0", TS_54_DEPS)),
      W("web/package-lock.json", package_lock("0.1.0", TS_54_DEPS, TS_54_RESOLVED)),
      ),

    C("Retry GET requests once when the API answers 503", PRIYA,
      R("web/src/api/client.ts", """
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  ) {}
""", """
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
    private readonly retryDelayMs = 500,
  ) {}
"""),
      R("web/src/api/client.ts", """
  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
""", """
  private async request<T>(method: string, path: string, body?: unknown, attempt = 0): Promise<T> {
"""),
      R("web/src/api/client.ts", """
    if (!response.ok) {
      throw new ApiError(response.status, await errorMessage(response));
""", """
    // A 503 usually means workers restarting during a deploy. GETs are safe
    // to repeat; anything else might apply twice.
    if (response.status === 503 && method === 'GET' && attempt === 0) {
      await sleep(this.retryDelayMs);
      return this.request<T>(method, path, body, attempt + 1);
    }
    if (!response.ok) {
      throw new ApiError(response.status, await errorMessage(response));
"""),
      A("web/src/api/client.ts", """

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
"""),
      R("web/src/api/client.test.ts", """
  it('copes with HTML error pages', async () => {
""", """
  it('retries a GET once on 503', async () => {
    const fetchImpl = vi
      .fn()
      .mockResolvedValueOnce(jsonResponse(503, { error: 'restarting' }))
      .mockResolvedValueOnce(jsonResponse(200, { ok: true }));
    const client = new ApiClient('http://api', null, fetchImpl, 0);
    await expect(client.get('/books')).resolves.toEqual({ ok: true });
    expect(fetchImpl).toHaveBeenCalledTimes(2);
  });

  it('does not retry a POST', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(jsonResponse(503, { error: 'restarting' }));
    const client = new ApiClient('http://api', null, fetchImpl, 0);
    await expect(client.post('/loans', {})).rejects.toMatchObject({ status: 503 });
    expect(fetchImpl).toHaveBeenCalledTimes(1);
  });

  it('copes with HTML error pages', async () => {
"""),
      ),

    C("Include accrued late fees in member details", TOMASZ,
      R("shelfd/fees.py", """
from datetime import datetime
""", """
from collections.abc import Iterable
from datetime import datetime
"""),
      A("shelfd/fees.py", r'''


def accrued_cents(loans: Iterable[Loan], now: datetime) -> int:
    """Late fees building up on the open loans among ``loans``."""
    return sum(fee_cents(loan, now) for loan in loans if loan.is_open)
'''),
      R("shelfd/handlers/members.py", """
from ..errors import BadRequest, Conflict, NotFound
""", """
from ..errors import BadRequest, Conflict, NotFound
from ..fees import accrued_cents
"""),
      R("shelfd/handlers/members.py", """
        raise NotFound("member not found")
    return json_response(member.to_dict())
""", """
        raise NotFound("member not found")
    body = member.to_dict()
    body["fees_cents"] = accrued_cents(app.loans.for_member(member.id), app.now())
    return json_response(body)
"""),
      R("tests/test_members.py", """
def test_register_member(client):
""", """
from datetime import timedelta

from shelfd.models import Book

from conftest import NOW


def test_register_member(client):
"""),
      A("tests/test_members.py", r'''


def test_member_details_include_accrued_fees(app, client):
    member = client.post("/members", {"name": "Ada", "email": "ada@example.org"}).json()
    book = app.books.add(Book(None, "Late", "Author"))
    due = NOW - timedelta(days=4)
    app.loans.open(book.id, member["id"], due - timedelta(days=21), due)
    assert client.get(f"/members/{member['id']}").json()["fees_cents"] == 100
'''),
      ),

    C("Show fees owed on the member card", PRIYA,
      R("web/src/types.ts", """
  joined_at: string;
}
""", """
  joined_at: string;
  /** Late fees accruing on open loans; only on GET /members/{id}. */
  fees_cents?: number;
}
"""),
      R("web/src/components/MemberCard.ts", """
import { formatDate } from '../utils/format';
""", """
import { formatCents, formatDate } from '../utils/format';
"""),
      R("web/src/components/MemberCard.ts", """
    `${open} book${open === 1 ? '' : 's'} on loan</p>` +
    '</article>'
""", """
    `${open} book${open === 1 ? '' : 's'} on loan</p>` +
    (member.fees_cents ? `<p class="fees">Owes ${formatCents(member.fees_cents)}</p>` : '') +
    '</article>'
"""),
      A("web/src/components/MemberCard.test.ts", """

describe('memberCardHtml fees', () => {
  it('shows fees only when something is owed', () => {
    expect(memberCardHtml({ ...member, fees_cents: 150 }, [])).toContain('Owes $1.50');
    expect(memberCardHtml({ ...member, fees_cents: 0 }, [])).not.toContain('Owes');
  });
});
"""),
      ),

    C("Add import-books command for CSV catalogues", MAYA,
      R("shelfd/storage/books.py", """
import sqlite3
""", """
import sqlite3
from collections.abc import Iterable
"""),
      R("shelfd/storage/books.py", """
    def get(self, book_id: int) -> Book | None:
""", """
    def add_many(self, books: Iterable[Book]) -> int:
        rows = [(book.title, book.author, book.isbn, book.copies) for book in books]
        with self.db.transaction() as cur:
            cur.executemany(
                "INSERT INTO books (title, author, isbn, copies) VALUES (?, ?, ?, ?)", rows
            )
        return len(rows)

    def get(self, book_id: int) -> Book | None:
"""),
      R("shelfd/cli.py", """
import argparse
import logging
import sys
""", """
import argparse
import csv
import logging
import sys
from pathlib import Path
"""),
      R("shelfd/cli.py", """
from .config import load_settings
""", """
from .config import load_settings
from .models import Book
"""),
      R("shelfd/cli.py", """
def cmd_issue_token(args: argparse.Namespace) -> int:
""", """
def read_catalogue(path: Path) -> list[Book]:
    \"\"\"Books from a CSV file with a header row: title, author, and optionally isbn, copies.\"\"\"
    # utf-8-sig: spreadsheet exports often start with a byte-order mark.
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return [
            Book(
                id=None,
                title=row["title"].strip(),
                author=row["author"].strip(),
                isbn=(row.get("isbn") or "").strip() or None,
                copies=int(row.get("copies") or 1),
            )
            for row in csv.DictReader(fh)
            if (row.get("title") or "").strip()
        ]


def cmd_import_books(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    app = create_app(settings)
    count = app.books.add_many(read_catalogue(Path(args.csv)))
    app.close()
    print(f"imported {count} book(s)")
    return 0


def cmd_issue_token(args: argparse.Namespace) -> int:
"""),
      R("shelfd/cli.py", """
    token = sub.add_parser("issue-token", help="print a staff token")
""", """
    import_books = sub.add_parser("import-books", help="add books from a CSV file")
    import_books.add_argument("csv", help="columns: title, author, isbn (optional), copies (optional)")
    import_books.set_defaults(func=cmd_import_books)

    token = sub.add_parser("issue-token", help="print a staff token")
"""),
      W("tests/test_cli.py", r'''
from shelfd.cli import main, read_catalogue


def test_read_catalogue_skips_blank_titles_and_handles_a_bom(tmp_path):
    path = tmp_path / "books.csv"
    path.write_text("\ufefftitle,author,isbn,copies\nDune,Frank Herbert,,2\n,Nobody,,\n", encoding="utf-8")
    books = read_catalogue(path)
    assert [(book.title, book.isbn, book.copies) for book in books] == [("Dune", None, 2)]


def test_import_books_command(tmp_path, monkeypatch, capsys):
    path = tmp_path / "books.csv"
    path.write_text("title,author\nKindred,Octavia E. Butler\nBeloved,Toni Morrison\n")
    monkeypatch.setenv("SHELFD_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("SHELFD_DATABASE_PATH", str(tmp_path / "shelfd.db"))
    assert main(["import-books", str(path)]) == 0
    assert "imported 2 book(s)" in capsys.readouterr().out
'''),
      R("README.md", """
The API listens on http://127.0.0.1:8080;""", """
Load an existing catalogue with `shelfd import-books books.csv` (columns
`title`, `author`, optionally `isbn` and `copies`).

The API listens on http://127.0.0.1:8080;"""),
      ),

    C("Warn about unknown keys in shelfd.toml instead of crashing", TOMASZ,
      R("shelfd/config.py", """
import os
import tomllib
""", """
import os
import tomllib
import warnings
"""),
      R("shelfd/config.py", """
    if config_path.is_file():
        with config_path.open("rb") as fh:
            values.update(tomllib.load(fh).get("shelfd", {}))
""", """
    if config_path.is_file():
        with config_path.open("rb") as fh:
            section = tomllib.load(fh).get("shelfd", {})
        known = {field.name for field in fields(Settings)}
        for key in sorted(set(section) - known):
            # A typo should not stop the server, nor pass silently.
            warnings.warn(f"{config_path}: unknown setting {key!r} ignored", stacklevel=2)
        values.update({key: value for key, value in section.items() if key in known})
"""),
      R("tests/test_config.py", """
from shelfd.config import Settings, load_settings
""", """
import pytest

from shelfd.config import Settings, load_settings
"""),
      A("tests/test_config.py", r'''


def test_unknown_keys_warn_instead_of_crashing(tmp_path):
    path = tmp_path / "shelfd.toml"
    path.write_text("[shelfd]\nport = 9000\nloan_dayz = 14\n")
    with pytest.warns(UserWarning, match="loan_dayz"):
        settings = load_settings(path, environ={})
    assert settings.port == 9000
    assert settings.loan_days == 21
'''),
      body="""
Settings(**values) raised TypeError on any key it did not know, so a typo
in shelfd.toml took the whole service down with a traceback.
"""),

    C("Update CHANGELOG", MAYA,
      R("CHANGELOG.md", """
- Holds: members can queue for a book that is out and are emailed when it
  comes back (#34).
""", """
- Holds: members can queue for a book that is out and are emailed when it
  comes back (#34).
- Loan renewals (`POST /loans/{id}/renew`), at most `max_renewals` times and
  not while someone else has a hold.
- `X-RateLimit-Limit` and `X-RateLimit-Remaining` response headers.
- `shelfd import-books` loads a catalogue from CSV.
- `shelfd send-reminders --dry-run`.
- `smtp_timeout_seconds` setting.
- Member details include `fees_cents`; the member card shows it.
"""),
      R("CHANGELOG.md", """
- Checking out a book when every copy is already on loan is refused with 409.
""", """
- Checking out a book when every copy is already on loan is refused with 409.
- `pages` in paginated answers counts a partial last page.
- `per_page` is capped at 100.
- Catalogue search treats `_` and `%` literally.
- Token signatures are compared in constant time.
- Unknown keys in `shelfd.toml` are ignored with a warning instead of crashing.
"""),
      ),

    C("Let staff deactivate members", DIEGO,
      R("shelfd/storage/migrations.py", """
    ],
]
""", """
    ],
    # 6: members are deactivated, never deleted: their loans must survive
    [
        "ALTER TABLE members ADD COLUMN active INTEGER NOT NULL DEFAULT 1",
    ],
]
"""),
      R("shelfd/models.py", """
    joined_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
""", """
    joined_at: datetime | None = None
    active: bool = True

    def to_dict(self) -> dict[str, Any]:
"""),
      R("shelfd/storage/members.py", """
        joined_at=datetime.fromisoformat(row["joined_at"]),
    )
""", """
        joined_at=datetime.fromisoformat(row["joined_at"]),
        active=bool(row["active"]),
    )
"""),
      R("shelfd/storage/members.py", """
    def find_by_email(self, email: str) -> Member | None:
""", """
    def deactivate(self, member_id: int) -> None:
        with self.db.transaction() as cur:
            cur.execute("UPDATE members SET active = 0 WHERE id = ?", (member_id,))

    def find_by_email(self, email: str) -> Member | None:
"""),
      R("shelfd/handlers/members.py", """
def search_members(app: App, request: Request) -> Response:
""", """
def deactivate_member(app: App, request: Request) -> Response:
    require_staff(app, request)
    member = app.members.get(request.params["member_id"])
    if member is None:
        raise NotFound("member not found")
    app.members.deactivate(member.id)
    return Response(204)


def search_members(app: App, request: Request) -> Response:
"""),
      R("shelfd/handlers/members.py", """
    router.add("GET", "/members/<member_id:int>", partial(get_member, app))
""", """
    router.add("GET", "/members/<member_id:int>", partial(get_member, app))
    router.add("DELETE", "/members/<member_id:int>", partial(deactivate_member, app))
"""),
      A("tests/test_members.py", r'''


def test_deactivated_member_is_kept_but_inactive(client, staff):
    member = client.post("/members", {"name": "Ada", "email": "ada@example.org"}).json()
    assert member["active"] is True
    assert client.request("DELETE", f"/members/{member['id']}").status == 401
    assert staff.request("DELETE", f"/members/{member['id']}").status == 204
    assert client.get(f"/members/{member['id']}").json()["active"] is False
'''),
      R("docs/api.md", """
| GET | `/members/{id}/loans` |""", """
| DELETE | `/members/{id}` | Staff. Deactivate a member; their history stays. |
| GET | `/members/{id}/loans` |"""),
      ),

    C("Refuse checkouts for deactivated members", DIEGO,
      R("shelfd/errors.py", """
class NotFound(HTTPError):
""", """
class Forbidden(HTTPError):
    status = 403


class NotFound(HTTPError):
"""),
      R("shelfd/handlers/loans.py", """
from ..errors import Conflict, NotFound
""", """
from ..errors import Conflict, Forbidden, NotFound
"""),
      R("shelfd/handlers/loans.py", """
        raise NotFound("unknown book or member")
    if app.loans.count_open_for_book(book.id) >= book.copies:
""", """
        raise NotFound("unknown book or member")
    if not member.active:
        raise Forbidden("member is deactivated")
    if app.loans.count_open_for_book(book.id) >= book.copies:
"""),
      A("tests/test_loans.py", r'''


def test_deactivated_members_cannot_borrow(client, staff, book_and_member):
    book_id, member_id = book_and_member
    staff.request("DELETE", f"/members/{member_id}")
    response = client.post("/loans", {"book_id": book_id, "member_id": member_id})
    assert response.status == 403
'''),
      ),

    C("refactor(storage): share timestamp parsing between repositories", TOMASZ,
      R("shelfd/storage/db.py", """
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
""", """
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
"""),
      R("shelfd/storage/db.py", """
class Database:
""", """
def parse_timestamp(value: str | None) -> datetime | None:
    \"\"\"Timestamps are stored as ISO 8601 text; NULL stays None.\"\"\"
    return datetime.fromisoformat(value) if value else None


class Database:
"""),
      R("shelfd/storage/loans.py", """
from .db import Database


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
""", """
from .db import Database, parse_timestamp
"""),
      R("shelfd/storage/loans.py", """
        borrowed_at=_parse(row["borrowed_at"]),
        due_at=_parse(row["due_at"]),
        returned_at=_parse(row["returned_at"]),
""", """
        borrowed_at=parse_timestamp(row["borrowed_at"]),
        due_at=parse_timestamp(row["due_at"]),
        returned_at=parse_timestamp(row["returned_at"]),
"""),
      R("shelfd/storage/holds.py", """
from .db import Database


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
""", """
from .db import Database, parse_timestamp
"""),
      R("shelfd/storage/holds.py", """
        placed_at=_parse(row["placed_at"]),
        notified_at=_parse(row["notified_at"]),
        cancelled_at=_parse(row["cancelled_at"]),
""", """
        placed_at=parse_timestamp(row["placed_at"]),
        notified_at=parse_timestamp(row["notified_at"]),
        cancelled_at=parse_timestamp(row["cancelled_at"]),
"""),
      R("shelfd/storage/members.py", """
import sqlite3
from datetime import datetime

from ..models import Member
from .db import Database
""", """
import sqlite3

from ..models import Member
from .db import Database, parse_timestamp
"""),
      R("shelfd/storage/members.py", """
        joined_at=datetime.fromisoformat(row["joined_at"]),
""", """
        joined_at=parse_timestamp(row["joined_at"]),
"""),
      ),

    C("Bump actions/checkout from 3 to 4", DEPENDABOT,
      R(".github/workflows/ci.yml", """
  python:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v3
""", """
  python:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
"""),
      R(".github/workflows/ci.yml", """
        working-directory: web
    steps:
      - uses: actions/checkout@v3
""", """
        working-directory: web
    steps:
      - uses: actions/checkout@v4
"""),
      committer=GITHUB,
      body="""
Bumps [actions/checkout](https://github.com/actions/checkout) from 3 to 4.
- [Release notes](https://github.com/actions/checkout/releases)
- [Changelog](https://github.com/actions/checkout/blob/main/CHANGELOG.md)
- [Commits](https://github.com/actions/checkout/compare/v3...v4)

---
updated-dependencies:
- dependency-name: actions/checkout
  dependency-type: direct:production
  update-type: version-update:semver-major
...

Signed-off-by: dependabot[bot] <support@github.com>
"""),

    C("Show a loading state while searching", PRIYA,
      R("web/src/components/SearchBox.ts", """
  onSearch: (query: string) => void,
""", """
  onSearch: (query: string) => void | Promise<void>,
"""),
      R("web/src/components/SearchBox.ts", """
  const run = debounce((query: string) => {
    // An empty box means "show everything again"; one letter is too broad.
    if (query.length === 0 || query.length >= minLength) onSearch(query);
  }, waitMs);
""", """
  const run = debounce(async (query: string) => {
    // An empty box means "show everything again"; one letter is too broad.
    if (query.length > 0 && query.length < minLength) return;
    input.setAttribute('aria-busy', 'true');
    try {
      await onSearch(query);
    } finally {
      input.removeAttribute('aria-busy');
    }
  }, waitMs);
"""),
      R("web/src/main.ts", """
import { mountSearchBox } from './components/SearchBox';
""", """
import { mountSearchBox } from './components/SearchBox';
import { escapeHtml } from './utils/html';
"""),
      R("web/src/main.ts", """
    mountSearchBox(search, async (query) => {
      const books = query ? await searchBooks(client, query) : (await listBooks(client)).items;
      renderBookList(list, books);
    });
""", """
    mountSearchBox(search, async (query) => {
      try {
        const books = query ? await searchBooks(client, query) : (await listBooks(client)).items;
        renderBookList(list, books);
      } catch (err) {
        list.innerHTML = `<p class="error">Search failed: ${escapeHtml((err as Error).message)}</p>`;
      }
    });
"""),
      ),

    C("Block checkouts for members owing more than the fee limit", TOMASZ,
      R("shelfd/config.py", """
    max_renewals: int = 2
""", """
    max_renewals: int = 2
    # Members whose accrued late fees exceed this cannot borrow more.
    max_fees_cents: int = 500
"""),
      R("shelfd/handlers/loans.py", """
from ..fees import fee_cents
""", """
from ..fees import accrued_cents, fee_cents
"""),
      R("shelfd/handlers/loans.py", """
    now = app.now()
    due_at = now + timedelta(days=app.settings.loan_days)
""", """
    now = app.now()
    owed = accrued_cents(app.loans.for_member(member.id), now)
    if owed > app.settings.max_fees_cents:
        raise Forbidden(f"member owes ${owed / 100:.2f} in late fees")
    due_at = now + timedelta(days=app.settings.loan_days)
"""),
      A("tests/test_loans.py", r'''


def test_members_owing_too_much_cannot_borrow(app, client, staff, book_and_member):
    book_id, member_id = book_and_member
    other = staff.post("/books", {"title": "Jonathan Strange", "author": "Susanna Clarke"}).json()
    due = NOW - timedelta(days=30)
    app.loans.open(other["id"], member_id, due - timedelta(days=21), due)
    response = client.post("/loans", {"book_id": book_id, "member_id": member_id})
    assert response.status == 403
    assert "$7.50" in response.json()["error"]
'''),
      R("docs/configuration.md", """
| `max_renewals` | `2` | Renewals allowed per loan. |
""", """
| `max_renewals` | `2` | Renewals allowed per loan. |
| `max_fees_cents` | `500` | Members owing more in late fees cannot borrow. |
"""),
      R("CHANGELOG.md", """
- Member details include `fees_cents`; the member card shows it.
""", """
- Member details include `fees_cents`; the member card shows it.
- Checkouts are refused (403) for members owing more than `max_fees_cents`.
"""),
      ),

    C("chore: lint with ruff in CI", DIEGO,
      R("pyproject.toml", """
test = ["pytest>=8.0"]
""", """
test = ["pytest>=8.0"]
dev = ["ruff>=0.3"]
"""),
      A("pyproject.toml", """

[tool.ruff]
line-length = 100
target-version = "py311"

[tool.ruff.lint]
select = ["E", "F", "I", "B", "UP"]
"""),
      R(".github/workflows/ci.yml", """
      - name: Install
        run: pip install -e '.[test]'
""", """
      - name: Install
        run: pip install -e '.[test,dev]'
      - name: Lint
        run: ruff check .
"""),
      ),

    C("Release 0.2.0", MAYA,
      R("pyproject.toml", 'version = "0.2.0.dev0"', 'version = "0.2.0"'),
      R("shelfd/__init__.py", '__version__ = "0.2.0.dev0"', '__version__ = "0.2.0"'),
      W("web/package.json", package_json("0.2.0", TS_54_DEPS)),
      W("web/package-lock.json", package_lock("0.2.0", TS_54_DEPS, TS_54_RESOLVED)),
      R("CHANGELOG.md", """
## [Unreleased]
""", """
## [Unreleased]

## [0.2.0] - 2024-02-25
"""),
      R("CHANGELOG.md", """
[Unreleased]: https://github.com/shelfd/shelfd/compare/v0.1.0...HEAD
""", """
[Unreleased]: https://github.com/shelfd/shelfd/compare/v0.2.0...HEAD
[0.2.0]: https://github.com/shelfd/shelfd/compare/v0.1.0...v0.2.0
"""),
      ),
    Tag("v0.2.0"),

    C("Update README quick start", DIEGO,
      R("README.md", """
```sh
python -m venv .venv && . .venv/bin/activate
pip install -e '.[test]'
shelfd init-db
SHELFD_SECRET_KEY=change-me shelfd serve
```
""", """
```sh
python -m venv .venv && . .venv/bin/activate
pip install -e '.[test]'
export SHELFD_SECRET_KEY=change-me
shelfd init-db
shelfd serve
```

In another terminal, get a token for the staff-only endpoints:

```sh
SHELFD_SECRET_KEY=change-me shelfd issue-token librarian
```
"""),
      ),

    C("ci: test on Python 3.12 as well", DIEGO,
      R(".github/workflows/ci.yml", """
  python:
    runs-on: ubuntu-latest
    steps:
""", """
  python:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.11", "3.12"]
    steps:
"""),
      R(".github/workflows/ci.yml", """
          python-version: "3.11"
""", """
          python-version: ${{ matrix.python-version }}
"""),
      ),

    C("fix(notify): set Date and Message-ID headers on outgoing mail", MAYA,
      R("shelfd/notify/mailer.py", """
from email.message import EmailMessage
""", """
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
"""),
      R("shelfd/notify/mailer.py", """
        message["Subject"] = email.subject
""", """
        message["Subject"] = email.subject
        # Some providers file mail without these as spam; smtplib adds neither.
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = make_msgid(domain=self.sender.partition("@")[2] or None)
"""),
      W("tests/test_mailer.py", r'''
from shelfd.notify.mailer import Email, SmtpMailer


def test_build_sets_the_standard_headers():
    mailer = SmtpMailer("smtp.example.org", 587, "library@example.org")
    message = mailer.build(Email("ada@example.org", "Overdue: Dune", "Hello"))
    assert message["From"] == "library@example.org"
    assert message["To"] == "ada@example.org"
    assert message["Date"].endswith("+0000")
    assert message["Message-ID"].endswith("@example.org>")
'''),
      ),

    C("Add pagination controls to the book list", PRIYA,
      R("web/src/components/BookList.ts", """
import type { Book } from '../types';
""", """
import type { Book, Page } from '../types';
"""),
      R("web/src/components/BookList.ts", """
export function renderBookList(container: HTMLElement, books: Book[]): void {
""", """
export function pagerHtml(page: Page<unknown>): string {
  if (page.pages <= 1) return '';
  const prev = page.page > 1 ? `<button data-page="${page.page - 1}">Previous</button>` : '';
  const next = page.page < page.pages ? `<button data-page="${page.page + 1}">Next</button>` : '';
  return `<nav class="pager">${prev}<span>Page ${page.page} of ${page.pages}</span>${next}</nav>`;
}

export function renderBookList(container: HTMLElement, books: Book[]): void {
"""),
      R("web/src/components/BookList.test.ts", """
import { bookListHtml } from './BookList';
""", """
import { bookListHtml, pagerHtml } from './BookList';

describe('pagerHtml', () => {
  const page = { items: [], page: 2, per_page: 20, total: 45, pages: 3 };

  it('offers both directions in the middle', () => {
    const html = pagerHtml(page);
    expect(html).toContain('data-page="1"');
    expect(html).toContain('data-page="3"');
    expect(html).toContain('Page 2 of 3');
  });

  it('is empty for a single page', () => {
    expect(pagerHtml({ ...page, page: 1, pages: 1 })).toBe('');
  });
});
"""),
      R("web/src/main.ts", """
import { renderBookList } from './components/BookList';
""", """
import { pagerHtml, renderBookList } from './components/BookList';
"""),
      R("web/src/main.ts", """
  if (!list) return;
  renderBookList(list, (await listBooks(client)).items);
""", """
  if (!list) return;
  const showPage = async (number: number): Promise<void> => {
    const page = await listBooks(client, number);
    renderBookList(list, page.items);
    list.insertAdjacentHTML('beforeend', pagerHtml(page));
  };
  list.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLElement>('[data-page]');
    if (button) void showPage(Number(button.dataset.page));
  });
  await showPage(1);
"""),
      ),
]
