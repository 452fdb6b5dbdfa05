"""The projects' wings: a package per project (vllm/, sglang/) with what belongs to it alone,
and the helpers wings share (pyodide.py). Wings sit on top of the core and import it; the
core never imports a wing, and reaches one only through errorkb.registry, by its key.
"""
