# Out-of-tree build of the kernel's gpio-sim driver and the irq_sim helper it needs (Debian's
# amd64 kernels enable neither). The sources are copied in from linux-source at the exact
# version of the running kernel, since gpio-sim includes the internal drivers/gpio/gpiolib.h.
obj-m := gpio-sim.o
gpio-sim-y := gpio-sim-core.o irq_sim.o
ccflags-y := -I$(src)
all:
	$(MAKE) -C /lib/modules/$(KVER)/build M=$(CURDIR) modules
