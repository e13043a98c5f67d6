"""Phase 5: holds, built on a feature branch while main moves on, then merged."""

from .steps import (
    DIEGO, GITHUB, MAYA, PRIYA, TOMASZ, A, Branch, C, Checkout, Merge, R, Step, W,
)

PHASE_5: list[Step] = [
    Branch("tnowak/holds"),

    C("Add holds table and repository", TOMASZ,
      R("shelfd/storage/migrations.py", '''
    ],
]
''', '''
    ],
    # 3: holds, the queue of members waiting for a book
    [
        """
        CREATE TABLE holds (
            id INTEGER PRIMARY KEY,
            book_id INTEGER NOT NULL REFERENCES books(id),
            member_id INTEGER NOT NULL REFERENCES members(id),
            placed_at TEXT NOT NULL,
            notified_at TEXT,
            cancelled_at TEXT
        )
        """,
        "CREATE INDEX holds_queue ON holds(book_id, placed_at)",
    ],
]
'''),
      A("shelfd/models.py", r'''


@dataclass
class Hold:
    id: int | None
    book_id: int
    member_id: int
    placed_at: datetime
    notified_at: datetime | None = None
    cancelled_at: datetime | None = None

    @property
    def is_active(self) -> bool:
        return self.cancelled_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "book_id": self.book_id,
            "member_id": self.member_id,
            "placed_at": _iso(self.placed_at),
            "notified_at": _iso(self.notified_at),
            "cancelled_at": _iso(self.cancelled_at),
        }
'''),
      W("shelfd/storage/holds.py", r'''
"""Holds: members queueing for a book that is out on loan."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ..models import Hold
from .db import Database


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _row_to_hold(row: sqlite3.Row) -> Hold:
    return Hold(
        id=row["id"],
        book_id=row["book_id"],
        member_id=row["member_id"],
        placed_at=_parse(row["placed_at"]),
        notified_at=_parse(row["notified_at"]),
        cancelled_at=_parse(row["cancelled_at"]),
    )


class HoldRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def place(self, book_id: int, member_id: int, placed_at: datetime) -> Hold:
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO holds (book_id, member_id, placed_at) VALUES (?, ?, ?)",
                (book_id, member_id, placed_at.isoformat()),
            )
            hold_id = cur.lastrowid
        return Hold(hold_id, book_id, member_id, placed_at)

    def get(self, hold_id: int) -> Hold | None:
        row = self.db.query_one("SELECT * FROM holds WHERE id = ?", (hold_id,))
        return _row_to_hold(row) if row else None

    def cancel(self, hold_id: int, cancelled_at: datetime) -> None:
        with self.db.transaction() as cur:
            cur.execute(
                "UPDATE holds SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL",
                (cancelled_at.isoformat(), hold_id),
            )

    def mark_notified(self, hold_id: int, notified_at: datetime) -> None:
        with self.db.transaction() as cur:
            cur.execute(
                "UPDATE holds SET notified_at = ? WHERE id = ?", (notified_at.isoformat(), hold_id)
            )

    def queue(self, book_id: int) -> list[Hold]:
        """Active holds on a book, first come first served."""
        rows = self.db.query(
            "SELECT * FROM holds WHERE book_id = ? AND cancelled_at IS NULL"
            " ORDER BY placed_at, id",
            (book_id,),
        )
        return [_row_to_hold(row) for row in rows]

    def active_for_member(self, book_id: int, member_id: int) -> Hold | None:
        row = self.db.query_one(
            "SELECT * FROM holds WHERE book_id = ? AND member_id = ? AND cancelled_at IS NULL",
            (book_id, member_id),
        )
        return _row_to_hold(row) if row else None
'''),
      ),

    Checkout("main"),

    C("ci: cache pip downloads", DIEGO,
      R(".github/workflows/ci.yml", """
        with:
          python-version: "3.11"
""", """
        with:
          python-version: "3.11"
          cache: pip
"""),
      ),

    Checkout("tnowak/holds"),

    C("Add endpoints to place and cancel holds", TOMASZ,
      W("shelfd/handlers/holds.py", r'''
"""Handlers for placing and cancelling holds on books."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ..auth import require_staff
from ..errors import Conflict, NotFound
from ..http import Request, Response, json_response

if TYPE_CHECKING:
    from ..app import App
    from ..routing import Router


def place_hold(app: App, request: Request) -> Response:
    data = request.json()
    book = app.books.get(int(data.get("book_id", 0)))
    member = app.members.get(int(data.get("member_id", 0)))
    if book is None or member is None:
        raise NotFound("unknown book or member")
    if app.holds.active_for_member(book.id, member.id):
        raise Conflict("member already has a hold on this book")
    hold = app.holds.place(book.id, member.id, app.now())
    body = hold.to_dict()
    body["position"] = len(app.holds.queue(book.id))
    return json_response(body, status=201)


def cancel_hold(app: App, request: Request) -> Response:
    hold = app.holds.get(request.params["hold_id"])
    if hold is None or not hold.is_active:
        raise NotFound("hold not found")
    app.holds.cancel(hold.id, app.now())
    return Response(204)


def book_holds(app: App, request: Request) -> Response:
    require_staff(app, request)
    holds = app.holds.queue(request.params["book_id"])
    return json_response({"holds": [hold.to_dict() for hold in holds]})


def register(router: Router, app: App) -> None:
    router.add("POST", "/holds", partial(place_hold, app))
    router.add("DELETE", "/holds/<hold_id:int>", partial(cancel_hold, app))
    router.add("GET", "/books/<book_id:int>/holds", partial(book_holds, app))
'''),
      R("shelfd/app.py", """
from .handlers import books, health, loans, members
""", """
from .handlers import books, health, holds, loans, members
"""),
      R("shelfd/app.py", """
from .storage.books import BookRepository
""", """
from .storage.books import BookRepository
from .storage.holds import HoldRepository
"""),
      R("shelfd/app.py", """
        self.loans = LoanRepository(db)
""", """
        self.loans = LoanRepository(db)
        self.holds = HoldRepository(db)
"""),
      R("shelfd/app.py", """
    loans.register(app.router, app)
""", """
    loans.register(app.router, app)
    holds.register(app.router, app)
"""),
      W("tests/test_holds.py", r'''
import pytest


@pytest.fixture
def book_and_members(client, staff):
    book = staff.post("/books", {"title": "Piranesi", "author": "Susanna Clarke"}).json()
    ada = client.post("/members", {"name": "Ada", "email": "ada@example.org"}).json()
    grace = client.post("/members", {"name": "Grace", "email": "grace@example.org"}).json()
    return book["id"], ada["id"], grace["id"]


def test_holds_queue_in_order(client, staff, book_and_members):
    book_id, ada, grace = book_and_members
    first = client.post("/holds", {"book_id": book_id, "member_id": ada})
    second = client.post("/holds", {"book_id": book_id, "member_id": grace})
    assert (first.json()["position"], second.json()["position"]) == (1, 2)
    queue = staff.get(f"/books/{book_id}/holds").json()["holds"]
    assert [hold["member_id"] for hold in queue] == [ada, grace]


def test_one_hold_per_member_and_book(client, book_and_members):
    book_id, ada, _ = book_and_members
    client.post("/holds", {"book_id": book_id, "member_id": ada})
    assert client.post("/holds", {"book_id": book_id, "member_id": ada}).status == 409


def test_cancelled_hold_leaves_the_queue(client, staff, book_and_members):
    book_id, ada, grace = book_and_members
    hold_id = client.post("/holds", {"book_id": book_id, "member_id": ada}).json()["id"]
    assert client.request("DELETE", f"/holds/{hold_id}").status == 204
    client.post("/holds", {"book_id": book_id, "member_id": grace})
    queue = staff.get(f"/books/{book_id}/holds").json()["holds"]
    assert [hold["member_id"] for hold in queue] == [grace]
'''),
      ),

    Checkout("main"),

    C("Fix due dates showing a day early in some timezones", PRIYA,
      R("web/src/utils/format.ts", """
export function formatDate(iso: string): string {
  return new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  });
}
""", """
export function formatDate(iso: string): string {
  // The API speaks UTC. Formatting in the browser's zone turned a loan due
  // at 00:30 UTC into "due yesterday" for everyone west of Greenwich.
  return new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  });
}
"""),
      R("web/src/utils/format.test.ts", """
import { daysBetween, formatCents } from './format';
""", """
import { daysBetween, formatCents, formatDate } from './format';

describe('formatDate', () => {
  it('uses the UTC calendar day', () => {
    expect(formatDate('2024-03-22T00:30:00+00:00')).toBe('22 Mar 2024');
    expect(formatDate('2024-03-22T23:30:00+00:00')).toBe('22 Mar 2024');
  });
});
"""),
      ),

    Checkout("tnowak/holds"),

    C("Email the next member in the queue when a held book comes back", TOMASZ,
      R("shelfd/notify/reminders.py", """
    from ..models import Book, Loan, Member
""", """
    from ..models import Book, Hold, Loan, Member
"""),
      A("shelfd/notify/reminders.py", r'''


def hold_ready_email(member: Member, book: Book) -> Email:
    body = (
        f"Hello {member.name},\n\n"
        f'"{book.title}" is back and waiting for you at the desk.\n'
        "We will keep it for three days.\n"
    )
    return Email(to=member.email, subject=f"Ready for pickup: {book.title}", body=body)


def notify_next_hold(app: App, mailer: Mailer, book_id: int, now: datetime) -> Hold | None:
    """Tell the first member in the queue not yet notified that the book is back."""
    for hold in app.holds.queue(book_id):
        if hold.notified_at is None:
            member = app.members.get(hold.member_id)
            book = app.books.get(book_id)
            mailer.send(hold_ready_email(member, book))
            app.holds.mark_notified(hold.id, now)
            return hold
    return None
'''),
      R("shelfd/app.py", """
from .middleware import apply_cors
""", """
from .middleware import apply_cors
from .notify import mailer_from_settings
"""),
      R("shelfd/app.py", """
        self.holds = HoldRepository(db)
""", """
        self.holds = HoldRepository(db)
        self.mailer = mailer_from_settings(settings)
"""),
      R("shelfd/handlers/loans.py", """
from ..http import Request, Response, json_response
""", """
from ..http import Request, Response, json_response
from ..notify.reminders import notify_next_hold
"""),
      R("shelfd/handlers/loans.py", """
    app.loans.close(loan.id, app.now())
    returned = app.loans.get(loan.id)
""", """
    now = app.now()
    app.loans.close(loan.id, now)
    notify_next_hold(app, app.mailer, loan.book_id, now)
    returned = app.loans.get(loan.id)
"""),
      A("tests/test_holds.py", r'''


def test_returning_a_held_book_emails_the_first_in_line(app, client, book_and_members):
    book_id, ada, grace = book_and_members
    loan = client.post("/loans", {"book_id": book_id, "member_id": ada}).json()
    client.post("/holds", {"book_id": book_id, "member_id": grace})
    client.post(f"/loans/{loan['id']}/return")
    assert [email.to for email in app.mailer.sent] == ["grace@example.org"]
    assert "Piranesi" in app.mailer.sent[0].subject
'''),
      ),

    Checkout("main"),
    Merge("tnowak/holds", "Merge pull request #34 from tnowak/holds", MAYA,
          body="Book holds: queue for a book that is out, get an email when it is back",
          committer=GITHUB),

    C("Document holds in the API reference", TOMASZ,
      R("docs/api.md", """
## Health
""", """
## Holds

A member can queue for a book that is out on loan. When a copy comes back,
the first member in the queue gets an email and the hold is marked
`notified_at`.

| Method | Path | Notes |
| --- | --- | --- |
| POST | `/holds` | Body: `book_id`, `member_id`. Answers the hold with its `position` in the queue. 409 for a second hold on the same book. |
| DELETE | `/holds/{id}` | Cancel a hold. |
| GET | `/books/{id}/holds` | Staff. The queue for a book, oldest first. |

## Health
"""),
      R("CHANGELOG.md", """
- Search box in the web client.
""", """
- Search box in the web client.
- Holds: members can queue for a book that is out and are emailed when it
  comes back (#34).
"""),
      ),
]
