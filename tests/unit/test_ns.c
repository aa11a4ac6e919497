// SPDX-License-Identifier: MIT
/*
 * test_ns.c - namespaces (ntmem/ns.h): anonymous memory and files.
 *
 * A namespace is what the memmap and the durable copies are built on, so
 * its geometry and its idea of durability must be right before anything
 * above it can be:
 *
 *   anon_*      size, alignment (the base is aligned to 4 KiB, 2 MiB and
 *               1 GiB as asked), kind, path "", not CPU-durable, every
 *               byte writable; bad size and alignment.
 *   huge_*      every mapping of 2 MiB or more, anonymous, created or
 *               opened, of a length that is not a multiple of 2 MiB and
 *               with a 4 KiB namespace alignment, starts on a 2 MiB
 *               boundary, while ntm_ns_align() still says 4 KiB.
 *   create_*    ntm_ns_create() in a fresh scratch directory
 *               (tu_scratch_dir(): $NTMEM_TEST_SCRATCH, default /tmp):
 *               the file is sparse, size/align/kind/path are reported, the
 *               kind (fsdax on a DAX file system, file elsewhere) agrees
 *               with ntm_ns_cpu_durable(), data written through the mapping
 *               and ntm_ns_persist()ed is what pread() finds in the file;
 *               NTM_NS_TEMPORARY unlinks it; an existing path is -EEXIST
 *               and left alone; bad size / alignment are -EINVAL and create
 *               nothing.
 *   open_*      ntm_ns_open() of a file written with pwrite(); every error
 *               the header lists: -EINVAL (empty, not a page multiple,
 *               unknown flags); a table of every kind of file that is not
 *               a namespace (missing, directory, FIFO, socket, block
 *               device, /dev/null) x every flag combination, each with its
 *               errno and a message naming the path and the kind, under an
 *               alarm, as a FIFO once blocked; -EACCES for a read-only file without
 *               NTM_NS_READONLY (as root, which bypasses file permissions,
 *               checked in a child that drops to an unprivileged user, or
 *               skipped when it cannot); NTM_NS_READONLY maps it and
 *               persist is a no-op.
 *   persist_*   ranges outside the namespace, including ones whose end
 *               wraps around the address space, are -EINVAL.
 *   emulated_*  NTM_NS_EMULATE on a disk file system (a directory under
 *               /var/tmp; skipped on tmpfs or DAX) is not CPU-durable, and
 *               ntm_ns_persist() leaves no dirty page in the range:
 *               /proc/self/smaps shows the written pages dirty before and
 *               none after, which only an msync() (or writeback) can do.
 *               On tmpfs (/dev/shm) it is CPU-durable, a plain file not.
 *               On a DAX file system ($NTMEM_TEST_SCRATCH_DAX; skipped
 *               unset) it is fsdax: the real thing beats the emulation.
 *   descriptors_*  an opened, emulated or created namespace keeps no
 *               descriptor (a temporary one keeps one: its file has no
 *               name left); a BTT's blocks are reserved through the path,
 *               and a path replaced by another file is -ESTALE, that file
 *               untouched.
 *   reserve_*   ntm_ns_reserve() (ns_internal.h) takes the namespace: a
 *               range in it allocates the file's blocks and leaves its
 *               bytes, one overlapping an earlier reservation is 0 again,
 *               one outside it (past the end, wrapping) is -EINVAL naming
 *               off and n and allocates nothing, whatever the kind; an
 *               anonymous or read-only namespace reserves nothing. Two
 *               namespaces, each reserved from several threads at once,
 *               get exactly their own ranges: the handle keeps them apart.
 *   errmsg_*    messages name the path or the argument, and are per thread.
 *
 * Every failing call starts with *ns set to a sentinel that must survive.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <ntmem.h>
#include <ntmem/introspect.h>
#include "ns_internal.h"
#include "../lib/testutil.h"

#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define PG ((size_t)4096)

#define MIN(a, b) ((a) < (b) ? (a) : (b))

#define NS_SENTINEL ((struct ntm_ns *)(uintptr_t)0x5e17e1)

/* The fresh directory every file test works in (group setup/teardown). */
static char dir[64];

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static int dir_setup(void **state)
{
	(void)state;
	return tu_scratch_dir(dir, sizeof(dir), "ntmem-test-ns");
}

/* Remove what the tests left (they clean up, unless one failed midway). */
static int dir_teardown(void **state)
{
	static const char *const names[] = {
		"sparse", "temporary", "existing", "bad-size", "bad-align",
		"small-align", "written", "empty", "odd-size", "fifo",
		"readonly", "subdir", "socket", "blockdev", "huge",
		"reserve-a", "reserve-b",
	};
	char path[128];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_in_dir(path, sizeof(path), names[i]);
		if (unlink(path) && errno == EISDIR)
			rmdir(path);
		rmdir(path);
	}
	return rmdir(dir) ? -1 : 0;
}

static void check_errmsg_has(const char *text, const char *what)
{
	const char *msg = ntm_errmsg();

	if (!msg || !*msg || !strstr(msg, text))
		fail_msg("%s: ntm_errmsg() '%s' lacks '%s'", what,
			 msg ? msg : "(null)", text);
}

/* ntm_ns_open(@path, @flags) must fail with @err and name @path. */
static void expect_open_error(const char *path, unsigned flags, int err,
			      const char *what)
{
	struct ntm_ns *ns = NS_SENTINEL;
	int ret = ntm_ns_open(&ns, path, flags);

	if (ret != err)
		fail_msg("%s: ntm_ns_open('%s', 0x%x) returned %d (%s), "
			 "expected %d (%s)", what, path, flags, ret,
			 strerror(-ret), err, strerror(-err));
	if (ns != NS_SENTINEL)
		fail_msg("%s: *ns written on failure", what);
	check_errmsg_has(path, what);
}

/* --- anonymous ---------------------------------------------------------- */

