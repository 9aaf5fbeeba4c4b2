# dynamo-operator — every install step lives here or in hack/, never only on someone's machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
IMG ?= dynamo-operator:dev
KUSTOMIZE := kubectl kustomize
PYTEST_ARGS ?=
# The repo root holds a folder named "operator": never let Python put the cwd on sys.path.
export PYTHONSAFEPATH := 1

##@ General
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
venv: $(STAMP) ## Create .venv with the operator and its dev tools

$(STAMP): pyproject.toml setup.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	hack/devlinks.sh
	@touch $(STAMP)

reinstall: ## Refresh the editable install (needed only after adding a module directly under operator/)
	$(VENV)/bin/pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	hack/devlinks.sh
	@touch $(STAMP)

lint: venv ## ruff (lint + format check), mypy --strict, import layering contracts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

fmt: venv ## Format the code
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

manifests: venv ## Generate config/crd/bases from the API models
	$(PY) hack/gen_crds.py

render: venv ## Render a DGD offline: make render F=config/samples/x.yaml
	$(VENV)/bin/dynamo-operator render -f $(F)

##@ Local control plane (no Docker: real kube-apiserver, etcd, kcm, scheduler + kwok)
cluster-bins: ## Build the control-plane binaries into ~/.cache (only what is missing)
	hack/build-cluster-bins.sh

cluster-up: cluster-bins venv ## Start the local control plane on loopback; prints the kubeconfig path
	$(PY) hack/localcluster.py up

cluster-down: ## Stop the local control plane and remove its state
	@$(PYTHON) hack/localcluster.py down

##@ Run and test
run: venv ## Run the operator against KUBECONFIG's cluster, else a local control plane it starts
	hack/run-local.sh

test: venv cluster-bins ## Unit + integration tests (starts its own local control plane)
	$(VENV)/bin/pytest test/unit test/integration $(PYTEST_ARGS)

test-unit: venv ## Unit tests only (no cluster)
	$(VENV)/bin/pytest test/unit $(PYTEST_ARGS)

compat: venv ## Diff upstream's examples against its goldens, offline (COMPAT_ARGS="--list gaps")
	PYTHONPATH=test $(PY) -m compat $(COMPAT_ARGS)

test-e2e: venv ## Deploy config/default and run the e2e suite (kind if KIND_CLUSTER is set, else local)
	hack/test-e2e.sh

faults: venv cluster-bins ## Fault scenarios, each on a fresh cluster: make faults F=leader-failover (or all)
	$(PY) hack/faults/run.py $(or $(F),all)

bench: venv cluster-bins ## Benchmarks: prints the figures
	$(PY) test/bench/run.py $(BENCH_ARGS)

##@ Deployment
install: venv ## Install the CRDs into the cluster in KUBECONFIG
	$(KUSTOMIZE) config/crd | kubectl apply --server-side -f -

uninstall: ## Remove the CRDs (and with them every custom resource!)
	$(KUSTOMIZE) config/crd | kubectl delete --ignore-not-found -f -

deploy: ## Deploy the operator with kustomize config/default
	$(KUSTOMIZE) config/default | kubectl apply --server-side -f -

undeploy: ## Remove the operator deployment
	$(KUSTOMIZE) config/default | kubectl delete --ignore-not-found -f -

docker-build: ## Build the operator image (needs a Docker engine)
	docker build -t $(IMG) .

.PHONY: help venv reinstall lint fmt manifests render cluster-bins cluster-up cluster-down run test test-unit compat test-e2e faults bench install uninstall deploy undeploy docker-build
