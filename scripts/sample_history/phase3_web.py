"""Phase 3: the TypeScript web client, CORS, a changelog and the 0.1.0 release."""

from .steps import (
    DIEGO, LOGO_PNG, MAYA, PRIYA, A, B, C, R, Step, Tag, W, package_json, package_lock,
)

WEB_DEV_DEPS = {"typescript": "^5.3.3", "vitest": "^1.2.0"}
WEB_RESOLVED = {
    "typescript": "5.3.3",
    "vitest": "1.2.0",
    "@vitest/expect": "1.2.0",
    "@vitest/runner": "1.2.0",
    "@vitest/spy": "1.2.0",
    "vite": "5.0.12",
    "esbuild": "0.19.11",
    "tinypool": "0.8.2",
    "chai": "4.4.1",
}

PHASE_3: list[Step] = [
    C("Scaffold web client with typed API wrapper", PRIYA,
      W("web/package.json", package_json("0.1.0", WEB_DEV_DEPS)),
      W("web/package-lock.json", package_lock("0.1.0", WEB_DEV_DEPS, WEB_RESOLVED)),
      W("web/tsconfig.json", """
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "lib": ["ES2022", "DOM"],
    "strict": true,
    "isolatedModules": true,
    "skipLibCheck": true,
    "rootDir": "src",
    "outDir": "dist"
  },
  "include": ["src"]
}
"""),
      W("web/src/types.ts", """
// Shapes of the JSON the shelfd API returns. Keep in sync with shelfd/models.py.

export interface Book {
  id: number;
  title: string;
  author: string;
  isbn: string | null;
  copies: number;
}

export interface Member {
  id: number;
  name: string;
  email: string;
  joined_at: string;
}

export interface Loan {
  id: number;
  book_id: number;
  member_id: number;
  borrowed_at: string;
  due_at: string;
  returned_at: string | null;
  fee_cents?: number;
}

export interface ApiErrorBody {
  error: string;
}
"""),
      W("web/src/api/client.ts", """
import type { ApiErrorBody } from '../types';

export type Query = Record<string, string | number | undefined>;

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private token: string | null = null,
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  setToken(token: string | null): void {
    this.token = token;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path + buildQuery(query));
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
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

function buildQuery(query?: Query): string {
  if (!query) return '';
  const parts = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${value}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
"""),
      R(".gitignore", """
*.db
""", """
*.db
node_modules/
web/dist/
"""),
      ),

    C("Add book list page", PRIYA,
      W("web/src/api/books.ts", """
import type { Book } from '../types';
import type { ApiClient } from './client';

export async function listBooks(client: ApiClient): Promise<Book[]> {
  const body = await client.get<{ books: Book[] }>('/books');
  return body.books;
}

export async function searchBooks(client: ApiClient, query: string): Promise<Book[]> {
  const body = await client.get<{ books: Book[] }>('/books/search', { q: query });
  return body.books;
}

export function getBook(client: ApiClient, id: number): Promise<Book> {
  return client.get<Book>(`/books/${id}`);
}
"""),
      W("web/src/components/BookList.ts", """
import type { Book } from '../types';

export function bookListHtml(books: Book[]): string {
  if (books.length === 0) {
    return '<p class="empty">No books found.</p>';
  }
  const items = books.map(
    (book) =>
      `<li data-id="${book.id}"><strong>${book.title}</strong> <span class="author">${book.author}</span></li>`,
  );
  return `<ul class="book-list">${items.join('')}</ul>`;
}

export function renderBookList(container: HTMLElement, books: Book[]): void {
  container.innerHTML = bookListHtml(books);
}
"""),
      W("web/src/main.ts", """
import { listBooks } from './api/books';
import { ApiClient } from './api/client';
import { renderBookList } from './components/BookList';

// The page says where the API lives, so one build serves every deployment.
const API_URL = document.body.dataset.api ?? 'http://127.0.0.1:8080';

async function start(): Promise<void> {
  const client = new ApiClient(API_URL);
  const list = document.querySelector<HTMLElement>('#books');
  if (!list) return;
  renderBookList(list, await listBooks(client));
}

void start();
"""),
      W("web/index.html", """
<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>shelfd</title>
  </head>
  <body data-api="http://127.0.0.1:8080">
    <main>
      <h1>Catalogue</h1>
      <section id="books"></section>
    </main>
    <script type="module" src="./dist/main.js"></script>
  </body>
</html>
"""),
      ),

    C("Add date and money formatting helpers", PRIYA,
      W("web/src/utils/format.ts", """
const DAY_MS = 24 * 60 * 60 * 1000;

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  });
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export function daysBetween(fromIso: string, to: Date): number {
  return Math.floor((to.getTime() - new Date(fromIso).getTime()) / DAY_MS);
}
"""),
      W("web/src/utils/format.test.ts", """
import { describe, expect, it } from 'vitest';
import { daysBetween, formatCents } from './format';

describe('formatCents', () => {
  it('formats whole and fractional amounts', () => {
    expect(formatCents(0)).toBe('$0.00');
    expect(formatCents(125)).toBe('$1.25');
    expect(formatCents(1000)).toBe('$10.00');
  });
});

describe('daysBetween', () => {
  it('counts whole days', () => {
    expect(daysBetween('2024-03-01T12:00:00+00:00', new Date('2024-03-04T13:00:00Z'))).toBe(3);
  });

  it('is negative for dates in the future', () => {
    expect(daysBetween('2024-03-10T12:00:00+00:00', new Date('2024-03-04T12:00:00Z'))).toBe(-6);
  });
});
"""),
      ),

    C("Add loan table component", PRIYA,
      W("web/src/api/loans.ts", """
import type { Loan } from '../types';
import type { ApiClient } from './client';

export async function memberLoans(client: ApiClient, memberId: number): Promise<Loan[]> {
  const body = await client.get<{ loans: Loan[] }>(`/members/${memberId}/loans`);
  return body.loans;
}

export function checkout(client: ApiClient, bookId: number, memberId: number): Promise<Loan> {
  return client.post<Loan>('/loans', { book_id: bookId, member_id: memberId });
}

export function returnLoan(client: ApiClient, loanId: number): Promise<Loan> {
  return client.post<Loan>(`/loans/${loanId}/return`);
}
"""),
      W("web/src/components/LoanTable.ts", """
import type { Book, Loan } from '../types';
import { formatDate } from '../utils/format';

export function loanRowHtml(loan: Loan, book: Book | undefined): string {
  const title = book ? book.title : `#${loan.book_id}`;
  const status = loan.returned_at ? `returned ${formatDate(loan.returned_at)}` : 'on loan';
  return (
    `<tr data-loan="${loan.id}">` +
    `<td>${title}</td><td>${formatDate(loan.borrowed_at)}</td><td>${status}</td>` +
    '</tr>'
  );
}

export function loanTableHtml(loans: Loan[], books: Map<number, Book>): string {
  const rows = loans.map((loan) => loanRowHtml(loan, books.get(loan.book_id)));
  return (
    '<table class="loans"><thead><tr><th>Book</th><th>Borrowed</th><th>Status</th></tr></thead>' +
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
      W("web/src/components/LoanTable.test.ts", """
import { describe, expect, it } from 'vitest';
import type { Book, Loan } from '../types';
import { loanTableHtml } from './LoanTable';

const book: Book = { id: 1, title: 'Piranesi', author: 'Susanna Clarke', isbn: null, copies: 1 };

function loan(overrides: Partial<Loan> = {}): Loan {
  return {
    id: 7,
    book_id: 1,
    member_id: 3,
    borrowed_at: '2024-03-01T10:00:00+00:00',
    due_at: '2024-03-22T10:00:00+00:00',
    returned_at: null,
    ...overrides,
  };
}

describe('loanTableHtml', () => {
  it('shows the book title and loan status', () => {
    const html = loanTableHtml([loan()], new Map([[1, book]]));
    expect(html).toContain('Piranesi');
    expect(html).toContain('on loan');
  });

  it('falls back to the book id when the book is unknown', () => {
    expect(loanTableHtml([loan()], new Map())).toContain('#1');
  });

  it('shows when a loan was returned', () => {
    const html = loanTableHtml([loan({ returned_at: '2024-03-20T09:00:00+00:00' })], new Map());
    expect(html).toContain('returned 20 Mar 2024');
  });
});
"""),
      ),

    C("ci: build and test the web client", PRIYA,
      A(".github/workflows/ci.yml", """

  web:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: web
    steps:
      - uses: actions/checkout@v3
      - uses: actions/setup-node@v4
        with:
          node-version: 20
          cache: npm
          cache-dependency-path: web/package-lock.json
      - run: npm ci
      - run: npm run typecheck
      - run: npm test
"""),
      ),

    C("Add CORS headers so the web client can call the API", MAYA,
      W("shelfd/middleware.py", r'''
"""Cross-cutting response handling: CORS for the browser client."""

from __future__ import annotations

from .http import Request, Response


def allowed_origin(request: Request, origins: list[str]) -> str | None:
    origin = request.headers.get("origin")
    if origin and ("*" in origins or origin in origins):
        return origin
    return None


def apply_cors(request: Request, response: Response, origins: list[str]) -> Response:
    origin = allowed_origin(request, origins)
    if origin is None:
        return response
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS"
    # Caches must not serve one origin's answer to another.
    response.headers["Vary"] = "Origin"
    return response
'''),
      R("shelfd/app.py", """
from .http import Request, Response
""", """
from .http import Request, Response
from .middleware import apply_cors
"""),
      R("shelfd/app.py", """
    def handle(self, request: Request) -> Response:
        return self.router.dispatch(request)
""", """
    def handle(self, request: Request) -> Response:
        if request.method == "OPTIONS":
            # A CORS preflight: there are no OPTIONS routes, answer it here.
            response = Response(204)
        else:
            response = self.router.dispatch(request)
        return apply_cors(request, response, self.settings.cors_origin_list)
"""),
      R("shelfd/config.py", """
    secret_key: str = ""
    token_ttl_seconds: int = 8 * 3600
""", """
    secret_key: str = ""
    token_ttl_seconds: int = 8 * 3600
    # Comma-separated origins allowed to call the API from a browser.
    cors_origins: str = ""

    @property
    def cors_origin_list(self) -> list[str]:
        return [origin.strip() for origin in self.cors_origins.split(",") if origin.strip()]
"""),
      W("tests/test_cors.py", r'''
import pytest

from shelfd.app import create_app
from shelfd.config import Settings

from conftest import Client


@pytest.fixture
def cors_client(tmp_path):
    settings = Settings(
        database_path=str(tmp_path / "shelfd.db"),
        cors_origins="https://library.example, http://localhost:5173",
    )
    return Client(create_app(settings))


def test_allowed_origin_is_echoed(cors_client):
    response = cors_client.get("/healthz", headers={"Origin": "http://localhost:5173"})
    assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"


def test_other_origins_get_no_cors_headers(cors_client):
    response = cors_client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in response.headers


def test_preflight_is_answered(cors_client):
    response = cors_client.request("OPTIONS", "/books", headers={"Origin": "https://library.example"})
    assert response.status == 204
    assert "Authorization" in response.headers["Access-Control-Allow-Headers"]
'''),
      ),

    C("Add logo to the web client and README", PRIYA,
      B("web/public/logo.png", LOGO_PNG),
      R("web/index.html", """
    <title>shelfd</title>
""", """
    <title>shelfd</title>
    <link rel="icon" type="image/png" href="./public/logo.png" />
"""),
      R("web/index.html", """
      <h1>Catalogue</h1>
""", """
      <h1><img src="./public/logo.png" alt="" width="24" height="24" /> Catalogue</h1>
"""),
      R("README.md", """
# shelfd
""", """
# <img src="web/public/logo.png" alt="" width="28"> shelfd
"""),
      ),

    C("fix(web): escape book titles and authors in the book list (#9)", DIEGO,
      W("web/src/utils/html.ts", """
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for use inside HTML element content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);
}
"""),
      R("web/src/components/BookList.ts", """
import type { Book } from '../types';
""", """
import type { Book } from '../types';
import { escapeHtml } from '../utils/html';
"""),
      R("web/src/components/BookList.ts", """
      `<li data-id="${book.id}"><strong>${book.title}</strong> <span class="author">${book.author}</span></li>`,
""", """
      `<li data-id="${book.id}"><strong>${escapeHtml(book.title)}</strong> ` +
      `<span class="author">${escapeHtml(book.author)}</span></li>`,
"""),
      R("web/src/components/LoanTable.ts", """
import { formatDate } from '../utils/format';
""", """
import { formatDate } from '../utils/format';
import { escapeHtml } from '../utils/html';
"""),
      R("web/src/components/LoanTable.ts", """
  const title = book ? book.title : `#${loan.book_id}`;
""", """
  const title = book ? escapeHtml(book.title) : `#${loan.book_id}`;
"""),
      W("web/src/components/BookList.test.ts", """
import { describe, expect, it } from 'vitest';
import { bookListHtml } from './BookList';

describe('bookListHtml', () => {
  it('says so when there are no books', () => {
    expect(bookListHtml([])).toContain('No books found');
  });

  it('escapes markup in titles and authors', () => {
    const html = bookListHtml([
      { id: 1, title: '<img src=x onerror=alert(1)>', author: 'A & B', isbn: null, copies: 1 },
    ]);
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
    expect(html).toContain('A &amp; B');
  });
});
"""),
      body="""
Titles come straight from the catalogue, which staff type in, and were
interpolated into innerHTML unescaped. A title containing markup ran in
every visitor's browser.

Closes #8
"""),

    C("Start a changelog", MAYA,
      W("CHANGELOG.md", """
# Changelog

All notable changes to shelfd are listed here. The format follows
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/) and the project
uses [semantic versioning](https://semver.org/).

## [Unreleased]

### Added

- Book catalogue, member registration and loans over a JSON HTTP API.
- Overdue fees, charged when a late book is returned.
- Staff tokens (`shelfd issue-token`) guarding catalogue changes and member search.
- Catalogue search by title and author.
- `shelfd serve` and `shelfd init-db`.
- CORS support for browser clients (`cors_origins`).
- A web client (`web/`) with the book list and a loan table.
"""),
      ),

    C("Expand README with setup and development notes", MAYA,
      R("README.md", """
Status: early days. Nothing here is stable yet.
""", """
## Running it

```sh
python -m venv .venv && . .venv/bin/activate
pip install -e '.[test]'
shelfd init-db
SHELFD_SECRET_KEY=change-me shelfd serve
```

The API listens on http://127.0.0.1:8080; see [docs/api.md](docs/api.md).

## Web client

```sh
cd web
npm ci
npm run build
```

Then open `web/index.html`. Set `data-api` on its `<body>` if the API is
somewhere else, and list the page's origin in `cors_origins`.

## Development

`pytest` runs the backend tests, `npm test` in `web/` the client tests.
"""),
      ),

    C("Release 0.1.0", MAYA,
      R("pyproject.toml", 'version = "0.1.0.dev0"', 'version = "0.1.0"'),
      R("shelfd/__init__.py", '__version__ = "0.1.0.dev0"', '__version__ = "0.1.0"'),
      R("CHANGELOG.md", """
## [Unreleased]

### Added
""", """
## [Unreleased]

## [0.1.0] - 2024-01-23

First release.

### Added
"""),
      A("CHANGELOG.md", """

[Unreleased]: https://github.com/shelfd/shelfd/compare/v0.1.0...HEAD
[0.1.0]: https://github.com/shelfd/shelfd/releases/tag/v0.1.0
"""),
      ),
    Tag("v0.1.0"),

    C("chore: start 0.2.0 development", MAYA,
      R("pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0.dev0"'),
      R("shelfd/__init__.py", '__version__ = "0.1.0"', '__version__ = "0.2.0.dev0"'),
      ),
]