static void test_anon_geometry(void **state)
{
	static const struct {
		size_t size, align;
	} cases[] = {
		{ PG, PG }, { 64 * MiB + PG, PG }, { 2 * MiB, 2 * MiB },
		{ 64 * MiB, 2 * MiB }, { GiB, GiB },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ntm_ns *ns = NULL;
		unsigned char *base;
		size_t size = cases[i].size;

		assert_int_equal(ntm_ns_anon(&ns, size, cases[i].align), 0);
		base = ntm_ns_base(ns);
		assert_non_null(base);
		if ((uintptr_t)base % cases[i].align)
			fail_msg("anon %zu bytes, align %zu: base %p is not "
				 "aligned", size, cases[i].align, (void *)base);
		assert_int_equal(ntm_ns_size(ns), size);
		assert_int_equal(ntm_ns_align(ns), cases[i].align);
		assert_int_equal(ntm_ns_kind(ns), NTM_NS_ANON);
		assert_string_equal(ntm_ns_path(ns), "");
		assert_false(ntm_ns_cpu_durable(ns));
		/* Zeroed, writable at both ends and in the middle. */
		assert_int_equal(base[0], 0);
		assert_int_equal(base[size - 1], 0);
		base[0] = 1;
		base[size / 2] = 2;
		base[size - 1] = 3;
		/*
		 * Persist only orders the stores. (Not the whole GiB: a
		 * write-back of a page never touched faults it in.)
		 */
		assert_int_equal(ntm_ns_persist(ns, base, MIN(size, 4 * MiB)), 0);
		assert_int_equal(ntm_ns_persist(ns, base + size - 1, 1), 0);
		assert_int_equal(base[0] + base[size / 2] + base[size - 1], 6);
		ntm_ns_close(ns);
	}
	ntm_ns_close(NULL);
}

static void test_anon_bad(void **state)
{
	static const struct {
		size_t size, align;
		const char *names;
	} cases[] = {
		{ 64 * MiB, 3 * PG, "align" },	/* not a power of two */
		{ 64 * MiB, 0, "align" },
		{ 64 * MiB, 2048, "align" },	/* below the page size */
		{ 0, PG, "size" },
		{ PG + 1, PG, "size" },
		{ 3 * MiB, 2 * MiB, "size" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ntm_ns *ns = NS_SENTINEL;
		char what[64];

		snprintf(what, sizeof(what), "anon size %zu align %zu",
			 cases[i].size, cases[i].align);
		assert_int_equal(ntm_ns_anon(&ns, cases[i].size, cases[i].align),
				 -EINVAL);
		assert_ptr_equal(ns, NS_SENTINEL);
		check_errmsg_has(cases[i].names, what);
	}
	assert_int_equal(ntm_ns_anon(NULL, PG, PG), -EINVAL);
}

/* --- create ------------------------------------------------------------- */

static void test_create_sparse(void **state)
{
	static const size_t aligns[] = { PG, 2 * MiB };
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "sparse");
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		size_t size = 64 * MiB, align = aligns[i];
		size_t offs[] = { 0, PG - 7, 5 * MiB + 123, size - 300 };
		unsigned char data[300];
		struct ntm_ns *ns = NULL;
		unsigned char *base;
		struct stat st;
		int ret;

		ret = ntm_ns_create(&ns, path, size, align, 0);
		if (ret)
			fail_msg("ntm_ns_create(%s): %d %s", path, ret,
				 ntm_errmsg());
		base = ntm_ns_base(ns);
		assert_int_equal(ntm_ns_size(ns), size);
		assert_int_equal(ntm_ns_align(ns), align);
		assert_int_equal((uintptr_t)base % align, 0);
		assert_string_equal(ntm_ns_path(ns), path);
		assert_true(ntm_ns_kind(ns) == NTM_NS_FILE ||
			    ntm_ns_kind(ns) == NTM_NS_FSDAX);
		assert_int_equal(ntm_ns_cpu_durable(ns),
				 ntm_ns_kind(ns) == NTM_NS_FSDAX);

		/* The file exists at full length, with no block allocated. */
		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal((size_t)st.st_size, size);
		if ((unsigned long long)st.st_blocks * 512 > 64 * 1024)
			fail_msg("%s: %lld bytes allocated right after create: "
				 "not sparse", path,
				 (long long)st.st_blocks * 512);

		/* Through the mapping, persisted, into the file. */
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
			tu_fill_random(data, sizeof(data), 0x5eed + o + 16 * i);
			memcpy(base + offs[o], data, sizeof(data));
			assert_int_equal(ntm_ns_persist(ns, base + offs[o],
							sizeof(data)), 0);
			tu_check_file_bytes(path, offs[o], data, sizeof(data));
		}
		assert_int_equal(ntm_ns_persist(ns, base, size), 0);
		/* Still sparse: only the pages written. */
		assert_int_equal(stat(path, &st), 0);
		if ((unsigned long long)st.st_blocks * 512 >
		    64 * 1024 + 8 * 2 * MiB)
			fail_msg("%s: %lld bytes allocated after writing 5 pages",
				 path, (long long)st.st_blocks * 512);
		ntm_ns_close(ns);
		/* The data outlives the mapping. */
		tu_check_file_bytes(path, offs[3], data, sizeof(data));
		assert_int_equal(unlink(path), 0);
	}
}

static void test_create_temporary(void **state)
{
	struct ntm_ns *ns = NULL;
	unsigned char *base;
	char path[128];
	struct stat st;

	(void)state;
	path_in_dir(path, sizeof(path), "temporary");
	assert_int_equal(ntm_ns_create(&ns, path, 4 * MiB, 2 * MiB,
				       NTM_NS_TEMPORARY), 0);
	if (stat(path, &st) == 0 || errno != ENOENT)
		fail_msg("%s: still there after NTM_NS_TEMPORARY", path);
	/* The mapping outlives the name. */
	base = ntm_ns_base(ns);
	memset(base, 0x77, PG);
	base[4 * MiB - 1] = 0x66;
	assert_int_equal(ntm_ns_persist(ns, base, 4 * MiB), 0);
	assert_int_equal(base[PG - 1] + base[4 * MiB - 1], 0x77 + 0x66);
	assert_string_equal(ntm_ns_path(ns), path);
	ntm_ns_close(ns);
	/* The name is free again. */
	assert_int_equal(ntm_ns_create(&ns, path, PG, PG, NTM_NS_TEMPORARY), 0);
	ntm_ns_close(ns);
}

