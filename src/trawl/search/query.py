"""From what a person typed to a query tree. Pure; no input is a syntax error.

    words            all required (the cascade relaxes plain word queries)
    "a phrase"       the words in this order
    -word, -"a b"    pages without it; "--flag", "-j" (one letter), "-1" are words, and so
                     is a query of exclusions alone with no filter
    a OR b, a AND b  upper-case operators; lower-case "or" is a word
    ( ... )          grouping
    site:HOST        the host or any host under it
    lang:xx          pages in that language, and the query analysed in it
    after:DATE       modified on or after (2024, 2024-05, 2024-05-17); before:DATE before it
    source:page      modified date from the page, the sitemap or HTTP (comma-separated)

Unbalanced quotes or parentheses, or an operator with nothing beside it, make
the whole text a plain word query (filters still apply): a person never sees
a syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from trawl.analysis.text import variant_words
from trawl.errors import QueryError

MAX_QUERY_CHARS = 1_000
MAX_WORDS = 200  # the 1,000-character cap binds first on real text
# Groups nested deeper than this are broken syntax (read as words): the parser, and every
# stage that walks the tree, recurse once a level, and 330 levels overflowed Python's stack.
MAX_DEPTH = 32
MODIFIED_SOURCES = ("page", "sitemap", "http")

_WORD = re.compile(r"[^\W_]+")
_TOKEN = re.compile(r'-?"[^"]*"|[()]|"|[^\s()"]+')
_FILTER = re.compile(r"^(site|lang|after|before|source):(\S+)$", re.IGNORECASE)
_AND, _OPEN, _QUOTE = "AND", "(", '"'
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")
# What could make a text more than plain words: quotes, parentheses, a leading minus, an
# upper-case operator, a filter's colon. Text without any is read without the parser.
_SYNTAX = re.compile(r'["():]|(?:^|\s)-|\b(?:AND|OR)\b')


@dataclass(frozen=True, slots=True)
class Term:
    words: tuple[str, ...]  # lower-cased; more than one: a phrase
    phrase: bool = False


@dataclass(frozen=True, slots=True)
class Not:
    child: Expr


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Expr, ...]


Expr = Term | Not | And | Or


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str  # as typed, trimmed
    expr: Expr | None  # None: no words (maybe only filters)
    words: tuple[str, ...]  # positive words in order: coverage and URL forms are built from them
    # Other spellings of the positive plain words' compounds (il-6: il6): they score, never
    # required or counted, as pages carry them too (analysis.variant_words).
    variants: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    lang: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    modified_sources: tuple[str, ...] = field(default_factory=tuple)
    fallback: bool = False  # the syntax was broken: read as plain words

    @property
    def empty(self) -> bool:
        return self.expr is None and not self.has_filters

    @property
    def has_filters(self) -> bool:
        return bool(self.sites or self.lang or self.after or self.before or self.modified_sources)

    @property
    def plain(self) -> bool:
        """Only words (no phrase, operator or exclusion): the cascade applies."""
        expr = self.expr
        if isinstance(expr, Term):
            return not expr.phrase
        return isinstance(expr, And) and all(
            isinstance(c, Term) and not c.phrase for c in expr.children
        )


class _SyntaxProblem(Exception):
    """The operators could not be read: fall back to plain words."""


def parse_query(text: str, *, syntax: bool = True) -> ParsedQuery:
    """``syntax=False`` reads every token as words (test collections' natural-language queries)."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query longer than {MAX_QUERY_CHARS} characters")
    if not syntax:
        plain = [w.lower() for w in _WORD.findall(text)][:MAX_WORDS]
        variants = tuple(variant_words(text)[:MAX_WORDS])
        return ParsedQuery(text.strip(), _words_only(plain), tuple(plain), variants)
    if not _SYNTAX.search(text):
        # Most typed queries are words alone: the parser would find what this finds (its
        # Hypothesis test says so) at a fifth of a query's Python time.
        found = [w.lower() for w in _WORD.findall(text)]
        if 0 < len(found) <= MAX_WORDS:
            spellings = [v for token in text.split() for v in variant_words(token)]
            return ParsedQuery(
                text.strip(), _words_only(found), tuple(found), tuple(spellings[:MAX_WORDS])
            )
    return _parse_operators(text)


def _parse_operators(text: str) -> ParsedQuery:
    tokens = _TOKEN.findall(text)
    rest: list[str] = []
    sites: list[str] = []
    sources: list[str] = []
    lang = None
    dates: dict[str, datetime] = {}
    for token in tokens:
        found = _FILTER.match(token)
        if not found:
            rest.append(token)
            continue
        name, value = found.group(1).lower(), found.group(2)
        if name == "site":
            sites.append(value.lower().strip("./"))
        elif name == "lang" and re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]+)*", value):
            lang = value.lower().split("-", 1)[0]
        elif name in {"after", "before"} and (moment := _parse_date(value)) is not None:
            dates[name] = moment
        elif name == "source" and all(v in MODIFIED_SOURCES for v in value.lower().split(",")):
            sources.extend(value.lower().split(","))
        else:
            rest.append(token)  # not a filter we know: its words are searched
    fallback = False
    expr: Expr | None
    parser = _Parser(rest)
    try:
        expr = _simplify(parser.parse())
        filtered = bool(sites or lang or dates or sources)
        if expr is not None and not filtered and not _positive_words(expr):
            # Nothing but exclusions, and no filter to exclude from: "-v", "-o output" are
            # a command's flags someone looks up, not a wish for every page without them.
            parser = _Parser(rest, negation=False)
            expr = _simplify(parser.parse())
        spellings = parser.variants
    except _SyntaxProblem:
        fallback = True
        expr = _words_only([w.lower() for w in _WORD.findall(" ".join(rest))][:MAX_WORDS])
        spellings = variant_words(" ".join(rest))
    return ParsedQuery(
        text=text.strip(),
        expr=expr,
        words=tuple(_positive_words(expr))[:MAX_WORDS] if expr else (),
        variants=tuple(spellings[:MAX_WORDS]) if expr else (),
        sites=tuple(sites),
        lang=lang,
        after=dates.get("after"),
        before=dates.get("before"),
        modified_sources=tuple(dict.fromkeys(sources)),
        fallback=fallback,
    )


