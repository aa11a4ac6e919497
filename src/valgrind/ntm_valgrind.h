/* SPDX-License-Identifier: MIT */
/*
 * ntm_valgrind.h - what ntmem tells valgrind's tools that they cannot
 * know, where a program runs under them (PMDK's own tests run
 * libpmemobj on this libpmem under memcheck and helgrind). A client
 * request is a few instructions that do nothing outside valgrind; built
 * without valgrind's headers (NTM_HAVE_VALGRIND unset) they are nothing.
 *
 *   NTM_VG_QUIET_BEGIN() / NTM_VG_QUIET_END()
 *       no errors reported in between: a system call such as msync() of
 *       whole pages reaches bytes the program told memcheck are not
 *       addressable or not defined, which is no error of the program's
 *       (PMDK silences memcheck around its msync() too)
 *   NTM_VG_UNCHECKED(p, n)
 *       [p, p + n) is not for helgrind to check for races: it is
 *       accessed with atomic operations only, or published once by a
 *       release store that readers' acquire loads pair with, neither of
 *       which helgrind models
 */
#ifndef NTMEM_VALGRIND_H
#define NTMEM_VALGRIND_H

#ifdef NTM_HAVE_VALGRIND
#include <valgrind/helgrind.h>
#include <valgrind/valgrind.h>

#define NTM_VG_QUIET_BEGIN() VALGRIND_DISABLE_ERROR_REPORTING
#define NTM_VG_QUIET_END() VALGRIND_ENABLE_ERROR_REPORTING
#define NTM_VG_UNCHECKED(p, n) VALGRIND_HG_DISABLE_CHECKING(p, n)
#else
#define NTM_VG_QUIET_BEGIN() do { } while (0)
#define NTM_VG_QUIET_END() do { } while (0)
#define NTM_VG_UNCHECKED(p, n) do { (void)(p); (void)(n); } while (0)
#endif

#endif /* NTMEM_VALGRIND_H */