static void test_create_bad(void **state)
{
	static const struct {
		const char *name;
		size_t size, align;
		unsigned flags;
		const char *names;
	} cases[] = {
		{ "bad-size", 3 * MiB, 2 * MiB, 0, "size" },
		{ "bad-size", 0, PG, 0, "size" },
		{ "bad-size", PG + 512, PG, 0, "size" },
		{ "bad-align", 12 * PG, 3 * PG, 0, "align" },
		{ "bad-align", 64 * MiB, 0, 0, "align" },
		{ "small-align", 64 * MiB, 2048, 0, "align" },
		{ "bad-size", 64 * MiB, PG, 1u << 7, "flags" },
		{ "bad-size", 64 * MiB, PG, NTM_NS_READONLY, "flags" },
	};
	unsigned char content[PG];
	char path[128];
	struct stat st;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ntm_ns *ns = NS_SENTINEL;
		char what[96];

		path_in_dir(path, sizeof(path), cases[i].name);
		snprintf(what, sizeof(what), "create size %zu align %zu flags "
			 "0x%x", cases[i].size, cases[i].align, cases[i].flags);
		assert_int_equal(ntm_ns_create(&ns, path, cases[i].size,
					       cases[i].align, cases[i].flags),
				 -EINVAL);
		assert_ptr_equal(ns, NS_SENTINEL);
		check_errmsg_has(cases[i].names, what);
		/* Nothing was created. */
		if (stat(path, &st) == 0 || errno != ENOENT)
			fail_msg("%s: left a file behind", what);
	}

	/* An existing file: -EEXIST, named, and neither removed nor cut. */
	path_in_dir(path, sizeof(path), "existing");
	tu_write_file(path, PG, 0xe815, 0600);
	{
		struct ntm_ns *ns = NS_SENTINEL;

		assert_int_equal(ntm_ns_create(&ns, path, 64 * MiB, PG, 0),
				 -EEXIST);
		assert_ptr_equal(ns, NS_SENTINEL);
		check_errmsg_has(path, "create on an existing file");
		assert_int_equal(ntm_ns_create(&ns, path, 64 * MiB, PG,
					       NTM_NS_TEMPORARY), -EEXIST);
		assert_ptr_equal(ns, NS_SENTINEL);
	}
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, PG);
	tu_fill_random(content, PG, 0xe815);
	tu_check_file_bytes(path, 0, content, PG);
	assert_int_equal(unlink(path), 0);

	/* No path. */
	{
		struct ntm_ns *ns = NS_SENTINEL;

		assert_int_equal(ntm_ns_create(&ns, NULL, PG, PG, 0), -EINVAL);
		assert_int_equal(ntm_ns_create(&ns, "", PG, PG, 0), -EINVAL);
		assert_ptr_equal(ns, NS_SENTINEL);
		check_errmsg_has("path", "create without a path");
	}
}

/* --- open --------------------------------------------------------------- */

static void test_open_file(void **state)
{
	static const size_t sizes[] = { PG, 3 * PG, 4 * MiB };
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "written");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		unsigned char *want = malloc(size);
		struct ntm_ns *ns = NULL;
		unsigned char *base;
		size_t at;
		int ret;

		assert_non_null(want);
		tu_write_file(path, size, 0x0fe + i, 0600);
		tu_fill_random(want, size, 0x0fe + i);
		ret = ntm_ns_open(&ns, path, 0);
		if (ret)
			fail_msg("ntm_ns_open(%s): %d %s", path, ret, ntm_errmsg());
		base = ntm_ns_base(ns);
		assert_int_equal(ntm_ns_size(ns), size);
		assert_string_equal(ntm_ns_path(ns), path);
		/* Page alignment; 2 MiB only for a DAX file of 2 MiB pages. */
		if (ntm_ns_kind(ns) == NTM_NS_FSDAX) {
			assert_true(ntm_ns_cpu_durable(ns));
			assert_int_equal(ntm_ns_align(ns),
					 size % (2 * MiB) ? PG : 2 * MiB);
		} else {
			assert_int_equal(ntm_ns_kind(ns), NTM_NS_FILE);
			assert_false(ntm_ns_cpu_durable(ns));
			assert_int_equal(ntm_ns_align(ns), PG);
		}
		assert_int_equal((uintptr_t)base % ntm_ns_align(ns), 0);
		/* The mapping shows the file... */
		at = tu_first_diff(base, want, size);
		if (at != size)
			fail_msg("%s: mapping byte %zu differs from the file",
				 path, at);
		/* ...and the file what is written and persisted through it. */
		for (size_t j = 100; j < size; j += PG) {
			want[j] = (unsigned char)~want[j];
			base[j] = want[j];
		}
		assert_int_equal(ntm_ns_persist(ns, base, size), 0);
		tu_check_file_bytes(path, 0, want, size);
		ntm_ns_close(ns);
		free(want);
		assert_int_equal(unlink(path), 0);
	}
}

static void test_open_errors(void **state)
{
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "missing");
	expect_open_error(path, 0, -ENOENT, "missing path");
	expect_open_error(path, NTM_NS_READONLY, -ENOENT, "missing path, ro");

	path_in_dir(path, sizeof(path), "empty");
	tu_write_file(path, 0, 1, 0600);
	expect_open_error(path, 0, -EINVAL, "an empty file");
	expect_open_error(path, NTM_NS_READONLY, -EINVAL, "an empty file, ro");
	assert_int_equal(unlink(path), 0);

	path_in_dir(path, sizeof(path), "odd-size");
	tu_write_file(path, PG + 1, 2, 0600);
	expect_open_error(path, 0, -EINVAL, "size not a page multiple");
	assert_int_equal(unlink(path), 0);
	tu_write_file(path, 100, 3, 0600);
	expect_open_error(path, 0, -EINVAL, "size below a page");
	assert_int_equal(unlink(path), 0);

	/* Unknown flags; NTM_NS_TEMPORARY is for create only. */
	{
		struct ntm_ns *ns = NS_SENTINEL;

		assert_int_equal(ntm_ns_open(&ns, "/dev/null", NTM_NS_TEMPORARY),
				 -EINVAL);
		check_errmsg_has("flags", "open with NTM_NS_TEMPORARY");
		assert_int_equal(ntm_ns_open(&ns, "/dev/null", 1u << 9), -EINVAL);
		check_errmsg_has("flags", "open with unknown flags");
		assert_int_equal(ntm_ns_open(&ns, NULL, 0), -EINVAL);
		assert_int_equal(ntm_ns_open(&ns, "", 0), -EINVAL);
		check_errmsg_has("path", "open without a path");
		assert_ptr_equal(ns, NS_SENTINEL);
	}
}