def _words_only(words: list[str]) -> Expr | None:
    if not words:
        return None
    return Term((words[0],)) if len(words) == 1 else And(tuple(Term((w,)) for w in words))


def _parse_date(value: str) -> datetime | None:
    found = _DATE.match(value)
    if not found:
        return None
    year, month, day = (int(g) if g else 1 for g in found.groups())
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


class _Parser:
    """Recursive descent: or := and ("OR" and)*; and := unary (["AND"] unary)*."""

    def __init__(self, tokens: list[str], *, negation: bool = True) -> None:
        self.tokens = tokens
        self.pos = 0
        self.count = 0
        self.depth = 0
        self.variants: list[str] = []  # of the plain words' compounds
        self.negation = negation

    def parse(self) -> Expr | None:
        if not self.tokens:
            return None
        expr = self._or()
        if self.pos != len(self.tokens):
            raise _SyntaxProblem  # a stray ")"
        return expr

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _or(self) -> Expr:
        children = [self._and()]
        while self._peek() == "OR":
            self.pos += 1
            children.append(self._and())
        return children[0] if len(children) == 1 else Or(tuple(children))

    def _and(self) -> Expr:
        children: list[Expr] = []
        while (token := self._peek()) is not None and token not in {")", "OR"}:
            if token == _AND:
                if not children:
                    raise _SyntaxProblem
                self.pos += 1
                continue
            unary = self._unary()
            if unary is not None:
                children.append(unary)
        if not children:
            raise _SyntaxProblem  # an operator or group with nothing in it
        return children[0] if len(children) == 1 else And(tuple(children))

    def _unary(self) -> Expr | None:
        token = self.tokens[self.pos]
        if token == _QUOTE:
            raise _SyntaxProblem  # an unbalanced quote
        if token == _OPEN:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _SyntaxProblem
            self.pos += 1
            inner = self._or()
            if self._peek() != ")":
                raise _SyntaxProblem
            self.pos += 1
            self.depth -= 1
            return inner
        self.pos += 1
        negated = self.negation and _excludes(token)
        body = token[1:] if negated else token
        phrase = body.startswith('"')
        found = [w.lower() for w in _WORD.findall(body)]
        if not found:
            return None  # punctuation alone
        self.count += len(found)
        if self.count > MAX_WORDS:
            return None
        if not (phrase or negated):
            self.variants += variant_words(body)
        if phrase or len(found) == 1 or negated:
            term: Expr = Term(tuple(found), phrase=len(found) > 1)
            return Not(term) if negated else term
        # "covid-19", "tcp/ip": words of their own, so the query stays plain
        return And(tuple(Term((w,)) for w in found))


def _excludes(token: str) -> bool:
    """A leading minus excludes a word or a phrase: "-java", "-\"a b\"". A command-line flag
    is words: "--cap-lints" (two dashes), "-j", "-O" (one letter), and "-1" is a number.
    Google, Elasticsearch's simple_query_string, Meilisearch and Typesense all read "-word"
    as NOT; in a documentation search a flag is looked up far more often than a one-letter
    word is excluded."""
    if len(token) < 2 or token[0] != "-" or token[1] == "-":
        return False
    if token[1] == _QUOTE:
        return True
    found = _WORD.match(token, 1)  # anchored at the character after the minus
    return found is not None and len(found.group()) > 1 and token[1].isalpha()


def _simplify(expr: Expr | None) -> Expr | None:
    """Flatten nested ANDs so plain words stay plain."""
    if isinstance(expr, And):
        flat: list[Expr] = []
        for child in expr.children:
            simple = _simplify(child)
            if isinstance(simple, And):
                flat.extend(simple.children)
            elif simple is not None:
                flat.append(simple)
        return flat[0] if len(flat) == 1 else And(tuple(flat))
    if isinstance(expr, Or):
        return Or(tuple(c for c in (_simplify(c) for c in expr.children) if c is not None))
    return expr


def _positive_words(expr: Expr) -> list[str]:
    match expr:
        case Term(words=words):
            return list(words)
        case Not():
            return []
        case And(children=children) | Or(children=children):
            return [w for c in children for w in _positive_words(c)]
