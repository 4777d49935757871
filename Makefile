# ascend-mp: every target sets up .venv first, so each works on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup test test-zoo lint quick demo bench fuzz lit models longtail conformance conformance-zoo clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

test: lint
	$(BIN)/python -m pytest

# The zoo models make test leaves out for their cost (test/zoo_util.py: vgg11 and resnet50 everywhere,
# efficientnet_b0's IREE compiles, mobilenet_v2's every-mode IREE test): 7-9 minutes and 6.4 GB on the 2-core
# machine. CI runs it after make test (.ci/run).
test-zoo: setup
	ASCEND_MP_ZOO_LARGE=1 $(BIN)/python -m pytest -m zoo_large

# ruff (lint + format check) and pyright (basic), configured in pyproject.toml. pyright reads the package through a
# link tree laid out as the wheel installs it (dialects/ and passes/ inside ascend_mp/), made anew each run.
TYPECHECK := build/typecheck/ascend_mp
lint: setup
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)
	cp -rs "$$PWD/ascend_mp/." $(TYPECHECK)/
	for d in dialects passes examples; do cp -rs "$$PWD/$$d" $(TYPECHECK)/$$d; done
	$(BIN)/pyright

# The edit-test loop: everything in-process, stop at the first failure; leaves out the random-graph
# fuzzing, training runs and the few tests that start real processes (make test runs them all).
quick: setup
	$(BIN)/python -m pytest -x -q --ignore=test/test_fuzz.py --ignore=test/train/test_train.py \
	    -k "not console_script and not real_process and not cli_entry_point and not does_not_import"

lit: setup
	$(BIN)/lit -sv test/filecheck

demo: setup
	$(BIN)/python -m ascend_mp.demo

bench: setup
	$(BIN)/python benchmarks/run.py

# The model zoo (CNNs, ViT, BERT, GPT-2, LSTM, GRU; random weights) from both torch exporters into models/out (git-ignored);
# then its skeletons (models/zoo, committed: the graphs with each large weight as statistics), which make test redraws
# where models/out is absent, and the two torch exports the training tests train (test/train/data, committed).
# torch 2.13.0 from the index is a CPU build.
models: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,models]'
	$(BIN)/python models/export.py
	$(BIN)/python models/skeleton.py
	$(BIN)/python models/train_exports.py

# The long tail: 28 architectures beyond the zoo (torchvision, segmentation, ViT/Swin, HF encoders, encoder-decoders,
# decoder-only LLMs, speech encoders), both exporters, imported and checked against onnxruntime and under every mode.
longtail: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,models]'
	$(BIN)/python models/longtail.py

# Differential conformance of the framework policies against the frameworks themselves, each installed into its own
# cached venv (not part of make test): TensorFlow 2.21 (CPU wheel) runs grappler's auto_mixed_precision; PyTorch
# 2.13 (CPU wheel) runs its CUDA autocast kernels on fake CUDA tensors; MindSpore 2.10 (numpy<2) runs amp's rewrite.
# docs/conformance.md describes each and the figures.
CONFORMANCE := $(HOME)/.cache/ascend-mp/venvs
$(CONFORMANCE)/tf/.installed:
	test -x $(CONFORMANCE)/tf/bin/python || $(PYTHON) -m venv $(CONFORMANCE)/tf
	$(CONFORMANCE)/tf/bin/python -m pip install --quiet --disable-pip-version-check 'tensorflow-cpu==2.21.*'
	touch $@

$(CONFORMANCE)/torch/.installed:
	test -x $(CONFORMANCE)/torch/bin/python || $(PYTHON) -m venv $(CONFORMANCE)/torch
	$(CONFORMANCE)/torch/bin/python -m pip install --quiet --disable-pip-version-check 'torch==2.13.0'
	touch $@

$(CONFORMANCE)/mindspore/.installed:
	test -x $(CONFORMANCE)/mindspore/bin/python || $(PYTHON) -m venv $(CONFORMANCE)/mindspore
	$(CONFORMANCE)/mindspore/bin/python -m pip install --quiet --disable-pip-version-check 'mindspore==2.10.*' 'numpy<2'
	touch $@

conformance: setup $(CONFORMANCE)/tf/.installed $(CONFORMANCE)/torch/.installed $(CONFORMANCE)/mindspore/.installed
	$(BIN)/python conformance/run.py tf --graphs 500
	$(BIN)/python conformance/run.py tf --graphs 500 --dtype bf16
	$(BIN)/python conformance/run.py tf --graphs 500 --level TREAT_INFER_AS_DENY
	$(BIN)/python conformance/run.py tf --graphs 500 --level UNSAFE_FORCE_ALL
	$(BIN)/python conformance/run.py torch --graphs 500
	$(BIN)/python conformance/run.py torch --graphs 500 --dtype bf16
	$(BIN)/python conformance/run.py mindspore --graphs 500 --amp-level O1
	$(BIN)/python conformance/run.py mindspore --graphs 500 --amp-level O2
	$(BIN)/python conformance/run.py mindspore --graphs 500 --amp-level O3
	$(MAKE) conformance-zoo

# The same harnesses over every model of the zoo (models/out, `make models`), one model per framework process;
# each run prints one skipped line when models/out holds no model.
conformance-zoo: setup $(CONFORMANCE)/tf/.installed $(CONFORMANCE)/torch/.installed $(CONFORMANCE)/mindspore/.installed
	$(BIN)/python conformance/run.py tf --zoo all
	$(BIN)/python conformance/run.py tf --zoo all --dtype bf16
	$(BIN)/python conformance/run.py torch --zoo all
	$(BIN)/python conformance/run.py torch --zoo all --dtype bf16
	$(BIN)/python conformance/run.py mindspore --zoo all --amp-level O1 --max-mb 200
	$(BIN)/python conformance/run.py mindspore --zoo all --amp-level O2 --max-mb 200
	$(BIN)/python conformance/run.py mindspore --zoo all --amp-level O3 --max-mb 200

# make test draws fixed examples (derandomised, test/conftest.py); fuzz draws new ones: the random-graph fuzzer at
# 10000 graphs, then every other property test with fresh random examples.
fuzz: setup
	ASCEND_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q test/test_fuzz.py
	$(BIN)/python -m pytest -q -m hypothesis --hypothesis-profile=explore --ignore=test/test_fuzz.py

clean:
	rm -rf $(VENV) build *.egg-info test/filecheck/Output .pytest_cache .hypothesis
