"""Levy: an open-source, self-hostable sales tax service."""

__version__ = "0.1.0"
