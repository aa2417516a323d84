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
RUN groupadd --system levy && useradd --system --gid levy --home-dir /data levy \
    && mkdir -p /data && chown levy:levy /data
COPY --from=build /opt/levy /opt/levy
USER levy
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080 50051
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2).status == 200 else 1)"
STOPSIGNAL SIGTERM
ENTRYPOINT ["levy"]
CMD ["serve"]
