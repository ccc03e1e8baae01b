# s3-fanout: measure how fast S3 serves data to many concurrent Lambda functions.
# `make help` lists the targets. Every target goes through the `fanout` console script in .venv.

BACKEND     ?= local
STACK       ?= s3fanout
# The deploy inputs have no default here: the CLI owns them (fanout deploy --help). Unset, deploy
# and plan keep the deployed stack's value (a first deploy takes the default) and fire checks none.
CONCURRENCY ?=
MEMORY      ?=
OBJECT_SIZE ?=
REGION      ?=
ARCH        ?=
STRATEGY    ?=
MODE        ?=
PIN         ?=
MESSAGES    ?=
MULTIPLIER  ?= 10
TAG         ?= default
WORKLOAD    ?=
REMOTE_COPY ?= 0
RUN         ?= latest
RUNS        ?=
SWEEP       ?=
REFRESH     ?= 0
FORCE       ?= 0
AT_TARGET   ?=
A           ?=
B           ?=
TIMEOUT     ?=
FUNCTION_TIMEOUT ?=
EPHEMERAL_STORAGE ?=
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
STUDY       ?=
LOCAL       ?= 0
VERBOSE     ?= 0
SDK         ?=
KEYS        ?=
PYTHON      ?= python3

# The workloads' Make variables, VARIABLE=--flag, one line per workload (docs/architecture.md,
# *Adding a workload*; tests/test_workload_lists.py checks them against the drivers' registry):
# fire's and a sweep's options (a driver's OPTIONS; a sweep takes lists, docs/workloads.md), then
# the deploy-level ones (DEPLOY_OPTIONS), which deploy, plan and sweep take and fire checks against
# the stack. Unset, a variable passes nothing: the CLI owns the defaults.
WORKLOAD_OPTIONS := SIZES=--sizes REPS=--reps REP_ORDER=--rep-order CALL_CLIENT=--call-client
WORKLOAD_OPTIONS += JOBS=--jobs BLOCK=--block DEPTH=--depth FILE_SIZE=--file-size FROM=--from READ_MODE=--read-mode TARGET_GBPS=--target-gbps
WORKLOAD_OPTIONS += OPERATION=--operation SIZE=--size THREADS=--threads PART_SIZE=--part-size THRESHOLD=--threshold CLIENT=--client FAN=--fan FILES=--files DIRECTION=--direction PREFIXES=--prefixes CLIENT_PER_OBJECT=--client-per-object METHOD=--method
WORKLOAD_DEPLOY_OPTIONS := STRATEGY=--strategy
WORKLOAD_DEPLOY_OPTIONS += STORAGE=--storage EXPRESS_AZ=--express-az
WORKLOAD_DEPLOY_OPTIONS += REMOTE_REGION=--remote-region JOB_FILES=--job-files
WORKLOAD_VARIABLES := $(foreach pair,$(WORKLOAD_OPTIONS) $(WORKLOAD_DEPLOY_OPTIONS),$(firstword $(subst =, ,$(pair))))

VENV   := .venv
SCAN_VENV := .venv-scan
UV_VERSION := 0.13.9
# $(call install,VENV,ARGS): pip-install ARGS into the virtualenv VENV through uv (pinned), which
# resolves and unpacks the pinned dependencies in parallel (about 5 s where pip takes about a
# minute). uv reads no pip.conf: where uv cannot be installed or cannot reach an index pip can (a
# mirror configured for pip only), pip installs them instead. uv compiles the bytecode as pip does:
# where PYTHONDONTWRITEBYTECODE is set (many CI images) a package left uncompiled is compiled again
# by every process that imports it (about 3 CPU-s more for each start of the CLI or the emulator).
install = { $(1)/bin/pip install --quiet uv==$(UV_VERSION) && \
	$(1)/bin/uv pip install --quiet --compile-bytecode --python $(1)/bin/python $(2) ; } || $(1)/bin/pip install --quiet $(2)
FANOUT := $(VENV)/bin/fanout

