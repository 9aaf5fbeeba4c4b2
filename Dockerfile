# syntax=docker/dockerfile:1
# The dynamo-operator image: a wheel built in a throwaway stage, installed into a venv of a slim Python.
# Runs as UID 65532 with a read-only root filesystem (config/manager mounts /tmp as an emptyDir).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml setup.py README.md ./
COPY operator ./operator
COPY api ./api
COPY controllers ./controllers
COPY internal ./internal
# The operator's wheel plus wheels of all its dependencies, so the runtime stage installs offline.
RUN pip wheel --no-deps --wheel-dir /wheels . \
 && pip wheel --wheel-dir /wheels /wheels/dynamo_operator-*.whl

FROM ${PYTHON_IMAGE}
# `dynamo-operator --version` names this commit (make docker-build passes it).
ARG GIT_COMMIT=""
ENV DYNAMO_OPERATOR_COMMIT=${GIT_COMMIT} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/dynamo-operator/bin:$PATH
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m venv /opt/dynamo-operator \
 && /opt/dynamo-operator/bin/pip install --no-cache-dir --no-index --find-links=/wheels dynamo-operator \
 && /opt/dynamo-operator/bin/dynamo-operator version
USER 65532:65532
WORKDIR /tmp
EXPOSE 8080 8081
ENTRYPOINT ["dynamo-operator"]
