# dynamo-operator — every install step lives here or in hack/, never only on someone's machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
IMG ?= dynamo-operator:dev
CONTAINER_TOOL ?= docker
INSTALLER ?= dist/install.yaml
KUSTOMIZE := kubectl kustomize
CHART := deploy/helm/dynamo-operator
# Pinned versions of every Python dependency (pip freeze), applied as pip constraints: `make lock`.
CONSTRAINTS := constraints.txt
# The runtime subset of those pins with each wheel's sha256, what the image installs: `make lock` too.
IMAGE_REQUIREMENTS := requirements-image.txt
# The commit baked into the image, for `dynamo-operator --version`.
GIT_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
PYTEST_ARGS ?=
# Add-ons of the local control plane for `make cluster-up` (lws, grove: hack/cluster_addons.py).
ADDONS ?=
# Multinode tests run in a pytest session of their own: their cluster runs the real LWS controller and
# Grove's CRDs with Grove played by a stand-in (and by Grove's real operator with GROVE_OPERATOR=/path),
# which would change what the rest of the suite sees.
MULTINODE_TESTS := test/integration/controllers_multinode
# The repo root holds a folder named "operator": never let Python put the cwd on sys.path.
export PYTHONSAFEPATH := 1

##@ General
help: ## Show this help (new here? make doctor, then README "Quick start")
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

doctor: ## Check the prerequisites; says how to install what is missing and what the first build costs
	@hack/doctor.sh

##@ Development
# The venv recipes write to stderr only, so that `make render F=x.yaml > out.yaml` stays pure YAML
# even when it (re)creates the venv. setuptools' notice about the strict editable install is expected.
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(VENV)/bin/pip install --quiet --disable-pip-version-check
venv: $(STAMP) ## Create .venv with the operator and its dev tools (versions pinned by constraints.txt)

$(STAMP): pyproject.toml setup.py $(CONSTRAINTS)
	@hack/doctor.sh --need python
	@{ test -x $(PY) || $(PYTHON) -m venv $(VENV); } >&2
	@echo "venv: installing the operator and its dev tools into $(VENV) (about 1 min the first time)" >&2
	@$(PIP_INSTALL) --upgrade pip >&2
	@$(PIP_INSTALL) -c $(CONSTRAINTS) -e '.[dev]' --config-settings editable_mode=strict >&2
	@hack/devlinks.sh >&2
	@touch $(STAMP)

reinstall: ## Refresh the editable install (needed only after adding a module directly under operator/)
	@$(PIP_INSTALL) -c $(CONSTRAINTS) -e '.[dev]' --config-settings editable_mode=strict >&2
	@hack/devlinks.sh >&2
	@touch $(STAMP)

lock: ## Re-pin every dependency to its newest allowed version into constraints.txt, and the image's hashed pins
	@hack/lock.sh $(PYTHON) $(CONSTRAINTS) $(IMAGE_REQUIREMENTS)

audit: venv ## Known advisories against every pin in constraints.txt (PyPI's data): 1 found, 3 could not audit all
	$(PY) hack/audit.py $(CONSTRAINTS)

lint: venv ## ruff (lint + format check), mypy --strict, import layering contracts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) hack/gen_views.py --check
	$(PY) hack/gen_conversion_schemas.py --check
	@$(MAKE) --no-print-directory docs

fmt: venv ## Format the code
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

manifests: venv ## Generate config/crd/bases, the typed views (api/views), the conversion's schemas (api/conversion/schemas.json) and docs/reference from the API models, the optional APIs' RBAC from their table (and copy both into the Helm chart)
	$(PY) hack/gen_crds.py
	$(PY) hack/gen_views.py
	$(PY) hack/gen_conversion_schemas.py
	$(PY) hack/gen_rbac.py
	$(PY) hack/gen_api_reference.py
	@$(MAKE) --no-print-directory chart-sync

chart-sync: ## Copy the CRDs, the manager rules and the admission policy from config/ into the Helm chart
	@hack/chart-sync.sh

docs: venv ## Build the docs site (mkdocs.yml) into build/site with --strict: a broken link or page fails
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

render: venv ## Render a DGD offline, YAML on stdout: make render F=config/samples/x.yaml > out.yaml
	@test -n "$(F)" || { echo "usage: make render F=<file with DynamoGraphDeployments> [> out.yaml]" >&2; exit 2; }
	@$(VENV)/bin/dynamo-operator render -f $(F)