# A variable set on the command line that no target reads is refused: unquoted, `make deploy
# STRATEGY=ranged connections=0` makes connections=0 a variable of its own and deploys ranged's
# defaults. Known: the `?=` variables above, the workloads' (WORKLOAD_VARIABLES), FANOUT (the CLI to
# run, which the tests set) and make's own.
KNOWN_VARIABLES := $(sort $(shell sed -n 's/^\([A-Z_]*\) *?=.*/\1/p' $(firstword $(MAKEFILE_LIST))) $(WORKLOAD_VARIABLES) FANOUT)
MAKES_OWN := SHELL .SHELLFLAGS MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKEFILES
GIVEN_VARIABLES := $(foreach name,$(.VARIABLES),$(if $(filter command line,$(origin $(name))),$(name)))
UNKNOWN_NAMES := $(filter-out $(KNOWN_VARIABLES) $(MAKES_OWN),$(GIVEN_VARIABLES))
UNKNOWN_VARIABLES := $(foreach name,$(UNKNOWN_NAMES),$(name)=$(value $(name)))
# The known names nearest to the unknown ones (CONCURENCY: did you mean CONCURRENCY?), each name
# quoted as q quotes a value; the script uses the standard library alone (no virtualenv yet).
NEAR_NAMES = $(shell '$(subst ','\'',$(value PYTHON))' $(dir $(firstword $(MAKEFILE_LIST)))drivers/fanout/common/near_names.py \
  $(foreach name,$(UNKNOWN_NAMES),'$(subst ','\'',$(name))') -- $(KNOWN_VARIABLES))
ifneq ($(UNKNOWN_VARIABLES),)
$(error unknown variable $(UNKNOWN_VARIABLES): $(if $(value STRATEGY),did you mean STRATEGY="$(value STRATEGY) \
  $(UNKNOWN_VARIABLES)"?; )$(NEAR_NAMES))
endif
# A value with a line break would end the recipe's shell line inside its quotes: refused, named.
define NEWLINE


endef
MULTILINE := $(strip $(foreach name,$(sort $(KNOWN_VARIABLES) $(GIVEN_VARIABLES)),$(if $(findstring $(NEWLINE),$(value $(name))),$(name))))
ifneq ($(MULTILINE),)
$(error $(MULTILINE) holds a line break: each value reaches the command as one line; give it on one)
endif
# $(call q,NAME): variable NAME's raw value (no make expansion of a `$` in it) as one shell word,
# single-quoted with any ' inside escaped. Every variable reaches the shell this way, so a value
# with spaces or shell characters arrives at the CLI as one argument, and the CLI validates it.
q = '$(subst ','\'',$(value $(1)))'
# $(call opt,--flag,NAME): the flag and NAME's value, only when NAME is set.
opt = $(if $(value $(2)),$(1)=$(call q,$(2)))
# $(call opts,LIST): opt of each VARIABLE=--flag of LIST; with a second argument, each set one
# also marked --deploy-level with its argparse name (fire: the deployment's value too).
opts = $(foreach pair,$(1),$(call opt,$(lastword $(subst =, ,$(pair))),$(firstword $(subst =, ,$(pair))))$(if $(2),$(if \
  $(value $(firstword $(subst =, ,$(pair)))), --deploy-level $(subst -,_,$(patsubst --%,%,$(lastword $(subst =, ,$(pair))))))))
