"""gRPC stubs for levy.v1, copied from the server's generated code. Do not edit: run
clients/python/scripts/gen-stubs."""
