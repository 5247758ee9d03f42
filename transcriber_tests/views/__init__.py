"""The dashboard's pages, one module per screen (urls.py names them)."""
