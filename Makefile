# raider_ros: every target does its own set-up (scripts/setup.sh is idempotent and fast
# once done). Run from the repository root.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ENV := source scripts/env.sh &&
PYTEST_ARGS ?=
CASES ?= data/benchmark/dev
BACKEND ?= rules
OUT ?= out/evaluation
ARGS ?=

.PHONY: help setup build demo test test-unit test-node test-integration bench evaluate evaluate-learning clean

help:
	@echo "make demo      run the offline demo (no API key)"
	@echo "make test      run the whole test suite"
	@echo "make bench     run bench/*.py, figures to bench/results/<name>.json"
	@echo "make evaluate  CASES=<dir> BACKEND=<rules|openai|scripted> OUT=<dir> ARGS=\"<evaluate options>\""
	@echo "make evaluate-learning  ARGS=\"--set dev|heldout|all --json <file> -v\"  the learning benchmark (triples)"

setup:
	@bash scripts/setup.sh

build: setup

demo: setup
	@$(ENV) python -m raider_ros.cli.demo

test: setup
	@$(ENV) python -m pytest test $(PYTEST_ARGS)

test-unit: setup
	@$(ENV) python -m pytest test/unit $(PYTEST_ARGS)

test-node: setup
	@$(ENV) python -m pytest test/node $(PYTEST_ARGS)

test-integration: setup
	@$(ENV) python -m pytest test/integration $(PYTEST_ARGS)

bench: setup
	@$(ENV) python bench/run_all.py

evaluate: setup
	@$(ENV) python -m raider_ros.cli.evaluate --mode ros --cases "$(CASES)" --backend "$(BACKEND)" --out "$(OUT)" $(ARGS)

evaluate-learning: setup
	@$(ENV) python -m raider_ros.memory.benchmark $(ARGS)

clean:
	rm -rf build install log bench/results out
