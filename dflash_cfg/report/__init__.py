"""Renderers: values in, strings out. No file-system or network calls here."""
