"""HTML to readable text in one linear pass (stdlib ``HTMLParser`` rescans unclosed tags: quadratic on hostile input).

Every ``<`` either ends at the next ``>`` (the scan moves past it) or, with no ``>`` left, starts plain text to the
end; raw-text elements (script, style, title) jump to their closing tag. Each character is looked at a bounded number
of times, so the work is linear in the input. An attribute value holding a bare ``>`` ends its tag early (its tail
reads as text): the price of never rescanning.
"""

from __future__ import annotations

import html as _entities
import re

__all__ = ["html_text_parts"]

_SKIP = frozenset({"script", "style", "noscript", "template", "head"})
_RAW = frozenset({"script", "style", "title", "textarea"})
_BLOCK = frozenset({"p", "div", "br", "li", "tr", "section", "article", "h1", "h2", "h3", "h4", "h5", "h6"})
_NAME = re.compile(r"[a-z][a-z0-9:-]{0,63}")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _Scan:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.title: list[str] = []
        self.skip = 0

    def data(self, text: str) -> None:
        if text and not self.skip:
            self.parts.append(_entities.unescape(text))

    def start(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag in _BLOCK:
            self.parts.append("\n\n" if tag != "br" else "\n")
            if tag.startswith("h") and len(tag) == 2:
                self.parts.append("#" * int(tag[1]) + " ")

    def end(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK:
            self.parts.append("\n\n")


def html_text_parts(html: str) -> tuple[str, str]:
    """(the text pieces joined, with block breaks and ``#`` heading marks, the title) of ``html``, in linear time."""
    low = html.translate(_ASCII_LOWER)  # same length as html: offsets carry over
    scan = _Scan()
    i, n = 0, len(html)
    while i < n:
        j = html.find("<", i)
        if j < 0:
            scan.data(html[i:])
            break
        scan.data(html[i:j])
        if low.startswith("<!--", j):
            k = html.find("-->", j + 4)
            i = n if k < 0 else k + 3  # an unclosed comment runs to the end, as in a browser
            continue
        follow = low[j + 1 : j + 2]
        if not (follow.isascii() and (follow.isalpha() or follow in "/!?")):
            scan.data("<")
            i = j + 1
            continue
        k = html.find(">", j + 1)
        if k < 0:  # no tag can close any more: the rest is text
            scan.data(html[j:])
            break
        i = k + 1
        if follow == "/":
            name = _NAME.match(low, j + 2, k)
            if name:
                scan.end(name.group())
        elif follow.isalpha():
            name = _NAME.match(low, j + 1, k)
            tag = name.group() if name else ""
            if html[k - 1] != "/" or tag in _BLOCK:
                scan.start(tag)
            if tag in _RAW:
                close = low.find("</" + tag, i)
                close = n if close < 0 else close
                if tag == "title":
                    scan.title.append(_entities.unescape(html[i:close]))
                elif tag == "textarea":
                    scan.data(html[i:close])
                i = close
    return "".join(scan.parts), "".join(scan.title)
