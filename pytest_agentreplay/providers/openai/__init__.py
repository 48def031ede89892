"""OpenAI's two wire formats, each a provider folder of its own: Chat Completions
(:mod:`.chat`) and Responses (:mod:`.responses`).

The two are independent of each other (an import-linter contract keeps them so); what
OpenAI's server does alike for both (error bodies, request ids, the version header)
is in :mod:`.common`. Importing this package loads neither codec.
"""
