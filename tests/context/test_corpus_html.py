"""The HTML loader: linear on hostile markup (bounded by input size), size-capped, same text on benign pages."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.context import corpus
from agentfootprint.context.corpus import DocumentTooLargeError, LoaderError, html_to_text, load_html

# each of these took minutes at this size with the stdlib HTMLParser (it rescans every unclosed tag to the end)
SIZE = 800_000
UNCLOSED = ["<a x", "<a b='", "<!--x-->x<a y", "<p <b <i ", "</", "<!", "<?", "<![", "<"]


@pytest.mark.parametrize("unit", UNCLOSED)
def test_hostile_unclosed_markup_is_read_in_one_pass(unit: str) -> None:
    page = unit * (SIZE // len(unit))
    text, title = html_to_text(page)
    assert title == ""
    assert len(text) <= len(page)


def test_an_unclosed_tag_makes_the_rest_text() -> None:
    page = "<p>kept</p>" + "<a x" * (SIZE // 4)
    text, _ = html_to_text(page)
    assert text.startswith("kept\n\n<a x<a x") and text.endswith("<a x")


def test_many_closed_tags_and_an_open_comment() -> None:
    text, _ = html_to_text("<b>x</b>" * (SIZE // 8))
    assert text == "x" * (SIZE // 8)
    assert html_to_text("before<!-- never closed <p>after</p>")[0] == "before"


def test_markup_details() -> None:
    page = (
        "<!DOCTYPE html><HTML><HEAD><TITLE>A &amp; B</TITLE><STYLE>p>b{}</STYLE></HEAD>"
        "<BODY><H1 class='x'>Top</H1><p>1 < 2 &lt; 3<br/>next</p><script>if (a</b) {'</p>'}</script>"
        "<textarea>raw <b>kept</b></textarea><p>end</p></BODY></HTML>"
    )
    text, title = html_to_text(page)
    assert title == "A & B"
    assert text == "# Top\n\n1 < 2 < 3\nnext\n\nraw <b>kept</b>\n\nend"


def test_size_caps_are_typed_and_never_quote_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_DOCUMENT_CHARS", 100)
    with pytest.raises(DocumentTooLargeError) as caught:
        html_to_text("<p>secret-text</p>" * 10)
    assert caught.value.code == "ERR_DOCUMENT_TOO_LARGE" and "secret-text" not in str(caught.value)
    assert html_to_text("<p>secret-text</p>")[0] == "secret-text"
    page = tmp_path / "big.html"
    page.write_text("<p>secret-text</p>" * 10)
    monkeypatch.setattr(corpus, "MAX_DOCUMENT_BYTES", 100)
    with pytest.raises(DocumentTooLargeError) as caught:
        load_html(page)
    assert isinstance(caught.value, LoaderError) and "big.html" in str(caught.value)
    assert "secret-text" not in str(caught.value)


class _Reference(HTMLParser):
    """The loader's previous parser (stdlib, quadratic on hostile input): the benign-page oracle."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "head"})
    _BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n" if tag != "br" else "\n")
            if tag.startswith("h"):
                self.parts.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self.skip:
            self.skip -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


_WORD = st.text(alphabet="ab &;<>", min_size=1, max_size=6).filter(lambda w: "<" not in w and ">" not in w)
_ELEMENT = st.sampled_from(["p", "div", "b", "li", "h1", "h2", "span", "script", "style"])
_NODE = st.recursive(
    _WORD,
    lambda inner: st.builds(
        lambda tag, attr, kids: f"<{tag}{attr}>{''.join(kids)}</{tag}>",
        _ELEMENT,
        st.sampled_from(["", " class='c'", ' id="i"']),
        st.lists(inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(body=st.lists(_NODE, max_size=5).map("".join))
def test_benign_pages_read_as_the_stdlib_parser_reads_them(body: str) -> None:
    ref = _Reference()
    ref.feed(body)
    ref.close()
    assert html_to_text(body)[0] == _folded("".join(ref.parts))


def _folded(parts: str) -> str:
    text = re.sub(r"[ \t\r\f\v]+", " ", parts)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
