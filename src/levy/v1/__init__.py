"""Generated protobuf and gRPC code for levy.v1. Do not edit: run scripts/gen-protos."""
