// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap's defaults: the module parameters (size and algorithm at load
 * and after reset), checked against what the kernel offers, and what
 * swapon of a device costs the kernel's swap core, which the default size
 * follows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "gs_chunks.h"
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_dev.h"

#define GS_DEFAULT_DISKSIZE	SZ_64G

/*
 * Parse a size: decimal bytes with an optional K, M, G, T or P suffix
 * (powers of 1024) and an optional trailing newline. Rejects empty input,
 * signs, junk and overflow, then checks the allowed range.
 */
int gs_parse_size(const char *buf, u64 *out)
{
	static const char suffixes[] = "KMGTP";
	char num[24], *s;
	unsigned int shift = 0;
	size_t len = strlen(buf);
	u64 val;
	int ret;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, buf, len);
	num[len] = '\0';
	s = strchr(suffixes, toupper(num[len - 1]));
	if (s && *s) {
		shift = 10 * (s - suffixes + 1);
		num[--len] = '\0';
	}
	if (!len || !isdigit(num[0]))
		return -EINVAL;
	ret = kstrtou64(num, 10, &val);
	if (ret)
		return ret == -ERANGE ? -EINVAL : ret;
	if (check_shl_overflow(val, shift, &val))
		return -EINVAL;
	val = round_up(val, PAGE_SIZE);
	if (val < GS_MIN_DISKSIZE || val > GS_MAX_DISKSIZE)
		return -EINVAL;
	*out = val;
	return 0;
}

u64 gs_default_disksize = GS_DEFAULT_DISKSIZE;
static bool gs_disksize_given;
char gs_default_alg[GS_ALG_NAME_LEN] = "lz4";

static int gs_param_set_size(const char *val, const struct kernel_param *kp)
{
	int ret = gs_parse_size(val, kp->arg);

	if (ret)
		pr_err("invalid disksize '%s': want %llu..%llu bytes, suffix K M G T P\n",
		       val, GS_MIN_DISKSIZE, GS_MAX_DISKSIZE);
	else
		gs_disksize_given = true;
	return ret;
}

static int gs_param_get_size(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops gs_size_param_ops = {
	.set = gs_param_set_size,
	.get = gs_param_get_size,
};

module_param_cb(disksize, &gs_size_param_ops, &gs_default_disksize, 0444);
MODULE_PARM_DESC(disksize,
		 "Size of /dev/ghostswap at load and after reset (default 64G; 2 x RAM up to 64G where the swap core allocates per slot, as on 6.12; max 16T minus 8K)");

module_param_string(comp_algorithm, gs_default_alg, sizeof(gs_default_alg),
		    0444);
MODULE_PARM_DESC(comp_algorithm,
		 "Compression algorithm at load and after reset (default lz4)");

/*
 * The size of the chunk files of a backing directory, taken when one is
 * attached: the store grows and shrinks by this much (and holds a chunk
 * spare while writeback runs).
 */
unsigned int gs_default_chunk_mib = GS_CHUNK_DEFAULT_MIB;

static int gs_param_set_chunk_mib(const char *val,
				  const struct kernel_param *kp)
{
	unsigned int mib;

	if (kstrtouint(val, 10, &mib) || mib < GS_CHUNK_MIN_MIB ||
	    mib > GS_CHUNK_MAX_MIB || !is_power_of_2(mib)) {
		pr_err("invalid chunk_mib '%.*s': want a power of two from %u to %u\n",
		       (int)strcspn(val, "\n"), val, GS_CHUNK_MIN_MIB,
		       GS_CHUNK_MAX_MIB);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, mib);
	return 0;
}

static const struct kernel_param_ops gs_chunk_mib_param_ops = {
	.set = gs_param_set_chunk_mib,
	.get = param_get_uint,
};

module_param_cb(chunk_mib, &gs_chunk_mib_param_ops, &gs_default_chunk_mib,
		0644);
MODULE_PARM_DESC(chunk_mib,
		 "Size of a backing directory's chunk files in MiB, when one is attached (default 64; a power of two, 4 to 1024)");

/* ------------------------------------------------ the swap core's cost */

/*
 * What the kernel's swap core allocates when a device of @size bytes is
 * swapped on, whether its slots are ever used or not (an estimate from the
 * swap core's layout, see gs_compat.h). Where it keeps state per slot
 * (6.12): a usage byte (swap_map), a zero-page bit and, with memory
 * cgroups on, a 2-byte cgroup id (swap_cgroup) for every 4 KiB slot, about
 * 800 MiB for 1 TiB. Up front, both kinds allocate the cluster information,
 * 12-24 MiB for 1 TiB.
 */
u64 gs_swapon_cost(u64 size)
{
	u64 slots = size >> PAGE_SHIFT;
	u64 cost = DIV_ROUND_UP_ULL(slots, GS_SWAP_CLUSTER_SLOTS) *
		   GS_SWAP_CLUSTER_BYTES;
	unsigned int bits = 8 + 1;

	if (!GS_SWAP_PER_SLOT)
		return cost;
	if (!mem_cgroup_disabled())
		bits += 16;
	return cost + DIV_ROUND_UP_ULL(slots * bits, BITS_PER_BYTE);
}

/*
 * The size at load and after reset, when the disksize parameter does not
 * give one. 64 GiB costs the 7.x swap core 1.5 MiB at swapon; a swap core
 * that allocates per slot takes 51 MiB for it, on any machine (5% of a
 * 1 GiB one). There the default is twice the RAM, at most 64 GiB: about
 * what the pool holds when it fills all of memory at the 2-3x compression
 * ratios seen with lz4 and zstd, for 0.16% of RAM in the swap core. A
 * larger device, e.g. for a writeback tier, is a setting (disksize).
 */
static void __init gs_pick_disksize(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	if (!GS_SWAP_PER_SLOT || gs_disksize_given)
		return;
	gs_default_disksize = min_t(u64, 2 * ram, GS_DEFAULT_DISKSIZE);
	pr_info("this kernel's swap core allocates memory for every slot of a swap device at swapon (swap_map, swap_cgroup, zero bitmap): %llu GiB would cost it %llu MiB, so the default disksize is %llu MiB (2 x RAM, at most %llu GiB), costing %llu KiB\n",
		(u64)GS_DEFAULT_DISKSIZE >> 30,
		gs_swapon_cost(GS_DEFAULT_DISKSIZE) >> 20,
		gs_default_disksize >> 20, (u64)GS_DEFAULT_DISKSIZE >> 30,
		gs_swapon_cost(gs_default_disksize) >> 10);
}

/* The comp_algorithm parameter, or the first known one the kernel has. */
static int __init gs_pick_algorithm(void)
{
	const char *const *alg;

	if (gs_comp_available(gs_default_alg))
		return 0;
	for (alg = gs_comp_known; *alg; alg++) {
		if (gs_comp_available(*alg)) {
			pr_warn("no algorithm '%s', using %s\n", gs_default_alg,
				*alg);
			strscpy(gs_default_alg, *alg, sizeof(gs_default_alg));
			return 0;
		}
	}
	pr_err("the kernel offers no compression algorithm (crypto acomp)\n");
	return -ENOENT;
}

int __init gs_defaults_init(void)
{
	int ret = gs_pick_algorithm();

	if (ret)
		return ret;
	gs_pick_disksize();
	return 0;
}
