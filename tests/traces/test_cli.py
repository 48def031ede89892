"""``agentreplay import-trace``, and what ``inspect``, ``lint`` and ``diff`` say of an
imported cassette."""

from __future__ import annotations

import pytest

from pytest_agentreplay import Fault, Reply
from pytest_agentreplay.cli import main

from . import agents

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)


def traced_file(provider, scripted_model, traced, final="It is sunny in Leeds today."):
    scripted_model.script(
        Fault.http(429, "Rate limited: slow down."),
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text(final),
    )
    with traced(provider) as trace_file:
        agents.run(provider)
    return trace_file


def test_import_trace_writes_the_cassette_and_reports_what_it_corrected(
    scripted_model, traced, tmp_path, capsys
) -> None:
    trace_file = traced_file("anthropic", scripted_model, traced)
    out = tmp_path / "imported.yaml"

    assert main(["import-trace", str(trace_file), "-o", str(out)]) == 0

    printed = capsys.readouterr()
    assert "3 model call(s) imported as 5 interaction(s)" in printed.out
    # The first two calls do not say whether they streamed (served as asked: two forms
    # each); the stream does, and its output count is one too many in the span.
    assert printed.out.count("(serves as asked;") == 4
    assert "(serves stream;" in printed.out
    assert "corrected: usage.output_tokens" in printed.out
    assert "counts message_start's placeholder token" in printed.out
    assert f"wrote {out}" in printed.err

    assert main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    assert shown.count("origin    imported from a trace: step") == 5
    assert "filled    error body" in shown
    assert "corrected usage.output_tokens" in shown

    assert main(["lint", str(out)]) == 0
    linted = capsys.readouterr().out
    assert f"{out}: interaction #4: origin    imported from a trace: step 3" in linted


def test_import_trace_refuses_to_replace_a_cassette_unless_forced(
    scripted_model, traced, tmp_path, capsys
) -> None:
    trace_file = traced_file("openai_chat", scripted_model, traced)
    out = tmp_path / "kept.yaml"
    out.write_text("version: 1\n")

    assert main(["import-trace", str(trace_file), "-o", str(out)]) == 2
    assert "exists already; pass --force" in capsys.readouterr().err
    assert out.read_text() == "version: 1\n"
    assert main(["import-trace", str(trace_file), "-o", str(out), "--force"]) == 0


def test_import_trace_names_a_file_that_is_no_trace(tmp_path, capsys) -> None:
    bad = tmp_path / "spans.json"
    bad.write_text('{"resourceSpans": []}\n{"not": "a span"}\n')

    assert main(["import-trace", str(bad), "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: neither an OTLP document" in err
    assert not (tmp_path / "x.yaml").exists()


def test_diff_says_which_step_of_the_trace_diverged(
    scripted_model, traced, tmp_path, capsys
) -> None:
    then = tmp_path / "then.yaml"
    now = tmp_path / "now.yaml"
    assert (
        main(["import-trace", str(traced_file("gemini", scripted_model, traced)), "-o", str(then)])
        == 0
    )
    later = traced_file("gemini", scripted_model, traced, final="It is raining in Leeds.")
    assert main(["import-trace", str(later), "-o", str(now)]) == 0
    capsys.readouterr()

    assert main(["diff", str(then), str(now)]) == 1

    printed = capsys.readouterr().out
    assert "(step 3 of the trace)" in printed
    assert "(step 1 of the trace)" not in printed and "(step 2 of the trace)" not in printed
    assert "It is raining in Leeds." in printed
    assert printed.rstrip().endswith("1 interaction(s) differ.")


def test_inspect_says_an_imported_timeout_got_no_response(
    scripted_model, traced, tmp_path, capsys
) -> None:
    scripted_model.script(
        Fault.timeout(), Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny.")
    )
    with traced("openai_chat") as trace_file:
        agents.run("openai_chat")
    out = tmp_path / "imported.yaml"
    assert main(["import-trace", str(trace_file), "-o", str(out)]) == 0
    capsys.readouterr()

    assert main(["inspect", str(out)]) == 0

    shown = capsys.readouterr().out
    first = shown.split("\n#1 ")[0]
    assert "response  none: timeout before the status line (imported)" in first
    assert "filled    when the timeout struck (before any response)" in first
    assert "final" not in first
