# s3-fanout: measure how fast S3 serves data to many concurrent Lambda functions.
# `make help` lists the targets. Every target goes through the `fanout` console script in .venv.

BACKEND     ?= local
STACK       ?= s3fanout
CONCURRENCY ?= 10
MEMORY      ?= 1024
OBJECT_SIZE ?= 256MiB
REGION      ?= us-east-1
ARCH        ?= x86_64
STRATEGY    ?=
MODE        ?=
PIN         ?=
MESSAGES    ?=
MULTIPLIER  ?= 10
TAG         ?= default
WORKLOAD    ?=
SIZES       ?=
REPS        ?=
RUN         ?= latest
RUNS        ?=
SWEEP       ?=
A           ?=
B           ?=
TIMEOUT     ?= 1800
FUNCTION_TIMEOUT ?= 300
STORAGE     ?=
EXPRESS_AZ  ?=
HOST        ?= 1
QUERY       ?= download-percentiles
NETWORK     ?=
NETWORK_SCALE ?= auto
ORDER       ?= given
SEED        ?=
KEEP_WARM   ?= 0
DESTROY_AFTER ?= 0
RESUME      ?=
YES         ?= 0
BENCH       ?=
SDK         ?= bundled
KEYS        ?= 1
PYTHON      ?= python3

VENV   := .venv
SCAN_VENV := .venv-scan
FANOUT := $(VENV)/bin/fanout
# $(call q,NAME): variable NAME's raw value (no make expansion of a `$` in it) as one shell word,
# single-quoted with any ' inside escaped. Every variable reaches the shell this way, so a value
# with spaces or shell characters arrives at the CLI as one argument, and the CLI validates it.
q = '$(subst ','\'',$(value $(1)))'
TARGET = --backend $(call q,BACKEND) --stack $(call q,STACK)
# STRATEGY (or its old name MODE) when set; otherwise deploy's default, or the stack's for fire.
PIN_ARG = $(if $(value PIN),--pin $(call q,PIN))
STRATEGY_ARG = $(if $(value STRATEGY),--strategy $(call q,STRATEGY),$(if $(value MODE),--strategy $(call q,MODE)))
STACK_INPUTS = $(TARGET) --concurrency $(call q,CONCURRENCY) --memory $(call q,MEMORY) \
  --object-size $(call q,OBJECT_SIZE) --region $(call q,REGION) --architecture $(call q,ARCH) \
  $(STRATEGY_ARG) --function-timeout $(call q,FUNCTION_TIMEOUT) \
  $(if $(value STORAGE),--storage $(call q,STORAGE)) $(if $(value EXPRESS_AZ),--express-az $(call q,EXPRESS_AZ))
# The workload (empty: the CLI's default) and its options (docs/workloads.md): fire's, and a
# sweep's lists.
WORKLOAD_ARGS = $(if $(value WORKLOAD),--workload $(call q,WORKLOAD)) $(if $(value SIZES),--sizes $(call q,SIZES)) \
  $(if $(value REPS),--reps $(call q,REPS))
# STRATEGY and STORAGE are deploy's variables too, so they may still be set when `make fire`
# runs: fire gets them as options of the workloads that take them, marked --deploy-level, so
# that a run of a workload without that option ignores them rather than refusing them.
FIRE_ARGS = $(WORKLOAD_ARGS) $(PIN_ARG) $(STRATEGY_ARG) $(if $(STRATEGY_ARG),--deploy-level strategy) \
  $(if $(value STORAGE),--storage $(call q,STORAGE) --deploy-level storage)
NETWORK_ARGS = $(if $(value NETWORK),--network $(call q,NETWORK)) --network-scale $(call q,NETWORK_SCALE)

.DEFAULT_GOAL := help
.PHONY: help venv emulator-up emulator-down emulator-status package deploy plan outputs destroy \
        run fire wait query report compare demo sweep test bench clean

