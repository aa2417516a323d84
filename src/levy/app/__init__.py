"""Service layer: the application core both transports call."""
