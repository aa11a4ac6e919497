/* SPDX-License-Identifier: MIT */
/*
 * libpmem2.h - PMDK's libpmem2 API, as ntmem's drop-in libpmem2.so.1
 * implements it (ntmem-libpmem2(7)).
 *
 * Split as PMDK 1.12.1 splits it: the synchronous API in <libpmem2/base.h>,
 * the asynchronous one in <libpmem2/async.h>, which needs libminiasync's
 * headers and is seen only with PMEM2_USE_MINIASYNC defined.
 */
#ifndef LIBPMEM2_H
#define LIBPMEM2_H 1

#include <libpmem2/base.h>
#ifdef PMEM2_USE_MINIASYNC
#include <libpmem2/async.h>
#endif

#endif /* LIBPMEM2_H */
