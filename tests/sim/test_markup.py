"""sim.page.markup.escape is html.escape, without importing html (and html.entities) in the browser."""

import html

from hypothesis import given
from hypothesis import strategies as st

from sim.page.markup import escape


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("&<>\"'")), st.booleans())
def test_escape_is_html_escape(text, quote):
    assert escape(text, quote=quote) == html.escape(text, quote=quote)


def test_escape_quotes_by_default():
    assert escape("a<b & \"c\" 'd'") == "a&lt;b &amp; &quot;c&quot; &#x27;d&#x27;"
    assert escape("a<b & \"c\"", quote=False) == "a&lt;b &amp; \"c\""
