"""Transports: thin adapters (gRPC servicers, REST gateway) over the application core."""
