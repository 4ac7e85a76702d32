"""Symbols: what a piece of code declares, in several languages, from whole files, fragments
and line-numbered Read output, with bounded work and bounded text."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from claude_mem.pipeline.local import code_text
from claude_mem.pipeline.local.symbols import (
    DOC_CHARS,
    SIGNATURE_CHARS,
    Symbol,
    code_excerpt,
    code_symbols,
    symbol_facts,
    without_line_numbers,
)
from claude_mem.pipeline.local.text import FACT_CHARS

INVOICE = '''\
from decimal import ROUND_HALF_UP, Decimal


class Invoice:
    """An invoice for one customer. Lines are kept in order."""

    def total(self, lines: list[Line]) -> Decimal:
        """Sum the line amounts exactly, then round half-up.

        Summing floats made round() give 1.72 instead of 1.73.
        """
        exact = sum((Decimal(str(line.amount)) for line in lines), Decimal(0))
        return exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# Write rows as CSV, keeping the header row even when there are no rows.
@export
def write_csv(rows, *, header=True):
    return "\\n".join(rows)


async def fetch(url: str, retries: int = 2) -> bytes:
    # Timeouts are retried twice, never more.
    ...
'''


def names(path: str, code: str) -> list[str]:
    return [symbol.name for symbol in code_symbols(path, code)]


def test_python_symbols_from_a_whole_file() -> None:
    assert code_symbols("src/invoicer/invoice.py", INVOICE) == [
        Symbol("Invoice", "class", "", "An invoice for one customer."),
        Symbol(
            "Invoice.total",
            "method",
            "(lines: list[Line]) -> Decimal",
            "Sum the line amounts exactly, then round half-up.",
        ),
        Symbol(
            "write_csv",
            "function",
            "(rows, *, header=True)",
            "Write rows as CSV, keeping the header row even when there are no rows.",
        ),
        Symbol(
            "fetch",
            "function",
            "(url: str, retries: int=2) -> bytes",
            "Timeouts are retried twice, never more.",
        ),
    ]


def test_symbol_facts_read_as_sentences() -> None:
    facts = symbol_facts("src/invoicer/invoice.py", INVOICE)
    assert facts[1] == (
        "invoice.Invoice.total(lines: list[Line]) -> Decimal — "
        "Sum the line amounts exactly, then round half-up."
    )
    assert facts[0] == "class invoice.Invoice — An invoice for one customer."
    assert symbol_facts("src/invoicer/invoice.py", INVOICE, 2) == facts[:2]
    assert symbol_facts("src/invoicer/invoice.py", INVOICE) == facts  # deterministic
    assert symbol_facts("notes.txt", "just words, no code") == []


def test_an_edit_fragment_that_does_not_parse() -> None:
    # The tail of one method and the start of the next, cut mid-expression.
    fragment = '''\
            return exact.quantize(Decimal("0.01"))

    def discount(self, rate: Decimal) -> Decimal:
        """Apply a percentage discount before tax."""
        if rate > 1:
            raise ValueError((rate,
'''
    [symbol] = code_symbols("invoice.py", fragment)
    assert symbol == Symbol(
        "discount",
        "function",
        "(rate: Decimal) -> Decimal",
        "Apply a percentage discount before tax.",
    )


def test_python_that_never_parses_falls_back_to_patterns() -> None:
    broken = 'def first(a, b):\n    """Add them."""\n    return a +\n\ndef second():\n    pass\n'
    assert names("m.py", broken) == ["first", "second"]
    assert code_symbols("m.py", broken)[0].doc == "Add them."


@pytest.mark.parametrize(
    "number", [lambda i: f"{i:6}\t", lambda i: f"{i}→"], ids=["cat-n", "arrow"]
)
def test_line_numbered_read_output(number: Callable[[int], str]) -> None:
    numbered = "\n".join(number(i) + line for i, line in enumerate(INVOICE.splitlines(), 1))
    assert code_symbols("invoice.py", numbered) == code_symbols("invoice.py", INVOICE)
    assert without_line_numbers(numbered) == INVOICE.rstrip("\n")
    excerpt = code_excerpt(numbered, 200)
    assert excerpt.startswith("from decimal import")
    assert "\t" not in excerpt
    assert "→" not in excerpt


def test_code_that_starts_with_numbers_keeps_them() -> None:
    data = "1\tone\nname\tvalue\nplain line\n"
    assert without_line_numbers(data) == data


TS = """\
import { Row } from "./row";

/**
 * Format rows as RFC 4180 CSV. Fields with quotes are doubled.
 */
export function toCsv(rows: Row[], opts?: Options): string {
  return rows.map(quote).join("\\r\\n");
}

// Parse one header line into column names.
export const parseHeader = async (line: string): Promise<string[]> => {
  if (line) {
    return line.split(",");
  }
  return [];
};

export class Exporter extends Base {
  /** Write one file, replacing it. */
  async write(path: string): Promise<void> {
    await save(path, this.rows);
  }
}

export interface Options { quote: boolean }
export const MAX_ROWS = 10_000;
"""


def test_typescript() -> None:
    symbols = {s.name: s for s in code_symbols("src/export.ts", TS)}
    assert list(symbols) == [
        "toCsv",
        "parseHeader",
        "Exporter",
        "Exporter.write",
        "Options",
        "MAX_ROWS",
    ]
    assert symbols["toCsv"] == Symbol(
        "toCsv",
        "function",
        "(rows: Row[], opts?: Options) -> string",
        "Format rows as RFC 4180 CSV.",
    )
    assert symbols["parseHeader"].doc == "Parse one header line into column names."
    assert symbols["Exporter.write"].kind == "method"
    assert symbols["Exporter.write"].doc == "Write one file, replacing it."
    assert (symbols["Options"].kind, symbols["MAX_ROWS"].kind) == ("interface", "const")
    assert "export.toCsv(rows: Row[], opts?: Options) -> string — Format rows" in " ".join(
        symbol_facts("src/export.ts", TS)
    )


def test_go_methods_take_their_receiver() -> None:
    go = """\