TARGET = --backend=$(call q,BACKEND) --stack=$(call q,STACK)
# A sweep or study runs on a stack of its own (fanout.cloud.owner), never on STACK's default: it
# gets --stack only when STACK is given on the command line.
SWEEP_TARGET = --backend=$(call q,BACKEND) $(if $(filter command line,$(origin STACK)),--stack=$(call q,STACK))
PIN_ARG = $(if $(value PIN),--pin=$(call q,PIN))
# MODE, STRATEGY's old name, when STRATEGY is not set (STRATEGY is the download workload's, passed
# with WORKLOAD_DEPLOY_OPTIONS).
MODE_ARG = $(if $(value STRATEGY),,$(if $(value MODE),--strategy=$(call q,MODE)))
# The inputs every stack has (fanout.cloud.params.INPUTS), each only when set: deploy keeps the
# stack's value of one unset, fire refuses one that is not the stack's.
DEPLOYED_ARGS = $(call opt,--concurrency,CONCURRENCY) $(call opt,--memory,MEMORY) \
  $(call opt,--object-size,OBJECT_SIZE) $(call opt,--region,REGION) $(call opt,--architecture,ARCH) \
  $(call opt,--function-timeout,FUNCTION_TIMEOUT) $(call opt,--ephemeral-storage,EPHEMERAL_STORAGE)
DEPLOY_INPUTS = $(DEPLOYED_ARGS) $(MODE_ARG) $(call opt,--sdk,SDK) $(call opt,--keys,KEYS) \
  $(call opts,$(WORKLOAD_DEPLOY_OPTIONS))
STACK_INPUTS = $(TARGET) $(DEPLOY_INPUTS)
VERBOSE_ARG = $(if $(filter 1,$(value VERBOSE)),--verbose)
# report and compare: which downloads ran at target (docs/statistics.md); empty: 0.9.
AT_TARGET_ARG = $(if $(value AT_TARGET),--at-target=$(call q,AT_TARGET))
# The workload (empty: the CLI's default) and its options (docs/workloads.md): fire's, and a
# sweep's lists.
WORKLOAD_ARGS = $(if $(value WORKLOAD),--workload=$(call q,WORKLOAD)) $(call opts,$(WORKLOAD_OPTIONS))
# The workloads' deploy-level variables (STRATEGY, STORAGE, EXPRESS_AZ...) are deploy's too, so
# they may still be set when `make fire` runs: fire gets them marked --deploy-level, so that a run
# of a workload without that option ignores them rather than refusing them, and checks those it
# does not take against the stack, as it checks the other deploy inputs (DEPLOYED_ARGS).
FIRE_ARGS = $(WORKLOAD_ARGS) $(PIN_ARG) $(MODE_ARG) $(if $(MODE_ARG),--deploy-level strategy) \
  $(call opts,$(WORKLOAD_DEPLOY_OPTIONS),deploy-level) $(DEPLOYED_ARGS) $(if $(filter 1,$(value REMOTE_COPY)),--remote-copy)
NETWORK_ARGS = $(if $(value NETWORK),--network=$(call q,NETWORK)) --network-scale=$(call q,NETWORK_SCALE)
# The long command lines, as variables: a continuation inside a recipe is echoed as written (a
# dangling `\` and a line of blanks where an option is unset); in a variable it is one space.
FIRE_COMMAND_ARGS = $(TARGET) --multiplier=$(call q,MULTIPLIER) --tag=$(call q,TAG) \
  $(if $(value MESSAGES),--messages=$(call q,MESSAGES)) $(FIRE_ARGS)
SWEEP_COMMAND_ARGS = $(call opt,--timeout,TIMEOUT) $(if $(filter 1,$(YES)),--yes) $(VERBOSE_ARG) $(if $(RESUME),$(SWEEP_TARGET) \
  --resume=$(call q,RESUME),$(SWEEP_TARGET) $(DEPLOY_INPUTS) --multiplier=$(call q,MULTIPLIER) --tag=$(call q,TAG) \
  --order=$(call q,ORDER) $(if $(SEED),--seed=$(call q,SEED)) $(if $(filter 1,$(KEEP_WARM)),--keep-warm) \
  $(if $(filter 1,$(DESTROY_AFTER)),--destroy-after) $(NETWORK_ARGS) $(PIN_ARG) $(WORKLOAD_ARGS))