help: ## List the targets and the variables they read
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo Variables: BACKEND=$(call q,BACKEND) STACK=$(call q,STACK) CONCURRENCY=$(call q,CONCURRENCY) MEMORY=$(call q,MEMORY)
	@echo "  "OBJECT_SIZE=$(call q,OBJECT_SIZE) REGION=$(call q,REGION) ARCH=$(call q,ARCH) TAG=$(call q,TAG)
	@echo "  "STRATEGY=$(call q,STRATEGY) "(e.g. \"ranged connections=8 chunk_size=8MiB\", docs/strategies.md;"
	@echo "    deploy: the default of messages, fire: this run's; MODE is its old name)"
	@echo "  "WORKLOAD=$(call q,WORKLOAD) "(fire, sweep: what a message measures, as listed by fanout fire --help; docs/workloads.md)" SIZES=$(call q,SIZES) REPS=$(call q,REPS) \
	  "(latency: e.g. SIZES=\"1 1KB 1MB 100MB\" REPS=10; fire's STORAGE: the deployed classes it measures)"
	@echo "  "PIN=$(call q,PIN) "(fire: connect to one address of the bucket's endpoint, an IP, or auto: spread the"
	@echo "    messages over the addresses it resolves to; TLS stays on the name; none: where DNS says; docs/strategies.md)"
	@echo "  "MESSAGES=$(call q,MESSAGES) MULTIPLIER=$(call q,MULTIPLIER) RUN=$(call q,RUN) QUERY=$(call q,QUERY)
	@echo "  "RUNS=$(call q,RUNS) SWEEP=$(call q,SWEEP) "(report across these runs, or a sweep's)" A=$(call q,A) B=$(call q,B) "(compare)"
	@echo "  "TIMEOUT=$(call q,TIMEOUT) "(wait gives up after this many seconds)"
	@echo "  "FUNCTION_TIMEOUT=$(call q,FUNCTION_TIMEOUT) "(deploy: function timeout, s; the queue's visibility timeout is 6x it)"
	@echo "  "STORAGE=$(call q,STORAGE) EXPRESS_AZ=$(call q,EXPRESS_AZ) "(deploy, sweep: standard (default) and/or express, the latter in zone ID EXPRESS_AZ"
	@echo "    such as use1-az4; AWS backend only; docs/storage.md)"
	@echo "  "SDK=$(call q,SDK) "(deploy: bundled, the zip's pinned boto3/botocore/s3transfer, or runtime, the Lambda"
	@echo "    runtime's own, which varies by runtime release and region; docs/strategies.md)"
	@echo "  "KEYS=$(call q,KEYS) "(deploy: copies of the object, each under its own prefix, 1-100; message seq reads"
	@echo "    copy seq mod KEYS; docs/strategies.md)"
	@echo "  "HOST=$(call q,HOST) "(local backend: wait hosts the function; HOST=0 when \`make run\` does)"
	@echo "  "NETWORK=$(call q,NETWORK) NETWORK_SCALE=$(call q,NETWORK_SCALE) "(local backend: run, wait, demo and sweep shape S3 traffic"
	@echo "    with a network model: none, lambda-2024, lambda-2026 or a .toml/.json file; docs/network-model.md)"
	@echo Sweep: CONCURRENCY MEMORY OBJECT_SIZE ARCH take lists '("1 5 10"),' STRATEGY a list separated by "';'" \
	  '("stream; ranged connections=4");' ORDER=$(call q,ORDER) "(or shuffled)"
	@echo "  "PIN a list '("none auto 127.0.0.2")', one cell per value, none the unpinned one '(download workload)'
	@echo "  "WORKLOAD=latency: SIZES lists separated by "';'" '("1 1KB; 1MB"),' REPS a list '("3 10")'
	@echo "  "SEED=$(call q,SEED) KEEP_WARM=$(call q,KEEP_WARM) DESTROY_AFTER=$(call q,DESTROY_AFTER) YES=$(call q,YES) RESUME=$(call q,RESUME) "(a sweep id or latest)"
	@echo Bench: BENCH=$(call q,BENCH) "(benchmarks to run, e.g. \"strategy_speed network_truth\"; empty: all)"

