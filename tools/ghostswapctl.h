/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswapctl: set up, inspect and maintain /dev/ghostswap, the ghostswap
 * compressed swap device. Modelled on util-linux zramctl.
 *
 * What the files of the tool share. The first include of every one of
 * them (it sets _XOPEN_SOURCE). Each file says what it holds:
 *   main.c           main(): the environment, the command table
 *   cmd_*.c          the commands: status, setup and reset, writeback and
 *                    idle, compact, check, dict, config, doctor,
 *                    metrics, generator (also run as ghostswap-generator)
 *   cmd_common.c     what they share: --help, options, root and device
 *   hibernation.c    where hibernation writes its image: resume=, the
 *                    resume device, the first swap on
 *   output.c         the status columns: table, raw, JSON; human sizes
 *   config.c         settings from the command line and ghostswap.conf(5)
 *   conffiles.c      the files of the system's configuration (main file,
 *                    drop-ins), the kernel command line's switch
 *   expr.c           sizes as expressions of ram
 *   loopdev.c        a file as backing device: created, on a loop device
 *   device.c         the device's state: dev_info, /proc/swaps, zswap;
 *                    MemTotal; waiting for the node's lock
 *   programs.c       running modprobe, udevadm, mkswap, swapon, ...
 *   sysfs.c          reading and writing sysfs, failures explained
 *   parse.c          sizes, counts, priorities, booleans
 *   messages.c       errors and warnings, the trace file, bfmt()
 * Calls go down this list, never up.
 *
 * Every sysfs and debugfs path is taken under $GHOSTSWAP_SYSFS (default
 * /sys), /proc/swaps, /proc/meminfo and /proc/cmdline under
 * $GHOSTSWAP_PROC (default /proc), the configuration's directories under
 * $GHOSTSWAP_CONFROOT (default none), so the tool can run against a fake
 * tree. Commands it runs
 * (modprobe, udevadm, mkswap, swapon, swapoff, mount) are only printed,
 * not run, when GHOSTSWAP_DRYRUN=1, and by default when GHOSTSWAP_SYSFS
 * is set.
 * GHOSTSWAP_TRACE=FILE appends each sysfs write and each command to FILE.
 *
 * C11 and POSIX (XSI) libc only.
 */
#ifndef GHOSTSWAPCTL_H
#define GHOSTSWAPCTL_H

#define _XOPEN_SOURCE 700

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* dkms.conf's PACKAGE_VERSION, given by the Makefile. */
#ifndef GS_VERSION
#error "GS_VERSION is not defined: build with make tools"
#endif

#define DEV_PATH	"/dev/ghostswap"
#define DEV_SYS		"block/ghostswap"
#define SETUP_UNIT	"ghostswap.service"
#define CONF_NAME	"ghostswap.conf"	/* the main file (conffiles.c) */
#define DROPIN_DIR	"ghostswap.conf.d"	/* the drop-ins' directory */
#define CMDLINE_KEY	"systemd.ghostswap"	/* the boot setup's switch */
#define DEBUG_DIR	"kernel/debug"
#define CHECK_FILE	"kernel/debug/ghostswap/check"
#define ZSWAP_ENABLED	"module/zswap/parameters/enabled"
#define FREE_NOTIFY	"module/ghostswap/parameters/free_notify"
#define ZSWAP_DEBUG	"kernel/debug/zswap"
/* node_exporter's textfile collector directory (Debian's), and our file */
#define METRICS_DIR	"/var/lib/prometheus/node-exporter"
#define METRICS_FILE	"ghostswap.prom"
#define PAGE_BYTES	4096ULL
#define MIN_SIZE	(1ULL << 20)
#define MAX_SIZE	(0xfffffffeULL * PAGE_BYTES)	/* 16 TiB - 8 KiB */
#define DEFAULT_PRIO	100
#define DEFAULT_PRIO_S	"100"
#define PROG		"ghostswapctl"
#define SWITCH_OFF_MSG	CMDLINE_KEY "=0 on the kernel command line: the boot setup is off"
#define DEBUGFS_MAGIC	0x64626720
#define MAX_COLUMNS	64	/* status columns on one line */
#define MAX_RECOMP	3	/* secondary algorithms (the module's priorities) */

/* Exit codes (documented in --help and ghostswapctl(8)). */
enum {
	RC_OK = 0,
	RC_FAIL = 1,		/* the operation failed */
	RC_USAGE = 2,		/* bad command line or configuration file */
	RC_NODEV = 3,		/* module, device or attribute not present */
	RC_BUSY = 4,		/* device busy */
};

/* The columns of the stat files, and how many there are. */
enum { MM_ORIG, MM_COMPR, MM_USED, MM_LIMIT, MM_MAX, MM_SAME, MM_COMPACTED,
	MM_HUGE, MM_HUGE_SINCE, MM_STAT_COLS };