STUDY_COMMAND_ARGS = $(if $(value STUDY),$(call q,STUDY)) $(SWEEP_TARGET) $(if $(filter 1,$(LOCAL)),--local) \
  $(if $(filter 1,$(YES)),--yes) $(if $(RESUME),--resume=$(call q,RESUME)) $(call opt,--timeout,TIMEOUT) \
  $(if $(filter 1,$(DESTROY_AFTER)),--destroy-after) \
  $(if $(filter-out auto,$(value NETWORK_SCALE)),--network-scale=$(call q,NETWORK_SCALE)) $(VERBOSE_ARG)

.DEFAULT_GOAL := help
.PHONY: help venv test-tools emulator-up emulator-down emulator-status package deploy plan outputs destroy \
        run fire wait query report open compare demo sweep study test browser bench clean

help: ## List the targets and the variables they read
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo Variables: BACKEND=$(call q,BACKEND) STACK=$(call q,STACK) TAG=$(call q,TAG)
	@echo "  "CONCURRENCY=$(call q,CONCURRENCY) MEMORY=$(call q,MEMORY) OBJECT_SIZE=$(call q,OBJECT_SIZE) REGION=$(call q,REGION) ARCH=$(call q,ARCH)
	@echo "    (deploy, plan: unset keeps the deployed stack's value, a first deploy takes fanout deploy --help's default;"
	@echo "    it prints each change, old -> new; fire refuses one that is not the stack's; set only the one to change;"
	@echo "    OBJECT_SIZE units B KB MB GB TB KiB MiB GiB TiB, any letter case: 32mib is 32MiB)"
	@echo "  "STRATEGY=$(call q,STRATEGY) "(e.g. \"ranged connections=8 chunk_size=8MiB\", docs/strategies.md;"
	@echo "    \"repeated requests=10000 in_flight=10\": ab -n -c without keep-alive, a new connection per GET;"
	@echo "    deploy: the default of messages, fire: this run's; MODE is its old name)"
	@echo "  "WORKLOAD=$(call q,WORKLOAD) "(fire, sweep: what a message measures, as listed by fanout fire --help; docs/workloads.md)" SIZES=$(call q,SIZES) REPS=$(call q,REPS) \
	  "(latency: e.g. SIZES=\"1 1KB 1MB 100MB\" REPS=10; fire's STORAGE: the deployed classes it measures;" \
	  "REP_ORDER interleaved or by-class; CALL_CLIENT pooled or per-call)"
	@echo "  "JOBS=$(call q,JOBS) BLOCK=$(call q,BLOCK) DEPTH=$(call q,DEPTH) FILE_SIZE=$(call q,FILE_SIZE) FROM=$(call q,FROM) \
	  "(seqread: readers, bytes per GET, GETs in flight per job, each job's object, local or remote)"
	@echo "  "READ_MODE=$(call q,READ_MODE) TARGET_GBPS=$(call q,TARGET_GBPS) \
	  "(seqread: fixed, or prefetch as Mountpoint v1.0.0 with a pool sized for TARGET_GBPS Gbit/s)"
	@echo "  "OPERATION SIZE THREADS PART_SIZE THRESHOLD CLIENT FAN FILES DIRECTION PREFIXES CLIENT_PER_OBJECT METHOD \
	  "(transfer: e.g. OPERATION=upload SIZE=64MiB THREADS=4 PART_SIZE=8MiB; drivers/fanout/workloads/transfer/README.md)"
	@echo "  "PIN=$(call q,PIN) "(fire: connect to one address of the bucket's endpoint, an IP, or auto: spread the"
	@echo "    messages over the addresses it resolves to; TLS stays on the name; none: where DNS says; docs/strategies.md)"
	@echo "  "MESSAGES=$(call q,MESSAGES) MULTIPLIER=$(call q,MULTIPLIER) RUN=$(call q,RUN) QUERY=$(call q,QUERY)
	@echo "  "RUNS=$(call q,RUNS) SWEEP=$(call q,SWEEP) "(report across these runs, or a sweep's)" A=$(call q,A) B=$(call q,B) "(compare;" \
	  FORCE=$(call q,FORCE) "1: also runs made under different networks)"
	@echo "  "REFRESH=$(call q,REFRESH) "(report: 1 reads RUN's logs again instead of its saved records; refused if they hold fewer)"
	@echo "  "AT_TARGET=$(call q,AT_TARGET) "(report, compare: a download ran at target at this fraction of the target concurrency or more; 0.9 when empty)"
	@echo "  "TIMEOUT=$(call q,TIMEOUT) "(wait, and a sweep's cell, gives up after this many seconds; empty: 1800)"
	@echo "  "FUNCTION_TIMEOUT=$(call q,FUNCTION_TIMEOUT) "(deploy, as CONCURRENCY: function timeout, s; the queue's visibility timeout is 6x it)"
	@echo "  "EPHEMERAL_STORAGE=$(call q,EPHEMERAL_STORAGE) "(deploy, as CONCURRENCY: /tmp in MB, 512-10240, or auto: the object plus 64 MiB)"
	@echo "  "STORAGE=$(call q,STORAGE) EXPRESS_AZ=$(call q,EXPRESS_AZ) "(deploy, as CONCURRENCY, and sweep: standard (default) and/or express, the latter in zone ID EXPRESS_AZ"
	@echo "    such as use1-az4; AWS backend only; docs/storage.md)"
	@echo "  "REMOTE_REGION=$(call q,REMOTE_REGION) "(deploy: a second bucket in this region for seqread's FROM=remote; none: remove it)"
	@echo "  "JOB_FILES=$(call q,JOB_FILES) "(deploy, as CONCURRENCY: seqread's objects the role reads, JOBSxFILE_SIZE words such as"
	@echo "    \"4x64MiB 16x1GiB\"; fire refuses a run that reads others; a sweep declares what its cells read; drivers/fanout/workloads/seqread/README.md)"
	@echo "  "SDK=$(call q,SDK) "(deploy: bundled, the zip's pinned boto3/botocore/s3transfer, or runtime, the Lambda"
	@echo "    runtime's own, which varies by runtime release and region; docs/strategies.md)"
	@echo "  "KEYS=$(call q,KEYS) "(deploy: copies of the object, each under its own prefix, 1-100; message seq reads"
	@echo "    copy seq mod KEYS; docs/strategies.md)"
	@echo "  "HOST=$(call q,HOST) "(local backend: wait hosts the function; HOST=0 when \`make run\` does)"
	@echo "  "NETWORK=$(call q,NETWORK) NETWORK_SCALE=$(call q,NETWORK_SCALE) "(local backend: run, wait, demo and sweep shape S3 traffic"
	@echo "    with a network model: none, lambda-2024 (when unset), lambda-2026 or a .toml/.json file; docs/network-model.md)"
	@echo Sweep: CONCURRENCY MEMORY OBJECT_SIZE ARCH take lists '("1 5 10" or "1,5,10"; deploy refuses a list),'
	@echo "  "STRATEGY a list separated by "';'" '("stream; ranged connections=4");' ORDER=$(call q,ORDER) "(or shuffled)"
	@echo "  "PIN a list '("none auto 127.0.0.2")', one cell per value, none the unpinned one '(download workload)'
	@echo "  "WORKLOAD=latency: SIZES lists separated by "';'" '("1 1KB; 1MB"),' REPS a list '("3 10")'
	@echo "  "WORKLOAD=transfer: SIZE, THREADS, PART_SIZE, METHOD, CLIENT lists '("1 2 4 8")'
	@echo "  "VERBOSE=$(call q,VERBOSE) "(deploy, destroy, sweep, demo: 1 shows Terraform's output, else written to the stack's terraform.log)"
	@echo "  Unknown variables set on the command line are refused: quote a strategy with its options, STRATEGY=\"ranged connections=4\""
	@echo "  "SEED=$(call q,SEED) KEEP_WARM=$(call q,KEEP_WARM) DESTROY_AFTER=$(call q,DESTROY_AFTER) YES=$(call q,YES) RESUME=$(call q,RESUME) "(a sweep id or latest)"
	@echo Study: STUDY=$(call q,STUDY) LOCAL=$(call q,LOCAL) "(make study lists the studies in studies/ with their estimates; STUDY=<name> runs one as a sweep"
	@echo "    and writes its report beside the published figures; LOCAL=1: its local variant; docs/studies.md)"
	@echo Bench: BENCH=$(call q,BENCH) "(benchmarks to run, e.g. \"strategy_speed network_truth\" or cli_startup; empty: all)"

