// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: the programs it runs (modprobe, udevadm, mkswap, swapon,
 * swapoff, mount). In a dry run ($GHOSTSWAP_DRYRUN, or $GHOSTSWAP_SYSFS
 * set) they are printed instead.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

bool dryrun;

/* Full path of @cmd in $PATH (plus the sbin directories), or false. */
static bool find_program(const char *cmd, char *out, size_t n)
{
	const char *env = getenv("PATH");
	char path[PATH_MAX * 2], *dir, *save = NULL;

	bfmt(path, sizeof(path), "%s:/usr/sbin:/sbin:/usr/bin:/bin",
		 env && *env ? env : "");
	for (dir = strtok_r(path, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (!*dir)
			continue;
		bfmt(out, n, "%s/%s", dir, cmd);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

static void join_argv(char *const argv[], char *buf, size_t n)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] && used < n; i++)
		used += (size_t)bfmt(buf + used, n - used, "%s%s",
					 i ? " " : "", argv[i]);
}

/* The exit status of child @pid, as a shell gives it; 127 if lost. */
static int wait_exit(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/*
 * Runs argv (NULL terminated), stdout to /dev/null if @quiet. Returns
 * its exit status, 127 if it could not be run. Dry run: prints it.
 */
int run_program(bool quiet, char *const argv[])
{
	char line[1024], path[PATH_MAX];
	int fd;
	pid_t pid;

	join_argv(argv, line, sizeof(line));
	trace("run %s", line);
	if (dryrun) {
		printf("dry run: %s\n", line);
		return 0;
	}
	if (!find_program(argv[0], path, sizeof(path))) {
		fail(RC_FAIL, "%s: command not found", argv[0]);
		return 127;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fail(RC_FAIL, "fork: %s", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		if (quiet) {
			fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
		}
		execv(path, argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", PROG, path,
			strerror(errno));
		_exit(127);
	}
	return wait_exit(pid);
}

/*
 * Runs a query that changes nothing (systemctl is-enabled, dkms status,
 * ...), even in a dry run: its stdout, up to @n - 1 bytes, in @out, its
 * stderr dropped. Returns its exit status; 127 if it could not be run.
 */
int capture_program(char *out, size_t n, char *const argv[])
{
	char path[PATH_MAX], line[1024];
	int fds[2], fd;
	size_t used = 0;
	ssize_t got;
	pid_t pid;

	out[0] = '\0';
	join_argv(argv, line, sizeof(line));
	trace("query %s", line);
	if (!find_program(argv[0], path, sizeof(path)) || pipe(fds))
		return 127;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 127;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(path, argv);
		_exit(127);
	}
	close(fds[1]);
	while ((got = read(fds[0], out + used, n - 1 - used)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		used += (size_t)got;
		if (used == n - 1) {
			char sink[256];

			while (read(fds[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	out[used] = '\0';
	close(fds[0]);
	return wait_exit(pid);
}

/* Waits for udev to finish with the device (its probe holds it open). */
void udev_settle(void)
{
	char path[PATH_MAX];

	if (dryrun || find_program("udevadm", path, sizeof(path)))
		RUN(false, "udevadm", "settle");
}