static void open_blocked(int sig)
{
	static const char msg[] = "ntm_ns_open() blocked on a file-type row\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/*
 * Every kind of path that is not a namespace, with every flag
 * combination: one errno each, a message naming the path and the kind,
 * and no wait (a FIFO opened read-only used to wait for a writer forever:
 * the alarm turns that into a failure).
 */
static void test_open_file_types(void **state)
{
	static const unsigned flag_sets[] = {
		NTM_NS_READONLY, NTM_NS_READONLY | NTM_NS_EMULATE, 0,
		NTM_NS_EMULATE,
	};
	struct {
		const char *name;	/* in the test directory, or a path */
		int err;
		const char *says;	/* ntm_errmsg() names the kind */
		bool made;
	} rows[] = {
		{ "missing", -ENOENT, "cannot open", true },
		{ "subdir", -EISDIR, "a directory", false },
		{ "fifo", -ENODEV, "a FIFO", false },
		{ "socket", -ENODEV, "a socket", false },
		{ "blockdev", -ENODEV, "a block device", false },
		{ "/dev/null", -ENODEV, "not a dax device", false },
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128];
	int sock;

	(void)state;
	path_in_dir(path, sizeof(path), "subdir");
	rows[1].made = mkdir(path, 0700) == 0;
	path_in_dir(path, sizeof(path), "fifo");
	rows[2].made = mkfifo(path, 0600) == 0;
	path_in_dir(sa.sun_path, sizeof(sa.sun_path), "socket");
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	rows[3].made = sock >= 0 &&
		       bind(sock, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (sock >= 0)
		close(sock);
	/* A loop device node: needs CAP_MKNOD, never opened. */
	path_in_dir(path, sizeof(path), "blockdev");
	rows[4].made = mknod(path, S_IFBLK | 0600, makedev(7, 0)) == 0;
	rows[5].made = access("/dev/null", F_OK) == 0;
	assert_true(rows[1].made && rows[2].made && rows[3].made);

	signal(SIGALRM, open_blocked);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		if (!rows[r].made) {
			print_message("open_file_types: no %s here, row "
				      "skipped\n", rows[r].name);
			continue;
		}
		if (rows[r].name[0] == '/')
			snprintf(path, sizeof(path), "%s", rows[r].name);
		else
			path_in_dir(path, sizeof(path), rows[r].name);
		for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]);
		     f++) {
			char what[96];

			snprintf(what, sizeof(what), "%s, flags 0x%x",
				 rows[r].name, flag_sets[f]);
			alarm(10);
			expect_open_error(path, flag_sets[f], rows[r].err, what);
			alarm(0);
			check_errmsg_has(rows[r].says, what);
		}
		if (rows[r].name[0] != '/' && r != 0)
			assert_int_equal(r == 1 ? rmdir(path) : unlink(path), 0);
	}
	signal(SIGALRM, SIG_DFL);
}

/*
 * As root, in a child that becomes "nobody": the file is given to that
 * user with mode 0400. Exit status: 0 as expected, 77 cannot drop
 * privileges, 1 read-write open not -EACCES, 2 read-only open failed.
 */
static int readonly_as_nobody(const char *path)
{
	const uid_t nobody = 65534;
	pid_t pid;
	int status;

	if (chown(path, nobody, nobody) || chmod(dir, 0711))
		return 77;
	pid = fork();
	if (pid < 0)
		return 77;
	if (pid == 0) {
		struct ntm_ns *ns = NULL;

		if (setgroups(0, NULL) || setgid(nobody) || setuid(nobody) ||
		    geteuid() != nobody)
			_exit(77);
		if (ntm_ns_open(&ns, path, 0) != -EACCES)
			_exit(1);
		if (ntm_ns_open(&ns, path, NTM_NS_READONLY) != 0)
			_exit(2);
		ntm_ns_close(ns);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 3;
	chmod(dir, 0700);
	return WEXITSTATUS(status);
}

static void test_open_readonly(void **state)
{
	unsigned char want[2 * PG];
	struct ntm_ns *ns = NULL;
	unsigned char *base;
	char path[128];
	int ret;

	(void)state;
	path_in_dir(path, sizeof(path), "readonly");
	tu_write_file(path, sizeof(want), 0x40, 0400);
	tu_fill_random(want, sizeof(want), 0x40);

	/* Read-only mapping: the data, and persist is a no-op. */
	ret = ntm_ns_open(&ns, path, NTM_NS_READONLY);
	if (ret)
		fail_msg("ntm_ns_open(%s, NTM_NS_READONLY): %d %s", path, ret,
			 ntm_errmsg());
	base = ntm_ns_base(ns);
	assert_int_equal(ntm_ns_size(ns), sizeof(want));
	assert_memory_equal(base, want, sizeof(want));
	assert_int_equal(ntm_ns_persist(ns, base, sizeof(want)), 0);
	assert_int_equal(ntm_ns_persist(ns, base + 1, 10), 0);
	/* The range check still holds. */
	assert_int_equal(ntm_ns_persist(ns, base, sizeof(want) + 1), -EINVAL);
	ntm_ns_close(ns);

	if (geteuid() != 0) {
		expect_open_error(path, 0, -EACCES, "a 0400 file read-write");
	} else {
		/* Root ignores the mode bits; an unprivileged child does not. */
		int st = readonly_as_nobody(path);

		if (st == 1)
			fail_msg("as nobody: a 0400 file opened read-write "
				 "without -EACCES");
		if (st == 2)
			fail_msg("as nobody: NTM_NS_READONLY open of a 0400 "
				 "file failed");
		if (st == 3)
			fail_msg("as nobody: the child did not exit");
		assert_int_equal(unlink(path), 0);
		if (st == 77)
			skip();
		return;
	}
	assert_int_equal(unlink(path), 0);
}

/* --- persist ------------------------------------------------------------ */

static void test_persist_range(void **state)
{
	struct ntm_ns *ns = NULL;
	unsigned char *base;
	uintptr_t b;
	size_t size = 4 * MiB;
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "sparse");
	/* A file namespace, where persist is an msync() of the pages. */
	assert_int_equal(ntm_ns_create(&ns, path, size, PG, NTM_NS_TEMPORARY), 0);
	base = ntm_ns_base(ns);
	b = (uintptr_t)base;

	/* Inside: the whole, an unaligned middle, the last byte, empty. */
	assert_int_equal(ntm_ns_persist(ns, base, size), 0);
	assert_int_equal(ntm_ns_persist(ns, base + 4095, 2), 0);
	assert_int_equal(ntm_ns_persist(ns, base + size - 1, 1), 0);
	assert_int_equal(ntm_ns_persist(ns, base + 100, 0), 0);

	{
		const struct {
			uintptr_t p;
			size_t n;
			const char *what;
		} out[] = {
			{ b - 1, 1, "one byte before" },
			{ b - PG, 2 * PG, "straddling the start" },
			{ b + size - 1, 2, "straddling the end" },
			{ b + size, 1, "one byte after" },
			{ b, size + 1, "one byte too long" },
			{ b + PG, SIZE_MAX, "SIZE_MAX bytes" },
			/* p + n wraps to just above base */
			{ b + PG, (size_t)(UINTPTR_MAX - (b + PG)) + 1 + b + 1,
			  "end wrapping around" },
			{ UINTPTR_MAX - 10, 100, "near the top, wrapping" },
			{ 0, 1, "NULL" },
		};

		for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
			int ret = ntm_ns_persist(ns, (const void *)out[i].p,
						 out[i].n);

			if (ret != -EINVAL)
				fail_msg("persist %s (%#lx + %zu): %d, expected "
					 "-EINVAL", out[i].what,
					 (unsigned long)out[i].p, out[i].n, ret);
			check_errmsg_has("range", out[i].what);
		}
	}
	ntm_ns_close(ns);

	/* The same on anonymous memory. */
	assert_int_equal(ntm_ns_anon(&ns, size, 2 * MiB), 0);
	base = ntm_ns_base(ns);
	assert_int_equal(ntm_ns_persist(ns, base, size), 0);
	assert_int_equal(ntm_ns_persist(ns, base - 64, 64), -EINVAL);
	assert_int_equal(ntm_ns_persist(ns, base + size, 64), -EINVAL);
	assert_int_equal(ntm_ns_persist(ns, base + 64, SIZE_MAX - 63), -EINVAL);
	ntm_ns_close(ns);
}

