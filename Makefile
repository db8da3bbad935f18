# Makefile for gpuhash: PGXS build of gpuhash.so from src/*.c (PostgreSQL-facing
# code) and cuda/ (the engine: plain C and CUDA), plus the engine tests, the
# test suites, the demo and the benchmarks.

EXTENSION = gpuhash
EXTVERSION = 0.1.0

MODULE_big = gpuhash
ENGINE_C = $(sort $(wildcard cuda/*.c))
ENGINE_CU = $(sort $(wildcard cuda/*.cu))
ENGINE_OBJS = $(ENGINE_C:.c=.o) $(ENGINE_CU:.cu=.o)
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c))) $(ENGINE_OBJS)

DATA = sql/$(EXTENSION)--$(EXTVERSION).sql
TESTS = $(sort $(filter-out sql/$(EXTENSION)--%,$(wildcard sql/*.sql)))
REGRESS = $(patsubst sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --load-extension=$(EXTENSION)

CUDA_HOME ?= /usr/local/cuda
NVCC = $(CUDA_HOME)/bin/nvcc
# sm_80 (A100) and sm_90 (H100/H200) machine code, plus PTX for newer chips.
CUDA_ARCH = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
            -gencode arch=compute_90,code=compute_90
NVCC_FLAGS = -O3 -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden $(CUDA_ARCH) -Icuda
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl -lpthread -lstdc++

PG_CPPFLAGS = -Icuda
PG_CFLAGS = -std=gnu11
SHLIB_LINK = $(CUDA_LIBS)
EXTRA_CLEAN = src/.pg-target test/engine/engine_test test/bench_devices test/bench_kernels results regression.diffs regression.out output_iso

# The CUDA objects have no LLVM bitcode; JIT inlining of the C parts is not
# worth a second toolchain.  (override: Makefile.global would set it.)
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: a changed header rebuilds every object of src/
$(patsubst %.c,%.o,$(wildcard src/*.c)): $(wildcard src/*.h) cuda/engine.h cuda/heap_page.h

# The objects of src/ are compiled against one PostgreSQL's headers: src/.pg-target
# names it, and building against another (PG_CONFIG=...) rebuilds them.
PG_TARGET := $(VERSION) $(includedir_server)
ifneq ($(PG_TARGET),$(shell cat src/.pg-target 2>/dev/null))
$(shell echo '$(PG_TARGET)' >src/.pg-target)
endif
$(patsubst %.c,%.o,$(wildcard src/*.c)): src/.pg-target

cuda/%.o: cuda/%.cu $(wildcard cuda/*.h cuda/*.cuh)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@

cuda/%.o: cuda/%.c $(wildcard cuda/*.h)
	$(CC) $(CFLAGS) -std=gnu11 -O2 -Wall -Icuda -c $< -o $@

# ---- engine unit tests (no PostgreSQL) ----
ENGINE_TEST_SRCS = $(sort $(wildcard test/engine/*.c))
test/engine/engine_test: $(ENGINE_TEST_SRCS) $(ENGINE_OBJS) $(wildcard test/engine/*.h)
	$(CC) -std=gnu11 -O2 -g -Wall -Icuda -o $@ $(ENGINE_TEST_SRCS) $(ENGINE_OBJS) $(CUDA_LIBS) -lm

# ---- multi-GPU scaling of the engine (no PostgreSQL; needs GPUs) ----
test/bench_devices: test/bench_devices.c $(ENGINE_OBJS) cuda/engine.h
	$(CC) -std=gnu11 -O2 -g -Wall -Icuda -I$(CUDA_HOME)/include -o $@ $< $(ENGINE_OBJS) $(CUDA_LIBS) -lm

# ---- gpuhash's kernels on one GPU, beside cuCollections and BGHT (no PostgreSQL) ----
test/bench_kernels: test/bench_kernels.c $(ENGINE_OBJS) cuda/engine.h
	$(CC) -std=gnu11 -O2 -g -Wall -Icuda -I$(CUDA_HOME)/include -o $@ $< $(ENGINE_OBJS) $(CUDA_LIBS) -lm

.PHONY: engine-test test demo bench bench-devices bench-anchors soak
bench-devices: test/bench_devices
	test/bench_devices
# test/bench_anchors.sh: CUCO_DIR and BGHT_DIR (the libraries' checkouts), LOG2_N,
# LOAD_FACTORS, REPS, ANCHOR_BIN, BUILD_ONLY
bench-anchors:
	bash test/bench_anchors.sh
# GH_TEST_BACKENDS: cpu, cuda or "cpu cuda" (default: cpu, plus cuda where a GPU is present)
engine-test: test/engine/engine_test
	test/engine/engine_test $(GH_TEST_BACKENDS)

# Everything: engine tests, pg_regress and pgTAP on a throwaway cluster.
test: all
	bash test/run-tests.sh

demo: all
	bash test/demo.sh

# gpuhash under load and through crashes, on a throwaway server (test/soak.sh:
# SOAK_SECONDS, SOAK_CLIENTS, SOAK_ROWS, GPUHASH_DEVICE)
soak: all
	bash test/soak.sh

bench: all
	bash test/bench.sh
