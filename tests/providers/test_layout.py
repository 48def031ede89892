"""The shape of ``providers/``: one folder per provider with the same role modules, one
catalog entry per provider that the rest of the plugin can rely on, no import cycles.

mypy checks each folder's functions against the role protocols
(``providers/roles.py``); these tests check what a type checker does not: that every
folder has every role, that the catalog and the codecs name the same providers, that
a catalog entry's URL, path test and minimal body agree with its codec, and that no
two modules of the package import each other, counting the imports made for type
checking only and inside functions (which import-linter is told to skip).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from pytest_agentreplay import providers
from pytest_agentreplay.neutral import PROVIDERS, Provider
from pytest_agentreplay.providers import codec_for, detect, target
from pytest_agentreplay.providers.catalog import CATALOG, DEFAULT_HOSTS, facts
from pytest_agentreplay.providers.roles import FolderCodec

PACKAGE = Path(providers.__file__).parent
ROLES = {
    "request": ("parse",),
    "render": ("render_body", "iter_events"),
    "fold": ("fold",),
    "reply": ("to_reply",),
    "error_bodies": ("error_response", "error_event"),
    "compose": ("compose",),
}


def _folder(provider: Provider) -> str:
    """The package of a provider's folder, from where its catalog entry puts the codec."""
    module, _ = facts(provider).codec
    return "pytest_agentreplay.providers" + module


def test_the_catalog_knows_every_provider_in_order() -> None:
    assert tuple(CATALOG) == PROVIDERS
    assert all(entry.name == name for name, entry in CATALOG.items())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_folder_fills_every_role_with_the_same_signatures(provider: Provider) -> None:
    codec = codec_for(provider)
    assert isinstance(codec, FolderCodec)
    folder = _folder(provider)
    assert type(codec).__module__ == f"{folder}.codec"
    for role, functions in ROLES.items():
        module = importlib.import_module(f"{folder}.{role}")
        reference = importlib.import_module(f"{_folder('anthropic')}.{role}")
        assert getattr(codec.roles, role) is module, f"{folder}.codec names another {role}"
        for name in functions:
            mine = inspect.signature(getattr(module, name))
            theirs = inspect.signature(getattr(reference, name))
            assert list(mine.parameters) == list(theirs.parameters), f"{folder}.{role}.{name}"
            kinds = [p.kind for p in mine.parameters.values()]
            assert kinds == [p.kind for p in theirs.parameters.values()], f"{folder}.{role}.{name}"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
def test_a_catalog_entry_agrees_with_its_codec(provider: Provider, stream: bool) -> None:
    """The URL the catalog builds is routed to the provider, and its minimal body is a
    request the codec parses, streamed or not as asked."""
    entry = facts(provider)
    url = entry.url("some-model", stream=stream)
    assert url.startswith(f"https://{entry.host}/")
    assert detect("POST", target(url)) == provider
    request = codec_for(provider).parse_call("POST", target(url), entry.minimal_body("m", stream))
    assert request.stream is stream
    assert request.messages[-1].text == "Hi"


def test_the_default_hosts_are_each_providers_own_once() -> None:
    hosts = [entry.host for entry in CATALOG.values()]
    assert sorted(DEFAULT_HOSTS) == sorted(set(hosts))
    assert len(DEFAULT_HOSTS) == len(set(DEFAULT_HOSTS))


def test_an_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown provider 'cohere'; known: anthropic, openai_chat"):
        codec_for("cohere")  # type: ignore[arg-type]


# -- import cycles --------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The ``modules`` that module ``name`` (at ``path``) imports, wherever the import
    statement is (module level, ``if TYPE_CHECKING:``, inside a function).
    ``from pkg import sub`` imports the module ``pkg.sub`` when there is one, else
    ``pkg`` itself."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found & modules - {name}


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path, name, set(paths)) for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle in ``graph``, as a path that comes back to its start, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_module_of_providers_imports_itself_back_even_for_type_checking() -> None:
    graph = _graph()
    assert "pytest_agentreplay.providers.anthropic.codec" in graph  # the walk found them
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_type_checking_cycle(tmp_path: Path) -> None:
    """The check above can fail: a cycle made only of an ``if TYPE_CHECKING:`` import and
    an import inside a function is found."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "one.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import X\n"
    )
    (pkg / "two.py").write_text("def f():\n    from . import one\n")
    names = {"pkg", "pkg.one", "pkg.two"}
    graph = {n: _imports(pkg / f"{n[4:]}.py", n, names) for n in ("pkg.one", "pkg.two")}
    assert graph == {"pkg.one": {"pkg.two"}, "pkg.two": {"pkg.one"}}
    assert _cycle(graph) == ["pkg.one", "pkg.two", "pkg.one"]
