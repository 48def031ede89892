"""Every contender, in the order the tables list them, and a contender by its name."""

from __future__ import annotations

from .agentreplay import AgentReplayContender
from .contenders import (
    Contender,
    MockTransportAutoloadRef,
    MockTransportContender,
    MockTransportCtorRef,
    MockTransportPluginRef,
    PassThroughContender,
    PytestHttpxContender,
    RespxContender,
    VcrpyContender,
)
from .sdk_contenders import AgentReplaySdkContender, MockSdkCtorRef, MockSdkRef, VcrpySdkContender


def all_contenders() -> list[Contender]:
    return [
        VcrpyContender("vcrpy"),
        VcrpyContender("vcrpy+body", body_matching=True),
        RespxContender(),
        PytestHttpxContender(),
        MockTransportContender(),
        MockTransportPluginRef(),
        MockTransportAutoloadRef(),
        MockTransportCtorRef(),
        PassThroughContender(),
        AgentReplayContender(),  # >>> HOOK: registered here
        MockSdkRef(),
        MockSdkCtorRef(),
        VcrpySdkContender(),
        AgentReplaySdkContender(),
    ]


def contender_by_name(name: str) -> Contender:
    for c in all_contenders():
        if c.name == name:
            return c
    raise KeyError(name)
