# syntax=docker/dockerfile:1
# Multi-stage build: dependencies and Levy are installed into a virtualenv in
# the build stage; the runtime stage copies only that virtualenv.
FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/levy
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/levy/bin/pip install .

FROM python:3.11-slim AS runtime
ENV PATH=/opt/levy/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    LEVY_DATABASE_URL=sqlite+aiosqlite:////data/levy.db \
    LEVY_GRPC_ADDRESS=0.0.0.0:50051 \
    LEVY_HTTP_ADDRESS=0.0.0.0:8080
# A numeric user and group (10001, the same in deploy/k8s's runAsUser and
# runAsGroup): Kubernetes' runAsNonRoot can only verify a numeric USER, and
# refuses to start an image whose USER is a name ("non-numeric user").
RUN groupadd --system --gid 10001 levy \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home levy \
    && mkdir -p /data && chown 10001:10001 /data
COPY --from=build /opt/levy /opt/levy
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080 50051
# The virtualenv's interpreter by path, in exec form: no shell and no `python`
# on PATH needed (a base image without one still runs the check). It asks the
# port of LEVY_HTTP_ADDRESS; a 503 (shutting down) or no answer fails.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["/opt/levy/bin/python", "-c", "import os, sys, urllib.request; port = os.environ.get('LEVY_HTTP_ADDRESS', ':8080').rsplit(':', 1)[1]; sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=2).status == 200 else 1)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["levy"]
CMD ["serve"]
