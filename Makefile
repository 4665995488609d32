# raider_ros: every target does its own set-up (scripts/setup.sh is idempotent and fast
# once done). Run from the repository root.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ENV := source scripts/env.sh &&
PYTEST_ARGS ?=
SCALE ?=
RETRIEVAL ?=
# house scale and retrieval run in the local pipeline (evaluation/local.py)
EVAL_MODE = $(if $(or $(SCALE),$(RETRIEVAL)),local,ros)
CASES ?= data/benchmark/dev
BACKEND ?= rules
OUT ?= out/evaluation
ARGS ?=

.PHONY: help setup build demo test test-unit test-node test-integration bench evaluate safety-eval qa-eval evaluate-learning clean

help:
	@echo "make demo      run the offline demo (no API key)"
	@echo "make test      run the whole test suite"
	@echo "make bench     run bench/*.py, figures to bench/results/<name>.json"
	@echo "make evaluate  CASES=<dir> BACKEND=<rules|openai|scripted> OUT=<dir> [SCALE=<objects>] [RETRIEVAL=<full|rag|rag-strict>] ARGS=\"<evaluate options>\""
	@echo "make safety-eval CASES=<dir> OUT=<dir> ARGS=\"<safety_eval options>\"  (Safety Chip benchmark)"
	@echo "make qa-eval   CASES=<dir> OUT=<dir> ARGS=\"<qa_eval options>\"  (questions about the robot's state)"
	@echo "make evaluate-learning  ARGS=\"--set dev|heldout|all --json <file> -v\"  the learning benchmark (triples)"

setup:
	@bash scripts/setup.sh

build: setup

demo: setup
	@$(ENV) python -m raider_ros.cli.demo

# the unit tier runs on two workers (pytest-xdist; it is CPU-bound and its tests share nothing),
# the node and integration tiers in one process (they time ROS graphs)
test: setup
	@rc=0; $(ENV) python -m pytest test/unit -n 2 $(PYTEST_ARGS) || rc=$$?; \
	$(ENV) python -m pytest test/node test/integration --durations=15 $(PYTEST_ARGS) || rc=$$?; exit $$rc

test-unit: setup
	@$(ENV) python -m pytest test/unit $(PYTEST_ARGS)

test-node: setup
	@$(ENV) python -m pytest test/node $(PYTEST_ARGS)

test-integration: setup
	@$(ENV) python -m pytest test/integration $(PYTEST_ARGS)

bench: setup
	@$(ENV) python bench/run_all.py

evaluate: setup
	@$(ENV) python -m raider_ros.cli.evaluate --mode $(EVAL_MODE) --cases "$(CASES)" --backend "$(BACKEND)" --out "$(OUT)" $(if $(SCALE),--scale $(SCALE)) $(if $(RETRIEVAL),--retrieval $(RETRIEVAL)) $(ARGS)

# the Safety Chip benchmark; CASES/OUT default to its own folders when not given
SAFETY_CASES = $(if $(filter command line environment,$(origin CASES)),$(CASES),data/safety/benchmark)
SAFETY_OUT = $(if $(filter command line environment,$(origin OUT)),$(OUT),out/safety)

safety-eval: setup
	@$(ENV) python -m raider_ros.cli.safety_eval --cases "$(SAFETY_CASES)" --out "$(SAFETY_OUT)" $(ARGS)

# the state Q&A benchmark; CASES and OUT default to its own directories when not given
qa-eval: setup
	@$(ENV) python -m raider_ros.cli.qa_eval --cases "$(if $(filter file,$(origin CASES)),data/state_qa/benchmark,$(CASES))" --out "$(if $(filter file,$(origin OUT)),out/qa_eval,$(OUT))" --backend "$(BACKEND)" $(ARGS)

evaluate-learning: setup
	@$(ENV) python -m raider_ros.memory.benchmark $(ARGS)

clean:
	rm -rf build install log bench/results out
