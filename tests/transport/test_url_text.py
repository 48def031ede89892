"""A request's URL as a handler reads it (``Family.url_text``): spelled once per URL a
family sees and read back by its parsed parts after that (bench/ W5), always the text
the module itself gives (``str(url)``)."""

from __future__ import annotations

import httpx
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.transport.family import Family

URLS = [
    "https://api.anthropic.com/v1/messages",
    "https://user:p%40ss@api.example.com:8443/v1/chat?key=sk-1&x=%2F#frag",
    "http://127.0.0.1:9/a b?q=ü",
    "https://bücher.example/straße?ä=1",
    "https://h/v1beta/models/gemini:streamGenerateContent?alt=sse",
    "https://h",
]


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("url", URLS)
def test_a_url_reads_as_the_module_spells_it_first_time_and_after(module: object, url: str) -> None:
    family = Family(module.__name__, module)  # type: ignore[attr-defined]
    first = family.url_text(module.URL(url))  # type: ignore[attr-defined]
    again = family.url_text(module.URL(url))  # type: ignore[attr-defined]
    assert first == again == str(module.URL(url))  # type: ignore[attr-defined]


@given(
    path=st.text(
        st.characters(categories=("L", "N", "P", "S"), exclude_characters="#?"), max_size=12
    ),
    query=st.none() | st.text(max_size=8),
    port=st.none() | st.integers(1, 65535),
)
def test_urls_of_different_parts_never_read_as_each_other(
    path: str, query: str | None, port: int | None
) -> None:
    family = Family("httpx2", httpx2)
    base = f"https://h{'' if port is None else f':{port}'}/{path}"
    urls = [httpx2.URL(base), httpx2.URL(base, params=None if query is None else {"q": query})]
    for url in urls + urls[::-1]:
        assert family.url_text(url) == str(url)


def test_a_url_of_another_kind_is_spelled() -> None:
    family = Family("httpx2", httpx2)
    assert family.url_text("https://h/p") == "https://h/p"
