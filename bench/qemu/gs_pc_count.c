// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for bench/funcs.sh: counts the instructions the guest
 * executes at each kernel address, exactly, between two requests.
 *
 * Every translated block gets a counter, bumped each time the block runs;
 * a dump adds a block's count to each of its instructions' addresses.
 * Userspace is one total. The guest asks through a file in the directory
 * it shares with the host: it writes a label to ctl= and waits for the
 * file to go; the plugin, which looks for it every 65536 blocks, then
 * writes out=/pcs-LABEL.txt ("ADDRESS COUNT" lines, hex and decimal, then
 * "user COUNT") and starts again from zero, or with the label "reset"
 * only starts again.
 *
 * It uses nothing of QEMU but its plugin API, declared here (version 4 and
 * on: QEMU 9.2 or later), so that it builds without QEMU's headers.
 *
 * usage: qemu-system-x86_64 ... -plugin FILE.so,ctl=PATH,out=DIR
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef void (*gs_tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*gs_exec_cb)(unsigned int vcpu, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   gs_tb_trans_cb cb);
/* flags: 0, QEMU_PLUGIN_CB_NO_REGS */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  gs_exec_cb cb, int flags,
					  void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 4;

/* Where the x86-64 kernel's half of the address space starts. */
#define GS_KERNEL_START	0xffff800000000000ull

struct gs_block {
	uint64_t count;		/* runs since the last dump */
	uint32_t n;		/* instructions */
	uint64_t addr[];	/* of each instruction */
};

static pthread_mutex_t gs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gs_block **gs_blocks;
static size_t gs_nr, gs_cap;
static uint64_t gs_runs;
static char gs_ctl[512], gs_out[512];

static void gs_dump(const char *label)
{
	char path[1100];
	uint64_t user = 0;
	size_t b;
	uint32_t j;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pcs-%s.txt", gs_out, label);
	f = fopen(path, "w");
	if (!f)
		return;
	for (b = 0; b < gs_nr; b++) {
		struct gs_block *x = gs_blocks[b];

		if (!x->count)
			continue;
		if (x->addr[0] < GS_KERNEL_START)
			user += x->count * x->n;
		else
			for (j = 0; j < x->n; j++)
				fprintf(f, "%llx %llu\n",
					(unsigned long long)x->addr[j],
					(unsigned long long)x->count);
	}
	fprintf(f, "user %llu\n", (unsigned long long)user);
	fclose(f);
}

/* A request waiting? Under gs_lock. */
static void gs_poll(void)
{
	char label[64] = "";
	size_t b;
	FILE *f = fopen(gs_ctl, "r");

	if (!f)
		return;
	if (!fgets(label, sizeof(label), f)) {
		fclose(f);
		return;
	}
	fclose(f);
	label[strcspn(label, "\n/")] = 0;
	if (!label[0])
		return;
	if (strcmp(label, "reset"))
		gs_dump(label);
	for (b = 0; b < gs_nr; b++)
		gs_blocks[b]->count = 0;
	unlink(gs_ctl);
}

static void gs_block_run(unsigned int vcpu, void *udata)
{
	struct gs_block *x = udata;

	(void)vcpu;
	__atomic_add_fetch(&x->count, 1, __ATOMIC_RELAXED);
	if (!(__atomic_add_fetch(&gs_runs, 1, __ATOMIC_RELAXED) & 0xffff)) {
		pthread_mutex_lock(&gs_lock);
		gs_poll();
		pthread_mutex_unlock(&gs_lock);
	}
}

static void gs_block_new(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct gs_block *x = calloc(1, sizeof(*x) + n * sizeof(x->addr[0]));
	struct gs_block **grown;

	(void)id;
	if (!x)
		abort();
	x->n = n;
	for (i = 0; i < n; i++)
		x->addr[i] = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
	pthread_mutex_lock(&gs_lock);
	if (gs_nr == gs_cap) {
		gs_cap = gs_cap ? 2 * gs_cap : 65536;
		grown = realloc(gs_blocks, gs_cap * sizeof(*gs_blocks));
		if (!grown)
			abort();
		gs_blocks = grown;
	}
	gs_blocks[gs_nr++] = x;
	pthread_mutex_unlock(&gs_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, gs_block_run, 0, x);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc,
			char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "ctl=", 4))
			snprintf(gs_ctl, sizeof(gs_ctl), "%s", argv[i] + 4);
		else if (!strncmp(argv[i], "out=", 4))
			snprintf(gs_out, sizeof(gs_out), "%s", argv[i] + 4);
	}
	if (!gs_ctl[0] || !gs_out[0]) {
		fprintf(stderr, "gs_pc_count: needs ctl=FILE and out=DIR\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, gs_block_new);
	return 0;
}