/* --- huge page alignment ------------------------------------------------ */

/* A mapping of 2 MiB or more starts on a 2 MiB boundary; align stays 4 KiB. */
/*
 * @opened: by ntm_ns_open(), which takes a DAX file's alignment from its
 * length; ntm_ns_create() keeps the one asked for (PG here).
 */
static void check_huge_base(struct ntm_ns *ns, const char *what, bool opened)
{
	uintptr_t b = (uintptr_t)ntm_ns_base(ns);

	if (ntm_ns_size(ns) >= 2 * MiB && b % (2 * MiB))
		fail_msg("%s, %zu bytes: base %#lx is not 2 MiB aligned", what,
			 ntm_ns_size(ns), (unsigned long)b);
	assert_int_equal(b % PG, 0);
	/* A DAX file of whole 2 MiB pages opens as an fsdax namespace of 2 MiB. */
	if (opened && ntm_ns_kind(ns) == NTM_NS_FSDAX &&
	    ntm_ns_size(ns) % (2 * MiB) == 0)
		assert_int_equal(ntm_ns_align(ns), 2 * MiB);
	else
		assert_int_equal(ntm_ns_align(ns), PG);
}

/*
 * Lengths that are not multiples of 2 MiB, so the kernel's own alignment
 * of large anonymous mappings does not do the work; several of each, so a
 * lucky address (1 in 512) cannot pass for the rule.
 */
static void test_huge_alignment(void **state)
{
	static const size_t sizes[] = {
		MiB, 2 * MiB, 2 * MiB + PG, 3 * MiB, 64 * MiB + PG,
	};
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "huge");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int rep = 0; rep < 4; rep++) {
			struct ntm_ns *ns = NULL, *ns2 = NULL;

			assert_int_equal(ntm_ns_anon(&ns, sizes[i], PG), 0);
			check_huge_base(ns, "anon", false);
			assert_int_equal(ntm_ns_create(&ns2, path, sizes[i], PG,
						       NTM_NS_EMULATE), 0);
			check_huge_base(ns2, "create", false);
			ntm_ns_close(ns2);
			assert_int_equal(ntm_ns_open(&ns2, path, 0), 0);
			check_huge_base(ns2, "open", true);
			ntm_ns_close(ns2);
			assert_int_equal(ntm_ns_open(&ns2, path,
						     NTM_NS_READONLY), 0);
			check_huge_base(ns2, "open read-only", true);
			ntm_ns_close(ns2);
			ntm_ns_close(ns);
			assert_int_equal(unlink(path), 0);
		}
	}
}

/* --- emulated namespaces and durability --------------------------------- */

/* Dirty KiB of the mapping that starts at @base, from /proc/self/smaps. */
static long smaps_dirty_kib(const void *base)
{
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end;
	bool in = false;
	long kib = -1, v;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) {
			/* A mapping's header line ("start-end perms ..."). */
			if (in)
				break;
			in = start == (unsigned long)(uintptr_t)base;
			if (in)
				kib = 0;
		} else if (in && (sscanf(line, "Shared_Dirty: %ld kB", &v) == 1 ||
				  sscanf(line, "Private_Dirty: %ld kB", &v) == 1)) {
			kib += v;
		}
	}
	fclose(f);
	return kib;
}

static long fs_type_of(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) ? -1 : (long)sfs.f_type;
}

/*
 * On a disk file system the page cache is not the medium: FUA and flush
 * (which call ntm_ns_persist() when ntm_ns_cpu_durable() is false) are
 * durable only if persist writes the pages back. Dirty pages in smaps
 * before, none after: a write-back and drain alone would leave them dirty.
 */
