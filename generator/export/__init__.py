"""Exports of the knowledge base for other site generators (`errorkb export`)."""
