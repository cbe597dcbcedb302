"""Rung 3: `git gasp proxy`, an HTTP proxy in front of a model API that records what passes.

An agent that takes a base URL (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``) talks to the proxy; each request goes to the real upstream
unchanged and each response comes back unchanged, byte for byte, as it arrives
(``server.py``). Beside the relay, a copy of what passed (bounded) is read by the API's
dialect (``anthropic.py``, ``openai.py``, ``gemini.py`` through ``dialect.py``; streams
through ``sse.py``) and recorded off the request path (``recorder.py``) into the agent
state as the hooks record a session: one run per agent session (``sessions.py``),
``model.called`` / ``model.finished`` per request, the tool calls the model asks for and
the results the next request carries, and the commits made meanwhile as patches
(``commits.py``).
"""
