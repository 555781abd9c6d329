# SPDX-License-Identifier: GPL-2.0
#
# make            build ghostswap.ko against KDIR (default: running kernel)
# make tools      build tools/ghostswapctl
# make install    install ghostswapctl, man pages, systemd units and generator, udev rule
#                 and /etc/ghostswap.conf (DESTDIR, PREFIX; not the module:
#                 that is DKMS's job)
# make check      checkpatch --strict, sparse and W=1 on module/
# make test       the whole test suite (see Documentation/testing.md)
# make stress     the guest's verified stress for STRESS_SECONDS (1800)
# make demo       boot the guest and swapon /dev/ghostswap
# make bench      ghostswap against zram and zswap in one guest boot: a
#                 report with tables and plots in results/bench/
# make clean

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
PWD := $(shell pwd)

# The version: dkms.conf's PACKAGE_VERSION, the one place it is written
# (Kbuild reads it too, for MODULE_VERSION).
GS_VERSION = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

# Userspace: the admin tool and what goes with it.
CC ?= cc
CFLAGS ?= -O2 -g
GS_CFLAGS = -std=c11 -Wall -Wextra -Werror -DGS_VERSION='"$(GS_VERSION)"'
DESTDIR ?=
PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/ghostswap
SYSTEMDUNITDIR ?= /lib/systemd/system
SYSTEMDGENERATORDIR ?= /lib/systemd/system-generators
UDEVRULESDIR ?= /lib/udev/rules.d
SYSCONFDIR ?= /etc

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install

tools: tools/ghostswapctl

# ghostswapctl is every tools/*.c, compiled and linked in one command.
GHOSTSWAPCTL_SRCS := $(sort $(wildcard tools/*.c))
GHOSTSWAPCTL_HDRS := $(sort $(wildcard tools/*.h))

tools/ghostswapctl: $(GHOSTSWAPCTL_SRCS) $(GHOSTSWAPCTL_HDRS) dkms.conf
	$(CC) $(GS_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ \
		$(GHOSTSWAPCTL_SRCS)

install: tools/ghostswapctl
	install -D -m 755 tools/ghostswapctl $(DESTDIR)$(SBINDIR)/ghostswapctl
	# The man pages' footer names the version ("ghostswap" in .TH).
	for m in ghostswap.4 ghostswap.conf.5 ghostswapctl.8; do \
		install -d $(DESTDIR)$(MANDIR)/man$${m##*.} && \
		sed '/^\.TH /s/"ghostswap"/"ghostswap $(GS_VERSION)"/' man/$$m \
			>$(DESTDIR)$(MANDIR)/man$${m##*.}/$$m && \
		chmod 644 $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m || exit 1; \
	done
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	for u in ghostswap.service ghostswap-writeback.service \
		ghostswap-writeback.timer ghostswap-metrics.service \
		ghostswap-metrics.timer; do \
		sed 's|/usr/sbin/ghostswapctl|$(SBINDIR)/ghostswapctl|' \
			systemd/$$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	# The generator is the tool under another name (systemd.generator(7)).
	install -d $(DESTDIR)$(SYSTEMDGENERATORDIR)
	ln -sf $(SBINDIR)/ghostswapctl \
		$(DESTDIR)$(SYSTEMDGENERATORDIR)/ghostswap-generator
	install -D -m 644 udev/60-ghostswap.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-ghostswap.rules
	install -D -m 644 etc/modules-load.d/ghostswap.conf \
		$(DESTDIR)$(DOCDIR)/examples/modules-load.d/ghostswap.conf
	install -D -m 644 etc/modprobe.d/ghostswap.conf \
		$(DESTDIR)$(DOCDIR)/examples/modprobe.d/ghostswap.conf
	# The configuration is the admin's: never overwrite it.
	[ -e $(DESTDIR)$(SYSCONFDIR)/ghostswap.conf ] || \
		install -D -m 644 etc/ghostswap.conf \
			$(DESTDIR)$(SYSCONFDIR)/ghostswap.conf

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || \
		rm -f *.ko *.mod *.mod.c *.o module/*.o module/.*.cmd .*.cmd \
			modules.order Module.symvers
	rm -rf .tmp_versions
	rm -f tools/ghostswapctl

test:
	./tests/run.sh

STRESS_SECONDS ?= 1800
stress:
	GS_STRESS_SECONDS=$(STRESS_SECONDS) GHOSTSWAP_SKIP_KUNIT=1 \
		GS_GUEST_TIMEOUT=$$(($(STRESS_SECONDS) + 1800)) \
		./tests/run.sh load stress fault_alloc fault_backing leaks unload_final

demo:
	./tests/demo.sh

bench:
	./bench/run.sh

check:
	./tests/static-checks.sh

.PHONY: all modules modules_install tools install clean test stress demo bench \
	check
