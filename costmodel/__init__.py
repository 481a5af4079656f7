"""costmodel: a unit-aware TCO engine that prices LLM inference per million tokens and always
says what it divided by."""
__version__ = "0.1.0"