static void test_emulated_disk(void **state)
{
	const size_t size = 4 * MiB, written = 64 * PG;
	char ddir[64], path[96];
	struct ntm_ns *ns = NULL;
	unsigned char *base;
	long before, after, type;
	int ret;

	(void)state;
	snprintf(ddir, sizeof(ddir), "/var/tmp/ntmem-test-ns-XXXXXX");
	if (!mkdtemp(ddir))
		skip();
	type = fs_type_of(ddir);
	if (type == TMPFS_MAGIC || type == HUGETLBFS_MAGIC || type < 0) {
		rmdir(ddir);
		print_message("emulated_disk: /var/tmp is not a disk file "
			      "system here\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/emulated", ddir);
	ret = ntm_ns_create(&ns, path, size, PG, NTM_NS_EMULATE |
			    NTM_NS_TEMPORARY);
	rmdir(ddir);
	if (ret)
		fail_msg("ntm_ns_create(%s): %d %s", path, ret, ntm_errmsg());
	if (ntm_ns_kind(ns) == NTM_NS_FSDAX) {
		ntm_ns_close(ns);
		skip();
	}
	assert_int_equal(ntm_ns_kind(ns), NTM_NS_EMULATED);
	assert_false(ntm_ns_cpu_durable(ns));
	base = ntm_ns_base(ns);
	tu_fill_random(base, written, 0xd15c);
	before = smaps_dirty_kib(base);
	if (before < (long)(written / 1024))
		fail_msg("smaps shows %ld KiB dirty after writing %zu KiB: "
			 "cannot check persist here", before, written / 1024);
	assert_int_equal(ntm_ns_persist(ns, base, written), 0);
	after = smaps_dirty_kib(base);
	if (after != 0)
		fail_msg("%ld KiB of the %zu written still dirty after "
			 "ntm_ns_persist(): not written back to the disk",
			 after, written / 1024);
	/* An unaligned range inside one page: that page is written back. */
	base[PG + 100] ^= 0xff;
	assert_true(smaps_dirty_kib(base) >= 4);
	assert_int_equal(ntm_ns_persist(ns, base + PG + 99, 3), 0);
	assert_int_equal(smaps_dirty_kib(base), 0);
	ntm_ns_close(ns);
}

/* tmpfs: the page cache is the medium, so emulated is CPU-durable. */
static void test_emulated_tmpfs(void **state)
{
	static const struct {
		unsigned flags;
		enum ntm_ns_kind kind;
		bool durable;
	} cases[] = {
		{ NTM_NS_EMULATE, NTM_NS_EMULATED, true },
		{ 0, NTM_NS_FILE, false },
	};
	char path[64];

	(void)state;
	if (fs_type_of("/dev/shm") != TMPFS_MAGIC)
		skip();
	snprintf(path, sizeof(path), "/dev/shm/ntmem-test-ns-%d", (int)getpid());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ntm_ns *ns = NULL;
		struct ntm_nd_region r;
		unsigned char *base;

		assert_int_equal(ntm_ns_create(&ns, path, 4 * MiB, PG,
					       cases[i].flags |
					       NTM_NS_TEMPORARY), 0);
		assert_int_equal(ntm_ns_kind(ns), cases[i].kind);
		assert_int_equal(ntm_ns_cpu_durable(ns), cases[i].durable);
		/* A file on tmpfs has no nd region under it. */
		memset(&r, 0xff, sizeof(r));
		assert_int_equal(ntm_ns_region(ns, &r), 0);
		assert_string_equal(r.name, "");
		assert_string_equal(r.cxl_region, "");
		assert_int_equal(r.cxl_ways, 0);
		assert_int_equal(ntm_ns_region(NULL, &r), -EINVAL);
		assert_non_null(strstr(ntm_errmsg(), "ns"));
		assert_int_equal(ntm_ns_region(ns, NULL), -EINVAL);
		assert_non_null(strstr(ntm_errmsg(), "out"));
		base = ntm_ns_base(ns);
		memset(base, 0x5a, 2 * PG);
		assert_int_equal(ntm_ns_persist(ns, base, 2 * PG), 0);
		ntm_ns_close(ns);
	}
}

/*
 * The real thing beats the emulation: NTM_NS_EMULATE on a DAX file gives
 * an fsdax namespace, CPU-durable, created or opened (read-only too).
 * Needs $NTMEM_TEST_SCRATCH_DAX (a directory on a DAX file system).
 */
static void test_emulated_dax(void **state)
{
	static const unsigned open_flags[] = {
		NTM_NS_EMULATE, NTM_NS_EMULATE | NTM_NS_READONLY,
	};
	char ddir[128], path[160];
	struct ntm_ns *ns = NULL;
	struct ntm_nd_region r;
	int ret;

	(void)state;
	ret = tu_scratch_dax_dir(ddir, sizeof(ddir), "ntmem-test-ns-dax");
	if (ret > 0)
		skip();
	assert_int_equal(ret, 0);
	snprintf(path, sizeof(path), "%s/ns", ddir);
	assert_int_equal(ntm_ns_create(&ns, path, 4 * MiB, PG, NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_ns_kind(ns), NTM_NS_FSDAX);
	assert_true(ntm_ns_cpu_durable(ns));
	/* The file system's pmem device is on an nd region. */
	assert_int_equal(ntm_ns_region(ns, &r), 1);
	assert_memory_equal(r.name, "region", 6);
	memset(ntm_ns_base(ns), 0x5d, PG);
	assert_int_equal(ntm_ns_persist(ns, ntm_ns_base(ns), PG), 0);
	ntm_ns_close(ns);
	for (size_t i = 0; i < sizeof(open_flags) / sizeof(open_flags[0]); i++) {
		assert_int_equal(ntm_ns_open(&ns, path, open_flags[i]), 0);
		assert_int_equal(ntm_ns_kind(ns), NTM_NS_FSDAX);
		assert_int_equal(((unsigned char *)ntm_ns_base(ns))[PG - 1], 0x5d);
		ntm_ns_close(ns);
	}
	assert_int_equal(tu_remove_tree(ddir), 0);
}

/* --- names and messages ------------------------------------------------- */


/* --- descriptors -------------------------------------------------------- */

/*
 * A namespace keeps no descriptor (a program may hold more namespaces than
 * its descriptor limit), whether opened, emulated or created; only a
 * temporary one, whose file has no name left, keeps one.
 */
static void test_descriptors_none_kept(void **state)
{
	struct ntm_ns *ns;
	char path[128];
	unsigned before;

	(void)state;
	path_in_dir(path, sizeof(path), "written");
	tu_write_file(path, 16 * PG, 0xfd, 0600);
	before = tu_open_fds();
	assert_int_equal(ntm_ns_open(&ns, path, 0), 0);
	assert_int_equal(tu_open_fds(), before);
	ntm_ns_close(ns);
	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_EMULATE), 0);
	assert_int_equal(tu_open_fds(), before);
	ntm_ns_close(ns);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(ntm_ns_create(&ns, path, 4 * MiB, 2 * MiB,
				       NTM_NS_EMULATE), 0);
	assert_int_equal(tu_open_fds(), before);
	ntm_ns_close(ns);
	assert_int_equal(unlink(path), 0);

	/*
	 * Only a file or emulated one reserves blocks through its file, so
	 * only there does the unlinked file need a descriptor: an fsdax one
	 * (the scratch directory on DAX) keeps none either.
	 */
	assert_int_equal(ntm_ns_create(&ns, path, 4 * PG, PG,
				       NTM_NS_TEMPORARY), 0);
	assert_int_equal(tu_open_fds(),
			 before + (ntm_ns_kind(ns) == NTM_NS_FSDAX ? 0 : 1));
	ntm_ns_close(ns);
	assert_int_equal(tu_open_fds(), before);
}

