"""Hostile-input benchmark: schema patterns (refused or bounded) and the HTML loader (linear) on adversarial input."""

from __future__ import annotations

import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint.context.corpus import html_to_text
from agentfootprint.tools import validate_json
from agentfootprint.tools._patterns import check_pattern

CATASTROPHIC = [r"(a+)+$", r"(a|aa)*b", r"^(\w+\s?)*$"]
POLYNOMIAL = [r"a*b", r"a*a*b", r"a*a*a*b", r"\s*\s*\s*x", r"^[a-z]+@[a-z]+\.[a-z]{2,}$"]
HTML_UNITS = ["<a x", "<a b='", "<p <b <i ", "<!--x-->x<a y"]
HTML_SIZE = 800_000
STDLIB_SIZE = 24_000  # the stdlib parser is quadratic: larger sizes take minutes


def _seconds(fn: Any) -> float:
    t0 = time.process_time()
    fn()
    return round(time.process_time() - t0, 4)


def _patterns() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pattern in CATASTROPHIC:
        schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
        attack = {"s": "a" * 10_000 + "!"}
        out[pattern] = {
            "refusal": check_pattern(pattern).refusal,
            "validate_s": _seconds(lambda schema=schema, attack=attack: validate_json(schema, attack)),
            "plain_re_26_chars_s": _seconds(lambda pattern=pattern: re.search(pattern, "a" * 26 + "!")),
        }
    for pattern in POLYNOMIAL:
        vetted = check_pattern(pattern)
        worst = ("a" if "s" not in pattern else " ") * vetted.max_subject
        compiled = vetted.compiled
        assert compiled is not None
        timed = _seconds(lambda compiled=compiled, worst=worst: compiled.search(worst))
        out[pattern] = {"max_subject": vetted.max_subject, "worst_at_cap_s": timed}
    return out


def _html() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for unit in HTML_UNITS:
        page = unit * (HTML_SIZE // len(unit))
        small = unit * (STDLIB_SIZE // len(unit))

        def stdlib(small: str = small) -> None:
            parser = HTMLParser()
            parser.feed(small)
            parser.close()

        out[unit] = {
            f"loader_{HTML_SIZE}_chars_s": _seconds(lambda page=page: html_to_text(page)),
            f"stdlib_htmlparser_{STDLIB_SIZE}_chars_s": _seconds(stdlib),
        }
    return out


def main() -> dict[str, Any]:
    return {"patterns": _patterns(), "html": _html()}


if __name__ == "__main__":
    results = main()
    print(write_results("hostile_input", results))
    for section, rows in results.items():
        for key, row in rows.items():
            print(section, repr(key), row)
