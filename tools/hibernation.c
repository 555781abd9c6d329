// SPDX-License-Identifier: GPL-2.0
/*
 * Where hibernation writes its image, and whether a boot can read it back.
 *
 * The kernel writes the image into one swap device: the one it resumes
 * from (resume= on the command line, or /sys/power/resume as the
 * initramfs or systemd set it), or, when none is set, the first swap
 * device switched on that is still on. ghostswap keeps its pages in RAM,
 * and the map of what it wrote back to its backing store too: an image
 * written into /dev/ghostswap is gone at power-off, and the hibernated
 * session with it. zram is the same. The pages ghostswap holds are safe
 * in an image written to a disk swap: the image holds all of RAM, its
 * pool included.
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POWER_STATE	"power/state"
#define POWER_DISK	"power/disk"
#define POWER_RESUME	"power/resume"

/*
 * Whether a resume= value names our device: its path, or its number as
 * MAJ:MIN. Other forms (UUID=, LABEL=, a hexadecimal number) are left to
 * /sys/power/resume, where the boot that resolved them put the number.
 */
static bool value_is_ours(const char *v, unsigned int maj, unsigned int min)
{
	unsigned int a, b;
	char end;

	if (sscanf(v, "%u:%u%c", &a, &b, &end) == 2)
		return a == maj && b == min;
	return path_is_ours(v);
}

/* The last resume= of the kernel command line into @v; false if none. */
static bool cmdline_resume(char *v, size_t n)
{
	char buf[4096], *tok, *save = NULL;
	bool found = false;

	if (!read_cmdline(buf, sizeof(buf)))
		return false;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(tok, "resume=", 7))
			continue;
		bfmt(v, n, "%s", tok + 7);
		found = true;
	}
	return found;
}

/* The resume device the kernel holds, as MAJ:MIN; false if none (0:0). */
static bool sys_resume(unsigned int *maj, unsigned int *min)
{
	char buf[64];

	return !read_sys(POWER_RESUME, buf, sizeof(buf)) &&
	       sscanf(buf, "%u:%u", maj, min) == 2 && (*maj || *min);
}

bool resume_is_ours(char *why, size_t n)
{
	unsigned int maj, min, rmaj, rmin;
	char v[PATH_MAX];

	if (!our_devno(&maj, &min))
		return false;
	if (cmdline_resume(v, sizeof(v)) && value_is_ours(v, maj, min)) {
		bfmt(why, n, "resume=%s on the kernel command line", v);
		return true;
	}
	if (sys_resume(&rmaj, &rmin) && rmaj == maj && rmin == min) {
		bfmt(why, n, "the kernel's resume device (/sys/power/resume) is %u:%u",
		     rmaj, rmin);
		return true;
	}
	return false;
}

/* A swap that keeps its pages in RAM: ours, or zram. */
static bool in_ram(const char *file, bool ours)
{
	return ours || !strncmp(file, "/dev/zram", 9);
}

struct swaps_seen {
	char first[PATH_MAX];	/* the first swap on: the kernel's default */
	bool first_in_ram;
	bool first_ours;
	int disk;		/* swaps a boot can read an image back from */
};

static bool see_swap(const struct swap_line *sw, void *arg)
{
	struct swaps_seen *s = arg;

	if (!s->first[0]) {
		bfmt(s->first, sizeof(s->first), "%s", sw->file);
		s->first_in_ram = in_ram(sw->file, sw->ours);
		s->first_ours = sw->ours;
	}
	if (!in_ram(sw->file, sw->ours))
		s->disk++;
	return false;
}

int hibernation_check(char *msg, size_t n)
{
	char buf[256], why[PATH_MAX + 64], v[PATH_MAX];
	struct swaps_seen s = { .first = "" };
	unsigned int rmaj, rmin;

	if (read_sys(POWER_STATE, buf, sizeof(buf)) || !strstr(buf, "disk")) {
		bfmt(msg, n, "not available on this machine (no 'disk' in /sys/%s)",
		     POWER_STATE);
		return HIB_OK;
	}
	if (!read_sys(POWER_DISK, buf, sizeof(buf)) && strstr(buf, "[disabled]")) {
		bfmt(msg, n, "disabled by the kernel (/sys/%s: %s)", POWER_DISK,
		     buf);
		return HIB_OK;
	}
	if (resume_is_ours(why, sizeof(why))) {
		bfmt(msg, n, "%s names %s: its pages live in RAM, so an image written there is gone at power-off, and the hibernated session with it; name a disk swap partition or file in resume=",
		     why, DEV_PATH);
		return HIB_FAIL;
	}
	each_swap(see_swap, &s);
	if (cmdline_resume(v, sizeof(v))) {
		bfmt(msg, n, "resumes from resume=%s", v);
		return HIB_OK;
	}
	if (sys_resume(&rmaj, &rmin)) {
		bfmt(msg, n, "resumes from %u:%u (/sys/%s)", rmaj, rmin,
		     POWER_RESUME);
		return HIB_OK;
	}
	/*
	 * The first swap on keeps its pages in RAM. ghostswap refuses the
	 * image (gs_hibernate.c), and hibernation fails: a warning. zram
	 * takes it, and the session is lost at power-off.
	 */
	if (s.first[0] && s.first_in_ram) {
		bfmt(msg, n, "no resume device set: the kernel would write the image to the first swap switched on, %s, which keeps it in RAM (%s); %s",
		     s.first, s.first_ours ?
		     "ghostswap refuses it, and hibernation fails" :
		     "the image is gone at power-off, and the session with it",
		     s.disk ?
		     "name the disk swap in resume= (or switch it on first)" :
		     "add a disk swap partition or file and name it in resume=");
		return s.first_ours ? HIB_WARN : HIB_FAIL;
	}
	if (!s.disk) {
		bfmt(msg, n, "no swap a boot can resume from: %s and zram keep their pages in RAM; hibernating needs a disk swap partition or file, named in resume=",
		     DEV_PATH);
		return HIB_WARN;
	}
	bfmt(msg, n, "no resume device set: the image goes to %s, the first swap switched on; a boot reads it back if told where (resume=, or systemd's HibernateLocation)",
	     s.first);
	return HIB_OK;
}
