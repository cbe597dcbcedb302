"""The hook dialects: what each agent speaks (``table.py``), the mappings of the agents
whose payloads differ from Claude Code's (``gemini.py``, ``qwen.py``), the model calls
their model hooks or transcripts give (``models.py``) and doctor's checks of their hook
settings (``doctor.py``)."""