/*
 * Blocks are reserved through the file opened again by its path (a BTT
 * over an emulated namespace allocates its whole file): a path that names
 * another file by then is -ESTALE, and that file is left as it was.
 */
static void test_descriptors_reserve_by_path(void **state)
{
	const struct ntm_blk_config cfg = { .btt = true, .btt_create = true };
	struct ntm_blk *blk = NULL;
	struct ntm_ns *ns;
	char path[128], other[128];
	unsigned char want[PG];
	struct stat st;

	(void)state;
	tu_skip_on_dax(dir, "an emulated namespace (an fsdax one reserves "
		       "nothing through its path)");
	path_in_dir(path, sizeof(path), "sparse");
	path_in_dir(other, sizeof(other), "existing");
	assert_int_equal(ntm_ns_create(&ns, path, 16 * MiB, PG, NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
	assert_int_equal(stat(path, &st), 0);
	if ((size_t)st.st_blocks * 512 < 16 * MiB)
		print_message("%s: %lld bytes allocated: no fallocate() here\n",
			      path, (long long)st.st_blocks * 512);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(ntm_ns_create(&ns, path, 16 * MiB, PG, NTM_NS_EMULATE), 0);
	tu_write_file(other, PG, 0x0e, 0600);
	assert_int_equal(rename(other, path), 0);
	blk = NULL;
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), -ESTALE);
	assert_null(blk);
	check_errmsg_has(path, "reserve through a replaced path");
	tu_fill_random(want, PG, 0x0e);
	tu_check_file_bytes(path, 0, want, PG);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, (off_t)PG);
	ntm_ns_close(ns);
	assert_int_equal(unlink(path), 0);
}
/* Bytes of @path's file system blocks. */
static size_t allocated_bytes(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (size_t)st.st_blocks * 512;
}

/*
 * The reservation contract of one namespace: in range it allocates and
 * keeps the bytes, overlapping an earlier one is fine, outside is -EINVAL
 * with nothing allocated.
 */
static void test_reserve_range(void **state)
{
	static const struct {
		size_t off, n;
	} outside[] = {
		{ 16 * MiB - PG, 2 * PG },	/* runs past the end */
		{ 16 * MiB + PG, 0 },		/* starts past the end */
		{ PG, SIZE_MAX },		/* off + n wraps */
		{ SIZE_MAX, 2 },
	};
	unsigned char want[PG];
	struct ntm_ns *ns;
	char path[128];
	size_t before;

	(void)state;
	tu_skip_on_dax(dir, "a sparse emulated namespace (fsdax reserves "
		       "nothing)");
	path_in_dir(path, sizeof(path), "reserve-a");
	assert_int_equal(ntm_ns_create(&ns, path, 16 * MiB, PG, NTM_NS_EMULATE), 0);
	tu_fill_random(want, PG, 0x5e);
	memcpy((unsigned char *)ntm_ns_base(ns) + MiB, want, PG);
	assert_int_equal(ntm_ns_persist(ns, (unsigned char *)ntm_ns_base(ns) + MiB,
					PG), 0);

	assert_int_equal(ntm_ns_reserve(ns, 0, 2 * MiB, "a test range"), 0);
	before = allocated_bytes(path);
	if (before < 2 * MiB) {
		print_message("%s: %zu bytes allocated: no fallocate() here\n",
			      path, before);
		ntm_ns_close(ns);
		assert_int_equal(unlink(path), 0);
		skip();
	}
	/* Overlapping the first: what is allocated stays, the rest is added. */
	assert_int_equal(ntm_ns_reserve(ns, MiB, 2 * MiB, "an overlap"), 0);
	assert_true(allocated_bytes(path) >= 3 * MiB);
	assert_int_equal(ntm_ns_reserve(ns, 0, 2 * MiB, "the same range"), 0);
	assert_int_equal(ntm_ns_reserve(ns, 16 * MiB, 0, "nothing at the end"), 0);
	tu_check_file_bytes(path, MiB, want, PG);

	before = allocated_bytes(path);
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		char off[32];

		assert_int_equal(ntm_ns_reserve(ns, outside[i].off, outside[i].n,
						"a stray range"), -EINVAL);
		snprintf(off, sizeof(off), "off %zu", outside[i].off);
		check_errmsg_has(off, "reserve outside the namespace");
		check_errmsg_has("outside", "reserve outside the namespace");
	}
	assert_int_equal(allocated_bytes(path), before);
	tu_check_file_bytes(path, MiB, want, PG);
	ntm_ns_close(ns);

	/* Read-only: nothing to reserve, but the range is still checked. */
	assert_int_equal(ntm_ns_open(&ns, path, NTM_NS_READONLY | NTM_NS_EMULATE),
			 0);
	assert_int_equal(ntm_ns_reserve(ns, 8 * MiB, 4 * MiB, "read-only"), 0);
	assert_int_equal(allocated_bytes(path), before);
	assert_int_equal(ntm_ns_reserve(ns, 8 * MiB, 9 * MiB, "read-only"),
			 -EINVAL);
	ntm_ns_close(ns);
	assert_int_equal(unlink(path), 0);

	/* Anonymous memory has no file: 0 in range, -EINVAL outside. */
	assert_int_equal(ntm_ns_anon(&ns, 4 * MiB, PG), 0);
	assert_int_equal(ntm_ns_reserve(ns, 0, 4 * MiB, "anonymous"), 0);
	assert_int_equal(ntm_ns_reserve(ns, 4 * MiB, 1, "anonymous"), -EINVAL);
	check_errmsg_has("off 4194304", "reserve past an anonymous namespace");
	ntm_ns_close(ns);
}

/* One thread's reservations: @count steps of @step bytes from @off. */
struct reserve_share {
	struct ntm_ns *ns;
	size_t off, step;
	unsigned count;
	int ret;
	pthread_t thread;
};