enum { CL_CLUSTERS, CL_PEAK, CL_SLOTS, CL_META, CL_META_PER_SLOT, CL_STREAM,
	CL_STAT_COLS };
enum { IO_FAILED_READS, IO_FAILED_WRITES, IO_INVALID, IO_NOTIFY_FREE,
	IO_DISCARD_FREE, IO_STAT_COLS };
enum { BD_COUNT, BD_READS, BD_WRITES, BD_CLUSTERS, BD_META, BD_WERR, BD_RERR,
	BD_RELOCATED, BD_COMPACT_READS, BD_COMPACT_WRITES, BD_SUM_ERRORS,
	BD_DISCARDED, BD_DISCARD_ERRORS, BD_CAPACITY, BD_GROW_ERRORS,
	BD_GROW_ERR, BD_STAT_COLS };

/* What status shows of the device (device.c). */
struct dev_info {
	uint64_t disksize;
	char alg[64];
	uint64_t mm[MM_STAT_COLS];	/* mm_stat, zram's columns */
	uint64_t cl[CL_STAT_COLS];	/* cluster_stat; [4] is not a count */
	char meta_per_slot[32];
	uint64_t io[IO_STAT_COLS];	/* io_stat */
	bool has_bd;
	uint64_t bd[BD_STAT_COLS];	/* bd_stat; 0 for missing columns */
	char backing[PATH_MAX];
	unsigned int multi_page;	/* 0: off, or an older module */
	bool swap;
	long prio;
	long streams;			/* online CPUs; -1: unknown */
};

/*
 * What setup does: one field for each key of ghostswap.conf(5), named as
 * the key; the has_ flags tell what was given (config.c).
 */
struct settings {
	bool has_size, has_algorithm, has_mem_limit, has_backing_dev;
	bool has_priority, has_writeback_limit, has_disable_zswap, has_swapon;
	bool has_idle_writeback, has_writeback_direct, has_writeback_shrinker;
	bool has_algorithm_params, has_backing_size;
	bool has_writeback_checksum, has_writeback_batch_size;
	bool has_writeback_encrypt, writeback_encrypt;
	bool has_backing_discard, backing_discard;
	bool has_mode, mode_zswap;	/* mode: standalone or zswap */
	bool has_multi_page;
	unsigned int multi_page;	/* pages: 0 (off), 4, 8 or 16 */
	uint64_t size, mem_limit, writeback_limit, idle_writeback, backing_size;
	uint64_t writeback_batch_size;
	bool writeback_limit_none, writeback_shrinker, writeback_checksum;
	char writeback_direct[16];
	char algorithm[64];
	char algorithm_params[256];
	/* compression_algorithm's secondary algorithms, priority 1..3 */
	int n_recomp;
	char recomp[MAX_RECOMP][64];
	char recomp_params[MAX_RECOMP][256];
	char backing_dev[PATH_MAX];
	long priority;
	bool disable_zswap, swapon;
	bool has_metrics_dir;		/* read by "metrics" only */
	char metrics_dir[PATH_MAX];
};

/* The keys of ghostswap.conf(5) (config.c). */
#define N_CONFIG_KEYS	21
extern const char *const config_keys[N_CONFIG_KEYS];

/* Where a key of the configuration was set: FILE:LINE and its text. */
struct key_origin {
	char file[PATH_MAX];
	int line;		/* 0: not set */
	char value[256];
};

/* The files of the system's configuration, in reading order. */
struct config_files {
	char **path;
	size_t n;
};

/* The environment, as main() reads it (setup_env()). */
extern char sysroot[PATH_MAX];		/* $GHOSTSWAP_SYSFS or /sys */
extern bool sysfs_overridden;		/* $GHOSTSWAP_SYSFS was given */
extern char procroot[PATH_MAX];		/* $GHOSTSWAP_PROC or /proc */
extern char confroot[PATH_MAX];		/* $GHOSTSWAP_CONFROOT or "" */
extern bool dryrun;			/* print commands, do not run them */
extern const char *trace_path;		/* $GHOSTSWAP_TRACE or NULL */

/* messages.c */
__attribute__((format(printf, 3, 4)))
int bfmt(char *buf, size_t n, const char *format, ...);
int fail(int rc, const char *fmt, ...);
void warning(const char *fmt, ...);
void trace(const char *fmt, ...);

/* sysfs.c: paths relative to sysroot; 0 or -errno unless said otherwise */
void sys_path(char *buf, size_t n, const char *rel);
bool sys_exists(const char *rel);
bool attr_exists(const char *attr);
bool dev_present(void);
int read_sys(const char *rel, char *buf, size_t n);
int read_attr(const char *attr, char *buf, size_t n);
int write_sys(const char *rel, const char *val);
int write_attr(const char *attr, const char *val);
int read_stat(const char *attr, uint64_t *v, int min, int max, int text,
	      char *txt, size_t txtlen);