# Two steps: the runtime dependencies (all that deploy, the demo, a sweep or a study need), then
# the test tools on top (pytest, hypothesis, duckdb, import-linter and the scanner's own
# virtualenv), which `make test` and `make bench` add and `make demo` never waits for.
$(VENV)/.installed: pyproject.toml
	$(call q,PYTHON) -m venv $(VENV)
	$(call install,$(VENV),-e .)
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(call install,$(VENV),-e '.[dev]')
	@touch $@

# checkov, the IaC scanner the tests run over infra/, pins an older boto3: a virtualenv of its own.
$(SCAN_VENV)/.installed: tests/infra/checkov-requirements.txt
	$(call q,PYTHON) -m venv $(SCAN_VENV)
	$(call install,$(SCAN_VENV),-r tests/infra/checkov-requirements.txt)
	@touch $@

venv: $(VENV)/.installed ## Create .venv with the pinned runtime dependencies (what every command but test and bench needs)

test-tools: venv $(VENV)/.installed-dev $(SCAN_VENV)/.installed ## Add the test tools to .venv, and .venv-scan (the scanner's)

emulator-up: venv ## Start the embedded AWS emulator (local backend)
	$(FANOUT) emulator start

emulator-down: venv ## Stop the embedded AWS emulator
	$(FANOUT) emulator stop

