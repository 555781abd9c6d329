# SPDX-License-Identifier: GPL-2.0
#
# make            build module/ghostswap.ko against KDIR (default: running kernel)
# make check      checkpatch --strict, sparse and W=1 on module/
# make test       the whole test suite (see README.md)
# make demo       boot the guest and swapon /dev/ghostswap
# make clean

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
PWD := $(shell pwd)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || \
		rm -f *.ko *.mod *.mod.c *.o module/*.o module/.*.cmd .*.cmd \
			modules.order Module.symvers
	rm -rf .tmp_versions

test:
	./tests/run.sh

demo:
	./tests/demo.sh

check:
	./tests/static-checks.sh

.PHONY: all modules modules_install clean test demo check
