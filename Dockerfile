# syntax=docker/dockerfile:1
# The dynamo-operator image: the operator's wheel built in a throwaway stage, installed into a venv of a
# slim Python next to its dependencies, which come from requirements-image.txt: the versions the tests
# ran with (constraints.txt), each wheel checked against its sha256 (`make lock` writes both files).
# Runs as UID 65532 with a read-only root filesystem (config/manager mounts /tmp as an emptyDir).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# LICENSE and NOTICE go into the wheel's metadata (setuptools' license files), so into the image.
COPY pyproject.toml setup.py README.md LICENSE NOTICE ./
COPY operator ./operator
COPY api ./api
COPY controllers ./controllers
COPY internal ./internal
# The operator's own wheel only: its dependencies are not resolved here but pinned and hashed.
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
# `dynamo-operator --version` names this commit (make docker-build passes it).
ARG GIT_COMMIT=""
ENV DYNAMO_OPERATOR_COMMIT=${GIT_COMMIT} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/dynamo-operator/bin:$PATH
# --require-hashes: a file whose sha256 is not in requirements-image.txt fails the build; --no-deps:
# nothing is resolved, so nothing unpinned comes in; --only-binary: nothing is built from source.
# `pip check` then proves the pinned set is complete for the operator's declared dependencies.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    --mount=type=bind,source=requirements-image.txt,target=/requirements-image.txt \
    python -m venv /opt/dynamo-operator \
 && /opt/dynamo-operator/bin/pip install --no-cache-dir --require-hashes --no-deps --only-binary=:all: \
        -r /requirements-image.txt \
 && /opt/dynamo-operator/bin/pip install --no-cache-dir --no-deps --no-index /wheels/dynamo_operator-*.whl \
 && /opt/dynamo-operator/bin/pip check \
 && /opt/dynamo-operator/bin/dynamo-operator version
USER 65532:65532
WORKDIR /tmp
EXPOSE 8080 8081
ENTRYPOINT ["dynamo-operator"]