static void *reserve_share_run(void *arg)
{
	struct reserve_share *s = arg;

	for (unsigned i = 0; i < s->count && !s->ret; i++)
		s->ret = ntm_ns_reserve(s->ns, s->off + i * s->step, s->step,
					"a thread's range");
	return NULL;
}

/*
 * Two namespaces, four threads on each, reserving at once: namespace a
 * gets MiB 0-3 (4 MiB), b MiB 4-5 (2 MiB), each in 64 KiB steps. A
 * reservation that landed in the other namespace's file, or at the other
 * namespace's offsets, would show in the blocks either file holds.
 */
static void test_reserve_two_namespaces(void **state)
{
	enum { THREADS = 4 };
	struct reserve_share share[2 * THREADS];
	struct ntm_ns *ns[2];
	char path[2][128];
	size_t got[2], want[2] = { 4 * MiB, 2 * MiB };

	(void)state;
	tu_skip_on_dax(dir, "sparse emulated namespaces (fsdax reserves "
		       "nothing)");
	path_in_dir(path[0], sizeof(path[0]), "reserve-a");
	path_in_dir(path[1], sizeof(path[1]), "reserve-b");
	for (int i = 0; i < 2; i++)
		assert_int_equal(ntm_ns_create(&ns[i], path[i], 8 * MiB, PG,
					       NTM_NS_EMULATE), 0);
	for (unsigned t = 0; t < 2 * THREADS; t++) {
		bool b = t >= THREADS;
		unsigned k = t % THREADS;

		share[t] = (struct reserve_share){
			.ns = ns[b],
			.off = b ? 4 * MiB + k * (MiB / 2) : k * MiB,
			.step = 64 * 1024,
			.count = (unsigned)((b ? MiB / 2 : MiB) / (64 * 1024)),
		};
	}
	for (unsigned t = 0; t < 2 * THREADS; t++)
		assert_int_equal(pthread_create(&share[t].thread, NULL,
						reserve_share_run, &share[t]), 0);
	for (unsigned t = 0; t < 2 * THREADS; t++) {
		assert_int_equal(pthread_join(share[t].thread, NULL), 0);
		if (share[t].ret)
			fail_msg("thread %u: %d %s", t, share[t].ret, ntm_errmsg());
	}
	for (int i = 0; i < 2; i++)
		got[i] = allocated_bytes(path[i]);
	if (got[0] == 0 && got[1] == 0) {
		print_message("%s: nothing allocated: no fallocate() here\n",
			      dir);
	} else {
		/* Extent metadata may add a few blocks, never a MiB. */
		for (int i = 0; i < 2; i++)
			if (got[i] < want[i] || got[i] >= want[i] + MiB)
				fail_msg("%s: %zu bytes allocated, %zu reserved",
					 path[i], got[i], want[i]);
		/* Each file holds its own ranges, not the other's. */
		assert_int_equal(ntm_ns_reserve(ns[1], 4 * MiB, 2 * MiB, "again"), 0);
		assert_int_equal(allocated_bytes(path[1]), got[1]);
		assert_int_equal(ntm_ns_reserve(ns[0], 0, 4 * MiB, "again"), 0);
		assert_int_equal(allocated_bytes(path[0]), got[0]);
	}
	for (int i = 0; i < 2; i++) {
		ntm_ns_close(ns[i]);
		assert_int_equal(unlink(path[i]), 0);
	}
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(ntm_ns_kind_name(NTM_NS_DEVDAX), "devdax");
	assert_string_equal(ntm_ns_kind_name(NTM_NS_FSDAX), "fsdax");
	assert_string_equal(ntm_ns_kind_name(NTM_NS_FILE), "file");
	assert_string_equal(ntm_ns_kind_name(NTM_NS_ANON), "anon");
	assert_string_equal(ntm_ns_kind_name((enum ntm_ns_kind)0), "unknown");
	assert_string_equal(ntm_ns_kind_name((enum ntm_ns_kind)99), "unknown");
}

struct msg_thread {
	char before[256];	/* ntm_errmsg() on entry */
	char after[256];	/* after its own failure */
	int ret;
};

static void *msg_thread_run(void *arg)
{
	struct msg_thread *m = arg;
	struct ntm_ns *ns;

	snprintf(m->before, sizeof(m->before), "%s", ntm_errmsg());
	m->ret = ntm_ns_anon(&ns, 0, PG);
	snprintf(m->after, sizeof(m->after), "%s", ntm_errmsg());
	return NULL;
}

/* The message is per thread: "" before a failure, not another's. */
static void test_errmsg_per_thread(void **state)
{
	struct msg_thread m;
	struct ntm_ns *ns;
	pthread_t t;
	char path[128];

	(void)state;
	path_in_dir(path, sizeof(path), "missing");
	assert_int_equal(ntm_ns_open(&ns, path, 0), -ENOENT);
	check_errmsg_has(path, "open of a missing file");
	assert_int_equal(pthread_create(&t, NULL, msg_thread_run, &m), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(m.before, "");
	assert_int_equal(m.ret, -EINVAL);
	assert_non_null(strstr(m.after, "size"));
	/* Ours is untouched by the other thread's failure. */
	check_errmsg_has(path, "after another thread failed");
	/* A success does not clear it. */
	assert_int_equal(ntm_ns_anon(&ns, PG, PG), 0);
	ntm_ns_close(ns);
	check_errmsg_has(path, "after a success");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anon_geometry),
		cmocka_unit_test(test_anon_bad),
		cmocka_unit_test(test_create_sparse),
		cmocka_unit_test(test_create_temporary),
		cmocka_unit_test(test_create_bad),
		cmocka_unit_test(test_open_file),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_file_types),
		cmocka_unit_test(test_open_readonly),
		cmocka_unit_test(test_persist_range),
		cmocka_unit_test(test_huge_alignment),
		cmocka_unit_test(test_emulated_disk),
		cmocka_unit_test(test_emulated_tmpfs),
		cmocka_unit_test(test_emulated_dax),
		cmocka_unit_test(test_descriptors_none_kept),
		cmocka_unit_test(test_descriptors_reserve_by_path),
		cmocka_unit_test(test_reserve_range),
		cmocka_unit_test(test_reserve_two_namespaces),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_errmsg_per_thread),
	};

	return cmocka_run_group_tests_name("ns", tests, dir_setup, dir_teardown);
}