# `fanout emulator status` exits 3 when the emulator is not running (for scripts to test); to
# `make`, which asks, that is an answer, so it exits 0; any other failure still fails.
emulator-status: venv ## Is the embedded emulator running, and where (exit 0 either way)
	@$(FANOUT) emulator status || [ $$? -eq 3 ]

package: venv ## Build the function zip for ARCH and SDK (deterministic)
	$(FANOUT) package $(call opt,--architecture,ARCH) $(call opt,--sdk,SDK)

deploy: venv ## Deploy (CONCURRENCY MEMORY OBJECT_SIZE REGION ARCH STRATEGY FUNCTION_TIMEOUT EPHEMERAL_STORAGE STORAGE EXPRESS_AZ SDK KEYS REMOTE_REGION JOB_FILES; unset: kept) (VERBOSE)
	$(FANOUT) deploy $(STACK_INPUTS) $(VERBOSE_ARG)

plan: venv ## Show what deploy would change
	$(FANOUT) plan $(STACK_INPUTS)

outputs: venv ## Print the deployed stack's outputs
	$(FANOUT) outputs $(TARGET)

destroy: venv ## Remove everything the stack created (safe when nothing is deployed) (VERBOSE)
	$(FANOUT) destroy $(TARGET) $(VERBOSE_ARG)

run: venv ## Local backend: host the function until its queue is drained (NETWORK, NETWORK_SCALE)
	$(FANOUT) host $(TARGET) $(NETWORK_ARGS)

fire: venv ## Send MESSAGES (default MULTIPLIER x CONCURRENCY) messages tagged TAG, of WORKLOAD (STRATEGY, PIN; SIZES REPS STORAGE; REMOTE_COPY)
	$(FANOUT) fire $(FIRE_COMMAND_ARGS)

wait: venv ## Wait until every message of RUN is accounted for (TIMEOUT, HOST, NETWORK, NETWORK_SCALE)
	$(FANOUT) wait $(TARGET) --run=$(call q,RUN) $(call opt,--timeout,TIMEOUT) $(if $(filter 0,$(value HOST)),--no-host) $(NETWORK_ARGS)

