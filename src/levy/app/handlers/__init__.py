"""Handlers of the RPCs, one module per area. The composition root
(:mod:`levy.app.bootstrap`) lists the modules and collects their handlers."""
