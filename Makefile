# s3-fanout: measure how fast S3 serves data to many concurrent Lambda functions.
# `make help` lists the targets. Every target goes through the `fanout` console script in .venv.

BACKEND     ?= local
STACK       ?= s3fanout
CONCURRENCY ?= 10
MEMORY      ?= 1024
OBJECT_SIZE ?= 256MiB
REGION      ?= us-east-1
ARCH        ?= x86_64
MODE        ?= download_file
MESSAGES    ?=
MULTIPLIER  ?= 10
TAG         ?= default
RUN         ?= latest
RUNS        ?=
A           ?=
B           ?=
TIMEOUT     ?= 1800
HOST        ?= 1
QUERY       ?= download-percentiles
ORDER       ?= given
SEED        ?=
KEEP_WARM   ?= 0
DESTROY_AFTER ?= 0
RESUME      ?=
YES         ?= 0
PYTHON      ?= python3

VENV   := .venv
FANOUT := $(VENV)/bin/fanout
TARGET := --backend $(BACKEND) --stack $(STACK)

.DEFAULT_GOAL := help
.PHONY: help venv emulator-up emulator-down emulator-status package deploy plan outputs destroy \
        run fire wait query report compare demo sweep test bench clean

help: ## List the targets and the variables they read
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables: BACKEND=$(BACKEND) STACK=$(STACK) CONCURRENCY=$(CONCURRENCY) MEMORY=$(MEMORY)"
	@echo "  OBJECT_SIZE=$(OBJECT_SIZE) REGION=$(REGION) ARCH=$(ARCH) MODE=$(MODE) TAG=$(TAG)"
	@echo "  MESSAGES=$(MESSAGES) MULTIPLIER=$(MULTIPLIER) RUN=$(RUN) QUERY=$(QUERY)"
	@echo "  RUNS=$(RUNS) (report across these runs) A=$(A) B=$(B) (compare)"
	@echo "  TIMEOUT=$(TIMEOUT) (wait gives up after this many seconds)"
	@echo "  HOST=$(HOST) (local backend: wait hosts the function; HOST=0 when \`make run\` does)"
	@echo "Sweep: CONCURRENCY MEMORY OBJECT_SIZE ARCH MODE take lists (\"1 5 10\"); ORDER=$(ORDER) (or shuffled)"
	@echo "  SEED=$(SEED) KEEP_WARM=$(KEEP_WARM) DESTROY_AFTER=$(DESTROY_AFTER) YES=$(YES) RESUME=$(RESUME) (a sweep id or latest)"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	@touch $@

venv: $(VENV)/.installed ## Create .venv with the pinned dependencies

emulator-up: venv ## Start the embedded AWS emulator (local backend)
	$(FANOUT) emulator start

emulator-down: venv ## Stop the embedded AWS emulator
	$(FANOUT) emulator stop

emulator-status: venv ## Is the embedded emulator running, and where
	$(FANOUT) emulator status

package: venv ## Build the function zip for ARCH (deterministic)
	$(FANOUT) package --architecture $(ARCH)

deploy: venv ## Deploy the stack (CONCURRENCY, MEMORY, OBJECT_SIZE, REGION, ARCH, MODE, STACK, BACKEND)
	$(FANOUT) deploy $(TARGET) --concurrency $(CONCURRENCY) --memory $(MEMORY) \
	  --object-size $(OBJECT_SIZE) --region $(REGION) --architecture $(ARCH) --mode $(MODE)

plan: venv ## Show what deploy would change
	$(FANOUT) plan $(TARGET) --concurrency $(CONCURRENCY) --memory $(MEMORY) \
	  --object-size $(OBJECT_SIZE) --region $(REGION) --architecture $(ARCH) --mode $(MODE)

outputs: venv ## Print the deployed stack's outputs
	$(FANOUT) outputs $(TARGET)

destroy: venv ## Remove everything the stack created (safe when nothing is deployed)
	$(FANOUT) destroy $(TARGET)

run: venv ## Local backend: host the function until its queue is drained
	$(FANOUT) host $(TARGET)

fire: venv ## Send MESSAGES (default MULTIPLIER x CONCURRENCY) messages tagged TAG
	$(FANOUT) fire $(TARGET) --multiplier $(MULTIPLIER) --tag $(TAG) \
	  $(if $(MESSAGES),--messages $(MESSAGES)) $(if $(filter command line,$(origin MODE)),--mode $(MODE))

wait: venv ## Wait until every message of RUN is accounted for (TIMEOUT, HOST)
	$(FANOUT) wait $(TARGET) --run $(RUN) --timeout $(TIMEOUT) $(if $(filter 0,$(HOST)),--no-host)

query: venv ## Run the saved query QUERY against the stack's logs
	$(FANOUT) insights queries/$(QUERY).logsinsights $(TARGET)

report: venv ## Tables, CSV/JSON and plots for RUN, or across RUNS=id,id,... (results/across/)
	$(FANOUT) report $(TARGET) $(if $(RUNS),--runs $(RUNS),--run $(RUN))

compare: venv ## Change in median and p99 throughput from A to B (run ids, comma-separated), with 95% CIs
	$(FANOUT) compare $(A) $(B)

demo: venv ## The whole experiment on the local backend, torn down afterwards
	$(FANOUT) demo

sweep: venv ## Every cell of the lists CONCURRENCY x MEMORY x OBJECT_SIZE x ARCH x MODE; RESUME=<id|latest>
	$(FANOUT) sweep $(TARGET) --timeout '$(TIMEOUT)' $(if $(filter 1,$(YES)),--yes) $(if $(RESUME),--resume '$(RESUME)', \
	  --concurrency '$(CONCURRENCY)' --memory '$(MEMORY)' --object-size '$(OBJECT_SIZE)' --architecture '$(ARCH)' \
	  --mode '$(MODE)' --region '$(REGION)' --multiplier '$(MULTIPLIER)' --tag '$(TAG)' --order '$(ORDER)' \
	  $(if $(SEED),--seed '$(SEED)') $(if $(filter 1,$(KEEP_WARM)),--keep-warm) \
	  $(if $(filter 1,$(DESTROY_AFTER)),--destroy-after))

test: venv ## Run the test suite
	$(VENV)/bin/pytest

bench: venv ## Run the benchmarks (ratios against a baseline measured in the same run)
	$(VENV)/bin/python -m bench

clean: ## Remove .venv and local state (not results/)
	rm -rf $(VENV) .fanout