query: venv ## Run the saved query QUERY against the stack's logs
	$(FANOUT) insights $(call q,QUERY) $(TARGET)

report: venv ## Tables, CSV/JSON and plots for RUN (from its saved records once reported), or across RUNS=id,... or SWEEP=<id|latest>
	$(FANOUT) report $(TARGET) $(if $(value SWEEP),--sweep=$(call q,SWEEP),$(if $(value RUNS),--runs=$(call q,RUNS),--run=$(call q,RUN)))$(if $(filter 1,$(REFRESH)), --refresh) $(AT_TARGET_ARG)

open: venv ## Print the path of the newest report page (index.html) under results/; open it where a desktop is
	$(FANOUT) open

compare: venv ## Change in median and p99 throughput from A to B (both needed: runs or sweep:<id>, comma-separated), with 95% CIs
	$(FANOUT) compare $(call q,A) $(call q,B) $(AT_TARGET_ARG) $(if $(filter 1,$(FORCE)),--force)

demo: venv ## The whole experiment on the local backend, torn down afterwards (NETWORK, NETWORK_SCALE)
	$(FANOUT) demo $(NETWORK_ARGS) $(VERBOSE_ARG)

sweep: venv ## Every cell of the lists CONCURRENCY x MEMORY x OBJECT_SIZE x ARCH x STRATEGY (or WORKLOAD=latency: SIZES x REPS) (NETWORK); RESUME=<id|latest>
	$(FANOUT) sweep $(SWEEP_COMMAND_ARGS)

study: venv ## List the studies with their estimates, or run STUDY (LOCAL=1: its local variant) and compare it with its source (YES, RESUME, DESTROY_AFTER)
	$(FANOUT) study $(STUDY_COMMAND_ARGS)

# Most of the suite runs on four times as many workers as cores: much of its time is spent waiting
# (Terraform's fixed SQS waits, queues draining), not computing; at three per core, the cores still
# idled about a tenth of the run. The tests marked `timing` assert on wall-clock rates, so they run
# afterwards, on their own, even when the first run failed (the recipe's status is the worse of the
# two): two workers per core, as their shaped transfers mostly sleep (at one per core, the machine
# was three quarters idle). tests/conftest.py schedules a module on one worker and the slow modules
# first.
CORES := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
WAITING_WORKERS := $(shell echo $$((4 * $(CORES))))
TIMING_WORKERS := $(shell echo $$((2 * $(CORES))))

# The suite starts hundreds of Python processes (the CLI, hosts, benchmarks): where
# PYTHONDONTWRITEBYTECODE is set (many CI images), each would compile this repository's modules
# again, and every worker would rewrite every test module again, instead of reading them compiled.
test: export PYTHONDONTWRITEBYTECODE =
test: test-tools ## Run the test suite: the timing tests last (.venv/bin/pytest -m 'not slow' skips the end-to-end tests)
	$(VENV)/bin/pytest -n $(WAITING_WORKERS) -m "not timing" ; status=$$? ; \
	$(VENV)/bin/pytest -n $(TIMING_WORKERS) -m timing && exit $$status

# The report pages' tests (tests/test_report_page.py) open them in headless Chromium: Debian's, with
# its driver. Root installs it (.ci/run does, in CI); elsewhere those tests are skipped and say so.
BROWSER_PACKAGES = chromium chromium-driver
browser: ## Install Chromium and chromedriver for the report pages' browser tests (Debian's apt-get, as root)
	apt-get install -y $(BROWSER_PACKAGES) || { apt-get update && apt-get install -y $(BROWSER_PACKAGES); }

bench: test-tools ## Run the benchmarks, or those named in BENCH (ratios against a same-run baseline); ends with a table of every figure against its target (exit 1: a target missed, 2: a benchmark failed)
	$(VENV)/bin/python -m bench $(if $(value BENCH),$(call q,BENCH))

clean: ## Remove the virtualenvs and local state (not results/)
	rm -rf $(VENV) $(SCAN_VENV) .fanout
