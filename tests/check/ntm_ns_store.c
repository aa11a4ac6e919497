/* SPDX-License-Identifier: MIT */
/*
 * ntmem's own API: a store to an emulated namespace, then ntm_ns_close()
 * without ntm_persist(). Only out-of-line calls are used for persistence:
 * <ntmem.h> makes ntm_drain() an inline fence, which a checking library
 * cannot see. Expected: never-written-back at the unmap. On a Device DAX
 * (corpus_path()) the namespace is the device, opened, its first
 * CORPUS_LEN bytes zeroed first as a new file's are.
 */
#include <ntmem.h>
#include "corpus.h"
#include "mutable.h"

int main(int argc, char **argv)
{
	char path[4096];
	struct ntm_ns *ns;

	corpus_path(path, sizeof(path), argc, argv);
	bool device = corpus_device(path, argv);

	if ((device ? ntm_ns_open(&ns, path, 0) :
		      ntm_ns_create(&ns, path, CORPUS_LEN, 4096, NTM_NS_EMULATE)) != 0) {
		fprintf(stderr, "%s\n", ntm_errmsg());
		return 1;
	}
	char *base = ntm_ns_base(ns);

	/* corpus_device_reset()'s why, through the namespace. */
	if (device) {
		memset(base, 0, CORPUS_LEN);
		ntm_ns_persist(ns, base, CORPUS_LEN);
	}
	memset(base, CORPUS_FILL, CORPUS_LEN);
	/* The namespace's persist: msync() behind a page cache too. */
	MUTABLE(ntm_ns_persist(ns, base, CORPUS_LEN));
	store8(base + CORPUS_OFF);
#ifdef FIXED
	MUTABLE(ntm_ns_persist(ns, base + CORPUS_OFF, 8));
#endif
	ntm_ns_close(ns);
	return 0;
}