package server

// Server serves invoices over HTTP.
type Server struct {
\tdb *DB
}

// Handle answers one request. It never panics.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) error {
\treturn nil
}
"""
    assert code_symbols("server.go", go) == [
        Symbol("Server", "struct", "", "Server serves invoices over HTTP."),
        Symbol(
            "Server.Handle",
            "method",
            "(w http.ResponseWriter, r *http.Request) error",
            "Handle answers one request.",
        ),
    ]


def test_rust_impl_blocks_own_their_functions() -> None:
    rust = """\
/// A money amount in cents.
pub struct Money(i64);

impl Money {
    /// Round half-up to whole cents.
    pub fn round(&self, places: u32) -> Money {
        Money(self.0)
    }
}
"""
    assert code_symbols("money.rs", rust) == [
        Symbol("Money", "struct", "", "A money amount in cents."),
        Symbol(
            "Money.round",
            "method",
            "(&self, places: u32) -> Money",
            "Round half-up to whole cents.",
        ),
    ]


def test_java_and_kotlin() -> None:
    java = """\
/** Totals for an invoice. */
public class InvoiceTotals {
    /** Sum the lines exactly. */
    public static BigDecimal total(List<Line> lines) throws IOException {
        if (lines.isEmpty()) {
            return BigDecimal.ZERO;
        }
        return sum(lines);
    }
}
"""
    assert names("InvoiceTotals.java", java) == ["InvoiceTotals", "InvoiceTotals.total"]
    method = code_symbols("InvoiceTotals.java", java)[1]
    assert (method.signature, method.doc) == (
        "(List<Line> lines) -> BigDecimal",
        "Sum the lines exactly.",
    )
    kotlin = "// Retry a call twice, never more.\nsuspend fun <T> retry(times: Int = 2): T {\n}\n"
    assert code_symbols("Retry.kt", kotlin) == [
        Symbol("retry", "function", "(times: Int = 2) -> T", "Retry a call twice, never more.")
    ]


def test_c_and_cpp() -> None:
    c = """\
#include <stdio.h>

/* Sum the amounts in cents. */
static long total_cents(const struct line *lines, size_t n)
{
    return 0;
}

class Parser {
  public:
    // Parse one row.
    std::vector<std::string> parse(const std::string &row) const;
};
"""
    symbols = code_symbols("main.cpp", c)
    assert [s.name for s in symbols] == ["total_cents", "Parser", "Parser.parse"]
    assert symbols[0].signature == "(const struct line *lines, size_t n) -> long"
    assert symbols[0].doc == "Sum the amounts in cents."
    assert symbols[2].doc == "Parse one row."


def test_shell_functions() -> None:
    sh = """\
#!/bin/sh
# Back up the database before a migration.
backup_db() {
  cp db db.bak
}

function restore {
  cp db.bak db
}
backup_db
"""
    assert code_symbols("tools.sh", sh) == [
        Symbol("backup_db", "function", "", "Back up the database before a migration."),
        Symbol("restore", "function", "", ""),
    ]


def test_unknown_suffix_tries_python_and_common_patterns() -> None:
    assert names("", INVOICE) == ["Invoice", "Invoice.total", "write_csv", "fetch"]
    assert "toCsv" in names("", TS)


def test_defined_names_reads_symbols() -> None:
    assert code_text.defined_names(INVOICE) == ["Invoice", "total", "write_csv", "fetch"]
    assert code_text.defined_names(INVOICE, 2) == ["Invoice", "total"]


def test_text_is_bounded() -> None:
    doc = "word " * 500
    long_params = ", ".join(f"p{i}: int" for i in range(60))
    code = f'def wide({long_params}) -> int:\n    """{doc}"""\n'
    [symbol] = code_symbols("w.py", code)
    assert len(symbol.signature) <= SIGNATURE_CHARS
    assert len(symbol.doc) <= DOC_CHARS
    [fact] = symbol_facts("w.py", code)
    assert len(fact) <= FACT_CHARS
    assert "\n" not in fact


def test_a_huge_input_is_scanned_only_in_part() -> None:
    body = "".join(f"def f{i}(x):\n    return x\n\n" for i in range(200_000))
    symbols = code_symbols("big.py", body, limit=5)
    assert [s.name for s in symbols] == ["f0", "f1", "f2", "f3", "f4"]
    assert len(symbol_facts("big.py", body)) <= 6
    minified = "var a=function(b){return b};" * 400_000
    assert code_symbols("bundle.min.js", minified) == []
    excerpt = code_excerpt(body, 300)
    assert len(excerpt) <= 300
    assert excerpt.startswith("def f0(x):")
    assert excerpt.endswith("\n…")


def test_excerpt_keeps_meaningful_lines_and_cuts_at_a_line() -> None:
    code = "\n\n#!/usr/bin/env python\n\n    def f():\n\n\n\n        return 1\n"
    assert code_excerpt(code, 500) == "def f():\n\n    return 1"
    lines = "\n".join(f"line_{i} = {i}" for i in range(50))
    cut = code_excerpt(lines, 60)
    assert cut.endswith("\n…")
    assert all(line.startswith("line_") for line in cut.splitlines()[:-1])
    assert len(cut) <= 60
    assert code_excerpt("x" * 500, 40) == "x" * 39 + "…"
    assert code_excerpt("", 40) == ""
