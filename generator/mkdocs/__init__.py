"""errorkb inside a Material for MkDocs site: the `errorkb` MkDocs plugin (plugin.py) and
the Material page frame the record pages are rendered into (frame.py)."""