##@ Local control plane (no Docker: real kube-apiserver, etcd, kcm, scheduler + kwok)
cluster-bins: ## Build the control-plane binaries and add-ons (LWS; Grove's CRDs) into ~/.cache (only what is missing)
	@hack/build-cluster-bins.sh
	@hack/build-cluster-addons.sh >/dev/null

helm: ## Build helm from its Go module into ~/.cache (once; the chart tests need it)
	@hack/build-helm.sh

promtool: ## Build promtool from its Go module into ~/.cache (once) and check config/prometheus's alert rules with it
	@hack/promtool.sh check-rules config/prometheus/prometheus_rule.yaml

cluster-up: cluster-bins venv ## Start the local control plane on loopback (ADDONS=lws,grove also runs those); prints the kubeconfig path
	@$(PY) hack/localcluster.py up --addons "$(ADDONS)"
	@echo "cluster-up: in your shell: eval \$$(make kubeconfig)" >&2

cluster-down: ## Stop the local control plane and remove its state
	@$(PYTHON) hack/localcluster.py down

kubeconfig: ## Print "export KUBECONFIG=..." of the local control plane: eval $(make kubeconfig)
	@path=$$($(PYTHON) hack/localcluster.py kubeconfig) \
	  || { echo "kubeconfig: the local control plane is not up; start it with make cluster-up (or make run)" >&2; exit 1; }; \
	  echo "export KUBECONFIG=$$path"

##@ Run and test
run: venv ## Run the operator (console logs) against KUBECONFIG's cluster, else a local control plane it starts
	@hack/run-local.sh

test: venv cluster-bins helm promtool ## Unit tests beside the multinode session, then the integration tests (own local clusters)
	@hack/run-tests.sh $(VENV) $(MULTINODE_TESTS) $(PYTEST_ARGS)

multinode: venv cluster-bins ## Multinode graphs through the real LWS controller and Grove (stand-in; GROVE_OPERATOR=/path adds the real one)
	$(VENV)/bin/pytest $(MULTINODE_TESTS) $(PYTEST_ARGS)

test-unit: venv helm promtool ## Unit tests only (no cluster; helm renders the chart)
	$(VENV)/bin/pytest test/unit $(PYTEST_ARGS)

compat: venv ## Diff upstream's examples against its goldens, offline (COMPAT_ARGS="--list gaps")
	PYTHONPATH=test $(PY) -m compat $(COMPAT_ARGS)

test-e2e: venv helm ## Deploy config/default and run the e2e suite (kind if KIND_CLUSTER is set, else local)
	hack/test-e2e.sh

faults: venv cluster-bins ## Fault scenarios, each on a fresh cluster: make faults F=leader-failover (or all)
	$(PY) hack/faults/run.py $(or $(F),all)
	$(if $(F),,$(VENV)/bin/pytest test/integration -m fault $(PYTEST_ARGS))

bench: venv cluster-bins ## Benchmarks: prints the figures
	$(PY) test/bench/run.py $(BENCH_ARGS)

##@ Deployment (the cluster in KUBECONFIG; docs/install.md)
docker-build: ## Build the operator image IMG (needs a Docker engine): make docker-build IMG=<registry>/dynamo-operator:<tag>
	$(CONTAINER_TOOL) build --build-arg GIT_COMMIT=$(GIT_COMMIT) -t $(IMG) .

docker-push: ## Push the image IMG to its registry
	$(CONTAINER_TOOL) push $(IMG)

build-installer: ## Write config/default with the image IMG into one file, dist/install.yaml (INSTALLER=...)
	@IMG=$(IMG) hack/deploy.sh installer $(INSTALLER)

install: ## Install (or update) the CRDs
	$(KUSTOMIZE) config/crd | kubectl apply --server-side --force-conflicts -f -

uninstall: ## Remove the CRDs, and with them every Dynamo custom resource (run make undeploy first)
	$(KUSTOMIZE) config/crd | kubectl delete --ignore-not-found -f -

deploy: ## Deploy config/default (CRDs, RBAC, operator) with the image IMG
	@IMG=$(IMG) hack/deploy.sh apply

undeploy: ## Delete every Dynamo custom resource while the operator runs, then the operator; CRDs stay
	@hack/deploy.sh undeploy

.PHONY: help doctor venv reinstall lock audit lint fmt manifests chart-sync docs render cluster-bins helm cluster-up cluster-down kubeconfig run test multinode test-unit compat test-e2e faults bench docker-build docker-push build-installer install uninstall deploy undeploy
