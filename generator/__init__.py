"""errorkb: a static site generator for an error knowledge base."""
