"""Rendering: Jinja environments that behave like transformers' ``apply_chat_template``, what a
template is given, and the checks that keep caller text from forging structure."""