int read_mm_stat(uint64_t mm[MM_STAT_COLS]);
int read_bd_stat(uint64_t bd[BD_STAT_COLS]);
/* sysfs.c: failures explained in one line; these return the exit code */
int fail_not_loaded(void);
int fail_in_use(void);
int read_failed(const char *attr, int err);
int write_failed(const char *attr, const char *val, int err);
int stat_failed(const char *attr, int err);
int write_attr_checked(const char *attr, const char *val);

/* device.c */
bool swapped_on(long *prio);
void current_alg(const char *list, char *out, size_t n);
/* Sleep @ms milliseconds. */
void sleep_ms(unsigned int ms);
/* Our device's number from its dev attribute; false if not loaded. */
bool our_devno(unsigned int *maj, unsigned int *min);
/* Is @file our device: /dev/ghostswap, or a block node of its number. */
bool path_is_ours(const char *file);
/* A line of /proc/swaps: the file name unescaped, and whether it is ours. */
struct swap_line {
	const char *file;
	long prio;
	long used_kib;
	bool ours;
};
bool each_swap(bool (*fn)(const struct swap_line *sw, void *arg), void *arg);
/* KiB of our device in use as swap, or -1 when it is not swapped on. */
long swap_used_kib(void);
int read_dev_info(struct dev_info *d);
bool zswap_enabled(void);
bool free_notify_on(void);
bool zswap_mode_on(void);
void zswap_front_status(void);
void zswap_warning(void);
bool setup_failed(char *why, size_t n);
uint64_t mem_total(void);
int wait_node_unlocked(void);

/* hibernation.c */
enum { HIB_OK, HIB_WARN, HIB_FAIL };
/* Whether resume= or the kernel's resume device names ours; how in @why. */
bool resume_is_ours(char *why, size_t n);
/* HIB_*: whether a boot can read a hibernation image back; @msg says. */
int hibernation_check(char *msg, size_t n);

/* loopdev.c */
bool is_block_device(const char *path);
int attach_backing_file(const char *path, uint64_t size, bool sparse,
			char *loop, size_t n, int *loopfd);
bool loop_backs_file(const char *dev, const char *path);
int prepare_backing_file(const char *path, uint64_t size);

/* programs.c */
int run_program(bool quiet, char *const argv[]);
#define RUN(quiet, ...) run_program(quiet, (char *const[]){ __VA_ARGS__, NULL })
int capture_program(char *out, size_t n, char *const argv[]);
#define QUERY(out, n, ...) capture_program(out, n, (char *const[]){ __VA_ARGS__, NULL })
void udev_settle(void);

/* parse.c */
char *trim(char *s);
bool parse_bytes(const char *s, uint64_t *out);
bool parse_size(const char *s, uint64_t *out);
bool parse_limit(const char *s, uint64_t *out);
bool parse_count(const char *s, uint64_t *out, uint64_t min);
bool parse_prio(const char *s, long *out);
bool parse_bool(const char *s, bool *out);

/* config.c */
bool set_setting(struct settings *s, const char *key, const char *val,
		 char *err, size_t errlen);
int read_config(const char *file, struct settings *s,
		struct key_origin *origins);
int read_system_config(struct settings *s, struct key_origin *origins,
		       size_t *nfiles);
int load_config(const char *file, bool system, struct settings *s,
		bool *off);
void merge_settings(struct settings *dst, const struct settings *cli);

/* conffiles.c */
int find_config_files(struct config_files *cf);
void free_config_files(struct config_files *cf);
bool read_cmdline(char *buf, size_t n);
int cmdline_switch(void);

/* expr.c */
bool eval_mib_expr(const char *s, double ram_mib, double *mib, char *err,
		   size_t errlen);

/* output.c */
void human_size(uint64_t bytes, char *buf, size_t n);
/* @cols: room for MAX_COLUMNS */
int default_columns(int *cols);
int all_columns(int *cols);
int parse_columns(const char *spec, int *cols, int *ncols);
void print_table(const struct dev_info *d, const int *cols, int ncols,
		 bool bytes, bool raw, bool headings);
void print_json(const struct dev_info *d, const int *cols, int ncols);
void print_column_help(FILE *out);

/* cmd_common.c */
void usage(FILE *out);
int next_opt(int argc, char **argv, const char *shortopts,
	     const struct option *longopts, int *rc);
int parse_help_only(int argc, char **argv, int max_args);
int need_root(const char *cmd);
int need_root_and_device(const char *cmd);
int write_attr_retrying(const char *attr, const char *val);
int load_module(void);
int check_device_arg(const char *arg);

/* The commands: argv[0] is the command's name; they return the exit code. */
int cmd_status(int argc, char **argv);
int cmd_setup(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_writeback(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_dict(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_generator(int argc, char **argv);
void unit_path_escape(const char *path, const char *suffix, char *out,
		      size_t n);

#endif /* GHOSTSWAPCTL_H */
