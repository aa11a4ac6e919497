// SPDX-License-Identifier: MIT
/*
 * mcsafe.c - pmem2_source_pread_mcsafe() / pmem2_source_pwrite_mcsafe():
 * I/O on a source that reports a media error as PMEM2_E_IO_FAIL instead
 * of killing the process with SIGBUS.
 *
 * As PMDK's: an anonymous source has nothing to read from
 * (SOURCE_TYPE_NOT_SUPPORTED); a regular file goes through pread(2) and
 * pwrite(2), where the kernel itself turns poison into EIO; a devdax
 * device, which has no read(2), is mapped for the call. PMDK copies out
 * of that mapping with a SIGBUS handler swapped in around the copy (a
 * process-wide sigaction per call, racing other threads' signals); here
 * the read is ntm_copy_mc(), which survives the fault on its own and
 * chains to whatever handler the program has (put back in front of a
 * handler the program installed since, once per call). A write reads every page
 * it will store to with ntm_copy_mc() first, so a page the kernel has
 * taken away for poison fails before anything is written.
 *
 * A range is checked against the source's size now (a file's may have
 * changed): past the end is LENGTH_OUT_OF_RANGE. PMDK computes the room
 * left as size - offset without checking offset first, so an offset past
 * the end wraps, passes, reads nothing and returns 0 (a write then
 * extends the file); the drop-in refuses that range too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ntmem.h>

#include "pmem2.h"

/* 0, or the code of a source or range the operation cannot take. */
static int check_op(const struct pmem2_source *src, const char *fn,
		    size_t size, size_t offset)
{
	size_t src_size;
	int ret;

	if (src->type != PMEM2_SOURCE_FD)
		return pmem2_err(PMEM2_E_SOURCE_TYPE_NOT_SUPPORTED,
				 "%s: src is an anonymous source: only sources "
				 "made from a file descriptor can be read or "
				 "written", fn);
	ret = pmem2_source_geometry(src, fn, &src_size, NULL);
	if (ret)
		return ret;
	if (offset > src_size || size > src_size - offset)
		return pmem2_err(PMEM2_E_LENGTH_OUT_OF_RANGE,
				 "%s: size %zu at offset %zu goes beyond the "
				 "source's %zu bytes", fn, size, offset,
				 src_size);
	return 0;
}

/* A regular file: pread(2)/pwrite(2) until done; EIO is a media error. */
static int file_io(const struct pmem2_source *src, const char *fn, void *buf,
		   size_t size, size_t offset, bool write)
{
	while (size) {
		ssize_t n = write ? pwrite(src->fd, buf, size, (off_t)offset) :
				    pread(src->fd, buf, size, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EIO)
			return pmem2_err(PMEM2_E_IO_FAIL,
					 "%s: I/O error at offset %zu of fd %d, "
					 "possibly a bad block", fn, offset,
					 src->fd);
		if (n < 0)
			return pmem2_err_errno(errno, "%s: %s fd %d", fn,
					       write ? "pwrite" : "pread",
					       src->fd);
		if (n == 0)	/* the file shrank since the range was checked */
			return pmem2_err(PMEM2_E_LENGTH_OUT_OF_RANGE,
					 "%s: fd %d ends before offset %zu", fn,
					 src->fd, offset);
		buf = (char *)buf + n;
		size -= (size_t)n;
		offset += (size_t)n;
	}
	return 0;
}

/*
 * A devdax device: map the aligned window around the range, copy with
 * the machine check caught, unmap.
 */
static int devdax_io(const struct pmem2_source *src, const char *fn,
		     void *buf, size_t size, size_t offset, bool write)
{
	size_t align, start, len, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char probe;
	char *base, *p;
	int ret;

	ret = pmem2_source_geometry(src, fn, NULL, &align);
	if (ret)
		return ret;
	/*
	 * ntm_copy_mc() installs its handler once; a program (or a test
	 * harness) that set its own SIGBUS handler since would take the
	 * fault instead. Installing again chains to that handler and costs
	 * one sigaction(), where PMDK makes two per call.
	 */
	ret = ntm_mc_install();
	if (ret)
		return pmem2_err_errno(-ret, "%s: installing the SIGBUS handler",
				       fn);
	start = offset & ~(align - 1);
	len = (offset + size - start + align - 1) & ~(align - 1);
	base = mmap(NULL, len, write ? PROT_READ | PROT_WRITE : PROT_READ,
		    MAP_SHARED, src->fd, (off_t)start);
	if (base == MAP_FAILED)
		return pmem2_err_errno(errno, "%s: mmap %zu bytes of fd %d at "
				       "offset %zu", fn, len, src->fd, start);
	p = base + (offset - start);
	if (!write) {
		size_t left = ntm_copy_mc(buf, p, size);

		if (left)
			ret = pmem2_err(PMEM2_E_IO_FAIL,
					"%s: media error reading offset %zu of "
					"devdax fd %d", fn, offset + size - left,
					src->fd);
	} else {
		/* Each page stored to must be readable: poison fails here. */
		for (size_t o = offset & ~(page - 1); !ret && o < offset + size;
		     o += page)
			if (ntm_copy_mc(&probe, base + (o - start), 1))
				ret = pmem2_err(PMEM2_E_IO_FAIL,
						"%s: media error at offset %zu "
						"of devdax fd %d", fn, o,
						src->fd);
		if (!ret) {
			ntm_memcpy_flush(p, buf, size);
			ntm_drain();
		}
	}
	munmap(base, len);
	return ret;
}

static int mcsafe_op(struct pmem2_source *src, const char *fn, void *buf,
		     size_t size, size_t offset, bool write)
{
	int ret = check_op(src, fn, size, offset), saved_errno = errno;

	if (ret || size == 0)
		return ret;
	if (src->devdax)
		ret = devdax_io(src, fn, buf, size, offset, write);
	else
		ret = file_io(src, fn, buf, size, offset, write);
	/* An interrupted pread() that was retried is no failure. */
	if (!ret)
		errno = saved_errno;
	return ret;
}

int pmem2_source_pread_mcsafe(struct pmem2_source *src, void *buf, size_t size,
			      size_t offset)
{
	return mcsafe_op(src, "pmem2_source_pread_mcsafe", buf, size, offset,
			 false);
}

int pmem2_source_pwrite_mcsafe(struct pmem2_source *src, void *buf,
			       size_t size, size_t offset)
{
	return mcsafe_op(src, "pmem2_source_pwrite_mcsafe", buf, size, offset,
			 true);
}
