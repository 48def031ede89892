"""What fills a run log, one module per source.

* :mod:`.calls` — the model side: the model calls a fake model served or a
  cassette handle replayed, and the handle's egress ledger;
* :mod:`.pydantic_ai` — the agent side of a pydantic-ai message history;
* :mod:`.openai_agents` — the agent side of an openai-agents run (its result, or
  its stream events one by one);
* :mod:`.langchain` — the agent side of a LangChain / LangGraph run, from its
  callbacks (``langchain_handler``); what it remembers while the run goes on is in
  :mod:`.langchain_turns`, how it reads LangChain's objects in :mod:`.langchain_reading`;
* :mod:`.tokens` — the frameworks' token counts, kept as ``Usage`` keeps them.

Adapters return model calls and entries; :class:`~pytest_agentreplay.runlog.RunLog`
adds them, so no adapter imports the run log. The framework adapters read their
objects by attribute (duck typing) and import no framework (the LangChain handler
imports its base class when one is built), so a run log costs nothing in projects
that use none.
"""
