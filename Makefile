# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pyuprof: bpf/*.bpf.c -> .bpf.o -> .skel.h -> user objects -> build/pyuprof (one binary).
OUTPUT  ?= build
PREFIX  ?= /usr/local
ARCH    ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX := vmlinux/$(ARCH)/vmlinux.h
CLANG   ?= clang
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
PKGS    := libbpf libelf libdw zlib capstone
CFLAGS  ?= -g -O2 -Wall -Wextra
# Recursively expanded: pkg-config runs after the deps target has installed it.
ALL_CFLAGS = $(CFLAGS) -D_GNU_SOURCE -Iinclude -Iuser -I$(OUTPUT) $(shell pkg-config --cflags $(PKGS))
LDLIBS     = $(shell pkg-config --libs $(PKGS))
Q       := $(if $(filter 1,$(V)),,@)
msg      = $(if $(filter 1,$(V)),,@printf '  %-8s %s\n' "$(1)" "$(2)";)

# user/ in folders by stage; each folder may include only those listed in LAYERS (check-layers)
USER_DIRS := base target inject profile output record cmd
USER_SRCS := $(filter-out user/cmd/main.c,$(wildcard $(USER_DIRS:%=user/%/*.c)))
USER_ASM  := $(wildcard $(USER_DIRS:%=user/%/*.S))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) \
	     $(patsubst user/%.S,$(OUTPUT)/user/%.o,$(USER_ASM))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

.PHONY: all check-layers check-words deps demo demo-compile test test-asan asan fuzz fuzz-build unit bench bench-tools bench-soak \
	bench-soak-attach bench-soak-subprocesses bench-fidelity bench-soak-forks \
	bench-regrtest bench-realjob bench-whole vmlinux clean install
all: $(OUTPUT)/pyuprof

# What the build needs; with `make test` also what the tests need (chromium, node, go, ...):
# one deps target, so that a parallel make runs one apt-get at a time.
DEPS_SET := $(if $(filter test,$(MAKECMDGOALS)),test,build)
deps:
	$(Q)scripts/install-deps.sh $(DEPS_SET)

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h include/*.h) $(VMLINUX) | $(OUTPUT) deps
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -Ivmlinux/$(ARCH) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/user/%.o: user/%.c | deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# the trampoline's code, copied into targets (inject/tramp_code.S): assembled, never run here
$(OUTPUT)/user/%.o: user/%.S | deps
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Iinclude -Iuser -I$(OUTPUT)/user/inject -MMD -MP -c $< -o $@

# The part of the page written in C (inject/tramp_cfuncs.c), built to run from any address in
# a target: no relocation (it reaches everything through its argument), no data, no calls out
# of it, no SSE; its .text is .incbin'd into tramp_code.S, which calls it at CF_BLOB_ENTRY.
# (Its ordinary build is in libpyuprof, for the unit tests.)
CF_BLOB_CFLAGS := -O2 -fPIC -ffreestanding -fno-builtin -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-jump-tables -fcf-protection=none \
	-fno-reorder-blocks-and-partition -mgeneral-regs-only -Wall -Wextra -Werror
CF_BLOB := $(OUTPUT)/user/inject/tramp_cfuncs.bin
$(CF_BLOB): user/inject/tramp_cfuncs.c user/inject/tramp_cfuncs.h include/cfuncs.h | deps
	$(call msg,BLOB,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(CF_BLOB_CFLAGS) -Iinclude -Iuser -c $< -o $@.o
	$(Q)if [ -n "$$(readelf -rW $@.o | grep -E '^Relocation section')" ] || \
	    [ -n "$$(size -A $@.o | awk '$$1 ~ /^\.(data|bss|rodata)/ && $$2 > 0')" ]; then \
		echo "$<: the page's build has relocations or data of its own" >&2; exit 1; fi
	$(Q)objcopy -O binary -j .text $@.o $@
	$(Q)printf '#define CF_BLOB_PATH "%s"\n#define CF_BLOB_ENTRY 0x%s\n' "$@" \
		"$$(nm $@.o | awk '$$3 == "tramp_cf_mon" { print $$1 }')" > $(@D)/tramp_cfuncs_blob.h
$(OUTPUT)/user/inject/tramp_code.o: $(CF_BLOB)

# The flame graph's stylesheet and script, linked in as they are (user/output/flamegraph_assets.c): the
# script sits in a CDATA section, the stylesheet in plain XML text.
FLAMEGRAPH_ASSETS := user/output/assets/flamegraph.css user/output/assets/flamegraph.js
$(OUTPUT)/user/output/flamegraph_assets.o: $(FLAMEGRAPH_ASSETS) $(OUTPUT)/assets.checked

$(OUTPUT)/assets.checked: $(FLAMEGRAPH_ASSETS) | $(OUTPUT)
	$(Q)if grep -q ']]>' user/output/assets/flamegraph.js; then echo "flamegraph.js holds ]]>" >&2; exit 1; fi
	$(Q)if grep -q '[<&]' user/output/assets/flamegraph.css; then echo "flamegraph.css holds < or &" >&2; exit 1; fi
	$(Q)touch $@

# Only the modules that touch the skeleton wait for it.
$(OUTPUT)/user/record/probes.o: $(OUTPUT)/pyuprof.skel.h
$(OUTPUT)/user/inject/hold_guard.o: $(OUTPUT)/hold_guard.skel.h

$(OUTPUT)/libpyuprof.a: $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The layout table's offsets must fit the BPF programs' read windows (scripts/check-layouts.c)
$(OUTPUT)/check-layouts: scripts/check-layouts.c $(OUTPUT)/user/target/py_layouts.o
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@

$(OUTPUT)/layouts.checked: $(OUTPUT)/check-layouts
	$(call msg,CHECK,layout table against the BPF read windows)
	$(Q)$< && touch $@

$(OUTPUT)/pyuprof: $(OUTPUT)/user/cmd/main.o $(OUTPUT)/libpyuprof.a | $(OUTPUT)/layouts.checked
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/unit/%.c tests/unit/test.h tests/unit/pythons.h $(OUTPUT)/libpyuprof.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $< $(OUTPUT)/libpyuprof.a $(LDLIBS) -lm -o $@

# test_probe_site reads code built to test it (never run): a shared object of its own
$(OUTPUT)/tests/probe_site_cases.so: tests/unit/probe_site_cases.S | $(OUTPUT)/tests
	$(call msg,AS,$@)
	$(Q)$(CC) -shared -nostdlib $< -o $@
$(OUTPUT)/tests/test_probe_site: $(OUTPUT)/tests/probe_site_cases.so
$(OUTPUT)/tests/test_probe_site: ALL_CFLAGS += -DCASES_SO='"$(OUTPUT)/tests/probe_site_cases.so"'
# test_inline_init's: the same code twice, the second with a _PyType_NewManagedObject symbol
$(OUTPUT)/tests/inline_init_cases.so: tests/unit/inline_init_cases.S | $(OUTPUT)/tests
	$(call msg,AS,$@)
	$(Q)$(CC) -shared -nostdlib $< -o $@
$(OUTPUT)/tests/inline_init_cases_sym.so: tests/unit/inline_init_cases.S | $(OUTPUT)/tests
	$(call msg,AS,$@)
	$(Q)$(CC) -DWITH_SYM -shared -nostdlib $< -o $@
$(OUTPUT)/tests/test_inline_init: $(OUTPUT)/tests/inline_init_cases.so \
	$(OUTPUT)/tests/inline_init_cases_sym.so
$(OUTPUT)/tests/test_inline_init: ALL_CFLAGS += \
	-DCASES_SO='"$(OUTPUT)/tests/inline_init_cases.so"' \
	-DCASES_SYM_SO='"$(OUTPUT)/tests/inline_init_cases_sym.so"'

unit: $(UNIT_BINS)

# The same pyuprof and unit tests built with AddressSanitizer and UBSan (any finding aborts)
# into build-asan/; run-tests.sh runs them (scripts/run-tests.sh, "asan" part).
ASAN_OUT    := build-asan
ASAN_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	       -fno-sanitize-recover=all -Wall -Wextra
asan:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ASAN_OUT) CC=clang CFLAGS="$(ASAN_CFLAGS)" \
		$(ASAN_OUT)/pyuprof unit

# libFuzzer harnesses (tests/fuzz/fuzz_*.c), with ASan and UBSan, into build-fuzz/.
FUZZ_OUT    := build-fuzz
FUZZ_SRCS   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,$(FUZZ_OUT)/%,$(FUZZ_SRCS))
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	       -fno-sanitize-recover=all -Wall -Wextra
FUZZ_SECONDS ?= 30
ifneq ($(OUTPUT),$(FUZZ_OUT))
$(FUZZ_OUT)/libpyuprof.a: FORCE
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(FUZZ_OUT) CC=clang CFLAGS="$(FUZZ_CFLAGS)" \
		$(FUZZ_OUT)/libpyuprof.a
endif

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OUT)/libpyuprof.a
	$(call msg,FUZZ-CC,$@)
	$(Q)clang $(subst fuzzer-no-link,fuzzer,$(FUZZ_CFLAGS)) -D_GNU_SOURCE -Iinclude -Iuser \
		-I$(FUZZ_OUT) -Itests/fuzz $(shell pkg-config --cflags $(PKGS)) $< \
		$(FUZZ_OUT)/libpyuprof.a $(LDLIBS) -o $@

fuzz-build: $(FUZZ_BINS)

# Each harness for FUZZ_SECONDS (30) from its committed corpus (tests/fuzz/corpus/NAME/).
fuzz: fuzz-build
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-fuzz.sh

# Which folder of user/ may include which (docs/ARCHITECTURE.md, "The tree"): a stage uses the
# ones before it, never one after.
LAYERS := base: target:base inject:base,target profile:base output:base,profile \
	  record:base,target,inject,profile,output cmd:base,target,inject,profile,output,record
check-layers:
	$(Q)for l in $(LAYERS); do d=$${l%%:*}; ok=$$d,$${l#*:}; \
	  for x in $$(grep -rhoE '^#include "[a-z_]+/' user/$$d | cut -d'"' -f2 | cut -d/ -f1 | sort -u); do \
	    case ,$$ok, in *,$$x,*) ;; *) echo "user/$$d/ includes $$x/ (LAYERS in the Makefile)" >&2; exit 1;; esac; \
	  done; done

# The project speaks of itself: results by date and commit, comments by why. Sessions counted
# or placed in time (an ordinal, or this, last, next ... before the word) fail, one line per
# file:line (scripts/check-words.sh).
check-words:
	$(Q)scripts/check-words.sh

test: all unit asan fuzz-build check-layers check-words
	$(Q)scripts/run-tests.sh

test-asan: asan
	$(Q)scripts/run-tests.sh asan

demo: all
	$(Q)scripts/demo.sh

# PyTorch compiling small models (Debian's python3-torch, installed if missing), recorded
demo-compile: all
	$(Q)scripts/demo-compile.sh

# the benchmark's own tools only (bench/run.sh checks for them): counting-only probes, the replay
bench-tools: all $(OUTPUT)/bench/bare $(OUTPUT)/bench/replay

# about an hour: rewrites bench/RESULTS.md (all but its Findings)
bench: bench-tools
	$(Q)bench/run.sh

# where the time goes, by pyuprof (compensated or not), cProfile and samplers (bench/FIDELITY.md)
bench-fidelity: all
	$(Q)bench/fidelity.sh

# ten minutes: pyuprof's peak RSS over a full-rate recording (bench/SOAK.md)
bench-soak: all
	$(Q)bench/soak.sh

# CYCLES (1000) attach/detach cycles per interpreter, pyuprof stopped in every way (SOAK.md)
bench-soak-attach: all
	$(Q)bench/soak-attach.sh

# ROUNDS (300) --subprocesses recordings SIGKILLed midway; the fixture checks every result
bench-soak-subprocesses: all
	$(Q)bench/soak-subprocesses.sh

# forked children while recorded, launch and attach, and followed children left unrun (SOAK.md)
bench-soak-forks: all
	$(Q)bench/soak-forks.sh

# a real program's own tests (sympy's core, Debian's 3.11) recorded every way (REALJOB.md)
bench-realjob: all
	$(Q)bench/realjob.sh

# the whole command as a user times it, native, cProfile and pyuprof, and pyuprof's fixed part
# step by step (bench/RESULTS.md, "Whole command")
bench-whole: all
	$(Q)bench/whole_command.sh

# CPython's own regression tests, natively, recorded and under repeated attaches (REGRTEST.md)
bench-regrtest: all
	$(Q)bench/regrtest.sh

vmlinux:
	$(Q)scripts/gen-vmlinux.sh $(VMLINUX)

install: all
	install -D -m 0755 $(OUTPUT)/pyuprof $(DESTDIR)$(PREFIX)/bin/pyuprof

clean:
	rm -rf $(OUTPUT) $(ASAN_OUT) $(FUZZ_OUT) demo.prof

-include $(wildcard $(OUTPUT)/user/*/*.d)
.DELETE_ON_ERROR:
.PHONY: FORCE
.SECONDARY:

# Benchmark baselines (bench/): counting-only probes at pyuprof's probe points.
$(OUTPUT)/bare.bpf.o: bench/bare.bpf.c $(VMLINUX) | $(OUTPUT) deps
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -c $< -o $@

$(OUTPUT)/bare.skel.h: $(OUTPUT)/bare.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bare_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/bench/bare: bench/bare.c $(OUTPUT)/bare.skel.h $(OUTPUT)/libpyuprof.a
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/libpyuprof.a $(LDLIBS) -o $@

$(OUTPUT)/bench/replay: bench/replay.c $(OUTPUT)/libpyuprof.a
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/libpyuprof.a $(LDLIBS) -o $@