$(VENV)/.installed: pyproject.toml
	$(call q,PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	@touch $@

# checkov, the IaC scanner the tests run over infra/, pins an older boto3: a virtualenv of its own.
$(SCAN_VENV)/.installed: tests/infra/checkov-requirements.txt
	$(call q,PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/pip install --quiet -r tests/infra/checkov-requirements.txt
	@touch $@

venv: $(VENV)/.installed $(SCAN_VENV)/.installed ## Create .venv (and .venv-scan, the scanner's) with the pinned dependencies

emulator-up: venv ## Start the embedded AWS emulator (local backend)
	$(FANOUT) emulator start

emulator-down: venv ## Stop the embedded AWS emulator
	$(FANOUT) emulator stop

emulator-status: venv ## Is the embedded emulator running, and where
	$(FANOUT) emulator status

package: venv ## Build the function zip for ARCH and SDK (deterministic)
	$(FANOUT) package --architecture $(call q,ARCH) --sdk $(call q,SDK)

deploy: venv ## Deploy the stack (CONCURRENCY, MEMORY, OBJECT_SIZE, REGION, ARCH, STRATEGY, FUNCTION_TIMEOUT, STORAGE, EXPRESS_AZ, SDK, KEYS, STACK, BACKEND)
	$(FANOUT) deploy $(STACK_INPUTS) --sdk $(call q,SDK) --keys $(call q,KEYS)

plan: venv ## Show what deploy would change
	$(FANOUT) plan $(STACK_INPUTS) --sdk $(call q,SDK) --keys $(call q,KEYS)

outputs: venv ## Print the deployed stack's outputs
	$(FANOUT) outputs $(TARGET)

destroy: venv ## Remove everything the stack created (safe when nothing is deployed)
	$(FANOUT) destroy $(TARGET)

run: venv ## Local backend: host the function until its queue is drained (NETWORK, NETWORK_SCALE)
	$(FANOUT) host $(TARGET) $(NETWORK_ARGS)

fire: venv ## Send MESSAGES (default MULTIPLIER x CONCURRENCY) messages tagged TAG, of WORKLOAD (STRATEGY, PIN; SIZES REPS STORAGE)
	$(FANOUT) fire $(TARGET) --multiplier $(call q,MULTIPLIER) --tag $(call q,TAG) \
	  $(if $(value MESSAGES),--messages $(call q,MESSAGES)) $(FIRE_ARGS)

wait: venv ## Wait until every message of RUN is accounted for (TIMEOUT, HOST, NETWORK, NETWORK_SCALE)
	$(FANOUT) wait $(TARGET) --run $(call q,RUN) --timeout $(call q,TIMEOUT) $(if $(filter 0,$(value HOST)),--no-host) $(NETWORK_ARGS)

query: venv ## Run the saved query QUERY against the stack's logs
	$(FANOUT) insights 'queries/'$(call q,QUERY)'.logsinsights' $(TARGET)

report: venv ## Tables, CSV/JSON and plots for RUN, or across RUNS=id,id,... or SWEEP=<id|latest>
	$(FANOUT) report $(TARGET) $(if $(value SWEEP),--sweep $(call q,SWEEP),$(if $(value RUNS),--runs $(call q,RUNS),--run $(call q,RUN)))

compare: venv ## Change in median and p99 throughput from A to B (runs or sweep:<id>, comma-separated), with 95% CIs
	$(FANOUT) compare $(call q,A) $(call q,B)

demo: venv ## The whole experiment on the local backend, torn down afterwards (NETWORK, NETWORK_SCALE)
	$(FANOUT) demo $(NETWORK_ARGS)

sweep: venv ## Every cell of the lists CONCURRENCY x MEMORY x OBJECT_SIZE x ARCH x STRATEGY (or WORKLOAD=latency: SIZES x REPS) (NETWORK); RESUME=<id|latest>
	$(FANOUT) sweep --timeout $(call q,TIMEOUT) $(if $(filter 1,$(YES)),--yes) $(if $(RESUME),$(TARGET) \
	  --resume $(call q,RESUME),$(STACK_INPUTS) --multiplier $(call q,MULTIPLIER) --tag $(call q,TAG) \
	  --order $(call q,ORDER) $(if $(SEED),--seed $(call q,SEED)) $(if $(filter 1,$(KEEP_WARM)),--keep-warm) \
	  $(if $(filter 1,$(DESTROY_AFTER)),--destroy-after) $(NETWORK_ARGS) $(PIN_ARG) $(WORKLOAD_ARGS))

test: venv ## Run the test suite, a file per worker (.venv/bin/pytest -m 'not slow' skips the end-to-end tests)
	$(VENV)/bin/pytest -n auto --dist loadfile

bench: venv ## Run the benchmarks, or those named in BENCH (ratios against a baseline measured in the same run)
	$(VENV)/bin/python -m bench $(if $(value BENCH),$(call q,BENCH))

clean: ## Remove the virtualenvs and local state (not results/)
	rm -rf $(VENV) $(SCAN_VENV) .fanout
