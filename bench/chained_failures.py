"""How hypothesis reports one bug in an agent that chains exceptions (issue 20 item 15).

An agent wraps every provider failure in its own error (``raise AgentError(...) from
exc``) and has one bug: it gives up after the first retryable failure instead of
retrying. Each fault kind reaches the property through a different chain
(``AgentError`` from an ``APIStatusError``, from an ``APIConnectionError``...), and
hypothesis, which tells failures apart by their whole chain, reports one bug as many
"distinct failures" and shrinks each of them.

Runs the same property under the ``agentreplay-ci`` profile with
``report_multiple_bugs`` on (hypothesis' default, the profile before issue 20) and as
shipped (off), and prints the wall time and how many failures hypothesis reported::

    python bench/chained_failures.py          # results/chained-failures.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anthropic
from hypothesis import given, settings

from pytest_agentreplay import FakeModel
from pytest_agentreplay.strategies import CI_PROFILE, FaultPlan, fault_plans, faults

OUT = Path(__file__).parent / "results" / "chained-failures.json"


class AgentError(Exception):
    """What the agent raises, whatever went wrong below it."""


def buggy_agent(client: anthropic.Anthropic) -> str:
    """Retries nothing (the bug): every failure is chained into an AgentError."""
    try:
        with client.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            text = "".join(stream.text_stream)
    except anthropic.APIStatusError as exc:
        raise AgentError(f"the provider said {exc.status_code}") from exc
    except anthropic.APIConnectionError as exc:
        raise AgentError("the connection failed") from exc
    except Exception as exc:
        raise AgentError("the stream broke") from exc
    if not text:
        raise AgentError("empty answer")
    return text


PLANS = fault_plans(faults=faults(statuses=(500, 529, 503, 429)), max_faults=2)


def run(report_multiple_bugs: bool | None) -> dict[str, object]:
    """One run of the property: under the profile as shipped (``None``), or with
    ``report_multiple_bugs`` set."""
    profile = settings.get_profile(CI_PROFILE)
    chosen = (
        profile
        if report_multiple_bugs is None
        else settings(profile, report_multiple_bugs=report_multiple_bugs)
    )

    @chosen
    @given(plan=PLANS)
    def the_agent_survives_transient_faults(plan: FaultPlan) -> None:
        with plan.apply(FakeModel(check_unused=False)):
            client = anthropic.Anthropic(api_key="test", max_retries=0)
            assert buggy_agent(client) == plan.replies[0].text_content

    started = time.perf_counter()
    try:
        the_agent_survives_transient_faults()
    except Exception as exc:  # an ExceptionGroup when hypothesis reports several
        failures = len(getattr(exc, "exceptions", [exc]))
    else:
        failures = 0
    return {
        "report_multiple_bugs": chosen.report_multiple_bugs,
        "as_shipped": report_multiple_bugs is None,
        "failures_reported": failures,
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    results = [run(True), run(None)]  # hypothesis' default, the profile as shipped
    for row in results:
        print(row)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"python": sys.version.split()[0], "runs": results}, indent=2))


if __name__ == "__main__":
    main()
